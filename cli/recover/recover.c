/* tprof recover: a killed process's .tmp trace made whole.
 *
 * The writer ends its gzip stream with a sync point every second (see
 * SYNC_NS in output/writer.c), and writes whole events only: the file
 * inflates up to at least its last sync, and every event that inflates
 * completely is a valid event. So the trace is cut after its last
 * complete event, the traceEvents array is closed, and a "tprof" object
 * says it was recovered and from what. When the process left its rings
 * file (record/ringfile.h, recover_rings.c), the .tmp is cut at its last
 * sync point instead and every record since is appended from the rings,
 * so only records that cannot be decoded are lost, and counted.
 *
 * The recovered trace is written by tprof's own gzip writer under the
 * final name the process would have used, and its summary is computed
 * from it (trace_summary.c) into summaries/, as the library does. A .tmp
 * whose process is still alive (per its gzip header comment) is left.
 *
 * A Perfetto trace's .tmp (.pftrace.gz.tmp, TPROF_FORMAT=perfetto) is cut
 * after its last whole packet (or at the synced length); the rings'
 * records come from the decoder's own encoder (a second packet sequence,
 * preload/rings_decode.c) and the trailer from a third, as the "tprof
 * metadata" event: each clears its own incremental state, so nothing it
 * writes depends on what the killed writer left. */
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

#include "files/atomic_file.h"
#include "gzip/gzip.h"
#include "encode/json.h"
#include "encode/tev.h"
#include "cli/cleanup/sigclean.h"
#include "cli/usage/usage.h"
#include "recover.h"
#include "recover_cut.h"
#include "recover_flight.h"
#include "recover_origin.h"
#include "recover_summary.h"
#include "recover_rings.h"
#include "cli/read/trace_summary.h"

#define TMP_SUFFIX ".trace.json.gz.tmp"
#define PF_TMP_SUFFIX ".pftrace.gz.tmp"

/* Who wrote the file, from its gzip header comment. */
struct origin {
	char comment[400];
	char run[300];
	int pid, rank, world;
	long long created;	/* the gzip header's MTIME: Unix seconds */
};

static int ends_with(const char *s, const char *suf)
{
	size_t n = strlen(s), k = strlen(suf);

	return n >= k && !strcmp(s + n - k, suf);
}

static int read_origin(int fd, struct origin *o)
{
	unsigned char buf[512];
	ssize_t n = pread(fd, buf, sizeof(buf), 0);

	if (n <= 0 || tp_gz_read_comment(buf, (size_t)n, o->comment,
					 sizeof(o->comment)) < 0)
		return -1;
	o->created = (long long)buf[4] | (long long)buf[5] << 8 |
		     (long long)buf[6] << 16 | (long long)buf[7] << 24;
	if (sscanf(o->comment, "tprof run=%299s pid=%d rank=%d world=%d",
		   o->run, &o->pid, &o->rank, &o->world) != 4 || o->rank < 0 ||
	    o->world <= o->rank)
		return -1;
	return 0;
}

/* What the rings file added (rings.path "" when there was none). */
struct from_rings {
	struct tp_rings_found found;
	struct tp_rf_counts c;
	int used;		/* decoded and appended */
	char why[512];		/* why not, when found but not used */
};

static void put_rings(struct tp_buf *b, const struct from_rings *fr)
{
	tp_buf_lit(b, ",\n \"from_rings\": {\"records\": ");
	tp_json_u64(b, fr->c.records);
	tp_buf_lit(b, ", \"threads\": ");
	tp_json_u64(b, fr->c.threads);
	tp_buf_lit(b, ", \"unreadable\": ");
	tp_json_u64(b, fr->c.unreadable);
	tp_buf_lit(b, ", \"dropped\": ");
	tp_json_u64(b, fr->c.dropped);
	tp_buf_lit(b, ", \"spilled_lost\": ");
	tp_json_u64(b, fr->c.spilled_lost);
	tp_buf_lit(b, "}");
}

