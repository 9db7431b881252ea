/* tprof recover: a killed process's .tmp trace made whole.
 *
 * The writer ends its gzip stream with a sync point every second (see
 * SYNC_NS in output/writer.c), and writes whole events only: the file
 * inflates up to at least its last sync, and every event that inflates
 * completely is a valid event. So the trace is cut after its last
 * complete event, the traceEvents array is closed, and a "tprof" object
 * says it was recovered and from what. What the process recorded but had
 * not yet written (its rings, the compressor's buffer since the last
 * sync) is not in the file and is not recovered; the trailer's thread
 * names and drop counts are missing too.
 *
 * The recovered trace is written by tprof's own gzip writer under the
 * final name the process would have used, and its summary is computed
 * from it (trace_summary.c) into summaries/, as the library does. A .tmp
 * whose process is still alive (per its gzip header comment) is left. */
#define _GNU_SOURCE
#include <dirent.h>
#include <errno.h>
#include <fcntl.h>
#include <signal.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/stat.h>
#include <unistd.h>
#include <zlib.h>

#include "trace/atomic_file.h"
#include "trace/gzip.h"
#include "trace/json.h"
#include "recover.h"
#include "trace_summary.h"

#define TMP_SUFFIX ".trace.json.gz.tmp"
#define CHUNK (1 << 16)

struct cut {
	struct tp_buf text;	/* the inflated JSON */
	int ended;		/* the gzip stream was complete */
	size_t end;		/* bytes kept: up to the last whole event */
	uint64_t events;	/* whole events kept */
	char comment[400];
	char run[300];
	int pid, rank, world;
};

static int ends_with(const char *s, const char *suf)
{
	size_t n = strlen(s), k = strlen(suf);

	return n >= k && !strcmp(s + n - k, suf);
}

/* The whole file inflated as far as it goes: a cut stream ends in an
 * error or short, which is expected here. -1 only when it cannot be read
 * at all. */
static int inflate_all(const char *path, struct cut *c)
{
	unsigned char in[CHUNK];
	z_stream zs;
	ssize_t n;
	int fd, rc = Z_OK, first = 1;

	fd = open(path, O_RDONLY | O_CLOEXEC | O_NOFOLLOW | O_NONBLOCK);
	if (fd < 0)
		return -1;
	memset(&zs, 0, sizeof(zs));
	if (inflateInit2(&zs, 16 + MAX_WBITS) != Z_OK) {
		close(fd);
		return -1;
	}
	while (rc == Z_OK && (n = read(fd, in, sizeof(in))) > 0) {
		if (first && tp_gz_read_comment(in, (size_t)n, c->comment,
						sizeof(c->comment)) < 0)
			c->comment[0] = '\0';
		first = 0;
		zs.next_in = in;
		zs.avail_in = (uInt)n;
		do {
			if (tp_buf_reserve(&c->text, CHUNK)) {
				rc = Z_MEM_ERROR;
				break;
			}
			zs.next_out = (Bytef *)c->text.p + c->text.len;
			zs.avail_out = CHUNK;
			rc = inflate(&zs, Z_SYNC_FLUSH);
			c->text.len += CHUNK - zs.avail_out;
		} while (rc == Z_OK && zs.avail_out == 0);
		if (rc == Z_BUF_ERROR)
			rc = Z_OK;	/* needs more input */
	}
	c->ended = rc == Z_STREAM_END;
	inflateEnd(&zs);
	close(fd);
	return c->text.oom ? -1 : 0;
}

/* The end of the last whole event of traceEvents: the writer's JSON is
 * an object (depth 1) holding the array (depth 2) of events (depth 3 and
 * deeper); strings may hold any bracket. */
static void find_cut(struct cut *c)
{
	const char *p = c->text.p;
	int depth = 0, in_str = 0, esc = 0, in_events = 0;
	size_t i;

	c->end = 0;
	c->events = 0;
	for (i = 0; i < c->text.len; i++) {
		char ch = p[i];

		if (in_str) {
			if (esc)
				esc = 0;
			else if (ch == '\\')
				esc = 1;
			else if (ch == '"')
				in_str = 0;
			continue;
		}
		if (ch == '"') {
			in_str = 1;
		} else if (ch == '{' || ch == '[') {
			depth++;
			if (depth == 2 && ch == '[' && !in_events) {
				in_events = 1;
				c->end = i + 1;
			}
		} else if (ch == '}' || ch == ']') {
			depth--;
			if (depth == 1 && in_events)
				return;		/* the array ended */
			if (depth == 2 && in_events) {
				c->end = i + 1;
				c->events++;
			}
		}
	}
}

