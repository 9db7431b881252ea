/* File naming and the claim of a rank's file between processes. */
#include <fcntl.h>
#include <stdlib.h>
#include <sys/stat.h>
#include <unistd.h>
#include <zlib.h>

#include "files/naming.h"
#include "tp_test.h"

static char dir[] = "/tmp/tprof-naming-XXXXXX";

static int exists(const char *path)
{
	return access(path, F_OK) == 0;
}

/* A file with a tprof gzip header, as another process would leave it. */
static void fake_file(const char *path, const char *run, int pid)
{
	struct tp_gz *g = calloc(1, sizeof(*g));
	char comment[256];
	int fd = open(path, O_WRONLY | O_CREAT | O_TRUNC, 0644);

	snprintf(comment, sizeof(comment), "tprof run=%s pid=%d", run, pid);
	tp_gz_open(g, fd, 1, comment);
	tp_gz_finish(g);
	close(fd);
	free(g);
}

static void finish(struct tp_output *o, struct tp_gz *g)
{
	tp_gz_finish(g);
	close(g->fd);
	rename(o->tmp, o->final);
}

static const char *base(const char *path)
{
	return strrchr(path, '/') + 1;
}

int main(void)
{
	struct tp_gz *g = calloc(1, sizeof(*g));
	struct tp_output o;
	char path[512], comment[256];
	unsigned char hdr[256];
	int fd, pid = (int)getpid();
	ssize_t n;

	if (!mkdtemp(dir))
		return 1;
	tp_output_names(&o, dir, "job", 3, 0);
	TP_CHECK_STR("naming: rank file", base(o.final),
		     "job-rank3.trace.json.gz");
	TP_CHECK_STR("naming: written as .tmp first", base(o.tmp),
		     "job-rank3.trace.json.gz.tmp");
	tp_output_names(&o, dir, "job", 3, 4242);
	TP_CHECK_STR("naming: second process of a rank", base(o.final),
		     "job-rank3-pid4242.trace.json.gz");

	/* First process of run A claims rank 0. */
	TP_CHECK_INT("naming: first claim succeeds",
		     tp_output_open(&o, g, dir, "t", 0, 1, "runA", 100, 1, 1), 0);
	TP_CHECK_STR("naming: first claim gets the rank name", base(o.tmp),
		     "t-rank0.trace.json.gz.tmp");
	fd = open(o.tmp, O_RDONLY);
	n = read(fd, hdr, sizeof(hdr));
	close(fd);
	TP_CHECK("naming: header comment names run, pid, rank and world at "
		 "once",
		 n > 0 && tp_gz_read_comment(hdr, (size_t)n, comment,
					     sizeof(comment)) == 0 &&
		 !strcmp(comment, "tprof run=runA pid=100 rank=0 world=1"),
		 "got '%s'",
		 n > 0 ? comment : "");

	/* While it writes, another process of run A gets -pid. */
	{
		struct tp_gz *g2 = calloc(1, sizeof(*g2));
		struct tp_output o2;

		tp_output_open(&o2, g2, dir, "t", 0, 1, "runA", 101, 1, 1);
		TP_CHECK_STR("naming: same run, rank busy -> -pid",
			     base(o2.tmp), "t-rank0-pid101.trace.json.gz.tmp");
		finish(&o2, g2);
		free(g2);
	}
	finish(&o, g);
	/* After it finished, a third of run A still must not overwrite. */
	tp_output_open(&o, g, dir, "t", 0, 1, "runA", 102, 1, 1);
	TP_CHECK_STR("naming: same run, rank file complete -> -pid",
		     base(o.tmp), "t-rank0-pid102.trace.json.gz.tmp");
	TP_CHECK("naming: the rank's file is untouched",
		 exists(o.tmp) && exists(strcat(strcpy(path, dir),
						"/t-rank0.trace.json.gz")),
		 "missing");
	finish(&o, g);
	/* The same pid again (the image it exec()d): a file of its own. */
	tp_output_open(&o, g, dir, "t", 0, 1, "runA", 102, 1, 1);
	TP_CHECK_STR("naming: next image of a pid -> -exec2", base(o.tmp),
		     "t-rank0-pid102-exec2.trace.json.gz.tmp");
	finish(&o, g);
	tp_output_open(&o, g, dir, "t", 0, 1, "runA", 102, 1, 1);
	TP_CHECK_STR("naming: third image of a pid -> -exec3", base(o.tmp),
		     "t-rank0-pid102-exec3.trace.json.gz.tmp");
	finish(&o, g);
	/* A fork child never takes a free rank name. */
	tp_output_open(&o, g, dir, "f", 0, 1, "runA", 103, 0, 1);
	TP_CHECK_STR("naming: a fork child gets -pid even when the rank is "
		     "free", base(o.tmp), "f-rank0-pid103.trace.json.gz.tmp");
	finish(&o, g);
	/* A new run replaces the old run's file (at its rename). */
	tp_output_open(&o, g, dir, "t", 0, 1, "runB", pid, 1, 1);
	TP_CHECK_STR("naming: a new run claims the rank name", base(o.tmp),
		     "t-rank0.trace.json.gz.tmp");
	finish(&o, g);

	/* A .tmp left by a killed process of another run is taken over. */
	snprintf(path, sizeof(path), "%s/s-rank1.trace.json.gz.tmp", dir);
	fake_file(path, "runOld", 999999);
	tp_output_open(&o, g, dir, "s", 1, 2, "runC", pid, 1, 1);
	TP_CHECK_STR("naming: stale tmp of a dead process is taken over",
		     base(o.tmp), "s-rank1.trace.json.gz.tmp");
	snprintf(path, sizeof(path), "%s/s-rank1-pid999999.trace.json.gz.tmp",
		 dir);
	TP_CHECK("naming: the stale tmp is kept for tprof recover, under its "
		 "process's -pid name", exists(path), "missing");
	unlink(path);
	snprintf(path, sizeof(path), "%s/s-rank1.trace.json.gz.tmp", dir);
	finish(&o, g);
	/* ... but not one a live process of another run is writing. */
	fake_file(path, "runLive", pid);
	tp_output_open(&o, g, dir, "s", 1, 2, "runD", pid, 1, 1);
	TP_CHECK("naming: live writer of another run keeps its file",
		 strstr(o.tmp, "-pid"), "got %s", o.tmp);
	finish(&o, g);
	/* An empty .tmp: its creator has not written the header yet. */
	snprintf(path, sizeof(path), "%s/e-rank2.trace.json.gz.tmp", dir);
	close(open(path, O_WRONLY | O_CREAT, 0644));
	tp_output_open(&o, g, dir, "e", 2, 3, "runE", pid, 1, 1);
	TP_CHECK("naming: a just-created tmp counts as taken",
		 strstr(o.tmp, "-pid"), "got %s", o.tmp);
	finish(&o, g);

	/* The file written is a valid gzip stream. */
	{
		gzFile z = gzopen(o.final, "rb");
		char c;

		TP_CHECK("naming: output opens as gzip", z != NULL, "gzopen");
		TP_CHECK_INT("naming: empty stream reads as empty",
			     gzread(z, &c, 1), 0);
		gzclose(z);
	}

	snprintf(path, sizeof(path), "%s/a/b/c", dir);
	TP_CHECK_INT("naming: mkdir -p", tp_mkdir_p(path), 0);
	TP_CHECK("naming: nested dir exists", exists(path), "missing");
	snprintf(path, sizeof(path), "%s/t-rank0.trace.json.gz/x", dir);
	TP_CHECK("naming: mkdir under a file fails", tp_mkdir_p(path) < 0,
		 "succeeded");
	snprintf(path, sizeof(path), "rm -rf %s", dir);
	if (system(path))
		return 1;
	free(g);
	return TP_TEST_DONE();
}
