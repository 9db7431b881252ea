/* The gzip writer: both codecs give a file any gzip reader inflates back
 * to the exact bytes written, whatever the sizes of the writes. */
#include <fcntl.h>
#include <stdlib.h>
#include <string.h>
#include <sys/wait.h>
#include <unistd.h>
#include <zlib.h>

#include "gzip/crc32.h"
#include "gzip/gzip.h"
#include "gzip/gzip_isal.h"
#include "tp_test.h"

#define ISAL_SONAME "libisal.so.2"

static char dir[] = "/tmp/tprof-gzip-XXXXXX";
static char path[256];

/* Trace-like lines, with a run of incompressible bytes in the middle so
 * that one write's output overflows the writer's 256 KiB out buffer. */
static unsigned char *make_input(size_t n)
{
	unsigned char *p = malloc(n);
	uint64_t x = 88172645463325252ull;
	size_t i = 0;
	int line = 0;

	while (i < n) {
		if (i >= n / 3 && i < n / 3 + 600000) {
			x ^= x << 13, x ^= x >> 7, x ^= x << 17;
			p[i++] = (unsigned char)x;
			continue;
		}
		i += (size_t)snprintf((char *)p + i, n - i,
			"{\"ph\":\"X\",\"name\":\"cudaLaunchKernel\",\"ts\":%d.%03d}\n",
			line * 7, line % 1000);
		line++;
	}
	return p;
}

/* The whole file inflated by zlib's own gzip reader, which checks the
 * CRC and length in the trailer; NULL if it refuses the file. */
static unsigned char *inflate_file(size_t want, size_t *got)
{
	unsigned char *out = malloc(want + 1);
	gzFile z = gzopen(path, "rb");
	int n, err;

	*got = 0;
	if (!z)
		return out;
	while ((n = gzread(z, out + *got, (unsigned)(want + 1 - *got))) > 0)
		*got += (size_t)n;
	gzerror(z, &err);
	if (n < 0 || err != Z_OK)
		*got = (size_t)-1;
	gzclose(z);
	return out;
}

/* Writes in in pieces of the given sizes, cycling, and finishes. */
static int write_file(enum tp_gz_codec codec, const unsigned char *in,
		      size_t n, const size_t *sizes, int nsizes,
		      const char *comment, char *codec_name)
{
	struct tp_gz *g = calloc(1, sizeof(*g));
	int fd = open(path, O_WRONLY | O_CREAT | O_TRUNC, 0644);
	size_t off = 0, k;
	int i = 0, rc = -1;

	if (fd < 0 || tp_gz_open_codec(g, fd, 1, comment, codec) < 0)
		goto out;
	strcpy(codec_name, tp_gz_codec_name(g));
	while (off < n) {
		k = sizes[i++ % nsizes];
		if (k > n - off)
			k = n - off;
		if (tp_gz_write(g, in + off, k) < 0)
			goto out;
		off += k;
	}
	rc = tp_gz_finish(g);
out:
	if (fd >= 0)
		close(fd);
	free(g);
	return rc;
}

static void round_trip(const char *what, enum tp_gz_codec codec,
		       const char *want_codec, size_t n, const size_t *sizes,
		       int nsizes)
{
	unsigned char *in = make_input(n), *out;
	char name[160], codec_name[16] = "";
	size_t got;

	snprintf(name, sizeof(name), "gzip %s: written", what);
	TP_CHECK_INT(name, write_file(codec, in, n, sizes, nsizes,
				      "tprof run=abc pid=1", codec_name), 0);
	snprintf(name, sizeof(name), "gzip %s: compressed by %s", what,
		 want_codec);
	TP_CHECK_STR(name, codec_name, want_codec);
	out = inflate_file(n, &got);
	snprintf(name, sizeof(name), "gzip %s: gzip reads back every byte "
		 "(CRC and length checked)", what);
	TP_CHECK(name, got == n && !memcmp(in, out, n),
		 "got %zd bytes of %zu", (ssize_t)got, n);
	free(in);
	free(out);
}