static void put_trailer(struct tp_buf *b, const struct cut *c,
			const char *tmp_name)
{
	tp_buf_lit(b, "\n],\n\"deviceProperties\": [],\n"
		   "\"distributedInfo\": {\"rank\": ");
	tp_json_i64(b, c->rank);
	tp_buf_lit(b, ", \"world_size\": ");
	tp_json_i64(b, c->world);
	tp_buf_lit(b, "},\n\"tprof\": {\"recovered\": true, \"pid\": ");
	tp_json_i64(b, c->pid);
	tp_buf_lit(b, ", \"run_id\": ");
	tp_json_str(b, c->run);
	tp_buf_lit(b, ", \"recovered_from\": ");
	tp_json_str(b, tmp_name);
	tp_buf_lit(b, ",\n \"events_written\": ");
	tp_json_u64(b, c->events);
	tp_buf_lit(b, ", \"events_recovered\": ");
	tp_json_u64(b, c->events);
	/* Whatever was still in the rings or in the compressor since the
	 * last sync: not in the file, and not counted by anyone. */
	tp_buf_lit(b, ", \"events_lost\": null, \"bytes_cut\": ");
	tp_json_u64(b, c->text.len - c->end);
	tp_buf_lit(b, "}}\n");
}

static int write_trace(const char *final, const struct cut *c,
		       const char *tmp_name)
{
	struct tp_out_file f;
	struct tp_buf tail = { 0 };
	struct tp_gz *g = calloc(1, sizeof(*g));
	int rc = -1;

	if (!g || tp_out_create(&f, final) < 0) {
		free(g);
		return -1;
	}
	put_trailer(&tail, c, tmp_name);
	if (tail.oom ||
	    tp_gz_open_codec(g, f.fd, 1, c->comment[0] ? c->comment : NULL,
			     TP_GZ_ZLIB) < 0 ||
	    tp_gz_write(g, c->text.p, c->end) < 0 ||
	    tp_gz_write(g, tail.p, tail.len) < 0 || tp_gz_finish(g) < 0) {
		errno = g->err ? g->err : ENOMEM;
		tp_gz_abandon(g);
		tp_out_abandon(&f);
		goto out;
	}
	rc = tp_out_commit(&f);
out:
	tp_buf_free(&tail);
	free(g);
	return rc;
}

/* summaries/<base>.summary.json, computed from the recovered trace. */
static void write_summary(const char *dir, const char *final_name,
			  const char *final)
{
	char err[256], name[1024];
	struct tp_buf b = { 0 };
	size_t n = strlen(final_name) - strlen(".trace.json.gz");
	int dfd;

	if (tp_trace_summary(final, &b, err, sizeof(err)) < 0 || b.oom) {
		fprintf(stderr, "tprof: warning: %s: no summary: %s\n", final,
			err);
		goto out;
	}
	snprintf(name, sizeof(name), "%.*s.summary.json", (int)n, final_name);
	dfd = tp_open_subdir(dir, "summaries");
	if (dfd < 0 || tp_write_file_atomic_at(dfd, name, b.p, b.len) < 0)
		fprintf(stderr, "tprof: warning: %s/summaries/%s: %s\n", dir,
			name, strerror(errno));
	if (dfd >= 0)
		close(dfd);
out:
	tp_buf_free(&b);
}

/* A zombie (killed, not yet reaped by its parent) is gone. */
static int alive(int pid)
{
	char path[64], buf[256], *p;
	ssize_t n;
	int fd;

	if (pid <= 0 || (kill(pid, 0) < 0 && errno != EPERM))
		return 0;
	snprintf(path, sizeof(path), "/proc/%d/stat", pid);
	fd = open(path, O_RDONLY | O_CLOEXEC);
	if (fd < 0)
		return 1;
	n = read(fd, buf, sizeof(buf) - 1);
	close(fd);
	buf[n > 0 ? n : 0] = '\0';
	p = strrchr(buf, ')');
	return !(p && (p[2] == 'Z' || p[2] == 'X'));
}

