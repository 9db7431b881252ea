/* tprof recover: a killed flight recorder's window (see recover_flight.h).
 * The flight file holds the trace's header text and the window's chunks
 * (each deflated on its own); the rings file beside it holds what was
 * recorded after the last chunk its sync point names. The trace is the
 * header, the chunks up to that one (each trimmed to the window: the
 * TPROF_FLIGHT seconds before the last), the rings' records, and a
 * trailer saying it was recovered. Memory: one chunk inflated.
 *
 * In Perfetto (the file's format 1) the header is the log of every
 * track descriptor the encoder wrote, the chunks' packets are trimmed by
 * the Perfetto trimmer, the rings' records come from the decoder's own
 * encoder (a second writer) and the trailer is the "tprof metadata"
 * event of a third, as for a cut .pftrace.gz.tmp (recover.c). */
#define _GNU_SOURCE
#include <dirent.h>
#include <errno.h>
#include <signal.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <unistd.h>

#include <zlib.h>

#include "encode/json.h"
#include "encode/tev.h"
#include "files/atomic_file.h"
#include "gzip/gzip.h"
#include "record/flightfile.h"
#include "cli/cleanup/sigclean.h"
#include "recover_flight.h"
#include "recover_origin.h"
#include "recover_rings.h"
#include "recover_summary.h"

struct window {
	int64_t cut_ns;		/* its start, trace time */
	int64_t end_ns;		/* its last chunk's end */
	int pf;			/* Perfetto */
	uint64_t events;	/* events written from the chunks */
	uint64_t left_out;	/* older events of kept chunks */
	uint64_t chunks;
	struct tp_rf_counts rings;
	int from_rings;
};

static int flight_pid(const char *name)
{
	int pid, n;

	if (strncmp(name, TP_FF_PREFIX, strlen(TP_FF_PREFIX)) ||
	    sscanf(name + strlen(TP_FF_PREFIX), "%d.%d", &pid, &n) != 2)
		return -1;
	return pid;
}

/* Gone: no such process, or a zombie (killed, not yet reaped). */
static int gone(int pid)
{
	char path[64], buf[512], *p;
	FILE *f;
	size_t n;

	if (pid <= 0)
		return 0;
	if (kill(pid, 0) < 0 && errno == ESRCH)
		return 1;
	snprintf(path, sizeof(path), "/proc/%d/stat", pid);
	f = fopen(path, "re");
	if (!f)
		return 0;
	n = fread(buf, 1, sizeof(buf) - 1, f);
	fclose(f);
	buf[n] = '\0';
	p = strrchr(buf, ')');
	return p && p[1] && p[2] && (p[2] == 'Z' || p[2] == 'X');
}

/* The last chunk's end (up to seq upto): the window is the TPROF_FLIGHT
 * seconds before it. */
static int64_t window_cut(const struct tp_ff_view *v, uint64_t upto,
			  int64_t *last)
{
	struct tp_ff_iter it = { 0 };
	const struct tp_ff_chunk *c;
	int64_t end = 0;

	while ((c = tp_ff_view_next(v, &it, upto)))
		end = c->end_ns;
	*last = end;
	return end - (int64_t)v->h->flight_ns;
}

static int put_chunk(z_stream *z, const struct tp_ff_chunk *c, char *buf,
		     struct tp_gz *g, struct window *w)
{
	uint64_t left = 0;
	size_t len;

	inflateReset(z);
	z->next_in = (Bytef *)(c + 1);
	z->avail_in = c->zlen;
	z->next_out = (Bytef *)buf;
	z->avail_out = (uInt)c->len;
	if (inflate(z, Z_FINISH) != Z_STREAM_END || z->avail_out)
		return 0;	/* cannot be: tprof's own deflate */
	len = w->pf ? tp_pf_trim(buf, c->len, w->cut_ns, &left) :
		      tp_json_trim(buf, c->len, w->cut_ns, &left);
	w->events += c->events - left;
	w->left_out += left;
	w->chunks++;
	return tp_gz_write(g, buf, len);
}