static void codec_cases(enum tp_gz_codec codec, const char *cname,
			const char *want)
{
	static const size_t small[] = { 1, 0, 37, 4096, 17 };
	static const size_t big[] = { 3 << 20 };
	static const size_t flush[] = { 1 << 20 };
	char what[64];

	snprintf(what, sizeof(what), "%s, small writes", cname);
	round_trip(what, codec, want, 300000, small, 5);
	snprintf(what, sizeof(what), "%s, one 3 MiB write", cname);
	round_trip(what, codec, want, 3 << 20, big, 1);
	snprintf(what, sizeof(what), "%s, the writer's 1 MiB flushes", cname);
	round_trip(what, codec, want, 9 << 20, flush, 1);
	snprintf(what, sizeof(what), "%s, empty", cname);
	round_trip(what, codec, want, 0, flush, 1);
}

/* What a file holds up to its last byte, inflated as a killed process
 * leaves it: no trailer, maybe a cut block. */
static size_t inflate_cut(unsigned char *out, size_t cap)
{
	static unsigned char in[4 << 20];
	z_stream zs;
	ssize_t n;
	size_t got;
	int fd = open(path, O_RDONLY);

	n = fd < 0 ? -1 : read(fd, in, sizeof(in));
	if (fd >= 0)
		close(fd);
	if (n <= 0)
		return 0;
	memset(&zs, 0, sizeof(zs));
	if (inflateInit2(&zs, 16 + MAX_WBITS) != Z_OK)
		return 0;
	zs.next_in = in;
	zs.avail_in = (uInt)n;
	zs.next_out = out;
	zs.avail_out = (uInt)cap;
	inflate(&zs, Z_SYNC_FLUSH);
	got = cap - zs.avail_out;
	inflateEnd(&zs);
	return got;
}

/* After tp_gz_sync every byte written so far is in the file, readable
 * without the stream's end; the stream then goes on and ends normally. */
static void sync_case(enum tp_gz_codec codec, const char *cname)
{
	size_t n = 700000, tail = 1000, got, whole;
	unsigned char *in = make_input(n + tail), *out = malloc(n + tail + 1);
	struct tp_gz *g = calloc(1, sizeof(*g));
	char name[128];
	int fd = open(path, O_WRONLY | O_CREAT | O_TRUNC, 0600);

	if (fd < 0 || tp_gz_open_codec(g, fd, 1, "tprof run=s pid=1", codec) ||
	    tp_gz_write(g, in, n) || tp_gz_sync(g) ||
	    tp_gz_write(g, in + n, tail)) {
		TP_CHECK("gzip sync: written", 0, "%s", cname);
		goto out;
	}
	got = inflate_cut(out, n + tail + 1);
	snprintf(name, sizeof(name), "gzip %s sync: the cut file inflates to "
		 "every byte written before the sync", cname);
	TP_CHECK(name, got >= n && got <= n + tail && !memcmp(in, out, got),
		 "got %zu of %zu", got, n);
	TP_CHECK_INT("gzip sync: the stream ends normally after it",
		     tp_gz_finish(g), 0);
	free(inflate_file(n + tail, &whole));
	snprintf(name, sizeof(name), "gzip %s sync: the ended file reads back "
		 "whole", cname);
	TP_CHECK(name, whole == n + tail, "got %zd", (ssize_t)whole);
out:
	if (fd >= 0)
		close(fd);
	free(g);
	free(in);
	free(out);
}

static void test_header(void)
{
	unsigned char buf[512];
	char comment[64], cname[16];
	ssize_t n;
	int fd;

	write_file(TP_GZ_AUTO, (const unsigned char *)"x", 1,
		   (const size_t[]){ 1 }, 1, "tprof run=r1 pid=7", cname);
	fd = open(path, O_RDONLY);
	n = read(fd, buf, sizeof(buf));
	close(fd);
	TP_CHECK_INT("gzip header: the comment reads back",
		     tp_gz_read_comment(buf, n > 0 ? (size_t)n : 0, comment,
					sizeof(comment)), 0);
	TP_CHECK_STR("gzip header: the comment", comment, "tprof run=r1 pid=7");
	write_file(TP_GZ_AUTO, (const unsigned char *)"x", 1,
		   (const size_t[]){ 1 }, 1, NULL, cname);
	fd = open(path, O_RDONLY);
	n = read(fd, buf, sizeof(buf));
	close(fd);
	TP_CHECK("gzip header: without a comment, no FCOMMENT flag",
		 n > 10 && buf[3] == 0, "flags 0x%x", n > 3 ? buf[3] : 0);
}