/* The trailer's top-level pairs, without braces. */
static void put_pairs(struct tp_buf *b, const struct origin *o,
		      const struct tp_cut_result *r, const char *tmp_name,
		      const struct from_rings *fr)
{
	tp_recover_put_origin(b, o->rank, o->world, o->pid, o->run, tmp_name);
	tp_buf_lit(b, ",\n \"events_written\": ");
	tp_json_u64(b, r->events);
	tp_buf_lit(b, ", \"events_recovered\": ");
	/* and a thread_name event per ring */
	tp_json_u64(b, r->events + fr->c.records + fr->c.threads);
	if (fr->used) {
		/* The .tmp up to its last sync and the rings from there:
		 * only records the decoder could not read are lost. */
		tp_buf_lit(b, ", \"events_lost\": ");
		tp_json_u64(b, fr->c.unreadable);
		tp_buf_lit(b, ", \"events_dropped\": ");
		tp_json_u64(b, fr->c.dropped);
	} else {
		/* Whatever was still in the rings or in the compressor
		 * since the last sync: not in the file, not counted. */
		tp_buf_lit(b, ", \"events_lost\": null");
	}
	tp_buf_lit(b, ", \"bytes_cut\": ");
	tp_json_u64(b, r->bytes_cut);
	if (fr->used)
		put_rings(b, fr);
	tp_buf_lit(b, "}");
}

static void put_trailer(struct tp_buf *b, const struct origin *o,
			const struct tp_cut_result *r, const char *tmp_name,
			const struct from_rings *fr)
{
	tp_buf_lit(b, "\n],\n");
	put_pairs(b, o, r, tmp_name, fr);
	tp_buf_lit(b, "}\n");
}

/* Perfetto: the pairs as the "tprof metadata" event, at the file's
 * creation, after boot: the base may be before it (tev.h:
 * trailer_ts_ns). */
static void put_trailer_pf(struct tp_buf *b, const struct origin *o,
			   const struct tp_cut_result *r, const char *tmp_name,
			   const struct from_rings *fr)
{
	int64_t created = (int64_t)o->created * 1000000000;
	struct tp_buf j = { 0 };

	put_pairs(&j, o, r, tmp_name, fr);
	if (j.oom)
		b->oom = 1;
	tp_recover_put_pf_trailer(b, tmp_name, r->base_ns,
				  created > r->base_ns ? created - r->base_ns :
				  0, j.p, j.len);
	tp_buf_free(&j);
}

enum { CUT_FAILED = -1, CUT_WRITTEN, CUT_EMPTY, CUT_WHOLE };

/* The cut trace streamed into final: CUT_WRITTEN; CUT_EMPTY (no whole
 * event) and CUT_WHOLE (the stream was complete) leave no file. */
static int write_trace(int fd, const char *final, const struct origin *o,
		       const char *tmp_name, struct tp_cut_result *r,
		       struct from_rings *fr, int pf)
{
	struct tp_out_file f;
	struct tp_buf tail = { 0 };
	struct tp_gz *g = calloc(1, sizeof(*g));
	int rc = CUT_FAILED, slot;

	if (!g || tp_out_create(&f, final) < 0) {
		free(g);
		return CUT_FAILED;
	}
	slot = tp_sigclean_add(f.tmp);
	if (tp_gz_open_codec(g, f.fd, 1, o->comment, TP_GZ_ZLIB) < 0 ||
	    tp_recover_cut_as(fd, g, fr->found.path[0] ? fr->found.tmp_len : 0,
			      pf, r) < 0)
		goto fail;
	if (r->ended || !r->events) {
		rc = r->ended ? CUT_WHOLE : CUT_EMPTY;
		goto fail;
	}
	if (fr->found.path[0]) {
		if (tp_rings_append(fr->found.path, g, &fr->c, fr->why,
				    sizeof(fr->why)) == 0)
			fr->used = 1;
		else if (g->err)
			goto fail;
		else
			/* Cut at the sync point all the same: the events
			 * past it may be whole, but are not known to be. */
			memset(&fr->c, 0, sizeof(fr->c));
	}
	if (pf)
		put_trailer_pf(&tail, o, r, tmp_name, fr);
	else
		put_trailer(&tail, o, r, tmp_name, fr);
	if (tail.oom || tp_gz_write(g, tail.p, tail.len) < 0 ||
	    tp_gz_finish(g) < 0)
		goto fail;
	rc = tp_out_commit(&f) < 0 ? CUT_FAILED : CUT_WRITTEN;
	goto out;
fail:
	if (g->err)
		errno = g->err;
	tp_gz_abandon(g);
	tp_out_abandon(&f);
out:
	tp_sigclean_drop(slot);
	tp_buf_free(&tail);
	free(g);
	return rc;
}

