/* tprof merge internals, shared by cli/merge*.c. */
#ifndef TP_CLI_MERGE_INT_H
#define TP_CLI_MERGE_INT_H

#include <stddef.h>
#include <stdint.h>

#include "cli/read/gzread.h"
#include "cli/read/json.h"
#include "files/atomic_file.h"
#include "gzip/gzip.h"
#include "encode/json.h"

/* Input i's k-th pid (in order of first appearance, from 0) becomes
 * (i + 1) * MG_PID_STRIDE + k, so an input holds at most MG_PID_STRIDE
 * processes. */
#define MG_PID_STRIDE 1000
/* Input i's numeric flow/async id N becomes (i + 1) * MG_ID_STRIDE + N:
 * N must be an integer below MG_ID_STRIDE, and the result stays below
 * 2^53 (exact in a double, as JavaScript and jsoncpp read it) for up to
 * 9006 inputs. */
#define MG_ID_STRIDE 1000000000000LL
#define MG_MAX_INPUTS 9000
/* The output's baseTimeNanoseconds is a multiple of this, as tprof's own
 * traces' (docs/reference/trace-format.md). */
#define MG_BASE_STEP 100000000000000LL
/* A string tid of an input becomes MG_STR_TID_BASE + k (merge_tids.c). */
#define MG_STR_TID_BASE 1000000000LL
#define MG_MAX_STR_TIDS 1000000
/* Largest single value (an event's args...) copied; bounds memory. */
#define MG_MAX_VALUE (64u << 20)
/* The output buffer is compressed and written when it holds this much. */
#define MG_FLUSH_BYTES (256u * 1024)

struct mg_out {
	const char *path;	/* the name given, for messages */
	struct tp_out_file file;	/* a temporary file renamed to path,
					 * or path itself (a FIFO, a device) */
	int fd;
	int created;		/* file is open and not yet completed */
	struct tp_gz *gz;	/* NULL: a plain file */
	char *buf;
	size_t len, cap;
	uint64_t raw_bytes;	/* uncompressed bytes written */
};

struct mg_pid {
	char *lit;		/* the pid as written: a number literal */
	size_t litlen;
	uint32_t hash;
	int64_t newpid;
	int64_t sort;		/* the input's process_sort_index ... */
	int has_sort;		/* ... when it had one */
	int named;		/* a process_name was written */
};

/* A string tid, as written (a JSON string literal, quotes included). */
struct mg_tid {
	char *lit;
	size_t litlen;
	uint32_t hash;
	int64_t newtid;
};

struct mg_input {
	char *path;
	int from_dir;
	int skip;		/* a merged trace found in a directory */
	int64_t rank;
	int rank_from;		/* MG_RANK_* */
	int64_t world_size;	/* distributedInfo's, before the events */
	int64_t base_ns;	/* baseTimeNanoseconds, 0 when absent */
	int64_t shift_ns;	/* base_ns - the output's base */
	unsigned argpos;	/* order on the command line */
	unsigned idx;		/* order in the output, from 0 */
	char tag[48];		/* prefix of its string ids, "rank3" */
	uint64_t nevents;	/* read */
	uint64_t nwritten;	/* copied to the output */
	uint64_t ndropped;	/* no pid, or pid "", or not a number or string */
	uint64_t nreplaced;	/* its own process_sort_index events */
	struct mg_pid *pids;
	size_t npids, cappids;
	uint32_t *slots;	/* pid index + 1, open addressing */
	size_t nslots;
	struct mg_tid *tids;	/* string tids, in order of appearance */
	size_t ntids, captids;
	uint32_t *tslots;	/* tid index + 1, open addressing */
	size_t ntslots;
	size_t last;		/* pid of the previous event, + 1 */
	/* Its "tprof" object's account of NVTX ranges and drops, carried
	 * to the output's tprof.merged entry, so that tprof check can hold
	 * the ranges to it there too (-1: absent). */
	int have_nvtx, nvtx_by_id, nvtx_window;
	int64_t events_dropped, nv_ranges, nv_dropped[4];
};

