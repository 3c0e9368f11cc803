/* The shared group parser (common/group_syntax.c) that the tool, the preload and the Slurm
 * plugin link: what each GROUP gives, and a refusal as a status and a message with nothing
 * printed (the preload runs inside users' programs, whose stderr is theirs). */
#include <stdio.h>
#include <string.h>
#include <unistd.h>

#include "group_syntax.h"
#include "harness.h"

/* group_syntax_parse with stdout and stderr caught: *printed gets how many bytes it wrote. */
static gctx_status parse_quietly(int argc, char **argv, unsigned sm_count, unsigned unit_sms,
                                 group_request *out, group_syntax_error *err, long *printed)
{
    FILE *caught = tmpfile();
    fflush(stdout);
    fflush(stderr);
    int saved_out = dup(1), saved_err = dup(2);
    dup2(fileno(caught), 1);
    dup2(fileno(caught), 2);
    gctx_status s = group_syntax_parse(argc, argv, sm_count, unit_sms, out, err);
    fflush(stdout);
    fflush(stderr);
    dup2(saved_out, 1);
    dup2(saved_err, 2);
    close(saved_out);
    close(saved_err);
    fseek(caught, 0, SEEK_END);
    *printed = ftell(caught);
    fclose(caught);
    return s;
}

/* The groups are refused with `message`, about the syntax or not, nothing printed and no
 * groups left. */
static void expect_refused(int argc, char **argv, int about_syntax, const char *message)
{
    group_request r;
    group_syntax_error err;
    long printed = -1;
    GT_ASSERT_STATUS(parse_quietly(argc, argv, 132, 8, &r, &err, &printed),
                     GCTX_ERROR_INVALID_ARGUMENT);
    GT_ASSERT_EQ_INT(printed, 0);
    GT_ASSERT_EQ_INT(err.status, GCTX_ERROR_INVALID_ARGUMENT);
    GT_ASSERT_EQ_INT(err.about_syntax, about_syntax);
    GT_ASSERT_STR_EQ(err.message, message);
    GT_ASSERT(r.groups == NULL && r.nb_groups == 0);
}

GT_TEST(counts_shares_and_rest)
{
    char *argv[] = {"24", "16:c2:b", "25%", "rest"};
    group_request r;
    group_syntax_error err;
    long printed = -1;
    GT_ASSERT_STATUS(parse_quietly(4, argv, 132, 8, &r, &err, &printed), GCTX_SUCCESS);
    GT_ASSERT_EQ_INT(printed, 0);
    GT_ASSERT_EQ_INT(r.nb_groups, 4);
    GT_ASSERT_EQ_INT(r.groups[0].num_sms, 24);
    GT_ASSERT_EQ_INT(r.groups[1].num_sms, 16);
    GT_ASSERT_EQ_INT(r.groups[1].coscheduled_sm_count, 2);
    GT_ASSERT_EQ_INT(r.groups[1].backfill, 1);
    /* 25% of 132 SMs, cut at a multiple of the 8-SM unit. */
    GT_ASSERT_EQ_INT(r.groups[2].num_sms, 32);
    GT_ASSERT_EQ_INT(r.has_percent, 1);
    GT_ASSERT_EQ_INT(r.groups[3].num_sms, 0);
    GT_ASSERT_EQ_INT(r.groups[3].backfill, 1);
    GT_ASSERT(r.texts == argv);
    group_request_free(&r);
    GT_ASSERT(r.groups == NULL && r.nb_groups == 0);
}

GT_TEST(a_group_written_wrong_is_a_message_not_a_print)
{
    static const struct {
        const char *arg, *message;
    } cases[] = {
        {"24x", "'24x' is not a GROUP"},
        {"24,40", "'24,40' is not a GROUP: groups are separate arguments (24 40, not 24,40)"},
        {"-3", "'-3' is not a GROUP: a count must be positive: give 1 or more SMs (or 0 for "
               "discovery)"},
        {"016", "'016' is not a GROUP: write a count in plain digits (16, not +16 or 016)"},
        {"16:", "'16:' is not a GROUP: after ':' come cN, pN or b (e.g. 16:c2, 20:b), never "
                "nothing"},
        {"0%", "'0%' is not a GROUP: a percentage is a whole number from 1% to 100%"},
        /* The near-misses of a count, each with its reason. */
        {"0x10", "'0x10' is not a GROUP: counts are decimal: hex (0x...) is not accepted"},
        {"99999999999999999999",
         "'99999999999999999999' is not a GROUP: out of range: a count is at most 1048576 SMs"},
        {"4294967312", "'4294967312' is not a GROUP: out of range: a count is at most 1048576 SMs"},
        {"1e3", "'1e3' is not a GROUP: write the count in plain digits, with no exponent (1000, "
                "not 1e3)"},
        {" 16", "' 16' is not a GROUP: a GROUP has no spaces: remove the leading or trailing "
                "space"},
        {"24 40", "'24 40' is not a GROUP: a GROUP has no spaces: give each group as its own "
                  "argument (24 40)"},
        {"1.5", "'1.5' is not a GROUP: a count is a whole number of SMs"},
        {"\xef\xbc\x91\xef\xbc\x96", "'\xef\xbc\x91\xef\xbc\x96' is not a GROUP: only ASCII "
                                      "digits make a count (no full-width or other characters)"},
        /* A unit of 0 SMs would be read as "no unit": refused, not silently dropped. */
        {"16:c0", "'16:c0' is not a GROUP: a unit of 0 SMs means nothing: cN and pN take 1 or "
                  "more (or leave them out)"},
        {"16:p0", "'16:p0' is not a GROUP: a unit of 0 SMs means nothing: cN and pN take 1 or "
                  "more (or leave them out)"},
    };
    for (size_t i = 0; i < sizeof cases / sizeof cases[0]; i++) {
        char *argv[] = {"8", (char *)cases[i].arg};
        expect_refused(2, argv, 1, cases[i].message);
        GT_CHECK();
    }
}

GT_TEST(no_group_and_too_many_percent)
{
    expect_refused(0, NULL, 1, "give at least one GROUP (e.g. 24 40 rest)");
    GT_CHECK();
    /* Well written, but more than the partition: not a matter of syntax (no help shown). */
    char *argv[] = {"60%", "50%"};
    expect_refused(2, argv, 0, "the percentages add up to 110%; they can share at most 100%");
}

GT_TEST(rounding_names)
{
    GT_ASSERT_EQ_INT(group_syntax_rounding("strict"), GCTX_ROUND_STRICT);
    GT_ASSERT_EQ_INT(group_syntax_rounding("down"), GCTX_ROUND_DOWN);
    GT_ASSERT_EQ_INT(group_syntax_rounding("nearest"), GCTX_ROUND_NEAREST);
    GT_ASSERT_EQ_INT(group_syntax_rounding("up"), GCTX_ROUND_UP);
    GT_ASSERT_EQ_INT(group_syntax_rounding("Up"), -1);
    GT_ASSERT_EQ_INT(group_syntax_rounding(""), -1);
}
