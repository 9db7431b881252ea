/* TPROF_* parsing: defaults, every accepted form, every bad value. */
#include <stdlib.h>

#include "config/config.h"
#include "util/log.h"
#include "tp_test.h"

#define fake tp_test_env
#define get tp_test_getenv

static int parse(struct tp_config *c, char *err, const char *a,
		 const char *b)
{
	fake[0] = a;
	fake[1] = b;
	fake[2] = NULL;
	err[0] = '\0';
	return tp_config_parse(c, get, err, 512);
}

/* A bad value must be refused with a message naming the variable, the
 * value and what is accepted. */
static void bad(const char *setting, const char *var, const char *accepted)
{
	struct tp_config c;
	char err[512], name[256];
	const char *value = strchr(setting, '=') + 1;
	int rc = parse(&c, err, setting, NULL);

	snprintf(name, sizeof(name), "config: %s refused", setting);
	TP_CHECK(name, rc < 0 && strstr(err, var) && strstr(err, value) &&
		 strstr(err, accepted), "rc=%d err=\"%s\"", rc, err);
}

/* TPROF_FORMAT picks the trace's format; perfetto keeps the
 * rings file (tprof recover completes a .pftrace.gz.tmp) and goes with
 * the flight recorder. */
static void test_format(void)
{
	struct tp_config c;
	char err[512];

	TP_CHECK_INT("config: format json by default",
		     parse(&c, err, NULL, NULL) == 0 ? c.format : -1,
		     TP_FORMAT_JSON);
	TP_CHECK_INT("config: TPROF_FORMAT=json",
		     parse(&c, err, "TPROF_FORMAT=json", NULL) == 0 ?
		     c.format : -1, TP_FORMAT_JSON);
	TP_CHECK("config: TPROF_FORMAT=perfetto, with the rings file",
		 parse(&c, err, "TPROF_FORMAT=perfetto", NULL) == 0 &&
		 c.format == TP_FORMAT_PERFETTO && c.ring_file == 1, "%s",
		 err);
	bad("TPROF_FORMAT=protobuf", "TPROF_FORMAT", "json");
	bad("TPROF_FORMAT=Perfetto", "TPROF_FORMAT", "perfetto");
	TP_CHECK("config: TPROF_FORMAT=perfetto with TPROF_FLIGHT",
		 parse(&c, err, "TPROF_FORMAT=perfetto", "TPROF_FLIGHT=5") == 0 &&
		 c.format == TP_FORMAT_PERFETTO &&
		 c.fl.flight_ns == 5000000000ull, "%s", err);
}

/* Non-finite numbers, the name's length, typos. */
static void test_values(void)
{
	static char name190[200], name191[220];
	char *envp[] = { (char *)"PATH=/bin", (char *)"TPROF_ACTVE=3", NULL };
	char *fine[] = { (char *)"TPROF_ACTIVE=3", (char *)"TPROF_LIB=x", NULL };
	char *far[] = { (char *)"TPROF_QUUX=perfetto", NULL };
	struct tp_config c;
	char err[512], msg[256];

	bad("TPROF_DELAY=nan", "TPROF_DELAY", "seconds");
	bad("TPROF_DELAY=inf", "TPROF_DELAY", "seconds");
	bad("TPROF_DURATION=nan", "TPROF_DURATION", "seconds");
	bad("TPROF_DURATION=-inf", "TPROF_DURATION", "seconds");
	bad("TPROF_BACKTRACE=nanus", "TPROF_BACKTRACE", "duration");
	bad("TPROF_BACKTRACE=infms", "TPROF_BACKTRACE", "duration");
	memset(name190, 'n', 190);
	memcpy(name191, "TPROF_NAME=", 11);
	memset(name191 + 11, 'n', 191);
	char set190[220] = "TPROF_NAME=";

	strcat(set190, name190);
	TP_CHECK_INT("config: TPROF_NAME of 190 characters accepted",
		     parse(&c, err, set190, NULL), 0);
	bad(name191, "TPROF_NAME", "1 to 190 characters");
	TP_CHECK("config: a typo is named, with the variable meant",
		 tp_config_unknown(envp, msg, sizeof(msg)) &&
		 strstr(msg, "TPROF_ACTVE is not a tprof variable") &&
		 strstr(msg, "did you mean TPROF_ACTIVE?"), "%s", msg);
	TP_CHECK("config: known variables (tprof-run's too) say nothing",
		 !tp_config_unknown(fine, msg, sizeof(msg)), "%s", msg);
	TP_CHECK("config: an unknown one far from any is named alone",
		 tp_config_unknown(far, msg, sizeof(msg)) &&
		 strstr(msg, "TPROF_QUUX is not a tprof variable") &&
		 !strstr(msg, "did you mean"), "%s", msg);
}