enum { MG_RANK_NONE, MG_RANK_NAME, MG_RANK_DINFO, MG_RANK_FILE };

struct mg {
	struct mg_out out;
	struct mg_input *in;
	size_t nin;
	int64_t base_ns;
	uint64_t nwritten;	/* events in the output */
	int failed;		/* an error line was printed */
	struct tp_json_arena arena;
	char *scratch;		/* a rewritten value on its way */
	size_t scap;
	struct tp_buf esc;	/* a string being escaped */
	int gzip_level;		/* OUT's, when gzipped: 1 to 9 */
};

/* merge_err.c */
/* Prints "tprof: error: FILE: ..." unless an error was printed already;
 * returns -1. */
int mg_fail(struct mg *m, const char *file, const char *fmt, ...)
	__attribute__((format(printf, 3, 4)));
/* The parser's or the reader's error for file. */
int mg_parse_fail(struct mg *m, const char *file, struct tp_json *j,
		  struct tp_gzr *gz);

/* merge_out.c: the output buffer, and its plain or gzip file. */
int mg_out_open(struct mg *m, const char *path);
int mg_out_flush(struct mg *m);
int mg_out_finish(struct mg *m);
void mg_out_abandon(struct mg_out *o);
int mg_out_reserve(struct mg *m, size_t n);

static inline void mg_put(struct mg_out *o, const void *p, size_t n)
{
	__builtin_memcpy(o->buf + o->len, p, n);
	o->len += n;
}

/* Appends, growing the buffer; -1 (and an error) when out of memory. */
int mg_add(struct mg *m, const void *p, size_t n);
int mg_add_i64(struct mg *m, int64_t v);
int mg_addf(struct mg *m, const char *fmt, ...)
	__attribute__((format(printf, 2, 3)));
/* s as a JSON string, quoted; bytes that are not UTF-8 become U+FFFD. */
int mg_add_str(struct mg *m, const char *s, size_t n);
/* a followed by b, as one JSON string. */
int mg_add_str2(struct mg *m, const char *a, size_t an, const char *b,
		size_t bn);

/* merge_num.c */
/* A JSON number literal (as the parser checked it) in microseconds to
 * integer nanoseconds, rounded half away from zero; -1 when out of
 * range. */
int mg_us_to_ns(const char *s, size_t n, int64_t *ns);
/* Formats ns as microseconds with three decimals; returns the length
 * (at most 24). */
size_t mg_fmt_us(char *buf, int64_t ns);
/* Nonzero if s is -?digits.ddd (what tprof writes). */
int mg_three_decimals(const char *s, size_t n);
/* Decimal or hex text of an integer below MG_ID_STRIDE; -1 otherwise. */
int mg_parse_uint(const char *s, size_t n, int base, int64_t *v);
/* The rank in a "...-rank<R>" trace name or "rank<R>" in a file name. */
int mg_rank_suffix(const char *s, size_t n, int64_t *rank);
int mg_rank_in_name(const char *path, int64_t *rank);

/* merge_tids.c: the number standing for string tid s (a JSON string
 * literal); its map in tprof.merged[].tids; freeing it. */
int mg_tid_of_string(struct mg *m, struct mg_input *in, const char *s,
		     size_t n, int64_t *tid);
int mg_put_tid_map(struct mg *m, const struct mg_input *in);
void mg_tids_free(struct mg_input *in);

/* merge_events.c: copies input's traceEvents (the parser is just past the
 * key) to the output, rewritten. */
int mg_copy_events(struct mg *m, struct mg_input *in, struct tp_json *j,
		   struct tp_gzr *gz);
/* process_name (for pids without one) and process_sort_index events for
 * every pid of the input. */
int mg_put_process_meta(struct mg *m, struct mg_input *in);

#endif
