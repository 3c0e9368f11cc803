/* The one JSON writer (common/json.c): the document's first members, commas and
 * nesting, escapes, text that is not UTF-8, cuts that never split a character. */
#include <math.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "harness.h"
#include "json.h"

/* What the writer wrote, NUL-terminated, into buf. */
static const char *written(FILE *f, char *buf, size_t size)
{
    fflush(f);
    long n = ftell(f);
    rewind(f);
    size_t got = fread(buf, 1, n > 0 && (size_t)n < size ? (size_t)n : size - 1, f);
    buf[got] = '\0';
    return buf;
}

GT_TEST(documents_start_with_version_and_schema)
{
    FILE *f = tmpfile();
    GT_ASSERT(f != NULL);
    json_writer w;
    json_begin(&w, f, "greenctx.test/1");
    json_int(&w, "a", -3);
    json_array(&w, "list");
    json_uint(&w, NULL, 1);
    json_object(&w, NULL);
    json_bool(&w, "yes", 1);
    json_null(&w, "none");
    json_close(&w);
    json_fixed(&w, NULL, 2.5, 2);
    json_fixed(&w, NULL, NAN, 2);
    json_fixed(&w, NULL, INFINITY, 2);
    json_end(&w); /* closes the array and the document */
    char buf[512], expected[512];
    snprintf(expected, sizeof expected,
             "{\"greenctx_version\":\"%s\",\"schema\":\"greenctx.test/1\",\"a\":-3,"
             "\"list\":[1,{\"yes\":true,\"none\":null},2.50,null,null]}\n",
             gctx_version_string());
    GT_ASSERT_STR_EQ(written(f, buf, sizeof buf), expected);
    fclose(f);
}

GT_TEST(strings_are_escaped_and_always_utf8)
{
    FILE *f = tmpfile();
    GT_ASSERT(f != NULL);
    /* quote, backslash, newline, a control byte, DEL; é (2 bytes), € (3), 😀 (4); then
     * bytes that are no UTF-8: a lone continuation, 0xff, an overlong '/', a surrogate, a
     * character cut short at the end. */
    greenctx_json_string(f, "q\"b\\n\n\x01\x7f \xc3\xa9\xe2\x82\xac\xf0\x9f\x98\x80 "
                            "\x80\xff\xc0\xaf\xed\xa0\x80\xe2\x82");
    char buf[256];
    GT_ASSERT_STR_EQ(written(f, buf, sizeof buf),
                     "\"q\\\"b\\\\n\\n\\u0001\\u007f \xc3\xa9\xe2\x82\xac\xf0\x9f\x98\x80 "
                     "\\ufffd\\ufffd\\ufffd\\ufffd\\ufffd\\ufffd\\ufffd\\ufffd\\ufffd\"");
    rewind(f);
    greenctx_json_string(f, NULL);
    GT_ASSERT(strncmp(written(f, buf, sizeof buf), "null", 4) == 0);
    fclose(f);
}

GT_TEST(cuts_fall_between_characters)
{
    /* 39 ASCII bytes and then é: a cut at 40 bytes keeps 39 and drops the whole é. */
    char text[64];
    memset(text, 'a', 39);
    strcpy(text + 39, "\xc3\xa9zz");
    GT_ASSERT_EQ_INT(json_utf8_prefix(text, 40), 39);
    GT_ASSERT_EQ_INT(json_utf8_prefix(text, 41), 41);
    GT_ASSERT_EQ_INT(json_utf8_prefix(text, 100), 43);
    GT_ASSERT_EQ_INT(json_utf8_prefix("\xf0\x9f\x98\x80", 3), 0);
    /* An invalid byte counts as one character (written as U+FFFD). */
    GT_ASSERT_EQ_INT(json_utf8_prefix("\xff\xff", 1), 1);
}