/* The host side: cpu and osrt are named (all leaves them out), with
 * their rate, threshold and mechanism. */
static void test_host(void)
{
	struct tp_config c;
	char err[512], buf[128];

	TP_CHECK("config: host side off by default, rate 1000, threshold 1 ms, "
		 "sampler auto", parse(&c, err, NULL, NULL) == 0 &&
		 !(c.sources & (TP_SRC_CPU | TP_SRC_OSRT)) &&
		 c.sample_hz == 1000 && c.osrt_min_ns == 1000000 &&
		 c.sampler == TP_SAMPLER_AUTO, "%s", err);
	parse(&c, err, "TPROF_TRACE=all,cpu,osrt", NULL);
	TP_CHECK_INT("config: all,cpu,osrt", c.sources,
		     TP_SRC_ALL | TP_SRC_CPU | TP_SRC_OSRT);
	tp_config_sources_str(c.sources, buf, sizeof(buf));
	TP_CHECK_STR("config: host sources printed back", buf,
		     "cuda,gpu,cublas,cudnn,nccl,nvtx,mem,gpumetrics,cpu,osrt");
	TP_CHECK("config: TPROF_SAMPLE_HZ=250, TPROF_OSRT_MIN_US=0",
		 parse(&c, err, "TPROF_SAMPLE_HZ=250", "TPROF_OSRT_MIN_US=0") ==
		 0 && c.sample_hz == 250 && c.osrt_min_ns == 0, "%s", err);
	TP_CHECK("config: TPROF_SAMPLER=timer", parse(&c, err,
		 "TPROF_SAMPLER=timer", NULL) == 0 &&
		 c.sampler == TP_SAMPLER_TIMER, "%s", err);
	TP_CHECK("config: TPROF_SAMPLER=perf", parse(&c, err,
		 "TPROF_SAMPLER=perf", NULL) == 0 &&
		 c.sampler == TP_SAMPLER_PERF, "%s", err);
	bad("TPROF_SAMPLE_HZ=9", "TPROF_SAMPLE_HZ", "from 10 to 10000");
	bad("TPROF_SAMPLE_HZ=20000", "TPROF_SAMPLE_HZ", "from 10 to 10000");
	bad("TPROF_SAMPLE_HZ=1k", "TPROF_SAMPLE_HZ", "from 10 to 10000");
	bad("TPROF_OSRT_MIN_US=1ms", "TPROF_OSRT_MIN_US", "microseconds");
	bad("TPROF_OSRT_MIN_US=-1", "TPROF_OSRT_MIN_US", "microseconds");
	bad("TPROF_SAMPLER=itimer", "TPROF_SAMPLER", "auto");
	bad("TPROF_TRACE=cpu,sampling", "TPROF_TRACE", "cpu,osrt");
}

