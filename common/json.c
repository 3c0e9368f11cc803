/* greenctx's one JSON writer (json.h). */
#include <math.h>
#include <stdlib.h>
#include <string.h>

#include "greenctx.h"
#include "json.h"

/* The length of the valid UTF-8 character at p (1 to 4), or 0 when p starts none
 * (RFC 3629: no overlong forms, no surrogates, nothing above U+10FFFF). */
static size_t utf8_char(const unsigned char *p)
{
    if (p[0] < 0x80)
        return 1;
    size_t len;
    unsigned min, cp;
    if ((p[0] & 0xe0) == 0xc0) {
        len = 2, min = 0x80, cp = p[0] & 0x1fu;
    } else if ((p[0] & 0xf0) == 0xe0) {
        len = 3, min = 0x800, cp = p[0] & 0x0fu;
    } else if ((p[0] & 0xf8) == 0xf0) {
        len = 4, min = 0x10000, cp = p[0] & 0x07u;
    } else {
        return 0;
    }
    for (size_t i = 1; i < len; i++) {
        if ((p[i] & 0xc0) != 0x80) /* also stops at the terminating NUL */
            return 0;
        cp = cp << 6 | (p[i] & 0x3fu);
    }
    if (cp < min || cp > 0x10ffff || (cp >= 0xd800 && cp <= 0xdfff))
        return 0;
    return len;
}

size_t json_utf8_prefix(const char *text, size_t max)
{
    const unsigned char *p = (const unsigned char *)text;
    size_t at = 0;
    while (p[at]) {
        size_t len = utf8_char(p + at);
        if (!len)
            len = 1; /* an invalid byte is one character of its own (written as U+FFFD) */
        if (at + len > max)
            break;
        at += len;
    }
    return at;
}

void greenctx_json_string(FILE *out, const char *text)
{
    if (!text) {
        fputs("null", out);
        return;
    }
    fputc('"', out);
    for (const unsigned char *p = (const unsigned char *)text; *p;) {
        size_t len = utf8_char(p);
        if (len == 0) {
            fputs("\\ufffd", out);
            p++;
            continue;
        }
        if (len > 1) {
            fwrite(p, 1, len, out);
            p += len;
            continue;
        }
        switch (*p) {
        case '"': fputs("\\\"", out); break;
        case '\\': fputs("\\\\", out); break;
        case '\n': fputs("\\n", out); break;
        case '\r': fputs("\\r", out); break;
        case '\t': fputs("\\t", out); break;
        default:
            if (*p < 0x20 || *p == 0x7f)
                fprintf(out, "\\u%04x", *p);
            else
                fputc(*p, out);
        }
        p++;
    }
    fputc('"', out);
}

/* The comma and the key before a member. */
static void member(json_writer *w, const char *key)
{
    if (w->depth > 0 && w->members[w->depth - 1]++)
        fputc(',', w->out);
    if (key) {
        greenctx_json_string(w->out, key);
        fputc(':', w->out);
    }
}

static void open_container(json_writer *w, const char *key, char bracket)
{
    member(w, key);
    fputc(bracket, w->out);
    /* The tool's documents nest 6 deep at most: a deeper one is a bug of the tool. */
    if (w->depth == JSON_MAX_DEPTH)
        abort();
    w->members[w->depth] = 0;
    w->closing[w->depth] = bracket == '{' ? '}' : ']';
    w->depth++;
}

static unsigned documents_begun;

unsigned json_documents_begun(void) { return documents_begun; }

void json_begin(json_writer *w, FILE *out, const char *schema)
{
    documents_begun++;
    *w = (json_writer){.out = out};
    open_container(w, NULL, '{');
    json_string(w, "greenctx_version", gctx_version_string());
    json_string(w, "schema", schema);
}

void json_object(json_writer *w, const char *key) { open_container(w, key, '{'); }
void json_array(json_writer *w, const char *key) { open_container(w, key, '['); }

void json_close(json_writer *w)
{
    if (w->depth == 0)
        return;
    w->depth--;
    fputc(w->closing[w->depth], w->out);
}

void json_end(json_writer *w)
{
    while (w->depth > 0)
        json_close(w);
    fputc('\n', w->out);
}

void json_string(json_writer *w, const char *key, const char *value)
{
    member(w, key);
    greenctx_json_string(w->out, value);
}

void json_int(json_writer *w, const char *key, long long value)
{
    member(w, key);
    fprintf(w->out, "%lld", value);
}

void json_uint(json_writer *w, const char *key, unsigned long long value)
{
    member(w, key);
    fprintf(w->out, "%llu", value);
}

void json_fixed(json_writer *w, const char *key, double value, int decimals)
{
    member(w, key);
    if (isfinite(value))
        fprintf(w->out, "%.*f", decimals, value);
    else
        fputs("null", w->out);
}

void json_bool(json_writer *w, const char *key, int value)
{
    member(w, key);
    fputs(value ? "true" : "false", w->out);
}

void json_null(json_writer *w, const char *key)
{
    member(w, key);
    fputs("null", w->out);
}
