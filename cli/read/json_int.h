/* The JSON parser's state, shared by the streaming tokenizer (json.c)
 * and the tree builder on top of it (json_tree.c). */
#ifndef TP_CLI_JSON_INT_H
#define TP_CLI_JSON_INT_H

#include "json.h"

#define TP_JSON_BUFSZ (256 * 1024)

enum {
	ST_VALUE,	/* a value must come next */
	ST_ARR_FIRST,	/* after '[': value or ']' */
	ST_ARR_NEXT,	/* after ',' in an array: value */
	ST_OBJ_FIRST,	/* after '{': key or '}' */
	ST_OBJ_NEXT,	/* after ',' in an object: key */
	ST_AFTER,	/* after a member value: ',' or the closer */
	ST_DONE,	/* top-level value complete */
	ST_EOF,
	ST_ERROR,
};

struct tp_json {
	const unsigned char *p, *end;	/* unread part of the window */
	const unsigned char *base;	/* window start ... */
	uint64_t base_off;		/* ... and its offset in the input */
	unsigned char *buf;		/* NULL when parsing memory */
	tp_json_read_fn read;
	void *ctx;
	int eof, ioerr;
	unsigned long line, tok_line;
	uint64_t line_off;		/* input offset of the line start */
	int state;
	unsigned char *stack;		/* '[' or '{' per open container */
	size_t depth, stack_cap;
	char *tok;
	size_t toklen, tokcap;
	double num;
	int capturing, capover;
	const unsigned char *cap_from;
	char *cap;
	size_t caplen, capmax;
	struct tp_json_err err;
};

/* Records the first error, at `at`, and returns TP_JSON_ERROR. */
int tp_json_fail_at(struct tp_json *j, const unsigned char *at,
		    const char *fmt, ...) __attribute__((format(printf, 3, 4)));
#define fail(j, ...) tp_json_fail_at((j), (j)->p, __VA_ARGS__)

#endif
