/* config/: TPROF_* configuration, parsed and checked; on util/ only. */
#include <errno.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "config.h"
#include "util/log.h"

static const char *const source_names[] = {
	"cuda", "gpu", "cublas", "cudnn", "nccl", "nvtx", "mem", "gpumetrics",
	"cpu", "osrt",
};

#define N_SOURCES (sizeof(source_names) / sizeof(source_names[0]))
#define SOURCES_ACCEPTED "cuda,gpu,cublas,cudnn,nccl,nvtx,mem,gpumetrics,cpu,osrt " \
	"or all (all: every one but cpu and osrt)"

const char *tp_source_name(unsigned bit)
{
	unsigned i;

	for (i = 0; i < N_SOURCES; i++)
		if (bit == 1u << i)
			return source_names[i];
	return "?";
}

void tp_config_sources_str(unsigned sources, char *buf, size_t len)
{
	size_t n = 0;
	unsigned i;

	buf[0] = '\0';
	for (i = 0; i < N_SOURCES && n < len; i++) {
		if (!(sources & (1u << i)))
			continue;
		n += (size_t)snprintf(buf + n, len - n, "%s%s", n ? "," : "",
				      source_names[i]);
	}
}

/* A comma list of words from names[] into a bit mask (bit i for names[i]);
 * "all" stands for all_mask where that is non-zero. On an unknown word
 * returns -1 and points *bad at it (*bad_len bytes). */
static int parse_word_list(const char *s, const char *const *names,
			   unsigned n, unsigned all_mask, unsigned *out,
			   const char **bad, size_t *bad_len)
{
	const char *p = s;
	unsigned i;

	*out = 0;
	for (;;) {
		size_t len = strcspn(p, ",");

		if (all_mask && len == 3 && !strncmp(p, "all", 3)) {
			*out |= all_mask;
		} else {
			for (i = 0; i < n; i++)
				if (strlen(names[i]) == len &&
				    !strncmp(p, names[i], len))
					break;
			if (i == n) {
				*bad = p;
				*bad_len = len;
				return -1;
			}
			*out |= 1u << i;
		}
		if (!p[len])
			return 0;
		p += len + 1;
	}
}

int tp_parse_sources(const char *s, unsigned *out, char *err, size_t errlen)
{
	const char *bad;
	size_t len;

	if (parse_word_list(s, source_names, N_SOURCES, TP_SRC_ALL, out, &bad,
			    &len) < 0) {
		snprintf(err, errlen,
			 "TPROF_TRACE='%s': unknown source '%.*s'; "
			 "accepted: a comma list of " SOURCES_ACCEPTED,
			 s, (int)len, bad);
		return -1;
	}
	return 0;
}

static int parse_log(const char *s, int *out)
{
	static const char *const names[] = { "quiet", "warn", "info",
					     "debug" };
	int i;

	for (i = 0; i < 4; i++) {
		if (!strcmp(s, names[i])) {
			*out = i;
			return 0;
		}
	}
	return -1;
}

static int parse_name(const char *s, struct tp_config *c, char *err,
		      size_t errlen)
{
	if (!*s || strchr(s, '/') || strlen(s) > 190) {
		snprintf(err, errlen,
			 "TPROF_NAME='%s' is not a valid file name prefix: "
			 "expected 1 to 190 characters without '/'", s);
		return -1;
	}
	strcpy(c->name, s);
	return 0;
}

static int parse_dir(const char *s, struct tp_config *c, char *err,
		     size_t errlen)
{
	if (!*s || strlen(s) >= sizeof(c->dir) - 256) {
		snprintf(err, errlen,
			 "TPROF_OUTPUT_DIR='%.200s' is not a usable directory "
			 "path: expected a non-empty path under 3800 "
			 "characters", s);
		return -1;
	}
	strcpy(c->dir, s);
	return 0;
}

static const char *const rank_vars[] = {
	"TPROF_RANK", "RANK", "OMPI_COMM_WORLD_RANK", "PMI_RANK",
	"PMIX_RANK", "SLURM_PROCID", NULL,
};

static const char *const world_vars[] = {
	"WORLD_SIZE", "OMPI_COMM_WORLD_SIZE", "PMI_SIZE", "SLURM_NTASKS",
	NULL,
};

/* The first variable of the list that is set decides; a malformed one is
 * an error rather than a silent fall-through to the next. */
