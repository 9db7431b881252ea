/* stacks/: call stacks: capture (libunwind, Python perf trampolines),
 * symbolization, interning; on util/ .. session/. */
#define _GNU_SOURCE
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "pyline.h"

#define MAX_FILE (8u << 20)	/* larger sources are not read */
#define MAX_FILES 512		/* files remembered */
#define MAX_DEPTH 64		/* nested def/class statements */

struct def {
	char *qual;
	unsigned line;
};

struct pyfile {
	struct pyfile *next;
	char *path;
	struct def *defs;
	size_t n, cap;
};

struct scope {
	unsigned indent;
	int is_func;
	size_t qlen;		/* length of its qualname in qbuf */
};

/* The scanner's state across physical lines. */
struct scan {
	int triple;		/* inside a ''' or """ string: its quote */
	int depth;		/* open brackets */
	int cont;		/* the line ended with a backslash */
	unsigned deco;		/* first line of pending decorators */
	unsigned deco_indent;
	struct scope sc[MAX_DEPTH];
	unsigned nsc;
	char qbuf[4096];
};

static struct pyfile *files;
static unsigned nfiles;

static int ident_char(char c)
{
	return (c >= 'a' && c <= 'z') || (c >= 'A' && c <= 'Z') ||
	       (c >= '0' && c <= '9') || c == '_' || (unsigned char)c >= 0x80;
}

/* Brackets, strings and comments of one line (from p to e), so that a
 * statement spanning lines is read as one. */
static void scan_rest(struct scan *s, const char *p, const char *e)
{
	while (p < e) {
		char c = *p;

		if (s->triple) {
			if (c == '\\') {
				p += 2;
				continue;
			}
			if (c == s->triple && e - p >= 3 && p[1] == c &&
			    p[2] == c) {
				s->triple = 0;
				p += 3;
				continue;
			}
			p++;
			continue;
		}
		if (c == '#')
			return;
		if (c == '"' || c == '\'') {
			if (e - p >= 3 && p[1] == c && p[2] == c) {
				s->triple = c;
				p += 3;
				continue;
			}
			for (p++; p < e && *p != c; p++)
				if (*p == '\\')
					p++;
			p++;
			continue;
		}
		if (c == '(' || c == '[' || c == '{')
			s->depth++;
		else if ((c == ')' || c == ']' || c == '}') && s->depth > 0)
			s->depth--;
		p++;
	}
}

static int add_def(struct pyfile *f, const char *qual, size_t qlen,
		   unsigned line)
{
	if (f->n == f->cap) {
		size_t cap = f->cap ? f->cap * 2 : 64;
		struct def *v = realloc(f->defs, cap * sizeof(*v));

		if (!v)
			return -1;
		f->defs = v;
		f->cap = cap;
	}
	f->defs[f->n].qual = strndup(qual, qlen);
	if (!f->defs[f->n].qual)
		return -1;
	f->defs[f->n].line = line;
	f->n++;
	return 0;
}

/* A def or class statement at indent: named after the scopes it is in. */
static void statement(struct scan *s, struct pyfile *f, unsigned indent,
		      int is_func, const char *name, size_t nlen,
		      unsigned line)
{
	size_t at = 0;
	unsigned first = s->deco && s->deco_indent == indent ? s->deco : line;

	while (s->nsc && s->sc[s->nsc - 1].indent >= indent)
		s->nsc--;
	if (s->nsc) {
		const struct scope *up = &s->sc[s->nsc - 1];
		const char *sep = up->is_func ? ".<locals>." : ".";

		at = up->qlen;
		if (at + strlen(sep) + nlen >= sizeof(s->qbuf))
			return;
		memcpy(s->qbuf + at, sep, strlen(sep));
		at += strlen(sep);
	} else if (nlen >= sizeof(s->qbuf)) {
		return;
	}
	memcpy(s->qbuf + at, name, nlen);
	at += nlen;
	add_def(f, s->qbuf, at, first);
	if (s->nsc < MAX_DEPTH) {
		s->sc[s->nsc].indent = indent;
		s->sc[s->nsc].is_func = is_func;
		s->sc[s->nsc].qlen = at;
		s->nsc++;
	}
}

/* A logical line's start: a decorator, a def or class, or anything else
 * (which ends pending decorators and scopes indented deeper). */