/* The chunks up to seq upto, oldest first, trimmed to the window. */
static int put_chunks(const struct tp_ff_view *v, uint64_t upto,
		      struct tp_gz *g, struct window *w)
{
	struct tp_ff_iter it = { 0 };
	const struct tp_ff_chunk *c;
	z_stream z = { 0 };
	uint64_t max = 0;
	char *buf;
	int rc = 0;

	while ((c = tp_ff_view_next(v, &it, upto)))
		if (c->len > max)
			max = c->len;
	if (max > UINT32_MAX || !(buf = malloc(max ? max : 1)))
		return -1;
	if (inflateInit2(&z, -15) != Z_OK) {
		free(buf);
		return -1;
	}
	memset(&it, 0, sizeof(it));
	while (!rc && (c = tp_ff_view_next(v, &it, upto)))
		rc = put_chunk(&z, c, buf, g, w);
	inflateEnd(&z);
	free(buf);
	return rc;
}

/* The trailer's pairs, without the outer braces. */
static void put_pairs(struct tp_buf *b, const struct tp_ff_hdr *h,
		      const char *from, const struct window *w)
{
	tp_recover_put_origin(b, h->rank, h->world, h->pid, h->run, from);
	tp_buf_lit(b, ",\n \"events_recovered\": ");
	tp_json_u64(b, w->events + w->rings.records + w->rings.threads);
	tp_buf_lit(b, ", \"events_lost\": ");
	if (w->from_rings)
		tp_json_u64(b, w->rings.unreadable);
	else
		tp_buf_lit(b, "null");
	tp_buf_lit(b, ", \"events_dropped\": ");
	tp_json_u64(b, w->rings.dropped);
	tp_buf_lit(b, ",\n \"flight\": {\"seconds\": ");
	tp_json_double(b, (double)h->flight_ns / 1e9);
	tp_buf_lit(b, ", \"window_events\": ");
	tp_json_u64(b, w->events);
	tp_buf_lit(b, ", \"left_out\": ");
	tp_json_u64(b, w->left_out);
	tp_buf_lit(b, ", \"window_start_us\": ");
	tp_json_us(b, w->cut_ns);
	tp_buf_lit(b, ", \"from_rings\": ");
	tp_json_u64(b, w->rings.records);
	tp_buf_lit(b, ", \"trigger\": \"killed\"}}");
}

static void put_trailer(struct tp_buf *b, const struct tp_ff_hdr *h,
			const char *from, const struct window *w)
{
	struct tp_buf j = { 0 };

	if (!w->pf) {
		tp_buf_lit(b, "\n],\n");
		put_pairs(b, h, from, w);
		tp_buf_lit(b, "}\n");
		return;
	}
	put_pairs(&j, h, from, w);
	if (j.oom)
		b->oom = 1;
	tp_recover_put_pf_trailer(b, h->name, h->base_ns, w->end_ns, j.p,
				  j.len);
	tp_buf_free(&j);
}

/* The name the process's next dump would have taken. */
static void final_name(const char *dir, const struct tp_ff_hdr *h,
		       char *out, size_t len)
{
	char stem[600];
	const char *ext;

	if (h->dumps)
		snprintf(stem, sizeof(stem), "%s-dump%llu", h->name,
			 (unsigned long long)h->dumps + 1);
	else
		snprintf(stem, sizeof(stem), "%s", h->name);
	ext = h->format == 1 ? "pftrace.gz" : "trace.json.gz";
	snprintf(out, len, "%s/%s-rank%d.%s", dir, stem, h->rank, ext);
	if (access(out, F_OK) == 0)
		snprintf(out, len, "%s/%s-rank%d-pid%d.%s", dir, stem, h->rank,
			 h->pid, ext);
}

static int write_trace(const struct tp_ff_view *v, const char *final,
		       const char *from, const struct tp_rings_found *rf,
		       struct window *w, char *why, size_t whylen)
{
	const struct tp_ff_hdr *h = v->h;
	struct tp_buf tail = { 0 };
	char comment[400];
	struct tp_out_file f;
	struct tp_gz *g = calloc(1, sizeof(*g));
	const char *head = (const char *)h + TP_FF_HEAD_OFF;
	size_t head_len = h->head_len;
	int rc = -1, slot;