static int detect(const char *const *vars, tp_getenv_fn get, long min,
		  long *out, const char **from, char *err, size_t errlen)
{
	int i;

	for (i = 0; vars[i]; i++) {
		const char *v = get(vars[i]);

		if (!v)
			continue;
		if (tp_parse_uint(v, min, 1 << 30, out) < 0) {
			snprintf(err, errlen,
				 "%s='%s' is not a valid %s: expected a whole "
				 "number from %ld", vars[i], v,
				 min ? "world size" : "rank", min);
			return -1;
		}
		*from = vars[i];
		return 0;
	}
	return 0;
}

static int parse_rank(struct tp_config *c, tp_getenv_fn get, char *err,
		      size_t errlen)
{
	const char *from = NULL;
	long rank = 0, world = 1;

	if (detect(rank_vars, get, 0, &rank, &from, err, errlen) < 0)
		return -1;
	c->rank_from = from;
	from = NULL;
	if (detect(world_vars, get, 1, &world, &from, err, errlen) < 0)
		return -1;
	c->rank = (int)rank;
	c->world_size = (int)world;
	return 0;
}

static int parse_buffer(const char *v, struct tp_config *c, char *err,
			size_t errlen)
{
	long mb;

	if (tp_parse_uint(v, 1, TP_MAX_BUFFER_MB, &mb) < 0) {
		snprintf(err, errlen,
			 "TPROF_BUFFER_MB='%s' is not valid: expected a whole "
			 "number of MiB per thread from 1 to %d", v,
			 TP_MAX_BUFFER_MB);
		return -1;
	}
	c->buffer_mb = (unsigned)mb;
	return 0;
}

static int parse_spill(const char *v, struct tp_config *c, char *err,
		       size_t errlen)
{
	long mb;

	if (tp_parse_uint(v, 0, TP_MAX_SPILL_MB, &mb) < 0) {
		snprintf(err, errlen,
			 "TPROF_SPILL_MB='%s' is not valid: expected a whole "
			 "number of MiB from 0 (no spilling: a full ring "
			 "drops) to %d", v, TP_MAX_SPILL_MB);
		return -1;
	}
	c->spill_mb = (unsigned)mb;
	return 0;
}

static int parse_ring_file(const char *v, struct tp_config *c, char *err,
			   size_t errlen)
{
	if (strcmp(v, "0") && strcmp(v, "1")) {
		snprintf(err, errlen, "TPROF_RING_FILE='%s' is not valid: "
			 "expected 1 (rings in a file that survives a kill, "
			 "the default) or 0 (rings in memory only)", v);
		return -1;
	}
	c->ring_file = v[0] == '1';
	return 0;
}

static int parse_format(const char *v, struct tp_config *c, char *err,
			size_t errlen)
{
	if (!strcmp(v, "json") || !*v) {
		c->format = TP_FORMAT_JSON;
		return 0;
	}
	if (strcmp(v, "perfetto")) {
		snprintf(err, errlen, "TPROF_FORMAT='%.100s' is not valid: "
			 "expected json (Kineto JSON, the default) or perfetto "
			 "(Perfetto's protobuf, .pftrace.gz)", v);
		return -1;
	}
	c->format = TP_FORMAT_PERFETTO;
	return 0;
}

/* 1, the default, is the fastest (ISA-L's when installed); a higher
 * level is zlib's: smaller files for more of the writer's CPU. */
static int parse_gzip_level(const char *v, struct tp_config *c, char *err,
			    size_t errlen)
{
	long level;

	if (tp_parse_uint(v, 1, 9, &level) < 0) {
		snprintf(err, errlen, "TPROF_GZIP_LEVEL='%.100s' is not "
			 "valid: expected 1 to 9 (gzip's levels: 1, the "
			 "default, is the fastest; 6 writes a quarter to "
			 "a third less for several times the writer's CPU)", v);
		return -1;
	}
	c->gzip_level = (int)level;
	return 0;
}

/* TPROF_SAMPLE_HZ, TPROF_OSRT_MIN_US and TPROF_SAMPLER: the host side's
 * rate, threshold and sampling mechanism. */
