/* Strict RFC 8259 JSON: a pull parser over a byte stream, plus a small DOM
 * for one value at a time.
 *
 * The pull parser keeps only a window of the input and a byte per open
 * container, so a multi-gigabyte trace is walked in bounded memory: read
 * the top-level object token by token and build a DOM (tp_json_build) only
 * for the values worth inspecting, one array element at a time, resetting
 * the arena in between.
 *
 * Rejected: trailing commas, control characters in strings, bad escapes,
 * unpaired surrogate escapes, invalid UTF-8 (overlong forms, encoded
 * surrogates, truncated sequences, code points above U+10FFFF), leading
 * zeros, NaN/Infinity, a byte order mark, anything after the value, and
 * nesting deeper than TP_JSON_MAX_DEPTH.
 */
#ifndef TP_CLI_JSON_H
#define TP_CLI_JSON_H

#include <stddef.h>
#include <stdint.h>
#include <sys/types.h>

#define TP_JSON_MAX_DEPTH 10000

/* Tokens returned by tp_json_next; the value ones double as node types. */
enum tp_json_tok {
	TP_JSON_ERROR = -1,
	TP_JSON_EOF = 0,
	TP_JSON_NULL,
	TP_JSON_FALSE,
	TP_JSON_TRUE,
	TP_JSON_NUMBER,
	TP_JSON_STRING,
	TP_JSON_ARRAY,		/* '[' */
	TP_JSON_OBJECT,		/* '{' */
	TP_JSON_ARRAY_END,
	TP_JSON_OBJECT_END,
	TP_JSON_KEY,		/* member name; its ':' is consumed */
};

struct tp_json_err {
	unsigned long line;	/* 1-based */
	unsigned long col;	/* 1-based, in bytes */
	int io;			/* the input failed, not the syntax */
	char msg[128];
};

/* Input source: fill buf with up to len bytes, return the count, 0 at the
 * end, -1 on error. Called once per large chunk, never per byte. */
typedef ssize_t (*tp_json_read_fn)(void *ctx, void *buf, size_t len);

struct tp_json;

struct tp_json *tp_json_open(tp_json_read_fn read, void *ctx);
/* Parses buf in place; buf must outlive the parser. */
struct tp_json *tp_json_open_mem(const void *buf, size_t len);
void tp_json_close(struct tp_json *j);

/* Next token. After the top-level value, returns TP_JSON_EOF if only
 * whitespace follows. Errors are sticky. */
int tp_json_next(struct tp_json *j);

/* Text of the last STRING or KEY (decoded, NUL-terminated, may contain
 * NUL bytes: use len) or NUMBER (the literal as written). */
const char *tp_json_text(const struct tp_json *j, size_t *len);
/* Value of the last NUMBER (inf when out of double range). */
double tp_json_number(const struct tp_json *j);
/* Line on which the last token starts. */
unsigned long tp_json_line(const struct tp_json *j);
const struct tp_json_err *tp_json_error(const struct tp_json *j);

/* Skips the rest of a value whose first token tok was just returned. */
int tp_json_skip(struct tp_json *j, int tok);

/* Copies the raw input consumed from now until capture_end (at most max
 * bytes). capture_end returns the NUL-terminated text, or NULL if it did
 * not fit. */
void tp_json_capture_start(struct tp_json *j, size_t max);
const char *tp_json_capture_end(struct tp_json *j, size_t *len);

/* DOM */

struct tp_json_node {
	int type;			/* TP_JSON_NULL .. TP_JSON_OBJECT */
	uint32_t len;			/* bytes of str, or children */
	const char *str;		/* STRING: decoded; NUMBER: literal */
	const char *key;		/* member name when inside an object */
	uint32_t keylen;
	double num;
	unsigned long line;
	struct tp_json_node *child;	/* first child, in input order */
	struct tp_json_node *next;	/* next sibling */
	struct tp_json_node *parent;
	struct tp_json_node *last;	/* last child, for appending */
};

/* Nodes and strings live in an arena; zero-initialise it before use. */
struct tp_json_arena {
	struct tp_json_chunk *head;
};

void tp_json_arena_reset(struct tp_json_arena *a);
void tp_json_arena_free(struct tp_json_arena *a);

/* Builds the value whose first token tok was just returned by
 * tp_json_next. Returns 0 or -1 (see tp_json_error). */
int tp_json_build(struct tp_json *j, int tok, struct tp_json_arena *a,
		  struct tp_json_node **out);
/* tp_json_next + tp_json_build. */
int tp_json_parse_value(struct tp_json *j, struct tp_json_arena *a,
			struct tp_json_node **out);
/* Parses a whole document held in memory. err may be NULL. */
int tp_json_parse_mem(const void *buf, size_t len, struct tp_json_arena *a,
		      struct tp_json_node **out, struct tp_json_err *err);

/* First member named key of an object node, or NULL. */
const struct tp_json_node *tp_json_get(const struct tp_json_node *obj,
				       const char *key);
/* Nonzero if n is a number written as an integer (no fraction, no
 * exponent) that fits in int64_t; stores it in *out. */
int tp_json_int64(const struct tp_json_node *n, int64_t *out);

#endif