	if (!g || tp_out_create(&f, final) < 0) {
		free(g);
		snprintf(why, whylen, "%s", strerror(errno));
		return -1;
	}
	slot = tp_sigclean_add(f.tmp);
	snprintf(comment, sizeof(comment), "tprof run=%s pid=%d rank=%d "
		 "world=%d", h->run, h->pid, h->rank, h->world);
	w->cut_ns = window_cut(v, rf->path[0] ? rf->tmp_len : 0, &w->end_ns);
	w->pf = h->format == 1;
	if (w->pf)
		head = tp_ff_view_tracks(v, &head_len);
	if (tp_gz_open_codec(g, f.fd, 1, comment, TP_GZ_ZLIB) < 0 ||
	    tp_gz_write(g, head, head_len) < 0 ||
	    put_chunks(v, rf->path[0] ? rf->tmp_len : 0, g, w) < 0)
		goto fail;
	if (rf->path[0] && tp_rings_append(rf->path, g, &w->rings, why,
					   whylen) == 0)
		w->from_rings = 1;
	else if (g->err)
		goto fail;
	put_trailer(&tail, h, from, w);
	if (tail.oom || tp_gz_write(g, tail.p, tail.len) < 0 ||
	    tp_gz_finish(g) < 0)
		goto fail;
	rc = tp_out_commit(&f);
	goto out;
fail:
	snprintf(why, whylen, "%s", strerror(g->err ? g->err : errno));
	tp_gz_abandon(g);
	tp_out_abandon(&f);
out:
	tp_sigclean_drop(slot);
	tp_buf_free(&tail);
	free(g);
	return rc;
}

/* 1 recovered, 0 nothing to recover (removed), -1 error. */
static int recover_one(const char *dir, const char *name)
{
	char path[4400], final[4800], why[512] = "";
	struct tp_rings_found rf;
	struct tp_ff_view v;
	struct window w;
	int rc, pid;

	memset(&w, 0, sizeof(w));
	snprintf(path, sizeof(path), "%s/%s", dir, name);
	if (tp_ff_open_view(path, &v, why, sizeof(why)) < 0) {
		fprintf(stderr, "tprof: %s: %s; left as it is\n", path, why);
		return -1;
	}
	if ((!v.h->head_len && v.h->format != 1) || !v.h->last_seq) {
		fprintf(stderr, "tprof: %s: process %d died before its flight "
			"recorder kept any event; nothing to recover "
			"(removed)\n", path, v.h->pid);
		tp_ff_close_view(&v);
		unlink(path);
		return 0;
	}
	pid = v.h->pid;
	tp_rings_find(dir, pid, name, &rf);
	final_name(dir, v.h, final, sizeof(final));
	rc = write_trace(&v, final, name, &rf, &w, why, sizeof(why));
	tp_ff_close_view(&v);
	if (rc < 0) {
		fprintf(stderr, "tprof: %s: cannot write: %s\n", final, why);
		return -1;
	}
	if (rf.path[0] && !w.from_rings)
		fprintf(stderr, "tprof: %s: its rings could not be read (%s); "
			"what they held is lost\n", rf.path, why);
	if (rf.path[0])
		unlink(rf.path);
	unlink(path);
	tp_recover_summary(dir, strrchr(final, '/') + 1, final);
	fprintf(stderr, "tprof: recovered %s: the flight recorder's window "
		"(%llu events, %llu of them from its rings file) from process "
		"%d killed mid-run\n", final,
		(unsigned long long)(w.events + w.rings.records),
		(unsigned long long)w.rings.records, pid);
	return 1;
}

int tp_recover_flights(const char *dir, int *failed)
{
	struct dirent *de;
	int n = 0, pid;
	DIR *d = opendir(dir);

	if (!d)
		return 0;
	while ((de = readdir(d))) {
		pid = flight_pid(de->d_name);
		if (pid < 0)
			continue;
		n++;
		if (!gone(pid)) {
			fprintf(stderr, "tprof: %s/%s: process %d is still "
				"running; left as it is\n", dir, de->d_name,
				pid);
			continue;
		}
		if (recover_one(dir, de->d_name) < 0)
			(*failed)++;
	}
	closedir(d);
	return n;
}