static int parse_host(tp_getenv_fn get, struct tp_config *c, char *err,
		      size_t errlen)
{
	const char *v = get("TPROF_SAMPLE_HZ");
	long n;

	if (v && tp_parse_uint(v, TP_MIN_SAMPLE_HZ, TP_MAX_SAMPLE_HZ, &n) < 0) {
		snprintf(err, errlen, "TPROF_SAMPLE_HZ='%.100s' is not valid: "
			 "expected a whole number of samples per second of "
			 "a thread's CPU time from %d to %d (default %d)", v,
			 TP_MIN_SAMPLE_HZ, TP_MAX_SAMPLE_HZ,
			 TP_DEFAULT_SAMPLE_HZ);
		return -1;
	}
	if (v)
		c->sample_hz = (unsigned)n;
	v = get("TPROF_OSRT_MIN_US");
	if (v && tp_parse_uint(v, 0, TP_MAX_OSRT_MIN_US, &n) < 0) {
		snprintf(err, errlen, "TPROF_OSRT_MIN_US='%.100s' is not "
			 "valid: expected a whole number of microseconds from "
			 "0 (every call) to %ld (default 1000)", v,
			 TP_MAX_OSRT_MIN_US);
		return -1;
	}
	if (v)
		c->osrt_min_ns = (uint64_t)n * 1000u;
	v = get("TPROF_SAMPLER");
	if (!v || !strcmp(v, "auto"))
		return 0;
	if (!strcmp(v, "perf")) {
		c->sampler = TP_SAMPLER_PERF;
		return 0;
	}
	if (!strcmp(v, "timer")) {
		c->sampler = TP_SAMPLER_TIMER;
		return 0;
	}
	snprintf(err, errlen, "TPROF_SAMPLER='%.100s' is not valid: expected "
		 "auto (perf_event_open, else CPU-time timers; the default), "
		 "perf or timer", v);
	return -1;
}

static int parse_cupti(tp_getenv_fn get, struct tp_config *c, char *err,
		       size_t errlen)
{
	const char *v = get("TPROF_CUPTI_BUFFER_MB");
	long mb;

	if (v && tp_parse_uint(v, TP_MIN_CUPTI_BUFFER_MB, TP_MAX_CUPTI_BUFFER_MB,
			    &mb) < 0) {
		snprintf(err, errlen, "TPROF_CUPTI_BUFFER_MB='%s' is not "
			 "valid: expected a whole number of MiB from %d to %d",
			 v, TP_MIN_CUPTI_BUFFER_MB, TP_MAX_CUPTI_BUFFER_MB);
		return -1;
	}
	if (v)
		c->cupti_buffer_mb = (unsigned)mb;
	v = get("TPROF_CUPTI_LIB");
	if (!v)
		return 0;
	if (!*v || strlen(v) >= sizeof(c->cupti_lib)) {
		snprintf(err, errlen, "TPROF_CUPTI_LIB='%.200s' is not valid: "
			 "expected the path of libcupti.so", v);
		return -1;
	}
	strcpy(c->cupti_lib, v);
	return 0;
}

#define BT_ACCEPTED "a duration such as 50us, 1ms, 0 (every call), or " \
	"all:KINDS with KINDS a comma list of sync,memcpy,launch,alloc"

/* "all" alone, or a comma list of kinds. */
static int parse_kinds(const char *s, unsigned *out)
{
	static const char *const names[] = { "sync", "memcpy", "launch",
					     "alloc" };
	const char *bad;
	size_t len;

	if (!strcmp(s, "all")) {
		*out = TP_KIND_ALL;
		return 0;
	}
	return parse_word_list(s, names, 4, 0, out, &bad, &len);
}

static int parse_backtrace(struct tp_config *c, tp_getenv_fn get, char *err,
			   size_t errlen)
{
	const char *v = get("TPROF_BACKTRACE");
	const char *d = get("TPROF_BACKTRACE_DEPTH");
	long depth;

	c->bt_depth = TP_DEFAULT_BT_DEPTH;
	if (d && tp_parse_uint(d, 1, TP_MAX_BT_DEPTH, &depth) < 0) {
		snprintf(err, errlen, "TPROF_BACKTRACE_DEPTH='%s' is not "
			 "valid: expected a whole number of frames from 1 to "
			 "%d", d, TP_MAX_BT_DEPTH);
		return -1;
	}
	if (d)
		c->bt_depth = (unsigned)depth;
	if (!v)
		return 0;
	c->bt_on = 1;
	if (!strncmp(v, "all:", 4) ? parse_kinds(v + 4, &c->bt_all_kinds) < 0
				   : tp_parse_duration_ns(v, &c->bt_threshold_ns)
				     < 0) {
		snprintf(err, errlen, "TPROF_BACKTRACE='%s' is not valid: "
			 "expected " BT_ACCEPTED, v);
		return -1;
	}
	return 0;
}

static int parse_summary(const char *s, int *out)
{
	static const char *const names[] = {
		[TP_SUMMARY_RANK0] = "rank0",
		[TP_SUMMARY_ALL] = "all",
		[TP_SUMMARY_NONE] = "none",
	};
	int i;

	for (i = 0; i < 3; i++) {
		if (!strcmp(s, names[i])) {
			*out = i;
			return 0;
		}
	}
	return -1;
}