int main(void)
{
	struct tp_config c;
	char err[512], buf[128];

	test_host();

	TP_CHECK_INT("config: empty environment parses", parse(&c, err, NULL,
							       NULL), 0);
	TP_CHECK_STR("config: default dir", c.dir, "./tprof-traces");
	TP_CHECK_STR("config: default name", c.name, "tprof");
	TP_CHECK_INT("config: default sources are all", c.sources, TP_SRC_ALL);
	TP_CHECK_INT("config: default buffer", c.buffer_mb, 16);
	TP_CHECK_INT("config: default spill pool", c.spill_mb, 128);
	TP_CHECK_INT("config: default log level", c.log_level, TP_LOG_WARN);
	TP_CHECK_INT("config: default rank", c.rank, 0);
	TP_CHECK_INT("config: default world size", c.world_size, 1);

	parse(&c, err, "TPROF_TRACE=cuda,nccl", "TPROF_BUFFER_MB=64");
	TP_CHECK_INT("config: source list", c.sources, TP_SRC_CUDA | TP_SRC_NCCL);
	TP_CHECK_INT("config: buffer size", c.buffer_mb, 64);
	tp_config_sources_str(c.sources, buf, sizeof(buf));
	TP_CHECK_STR("config: sources printed back", buf, "cuda,nccl");
	parse(&c, err, "TPROF_SPILL_MB=0", NULL);
	TP_CHECK_INT("config: no spill pool", c.spill_mb, 0);
	parse(&c, err, "TPROF_SPILL_MB=1024", NULL);
	TP_CHECK_INT("config: spill pool size", c.spill_mb, 1024);
	parse(&c, err, "TPROF_TRACE=all", NULL);
	TP_CHECK_INT("config: 'all'", c.sources, TP_SRC_ALL);
	parse(&c, err, "TPROF_DISABLE=1", "TPROF_BUFFER_MB=abc");
	TP_CHECK_INT("config: TPROF_DISABLE=1 is inert (nothing else read)",
		     c.disabled, 1);
	parse(&c, err, "TPROF_LOG=debug", "TPROF_NAME=job7");
	TP_CHECK_INT("config: log level", c.log_level, TP_LOG_DEBUG);
	TP_CHECK_STR("config: name", c.name, "job7");

	/* Rank and world size detection order. */
	parse(&c, err, "SLURM_PROCID=5", "RANK=3");
	TP_CHECK_INT("config: RANK wins over SLURM_PROCID", c.rank, 3);
	TP_CHECK_STR("config: rank source named", c.rank_from, "RANK");
	parse(&c, err, "TPROF_RANK=7", "RANK=3");
	TP_CHECK_INT("config: TPROF_RANK overrides RANK", c.rank, 7);
	parse(&c, err, "OMPI_COMM_WORLD_RANK=2", "OMPI_COMM_WORLD_SIZE=4");
	TP_CHECK_INT("config: Open MPI rank", c.rank, 2);
	TP_CHECK_INT("config: Open MPI world size", c.world_size, 4);
	parse(&c, err, "PMIX_RANK=9", "SLURM_NTASKS=16");
	TP_CHECK_INT("config: PMIx rank", c.rank, 9);
	TP_CHECK_INT("config: Slurm world size", c.world_size, 16);
	parse(&c, err, "PMI_RANK=1", "WORLD_SIZE=2");
	TP_CHECK_INT("config: PMI rank", c.rank, 1);
	TP_CHECK_INT("config: WORLD_SIZE", c.world_size, 2);

	bad("TPROF_SPILL_MB=abc", "TPROF_SPILL_MB", "0 (no spilling");
	bad("TPROF_SPILL_MB=65537", "TPROF_SPILL_MB", "to 65536");
	bad("TPROF_SPILL_MB=-1", "TPROF_SPILL_MB", "to 65536");
	bad("TPROF_BUFFER_MB=abc", "TPROF_BUFFER_MB", "1 to 4096");
	bad("TPROF_BUFFER_MB=-5", "TPROF_BUFFER_MB", "1 to 4096");
	bad("TPROF_BUFFER_MB=0", "TPROF_BUFFER_MB", "1 to 4096");
	bad("TPROF_BUFFER_MB=4097", "TPROF_BUFFER_MB", "1 to 4096");
	bad("TPROF_BUFFER_MB=12MB", "TPROF_BUFFER_MB", "1 to 4096");
	bad("TPROF_BUFFER_MB=", "TPROF_BUFFER_MB", "1 to 4096");
	bad("TPROF_BUFFER_MB= 8", "TPROF_BUFFER_MB", "1 to 4096");
	bad("TPROF_BUFFER_MB=99999999999999999999", "TPROF_BUFFER_MB",
	    "1 to 4096");
	bad("TPROF_TRACE=cuda,bogus", "TPROF_TRACE", "cuda,gpu,cublas");
	bad("TPROF_TRACE=", "TPROF_TRACE", "cuda,gpu,cublas");
	bad("TPROF_TRACE=cuda,", "TPROF_TRACE", "cuda,gpu,cublas");
	bad("TPROF_TRACE=CUDA", "TPROF_TRACE", "cuda,gpu,cublas");
	bad("TPROF_LOG=verbose", "TPROF_LOG", "quiet, warn, info or debug");
	bad("TPROF_DISABLE=yes", "TPROF_DISABLE", "expected 1");
	bad("TPROF_NAME=a/b", "TPROF_NAME", "without '/'");
	bad("TPROF_NAME=", "TPROF_NAME", "without '/'");
	bad("TPROF_OUTPUT_DIR=", "TPROF_OUTPUT_DIR", "non-empty");
	bad("TPROF_RANK=-1", "TPROF_RANK", "whole number");
	bad("TPROF_RANK=x", "TPROF_RANK", "whole number");
	bad("RANK=1.5", "RANK", "whole number");
	bad("WORLD_SIZE=0", "WORLD_SIZE", "whole number from 1");
	test_values();
	test_format();
	return TP_TEST_DONE();
}
