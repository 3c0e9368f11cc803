/* The one JSON writer of greenctx: every document the tool writes is valid JSON and UTF-8
 * (bytes that are not UTF-8 are written as U+FFFD) and starts with greenctx_version and
 * schema ("greenctx.<what>/<n>": n grows when a member changes meaning or goes away, never
 * when one is added). Inside an array, members take a NULL key. */
#ifndef GREENCTX_COMMON_JSON_H
#define GREENCTX_COMMON_JSON_H

#include <stddef.h>
#include <stdio.h>

#define JSON_MAX_DEPTH 16

typedef struct json_writer {
    FILE *out;
    int depth;                   /* open containers, the document included */
    int members[JSON_MAX_DEPTH]; /* members written so far in each open container */
    char closing[JSON_MAX_DEPTH]; /* '}' or ']' for each open container */
} json_writer;

/* Opens a document (an object) with its greenctx_version and schema members. */
void json_begin(json_writer *w, FILE *out, const char *schema);
/* How many documents this process began (tools/greenctx.c: the catch-all error document). */
unsigned json_documents_begun(void);
/* Closes every open container and the document, then a newline. */
void json_end(json_writer *w);

/* Members: key is the member's name inside an object, NULL inside an array. */
void json_object(json_writer *w, const char *key);
void json_array(json_writer *w, const char *key);
void json_close(json_writer *w);
void json_string(json_writer *w, const char *key, const char *value); /* NULL: null */
void json_int(json_writer *w, const char *key, long long value);
void json_uint(json_writer *w, const char *key, unsigned long long value);
/* A number with `decimals` digits after the point; NaN and infinities are written as null. */
void json_fixed(json_writer *w, const char *key, double value, int decimals);
void json_bool(json_writer *w, const char *key, int value);
void json_null(json_writer *w, const char *key);

/* text as a JSON string, quotes included (NULL: null), invalid UTF-8 as U+FFFD. */
void greenctx_json_string(FILE *out, const char *text);
/* The longest prefix of text, at most max bytes, that splits no UTF-8 character. */
size_t json_utf8_prefix(const char *text, size_t max);

#endif