static int parse_gm_hz(const char *v, struct tp_config *c, char *err,
		       size_t errlen)
{
	long n;

	if (tp_parse_uint(v, 1, TP_MAX_GPU_METRICS_HZ, &n) < 0) {
		snprintf(err, errlen, "TPROF_GPU_METRICS_HZ='%s' is not valid: "
			 "expected GPU health samples a second, 1 to %d "
			 "(default %d)", v, TP_MAX_GPU_METRICS_HZ,
			 TP_DEFAULT_GPU_METRICS_HZ);
		return -1;
	}
	c->gm_hz = (int)n;
	return 0;
}

int tp_config_parse(struct tp_config *c, tp_getenv_fn get, char *err,
		    size_t errlen)
{
	const char *v;

	memset(c, 0, sizeof(*c));
	strcpy(c->dir, TP_DEFAULT_DIR);
	strcpy(c->name, TP_DEFAULT_NAME);
	c->sources = TP_SRC_ALL;
	c->buffer_mb = TP_DEFAULT_BUFFER_MB;
	c->spill_mb = TP_DEFAULT_SPILL_MB;
	c->cupti_buffer_mb = TP_DEFAULT_CUPTI_BUFFER_MB;
	c->ring_file = 1;
	c->gzip_level = 1;
	c->log_level = TP_LOG_WARN;
	c->world_size = 1;
	c->gm_hz = TP_DEFAULT_GPU_METRICS_HZ;
	c->sample_hz = TP_DEFAULT_SAMPLE_HZ;
	c->osrt_min_ns = TP_DEFAULT_OSRT_MIN_NS;

	v = get("TPROF_LOG");
	if (v && parse_log(v, &c->log_level) < 0) {
		snprintf(err, errlen, "TPROF_LOG='%s' is not valid: expected "
			 "quiet, warn, info or debug", v);
		return -1;
	}
	v = get("TPROF_DISABLE");
	if (v && strcmp(v, "0") && strcmp(v, "1") && *v) {
		snprintf(err, errlen, "TPROF_DISABLE='%s' is not valid: "
			 "expected 1 (tprof inert) or 0", v);
		return -1;
	}
	c->disabled = v && !strcmp(v, "1");
	if (c->disabled)
		return 0;
	v = get("TPROF_OUTPUT_DIR");
	if (v && parse_dir(v, c, err, errlen) < 0)
		return -1;
	v = get("TPROF_NAME");
	if (v && parse_name(v, c, err, errlen) < 0)
		return -1;
	v = get("TPROF_TRACE");
	if (v && tp_parse_sources(v, &c->sources, err, errlen) < 0)
		return -1;
	v = get("TPROF_BUFFER_MB");
	if (v && parse_buffer(v, c, err, errlen) < 0)
		return -1;
	v = get("TPROF_SPILL_MB");
	if (v && parse_spill(v, c, err, errlen) < 0)
		return -1;
	v = get("TPROF_RING_FILE");
	if (v && parse_ring_file(v, c, err, errlen) < 0)
		return -1;
	if (parse_cupti(get, c, err, errlen) < 0)
		return -1;
	if (parse_host(get, c, err, errlen) < 0)
		return -1;
	if (parse_backtrace(c, get, err, errlen) < 0)
		return -1;
	if (tp_config_parse_capture(&c->cap, get, err, errlen) < 0)
		return -1;
	if (tp_config_parse_flight(&c->fl, get, err, errlen) < 0)
		return -1;
	if (c->fl.dump_signal && c->fl.dump_signal == c->cap.signal) {
		snprintf(err, errlen, "TPROF_DUMP_SIGNAL and TPROF_SIGNAL are "
			 "both %s: one signal cannot both toggle recording "
			 "and ask for a dump (choose USR1 for one, USR2 for "
			 "the other)", tp_signal_name(c->fl.dump_signal));
		return -1;
	}
	v = get("TPROF_GPU_METRICS_HZ");
	if (v && parse_gm_hz(v, c, err, errlen) < 0)
		return -1;
	v = get("TPROF_FORMAT");
	if (v && parse_format(v, c, err, errlen) < 0)
		return -1;
	v = get("TPROF_GZIP_LEVEL");
	if (v && parse_gzip_level(v, c, err, errlen) < 0)
		return -1;
	v = get("TPROF_SUMMARY");
	if (v && parse_summary(v, &c->summary) < 0) {
		snprintf(err, errlen, "TPROF_SUMMARY='%s' is not valid: "
			 "expected rank0 (the table on stderr from rank 0 "
			 "only), all or none", v);
		return -1;
	}
	return parse_rank(c, get, err, errlen);
}