/* 1 recovered, 0 left as it is (with a line saying why), -1 error. */
static int recover_one(const char *dir, const char *name)
{
	char tmp[4096], final[4096];
	struct cut c;
	int rc = -1;

	memset(&c, 0, sizeof(c));
	snprintf(tmp, sizeof(tmp), "%s/%s", dir, name);
	snprintf(final, sizeof(final), "%s/%.*s", dir,
		 (int)(strlen(name) - strlen(".tmp")), name);
	if (inflate_all(tmp, &c) < 0) {
		fprintf(stderr, "tprof: %s: cannot read: %s\n", tmp,
			strerror(errno));
		goto out;
	}
	if (sscanf(c.comment, "tprof run=%299s pid=%d rank=%d world=%d", c.run,
		   &c.pid, &c.rank, &c.world) != 4 || c.rank < 0 ||
	    c.world <= c.rank) {
		fprintf(stderr, "tprof: %s: not a tprof trace (no run in its "
			"gzip header); left as it is\n", tmp);
		rc = 0;
		goto out;
	}
	if (alive(c.pid)) {
		fprintf(stderr, "tprof: %s: process %d is still running; left "
			"as it is\n", tmp, c.pid);
		rc = 0;
		goto out;
	}
	if (access(final, F_OK) == 0) {
		fprintf(stderr, "tprof: %s: %s exists; left as it is (move "
			"one away and run tprof recover again)\n", tmp, final);
		rc = 0;
		goto out;
	}
	if (c.ended) {		/* complete: it died between end and rename */
		if (rename(tmp, final) < 0) {
			fprintf(stderr, "tprof: %s: cannot rename: %s\n", tmp,
				strerror(errno));
			goto out;
		}
		write_summary(dir, strrchr(final, '/') + 1, final);
		fprintf(stderr, "tprof: recovered %s: complete, renamed\n",
			final);
		rc = 1;
		goto out;
	}
	find_cut(&c);
	if (!c.end) {
		fprintf(stderr, "tprof: %s: process %d died before it wrote "
			"any event; nothing to recover (removed)\n", tmp, c.pid);
		unlink(tmp);
		rc = 0;
		goto out;
	}
	if (write_trace(final, &c, name) < 0) {
		fprintf(stderr, "tprof: %s: cannot write: %s\n", final,
			strerror(errno));
		goto out;
	}
	unlink(tmp);
	write_summary(dir, strrchr(final, '/') + 1, final);
	fprintf(stderr, "tprof: recovered %s (%llu events) from process %d "
		"killed mid-run; what it had not yet written is lost\n", final,
		(unsigned long long)c.events, c.pid);
	rc = 1;
out:
	tp_buf_free(&c.text);
	return rc;
}

int tp_recover_dir(const char *dir)
{
	struct dirent *de;
	struct stat st;
	char path[4096];
	int n = 0, r;
	DIR *d = opendir(dir);

	if (!d)
		return -1;
	while ((de = readdir(d))) {
		if (!ends_with(de->d_name, TMP_SUFFIX))
			continue;
		snprintf(path, sizeof(path), "%s/%s", dir, de->d_name);
		if (lstat(path, &st) || !S_ISREG(st.st_mode))
			continue;
		r = recover_one(dir, de->d_name);
		if (r > 0)
			n++;
	}
	closedir(d);
	return n;
}

int tp_cmd_recover(int argc, char **argv)
{
	int i, rc = 0;

	if (argc < 2 || !strcmp(argv[1], "-h") || !strcmp(argv[1], "--help")) {
		fprintf(stderr, "usage: tprof recover DIR...\n"
			"  turns the .tmp traces of killed processes in each "
			"DIR into valid traces\n");
		return argc < 2 ? 2 : 0;
	}
	for (i = 1; i < argc; i++)
		if (tp_recover_dir(argv[i]) < 0) {
			fprintf(stderr, "tprof: error: %s: %s\n", argv[i],
				strerror(errno));
			rc = 1;
		}
	return rc;
}