static ssize_t read_small(const char *path, char *buf, size_t len)
{
	ssize_t n;
	int fd = open(path, O_RDONLY | O_CLOEXEC);

	if (fd < 0)
		return -1;
	n = read(fd, buf, len - 1);
	close(fd);
	buf[n > 0 ? n : 0] = '\0';
	return n;
}

/* When the process started, in Unix seconds (boot time + its start in
 * clock ticks, /proc/PID/stat field 22); -1 when unknown. */
static long long started_at(const char *stat_rest)
{
	static char st[8192];
	unsigned long long ticks;
	long long btime = -1;
	const char *p = stat_rest;
	long hz = sysconf(_SC_CLK_TCK);
	char *b;
	int i;

	for (i = 0; i < 19 && p; i++)	/* field 3 (state) to field 22 */
		p = strchr(p + 1, ' ');
	if (!p || sscanf(p, " %llu", &ticks) != 1 || hz <= 0 ||
	    read_small("/proc/stat", st, sizeof(st)) <= 0)
		return -1;
	b = strstr(st, "\nbtime ");
	if (!b || sscanf(b, "\nbtime %lld", &btime) != 1)
		return -1;
	return btime + (long long)(ticks / (unsigned long long)hz);
}

/* Whether the process that wrote the file still runs: a zombie (killed,
 * not yet reaped) is gone, and so is a pid taken by a process that
 * started after the file was created (the pid was reused). */
static int alive(const struct origin *o)
{
	char path[64], buf[1024], *p;
	long long start;

	if (o->pid <= 0 || (kill(o->pid, 0) < 0 && errno != EPERM))
		return 0;
	snprintf(path, sizeof(path), "/proc/%d/stat", o->pid);
	if (read_small(path, buf, sizeof(buf)) <= 0)
		return 1;
	p = strrchr(buf, ')');
	if (!p || !p[1] || !p[2])
		return 1;
	if (p[2] == 'Z' || p[2] == 'X')
		return 0;
	start = started_at(p + 2);
	return start < 0 || !o->created || start <= o->created + 2;
}

/* The .tmp's final name can be taken: its process is gone and nothing
 * is there. Otherwise one line says why it is left. */
static int may_recover(const char *tmp, const char *final,
		       const struct origin *o)
{
	if (alive(o)) {
		fprintf(stderr, "tprof: %s: process %d is still running; left "
			"as it is\n", tmp, o->pid);
		return 0;
	}
	if (access(final, F_OK) == 0) {
		fprintf(stderr, "tprof: %s: %s exists; left as it is (move "
			"one away and run tprof recover again)\n", tmp, final);
		return 0;
	}
	return 1;
}

/* A complete stream whose process died between its end and its rename. */
static int rename_whole(const char *dir, const char *tmp, const char *final)
{
	if (rename(tmp, final) < 0) {
		fprintf(stderr, "tprof: %s: cannot rename: %s\n", tmp,
			strerror(errno));
		return -1;
	}
	tp_recover_summary(dir, strrchr(final, '/') + 1, final);
	fprintf(stderr, "tprof: recovered %s: complete, renamed\n", final);
	return 1;
}

