/*
 * SPDX-License-Identifier: Apache-2.0
 * greenctx.hpp: a header-only C++17 wrapper of greenctx.h, which stays the reference for what
 * every call does; this file adds ownership and errors, never a rule of its own. Owning handles
 * (a move transfers the reference, a copy retains), calls that throw greenctx::error or, as
 * try_*, return greenctx::result<T>: docs/api.md, "greenctx.hpp".
 */
#ifndef GREENCTX_HPP
#define GREENCTX_HPP

/* Said alone, instead of a page of std::optional errors (the rest of the file is skipped). */
#if !defined(__cplusplus) || (__cplusplus < 201703L && !(defined(_MSVC_LANG) && _MSVC_LANG >= 201703L))
#error "greenctx.hpp needs C++17 or newer (-std=c++17); from C or older C++, include greenctx.h"
#else

#include "greenctx.h"
#include "greenctx_claims.h"

#include <initializer_list>
#include <optional>
#include <stdexcept>
#include <string>
#include <type_traits>
#include <utility>
#include <vector>

namespace greenctx {

/* A failed greenctx call: what() is the library's message (what was asked, what rule broke,
 * what would work). */
class error : public std::runtime_error {
public:
    error(gctx_status status, const std::string &message, int cuda_result = 0)
        : std::runtime_error(message), status_(status), cuda_result_(cuda_result)
    {
    }
    gctx_status status() const noexcept { return status_; }
    /* "GCTX_ERROR_INVALID_ARGUMENT", ... */
    const char *status_name() const noexcept { return gctx_status_name(status_); }
    /* The CUresult behind the failure, or 0 when it was not the driver's. */
    int cuda_result() const noexcept { return cuda_result_; }

private:
    gctx_status status_;
    int cuda_result_;
};

namespace detail {
/* The error of the call that just failed on this thread. */
inline error last_error(gctx_status status)
{
    const char *message = gctx_last_error();
    return error(status, message && *message ? message : gctx_status_string(status),
                 gctx_last_cuda_result());
}
inline void check(gctx_status status)
{
    if (status != GCTX_SUCCESS)
        throw last_error(status);
}
} // namespace detail

/* The value of a call, or why it failed (std::expected-like; C++17 has no std::expected). */
template <class T> class [[nodiscard]] result {
public:
    result(T value) : value_(std::move(value)) {}
    result(class error failure) : error_(std::move(failure)) {}
    /* The failure of the call that just returned status on this thread. */
    static result failed(gctx_status status) { return result(detail::last_error(status)); }

    explicit operator bool() const noexcept { return value_.has_value(); }
    bool has_value() const noexcept { return value_.has_value(); }
    /* GCTX_SUCCESS when there is a value. */
    gctx_status status() const noexcept { return error_ ? error_->status() : GCTX_SUCCESS; }
    /* The value; throws the error when there is none. */
    T &value() &
    {
        if (!value_)
            throw *error_;
        return *value_;
    }
    T &&value() && { return std::move(value()); }
    T &operator*() & { return value(); }
    T *operator->() { return &value(); }
    /* The failure; only when !has_value() (a std::logic_error otherwise). */
    const class error &error() const
    {
        if (!error_)
            throw std::logic_error("greenctx::result::error(): the call succeeded");
        return *error_;
    }

private:
    std::optional<T> value_;
    std::optional<class error> error_;
};

namespace detail {
/* A C call that writes its result through its last argument, call(args..., &out): value gives
 * out's start (an INIT macro), an owner adopts the C object's reference. */
template <class T, class Call, class... Args> result<T> try_get(T value, Call call, Args... args)
{
    gctx_status s = call(args..., &value);
    return s == GCTX_SUCCESS ? result<T>(std::move(value)) : result<T>::failed(s);
}
template <class T, class Call, class... Args> result<T> try_make(Call call, Args... args)
{
    std::remove_reference_t<decltype(*std::declval<T>().get())> *raw = nullptr;
    gctx_status s = call(args..., &raw);
    return s == GCTX_SUCCESS ? result<T>(T::adopt_reference(raw)) : result<T>::failed(s);
}

/* One owned reference of a C object, released with Release and copied with Retain. */
template <class Derived, class T, T *(*Retain)(T *), void (*Release)(T *)> class owner {
public:
    owner() noexcept = default;
    owner(const owner &other) : ptr_(other.ptr_ ? retained(other.ptr_) : nullptr) {}
    owner(owner &&other) noexcept : ptr_(std::exchange(other.ptr_, nullptr)) {}
    owner &operator=(owner other) noexcept
    {
        std::swap(ptr_, other.ptr_);
        return *this;
    }
    ~owner() { Release(ptr_); }

    /* Takes over a reference the caller holds (from the C API). */
    static Derived adopt_reference(T *owned) noexcept
    {
        Derived d;
        static_cast<owner &>(d).ptr_ = owned;
        return d;
    }
    /* A second reference of an object someone else owns (a layout's stream, ...). */
    static Derived share(T *borrowed)
    {
        return adopt_reference(borrowed ? retained(borrowed) : nullptr);
    }

    T *get() const noexcept { return ptr_; }
    explicit operator bool() const noexcept { return ptr_ != nullptr; }
    /* Gives the reference to the caller, who releases it with the C API. */
    T *release() noexcept { return std::exchange(ptr_, nullptr); }

protected:
    /* What call(this object, args..., &out) writes: a value from start, or an owner. */
    template <class R, class Call, class... Args> R got(R start, Call call, Args... args) const
    {
        return try_get(start, call, ptr_, args...).value();
    }
    template <class R, class Call, class... Args> R made(Call call, Args... args) const
    {
        return try_make<R>(call, ptr_, args...).value();
    }
    static T *retained(T *borrowed)
    {
        T *p = Retain(borrowed);
        if (!p)
            throw last_error(GCTX_ERROR_INVALID_HANDLE);
        return p;
    }
    T *ptr_ = nullptr;
};
} // namespace detail

/* A group of a split: num_sms SMs (0: discovery), the rest of gctx_group as zero. */
inline gctx_group group(unsigned num_sms, unsigned coscheduled_sm_count = 0, bool backfill = false)
{
    return gctx_group{num_sms, coscheduled_sm_count, 0, backfill ? 1 : 0, {0, 0, 0, 0}};
}

inline const char *version_string() noexcept { return gctx_version_string(); }

inline result<int> try_device_count() { return detail::try_get(0, gctx_device_count); }
inline int device_count() { return try_device_count().value(); }

/* The SMs the calling thread's current context runs on (gctx_current_sm_count): what a
 * persistent kernel's grid is sized by, e.g. cutlass::KernelHardwareInfo::sm_count. */
inline result<unsigned> try_current_sm_count()
{
    return detail::try_get(0u, gctx_current_sm_count);
}
inline unsigned current_sm_count() { return try_current_sm_count().value(); }

inline result<gctx_device_info> try_device_info(int device)
{
    return detail::try_get<gctx_device_info>(GCTX_DEVICE_INFO_INIT, gctx_device_get_info, device);
}
inline gctx_device_info device_info(int device) { return try_device_info(device).value(); }

inline int driver_version() { return detail::try_get(0, gctx_driver_version).value(); }

struct split_result;

/* The plan of a split: the whole and one gctx_group_plan per group. */
struct split_plan {
    gctx_split_plan plan;
    std::vector<gctx_group_plan> groups;
};

class partition
    : public detail::owner<partition, gctx_partition, gctx_partition_retain, gctx_partition_release> {
public:
    partition() noexcept = default;

    static result<partition> try_from_device(int device)
    {
        return detail::try_make<partition>(gctx_partition_from_device, device);
    }
    static partition from_device(int device) { return try_from_device(device).value(); }

    gctx_partition_info info() const
    {
        return got<gctx_partition_info>(GCTX_PARTITION_INFO_INIT, gctx_partition_get_info);
    }
    unsigned sm_count() const { return info().sm_count; }

    /* Splits into groups.size() disjoint partitions (gctx_partition_split). */
    inline result<split_result> try_split(const std::vector<gctx_group> &groups,
                                          gctx_rounding rounding = GCTX_ROUND_STRICT);
    inline split_result split(const std::vector<gctx_group> &groups,
                              gctx_rounding rounding = GCTX_ROUND_STRICT);
    /* What split() would give, making nothing (gctx_partition_plan). */
    result<split_plan> try_plan(const std::vector<gctx_group> &groups,
                                gctx_rounding rounding = GCTX_ROUND_STRICT) const
    {
        gctx_split_options options{sizeof options, rounding};
        split_plan out{GCTX_SPLIT_PLAN_INIT, std::vector<gctx_group_plan>(groups.size())};
        gctx_status s = gctx_partition_plan(ptr_, groups.data(),
                                            static_cast<unsigned>(groups.size()), &options,
                                            &out.plan, out.groups.data());
        if (s != GCTX_SUCCESS)
            return result<split_plan>::failed(s);
        return result<split_plan>(std::move(out));
    }
    split_plan plan(const std::vector<gctx_group> &groups,
                    gctx_rounding rounding = GCTX_ROUND_STRICT) const
    {
        return try_plan(groups, rounding).value();
    }

    gctx_relation relation(const partition &other) const
    {
        return got(GCTX_RELATION_MAY_OVERLAP, gctx_partition_relation, other.ptr_);
    }
};

/* The partitions of a split, in the order of the groups, its remainder (empty when no SM is
 * left over) and its plan. */
struct split_result {
    std::vector<partition> parts;
    partition remainder;
    split_plan plan;
};

inline result<split_result> partition::try_split(const std::vector<gctx_group> &groups,
                                                  gctx_rounding rounding)
{
    gctx_split_options options{sizeof options, rounding};
    std::vector<gctx_partition *> raw(groups.size(), nullptr);
    gctx_partition *rest = nullptr;
    split_result out;
    out.plan.plan = GCTX_SPLIT_PLAN_INIT;
    out.plan.groups.resize(groups.size());
    gctx_status s = gctx_partition_split(ptr_, groups.data(), static_cast<unsigned>(groups.size()),
                                         &options, raw.data(), &rest, &out.plan.plan,
                                         out.plan.groups.data());
    if (s != GCTX_SUCCESS)
        return result<split_result>::failed(s);
    for (gctx_partition *p : raw)
        out.parts.push_back(adopt_reference(p));
    out.remainder = adopt_reference(rest);
    return result<split_result>(std::move(out));
}
inline split_result partition::split(const std::vector<gctx_group> &groups, gctx_rounding rounding)
{
    return try_split(groups, rounding).value();
}

class event;

class context
    : public detail::owner<context, gctx_context, gctx_context_retain, gctx_context_release> {
public:
    context() noexcept = default;

    /* A green context on the partition's SMs (gctx_context_create). */
    explicit context(const greenctx::partition &on, const gctx_context_options *options = nullptr)
    {
        ptr_ = try_create(on, options).value().release();
    }
    static result<context> try_create(const greenctx::partition &on,
                                      const gctx_context_options *options = nullptr)
    {
        return detail::try_make<context>(gctx_context_create, on.get(), options);
    }
    /* num_sms SMs of a device (gctx_context_create_with_sms). */
    static result<context> try_with_sms(int device, unsigned num_sms,
                                        const gctx_context_options *options = nullptr)
    {
        return detail::try_make<context>(gctx_context_create_with_sms, device, num_sms, options);
    }
    static context with_sms(int device, unsigned num_sms,
                            const gctx_context_options *options = nullptr)
    {
        return try_with_sms(device, num_sms, options).value();
    }
    /* Someone else's green context, not owned (gctx_context_adopt). */
    static context adopt(CUgreenCtx green)
    {
        return detail::try_make<context>(gctx_context_adopt, green).value();
    }

    /* Disjoint contexts on this context's SMs, one per group (gctx_contexts_create); the
     * remainder's context is dropped unless `remainder` is given. */
    std::vector<context> split(const std::vector<gctx_group> &groups, context *remainder = nullptr,
                               gctx_rounding rounding = GCTX_ROUND_STRICT,
                               const gctx_context_options *options = nullptr)
    {
        if (groups.empty())
            throw error(GCTX_ERROR_INVALID_ARGUMENT, "split: no groups; give at least one");
        gctx_split_options split_options{sizeof split_options, rounding};
        gctx_context_request request = GCTX_CONTEXT_REQUEST_INIT;
        request.context = ptr_;
        request.groups = groups.data();
        request.nb_groups = static_cast<unsigned>(groups.size());
        request.split_options = &split_options;
        request.options = options;
        std::vector<gctx_context *> raw(groups.size(), nullptr);
        gctx_context *rest = nullptr;
        detail::check(gctx_contexts_create(&request, raw.data(), remainder ? &rest : nullptr));
        std::vector<context> out;
        for (gctx_context *c : raw)
            out.push_back(adopt_reference(c));
        if (remainder)
            *remainder = adopt_reference(rest);
        return out;
    }

    gctx_context_info info() const
    {
        return got<gctx_context_info>(GCTX_CONTEXT_INFO_INIT, gctx_context_get_info);
    }
    /* The context's SMs as a partition. */
    greenctx::partition partition() const
    {
        return made<greenctx::partition>(gctx_context_partition);
    }
    CUgreenCtx green_handle() const noexcept { return gctx_context_green_handle(ptr_); }
    CUcontext cu_context() const noexcept { return gctx_context_cu_context(ptr_); }
    inline void record(event &e);
    inline void wait(const event &e);
};

class stream
    : public detail::owner<stream, gctx_stream, gctx_stream_retain, gctx_stream_release> {
public:
    stream() noexcept = default;

    /* A stream of the context, at `priority` (lower is higher; clamped to the device's). */
    explicit stream(const greenctx::context &on, int priority = 0)
    {
        ptr_ = try_create(on, priority).value().release();
    }
    static result<stream> try_create(const greenctx::context &on, int priority = 0)
    {
        gctx_stream_options options{sizeof options, priority, 0};
        return detail::try_make<stream>(gctx_stream_create, on.get(), &options);
    }
    /* Someone else's stream of a green context, not owned (gctx_stream_adopt). */
    static stream adopt(CUstream raw)
    {
        return detail::try_make<stream>(gctx_stream_adopt, raw).value();
    }

    /* The raw stream (cudaStream_t is the same type), valid while this stream lives. */
    CUstream handle() const noexcept { return gctx_stream_handle(ptr_); }
    operator CUstream() const noexcept { return handle(); }

    void synchronize() { detail::check(gctx_stream_synchronize(ptr_)); }
    int priority() const { return got(0, gctx_stream_priority); }
    greenctx::context context() const { return made<greenctx::context>(gctx_stream_context); }
    inline void wait(const event &e);
    /* The physical SMs a kernel on this stream ran on (gctx_stream_observe_sms). */
    std::vector<unsigned> observe_sms(unsigned capacity = 1024)
    {
        std::vector<unsigned> ids(capacity);
        unsigned count = 0;
        detail::check(gctx_stream_observe_sms(ptr_, ids.data(), capacity, &count));
        ids.resize(count < capacity ? count : capacity);
        return ids;
    }
};

class event
    : public detail::owner<event, gctx_event, gctx_event_retain, gctx_event_release> {
public:
    event() noexcept = default;
    /* An event of the context's device (ordering only, no timing). */
    explicit event(const context &of) { detail::check(gctx_event_create(of.get(), &ptr_)); }

    CUevent handle() const noexcept { return gctx_event_handle(ptr_); }
    operator CUevent() const noexcept { return handle(); }
    /* After the work submitted so far to a stream. */
    void record(const stream &on) { detail::check(gctx_event_record(ptr_, on.get())); }
    void synchronize() { detail::check(gctx_event_synchronize(ptr_)); }
};

/* After the work submitted so far to every stream of the context. */
inline void context::record(event &e) { detail::check(gctx_event_record_context(e.get(), ptr_)); }
inline void context::wait(const event &e) { detail::check(gctx_context_wait_event(ptr_, e.get())); }
inline void stream::wait(const event &e) { detail::check(gctx_stream_wait_event(ptr_, e.get())); }

/* One part of a layout: its partition, context and stream (references of this caller's). */
struct layout_part {
    greenctx::partition partition;
    greenctx::context context;
    greenctx::stream stream;
};

class layouts
    : public detail::owner<layouts, gctx_layouts, gctx_layouts_retain, gctx_layouts_release> {
public:
    layouts() noexcept = default;
    /* rows[l] is layout l's SM counts (all rows the same length; a last 0 takes the rest). */
    layouts(int device, const std::vector<std::vector<unsigned>> &rows,
            const gctx_context_options *options = nullptr)
        : nb_parts_(rows.empty() ? 0u : static_cast<unsigned>(rows[0].size()))
    {
        std::vector<unsigned> counts;
        for (const auto &row : rows) {
            if (row.size() != nb_parts_)
                throw error(GCTX_ERROR_INVALID_ARGUMENT,
                            "greenctx::layouts: every layout needs the same number of parts");
            counts.insert(counts.end(), row.begin(), row.end());
        }
        detail::check(gctx_layouts_create(device, counts.data(), static_cast<unsigned>(rows.size()),
                                          nb_parts_, options, &ptr_));
    }
    /* Makes layout `index` active and returns its streams; order: GCTX_LAYOUTS_ORDER_ALL (every
     * new stream after every old one) or GCTX_LAYOUTS_ORDER_BY_PART (new stream i after old
     * stream i only). */
    std::vector<stream> switch_to(unsigned index, unsigned order = GCTX_LAYOUTS_ORDER_ALL)
    {
        std::vector<gctx_stream *> raw(nb_parts_, nullptr);
        detail::check(gctx_layouts_switch_ordered(ptr_, index, order, raw.data()));
        std::vector<stream> out;
        for (gctx_stream *s : raw)
            out.push_back(stream::share(s));
        return out;
    }
    layout_part get(unsigned layout, unsigned part) const
    {
        gctx_partition *p = nullptr;
        gctx_context *c = nullptr;
        gctx_stream *s = nullptr;
        detail::check(gctx_layouts_get(ptr_, layout, part, &p, &c, &s));
        return {partition::share(p), context::share(c), stream::share(s)};
    }
    unsigned active() const { return got(0u, gctx_layouts_get_active); }
    unsigned nb_parts() const noexcept { return nb_parts_; }

private:
    unsigned nb_parts_ = 0;
};

/* SMs of a device held by this process against other tenants (gctx_claim_*). */
class claim
    : public detail::owner<claim, gctx_claim, gctx_claim_retain, gctx_claim_release> {
public:
    claim() noexcept = default;

    /* request: "16", "25%" or "rest" (gctx_claim_acquire). */
    static result<claim> try_acquire(int device, const std::string &request,
                                     const gctx_claim_options *options = nullptr)
    {
        return detail::try_make<claim>(gctx_claim_acquire, device, request.c_str(), options);
    }
    static claim acquire(int device, const std::string &request,
                         const gctx_claim_options *options = nullptr)
    {
        return try_acquire(device, request, options).value();
    }
    /* A claim exported by the parent process (gctx_claim_join). */
    static claim join(int device, const std::string &token)
    {
        return detail::try_make<claim>(gctx_claim_join, device, token.c_str()).value();
    }

    greenctx::partition partition() const
    {
        return made<greenctx::partition>(gctx_claim_partition);
    }
    greenctx::context context(const gctx_context_options *options = nullptr) const
    {
        return made<greenctx::context>(gctx_claim_context, options);
    }
    greenctx::stream stream() const { return made<greenctx::stream>(gctx_claim_stream); }
    /* Grows or shrinks the claim; returns its new stream. */
    greenctx::stream resize(const std::string &request, const gctx_claim_options *options = nullptr)
    {
        return made<greenctx::stream>(gctx_claim_resize, request.c_str(), options);
    }
    gctx_claim_info info() const
    {
        return got<gctx_claim_info>(GCTX_CLAIM_INFO_INIT, gctx_claim_get_info);
    }
    std::string export_token() const
    {
        char token[1024];
        detail::check(gctx_claim_export(ptr_, token, sizeof token));
        return token;
    }
};

/* Saves the calling thread's current context and restores it at scope exit, around a call
 * that changes it (NCCL's communicator init, cudaSetDevice). */
class current_context_guard {
public:
    current_context_guard() { detail::check(gctx_current_context_save(&saved_)); }
    ~current_context_guard() { (void)gctx_current_context_restore(saved_, nullptr); }
    current_context_guard(const current_context_guard &) = delete;
    current_context_guard &operator=(const current_context_guard &) = delete;

private:
    CUcontext saved_ = nullptr;
};

} // namespace greenctx

#endif /* C++17 */
#endif /* GREENCTX_HPP */