static void test_crc(void)
{
	static const size_t lens[] = { 0, 1, 15, 16, 17, 63, 64, 1000, 65537 };
	unsigned char *in = make_input(70000);
	int bad = 0;
	size_t i, a;

	for (i = 0; i < sizeof(lens) / sizeof(lens[0]); i++)
		for (a = 0; a < 3; a++)
			if (tp_isal_crc32(0x12345678u, in + a, lens[i]) !=
			    crc32(0x12345678u, in + a, (uInt)lens[i]))
				bad++;
	TP_CHECK_INT("gzip: ISA-L's CRC-32 is zlib's, at any length and "
		     "alignment, continued from a CRC", bad, 0);
	free(in);
}

/* The folded CRC-32 (gzip/crc32.c) against zlib's: every length across
 * the fold's 64- and 16-byte steps, three alignments, continued from a
 * CRC, and split anywhere into two calls. */
static void test_fold_crc(void)
{
	unsigned char *in = make_input(70000);
	int bad = 0, split_bad = 0;
	size_t n, a, cut;

	for (n = 0; n < 1200; n++)
		for (a = 0; a < 3; a++)
			if (tp_crc32((uint32_t)(n * 2654435761u), in + a, n) !=
			    crc32((uint32_t)(n * 2654435761u), in + a,
				  (uInt)n))
				bad++;
	if (tp_crc32(7, in, 65537) != crc32(7, in, 65537))
		bad++;
	for (cut = 0; cut <= 300; cut++)
		if (tp_crc32(tp_crc32(0, in, cut), in + cut, 300 - cut) !=
		    crc32(0, in, 300))
			split_bad++;
	TP_CHECK_INT("gzip: the folded CRC-32 is zlib's, at any length and "
		     "alignment, continued from a CRC", bad, 0);
	TP_CHECK_INT("gzip: the folded CRC-32 of two pieces is the whole's",
		     split_bad, 0);
	free(in);
}

/* In a child: the library may be loaded only once per process. */
static void test_missing(void)
{
	pid_t pid = fork();
	int st = 0;

	if (pid == 0) {
		static const size_t one[] = { 1 << 20 };
		int bad = tp_isal_load("libtprof-no-such-isal.so.2") != -1;

		round_trip("without ISA-L", TP_GZ_AUTO, "zlib", 2 << 20, one, 1);
		fflush(stdout);
		_exit(bad || tp_test_failures ? 1 : 0);
	}
	waitpid(pid, &st, 0);
	TP_CHECK("gzip: without libisal.so.2, AUTO falls back to zlib",
		 WIFEXITED(st) && WEXITSTATUS(st) == 0, "status 0x%x", st);
}

int main(void)
{
	int have;

	if (!mkdtemp(dir))
		return 1;
	snprintf(path, sizeof(path), "%s/t.gz", dir);
	fflush(stdout);
	test_missing();
	have = tp_isal_load(ISAL_SONAME) == 0;
	test_fold_crc();
	codec_cases(TP_GZ_ZLIB, "zlib", "zlib");
	sync_case(TP_GZ_ZLIB, "zlib");
	if (have) {
		codec_cases(TP_GZ_AUTO, "ISA-L", "isa-l");
		sync_case(TP_GZ_AUTO, "ISA-L");
		test_crc();
		test_header();
	} else {
		printf("note: ISA-L not %s: its cases are not run\n",
		       tp_isal_built() ? "installed (" ISAL_SONAME ")" :
		       "built in (no <isa-l/igzip_lib.h>)");
		codec_cases(TP_GZ_AUTO, "AUTO", "zlib");
		test_header();
	}
	unlink(path);
	rmdir(dir);
	return TP_TEST_DONE();
}