/* 1 recovered, 0 left as it is (with a line saying why), -1 error. */
static int recover_one(const char *dir, const char *name)
{
	char tmp[4096], final[4096];
	struct tp_cut_result r;
	struct from_rings fr;
	struct origin o;
	int fd, rc, pf = ends_with(name, PF_TMP_SUFFIX);

	memset(&o, 0, sizeof(o));
	memset(&r, 0, sizeof(r));
	memset(&fr, 0, sizeof(fr));
	snprintf(tmp, sizeof(tmp), "%s/%s", dir, name);
	snprintf(final, sizeof(final), "%s/%.*s", dir,
		 (int)(strlen(name) - strlen(".tmp")), name);
	fd = open(tmp, O_RDONLY | O_CLOEXEC | O_NOFOLLOW | O_NONBLOCK);
	if (fd < 0) {
		fprintf(stderr, "tprof: %s: cannot read: %s\n", tmp,
			strerror(errno));
		return -1;
	}
	if (read_origin(fd, &o) < 0) {
		fprintf(stderr, "tprof: %s: not a tprof trace (no run in its "
			"gzip header); left as it is\n", tmp);
		close(fd);
		return 0;
	}
	if (!may_recover(tmp, final, &o)) {
		close(fd);
		return 0;
	}
	tp_rings_find(dir, o.pid, name, &fr.found);
	rc = write_trace(fd, final, &o, name, &r, &fr, pf);
	close(fd);
	if (rc != CUT_FAILED && fr.found.path[0] && rc != CUT_WHOLE) {
		if (!fr.used)
			fprintf(stderr, "tprof: %s: its rings could not be "
				"read (%s); what they held is lost\n",
				fr.found.path, fr.why);
		unlink(fr.found.path);
	}
	switch (rc) {
	case CUT_WHOLE:
		return rename_whole(dir, tmp, final);
	case CUT_EMPTY:
		fprintf(stderr, "tprof: %s: process %d died before it wrote "
			"any event; nothing to recover (removed)\n", tmp, o.pid);
		unlink(tmp);
		return 0;
	case CUT_FAILED:
		fprintf(stderr, "tprof: %s: cannot write: %s\n", final,
			strerror(errno));
		return -1;
	}
	unlink(tmp);
	tp_recover_summary(dir, strrchr(final, '/') + 1, final);
	if (fr.used)
		fprintf(stderr, "tprof: recovered %s (%llu events, %llu of "
			"them from its rings file) from process %d killed "
			"mid-run\n", final, (unsigned long long)(r.events +
			fr.c.records), (unsigned long long)fr.c.records, o.pid);
	else
		fprintf(stderr, "tprof: recovered %s (%llu events) from "
			"process %d killed mid-run; what it had not yet "
			"written is lost\n", final,
			(unsigned long long)r.events, o.pid);
	return 1;
}

int tp_recover_dir(const char *dir, int *failed)
{
	struct dirent *de;
	struct stat st;
	char path[4096];
	int n = 0, bad = 0;
	DIR *d = opendir(dir);

	if (!d)
		return -1;
	while ((de = readdir(d))) {
		if (!ends_with(de->d_name, TMP_SUFFIX) &&
		    !ends_with(de->d_name, PF_TMP_SUFFIX))
			continue;
		snprintf(path, sizeof(path), "%s/%s", dir, de->d_name);
		if (lstat(path, &st) || !S_ISREG(st.st_mode))
			continue;
		if (recover_one(dir, de->d_name) < 0)
			bad++;
		n++;
	}
	closedir(d);
	n += tp_recover_flights(dir, &bad);
	if (failed)
		*failed += bad;
	return n + tp_rings_remove_orphans(dir);
}

static const char help_text[] =
	"usage: tprof recover DIR...\n"
	"\n"
	"Turn the .tmp traces that killed processes left in each DIR into\n"
	"valid traces under their final names, with their summaries (and\n"
	"the flight recorder's window of each into the trace its next dump\n"
	"would have been), and remove the rings files of processes that are\n"
	"gone. A .tmp whose\n"
	"process still runs is left. One line on stderr for each file, or\n"
	"one saying there was nothing to recover. tprof report and tprof\n"
	"merge do this first on the directories they read.\n"
	"\n"
	"  -h, --help  show this help\n"
	"\n"
	"Exit status: 0 done (also when nothing needed recovering), 1 a\n"
	"DIR could not be read or a file in it could not be recovered\n"
	"(each said), 2 usage error.\n";

int tp_cmd_recover(int argc, char **argv)
{
	static const struct tp_cmd_args args = {
		.name = "recover", .help = help_text,
		.missing = "no directory given: give the DIR the traces were "
			   "written to",
	};
	int i, n, failed = 0, rc = tp_cmd_args(&args, argc, argv, &n);

	if (rc >= 0)
		return rc;
	for (i = 1, rc = 0; i <= n; i++) {
		switch (tp_recover_dir(argv[i], &failed)) {
		case -1:
			fprintf(stderr, "tprof: error: %s: %s (give the "
				"directory the traces were written to)\n",
				argv[i], strerror(errno));
			rc = 1;
			break;
		case 0:
			fprintf(stderr, "tprof: %s: nothing to recover (no .tmp "
				"trace or rings file a killed process left)\n",
				argv[i]);
			break;
		}
	}
	return failed ? 1 : rc;
}
