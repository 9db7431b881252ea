/* The two encoders of the typed event model (encode/tev.h) on the same
 * kernel launch events as bench_writer's: what the launch hook records
 * (ret, kernel, grid, block, shared memory, stream), from bench_writer's
 * generator (launch_gen.h: same seed, mix of kernels, grids, streams,
 * ~1 us apart with ns jitter) and the demangled kernel names its trace
 * shows.
 *
 * usage: bench_enc DIR EVENTS
 *
 * For each encoder ("json", "perfetto"): encodes the events, gzips them
 * (ISA-L when loadable, else zlib, level 1 as the writer) into
 * DIR/bench-enc.<name>.gz, and prints "<name>_raw" and "<name>_file"
 * (bytes), "<name>_enc_ns" (CPU time in the encoder only) and
 * "<name>_total_ns" (encoder and gzip), one per line. Building the typed
 * events is not timed: it is the same for both. */
#define _GNU_SOURCE
#include <fcntl.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <time.h>
#include <unistd.h>
#include <sys/stat.h>

#include "gzip/gzip.h"
#include "encode/tev.h"
#include "launch_gen.h"

#define BATCH 4096
#define FLUSH (1u << 20)

/* The generator's kernels, as the writer's trace names them. */
static const char *const kernels[K_KINDS] = {
	[K_ELEMENTWISE] =
	"void bench::ops::pointwise_kernel<4, bench::ops::MulAdd<float>, "
	"bench::Pack<char*, 3> >(int, bench::ops::MulAdd<float>, "
	"bench::Pack<char*, 3>)",
	[K_GEMM] =
	"void bench::gemm::tile_kernel<bench::gemm::TileShape<128, 64, 32>, "
	"__half, bench::gemm::Epilogue<float> >(bench::gemm::Params<__half, "
	"bench::gemm::Epilogue<float> >)",
	[K_REDUCE] =
	"void bench::ops::reduce_kernel<float, 512, bench::ops::SumOp<float> "
	">(float const*, float*, int, bench::ops::SumOp<float>)",
	[K_SOFTMAX] =
	"void bench::ops::softmax_kernel<float, 1024, false>(float*, float "
	"const*, int, int, int)",
};

struct item {
	struct tp_tev ev;
	struct tp_targs args;
};

/* The launch as the writer has it: its args typed, names copied. */
static void put_launch(struct launch_gen *g, struct item *it)
{
	uint64_t start, end;
	const struct launch *l = next_launch(g, &start, &end);
	struct tp_targs *w = &it->args;
	struct tp_tev *ev = &it->ev;
	int i;

	tp_targs_reset(w);
	tp_targs_int(w, "ret", 0);
	tp_targs_str(w, "kernel", kernels[l->kernel],
		     strlen(kernels[l->kernel]));
	tp_targs_open(w, "grid", 0);
	for (i = 0; i < 3; i++)
		tp_targs_uint(w, NULL, l->grid[i]);
	tp_targs_close(w);
	tp_targs_open(w, "block", 0);
	for (i = 0; i < 3; i++)
		tp_targs_uint(w, NULL, l->block[i]);
	tp_targs_close(w);
	tp_targs_uint(w, "shared memory", l->shmem);
	tp_targs_ptr(w, "stream", l->stream);
	*ev = (struct tp_tev){
		.track = { .kind = TP_TEV_THREAD, .pid = 29802, .tid = 29802 },
		.phase = TP_TEV_COMPLETE,
		.name = "cudaLaunchKernel",
		.namelen = 16,
		.cat = "cuda_runtime",
		.catlen = 12,
		/* bench_writer's clock: tens of thousands of seconds since
		 * base. */
		.ts_ns = 79507000000000 + (int64_t)start,
		.dur_ns = (int64_t)(end - start),
		.args = w->a,
		.nargs = w->n,
	};
}

static uint64_t cpu_ns(void)
{
	struct timespec t;

	clock_gettime(CLOCK_THREAD_CPUTIME_ID, &t);
	return (uint64_t)t.tv_sec * 1000000000ull + (uint64_t)t.tv_nsec;
}

static int run(const char *dir, const char *name, struct tp_enc *e,
	       unsigned long n, struct item *items)
{
	struct tp_enc_meta meta = { .trace_name = "bench",
				     .base_unix_ns = 1795500000000000000ll };
	struct launch_gen g = { .rng = LAUNCH_GEN_SEED };
	static struct tp_gz gz;
	uint64_t enc = 0, total = 0, raw = 0, t0, t1;
	unsigned long done = 0, i, k;
	char path[4096];
	struct stat st;
	int fd, oom;

	snprintf(path, sizeof(path), "%s/bench-enc.%s.gz", dir, name);
	fd = open(path, O_WRONLY | O_CREAT | O_EXCL | O_NOFOLLOW, 0644);
	if (fd < 0 || tp_gz_open(&gz, fd, 1, NULL) < 0) {
		fprintf(stderr, "bench_enc: cannot create %s\n", path);
		return -1;
	}
	make_step(&g);
	tp_enc_begin(e, &meta);
	while (done < n) {
		k = n - done < BATCH ? n - done : BATCH;
		for (i = 0; i < k; i++)
			put_launch(&g, &items[i]);
		t0 = cpu_ns();
		for (i = 0; i < k; i++)
			tp_enc_event(e, &items[i].ev);
		t1 = cpu_ns();
		enc += t1 - t0;
		if (e->out.len >= FLUSH) {
			raw += e->out.len;
			tp_gz_write(&gz, e->out.p, e->out.len);
			e->out.len = 0;
		}
		total += cpu_ns() - t0;
		done += k;
	}
	t0 = cpu_ns();
	tp_enc_end(e);
	raw += e->out.len;
	tp_gz_write(&gz, e->out.p, e->out.len);
	tp_gz_finish(&gz);
	total += cpu_ns() - t0;
	if (fstat(fd, &st) == 0)
		gz.out_bytes = (uint64_t)st.st_size;
	close(fd);
	printf("%s_raw %llu\n%s_file %llu\n%s_enc_ns %llu\n%s_total_ns %llu\n",
	       name, (unsigned long long)raw, name,
	       (unsigned long long)gz.out_bytes, name,
	       (unsigned long long)enc, name, (unsigned long long)total);
	printf("%s_codec %s\n", name, tp_gz_codec_name(&gz));
	oom = e->out.oom;
	tp_enc_free(e);
	return oom || gz.err ? -1 : 0;
}

int main(int argc, char **argv)
{
	struct item *items;
	unsigned long n;
	int rc;

	if (argc != 3) {
		fprintf(stderr, "usage: bench_enc DIR EVENTS\n");
		return 2;
	}
	n = strtoul(argv[2], NULL, 10);
	items = calloc(BATCH, sizeof(*items));
	if (!items)
		return 1;
	printf("events %lu\n", n);
	rc = run(argv[1], "json", tp_enc_json_new(), n, items) ||
	     run(argv[1], "perfetto", tp_enc_perfetto_new(), n, items);
	free(items);
	return rc ? 1 : 0;
}