static void line_start(struct scan *s, struct pyfile *f, const char *p,
		       const char *e, unsigned indent, unsigned line)
{
	int is_func = 1;
	const char *n;

	if (*p == '@') {
		if (!s->deco || s->deco_indent != indent) {
			s->deco = line;
			s->deco_indent = indent;
		}
		return;
	}
	if (e - p > 6 && !strncmp(p, "async ", 6))
		for (p += 6; p < e && (*p == ' ' || *p == '\t'); p++)
			;
	if (e - p > 4 && !strncmp(p, "def ", 4)) {
		p += 4;
	} else if (e - p > 6 && !strncmp(p, "class ", 6)) {
		p += 6;
		is_func = 0;
	} else {
		s->deco = 0;
		while (s->nsc && s->sc[s->nsc - 1].indent >= indent)
			s->nsc--;
		return;
	}
	while (p < e && (*p == ' ' || *p == '\t'))
		p++;
	for (n = p; n < e && ident_char(*n); n++)
		;
	if (n > p)
		statement(s, f, indent, is_func, p, (size_t)(n - p), line);
	s->deco = 0;
}

static void parse(struct pyfile *f, const char *text, size_t len)
{
	struct scan *s = calloc(1, sizeof(*s));
	const char *p = text, *end = text + len;
	unsigned line = 0;

	if (!s)
		return;
	while (p < end) {
		const char *e = memchr(p, '\n', (size_t)(end - p));
		const char *q = p;
		unsigned indent = 0;
		int start = !s->triple && !s->depth && !s->cont;

		e = e ? e : end;
		line++;
		for (; q < e && (*q == ' ' || *q == '\t'); q++)
			indent = *q == '\t' ? (indent / 8 + 1) * 8 : indent + 1;
		if (start && q < e && *q != '#' && *q != '\r')
			line_start(s, f, q, e, indent, line);
		scan_rest(s, q, e);
		s->cont = !s->triple && e > p && e[-1] == '\\';
		p = e + 1;
	}
	free(s);
}

static unsigned lookup(const struct pyfile *f, const char *qualname,
		       size_t qlen)
{
	size_t i;

	if (qlen == 8 && !memcmp(qualname, "<module>", 8))
		return 1;
	for (i = 0; i < f->n; i++)
		if (strlen(f->defs[i].qual) == qlen &&
		    !memcmp(f->defs[i].qual, qualname, qlen))
			return f->defs[i].line;
	return 0;
}

static void free_file(struct pyfile *f)
{
	size_t i;

	for (i = 0; i < f->n; i++)
		free(f->defs[i].qual);
	free(f->defs);
	free(f->path);
	free(f);
}

unsigned tp_pyline_in(const char *text, size_t len, const char *qualname,
		      size_t qlen)
{
	struct pyfile *f = calloc(1, sizeof(*f));
	unsigned line;

	if (!f)
		return 0;
	parse(f, text, len);
	line = lookup(f, qualname, qlen);
	free_file(f);
	return line;
}

static char *read_text(const char *path, size_t *len)
{
	FILE *fp = fopen(path, "re");
	char *buf;

	if (!fp)
		return NULL;
	buf = malloc(MAX_FILE);
	if (buf)
		*len = fread(buf, 1, MAX_FILE, fp);
	fclose(fp);
	if (buf && *len == MAX_FILE) {
		free(buf);
		return NULL;
	}
	return buf;
}

/* A file read once; a file that cannot be read is remembered empty. */
static struct pyfile *load(const char *path)
{
	struct pyfile *f;
	size_t len = 0;
	char *text;

	for (f = files; f; f = f->next)
		if (!strcmp(f->path, path))
			return f;
	if (nfiles >= MAX_FILES)
		return NULL;
	f = calloc(1, sizeof(*f));
	if (!f)
		return NULL;
	f->path = strdup(path);
	if (!f->path) {
		free(f);
		return NULL;
	}
	text = read_text(path, &len);
	if (text)
		parse(f, text, len);
	free(text);
	f->next = files;
	files = f;
	nfiles++;
	return f;
}

unsigned tp_pyline(const char *file, const char *qualname, size_t qlen)
{
	const struct pyfile *f;

	if (!file || file[0] != '/')
		return 0;
	f = load(file);
	return f ? lookup(f, qualname, qlen) : 0;
}
