/* files/: the run's file names and their safe creation (O_EXCL,
 * O_NOFOLLOW), fds tprof owns; on gzip/ and util/. */
#define _GNU_SOURCE
#include <errno.h>
#include <fcntl.h>
#include <signal.h>
#include <stdio.h>
#include <string.h>
#include <sys/stat.h>
#include <unistd.h>

#include "naming.h"
#include "owned_fd.h"

const char *tp_output_suffix = ".trace.json.gz";

/* 0775 whatever the umask (which only takes bits away): a directory
 * tprof makes is never writable by everyone, so nobody else can plant
 * files in it. */
int tp_mkdir_p(const char *dir)
{
	char path[TP_PATH_MAX];
	size_t i, n = strlen(dir);

	if (n >= sizeof(path)) {
		errno = ENAMETOOLONG;
		return -1;
	}
	memcpy(path, dir, n + 1);
	for (i = 1; i <= n; i++) {
		if (path[i] != '/' && path[i] != '\0')
			continue;
		path[i] = '\0';
		if (mkdir(path, 0775) < 0 && errno != EEXIST)
			return -1;
		path[i] = dir[i];
	}
	return 0;
}

/* Image 1 of a pid: -pid<P>; each later image the same process exec()s
 * (exec keeps the pid) gets -pid<P>-exec<N>. */
static void image_names(struct tp_output *o, const char *dir,
			const char *name, int rank, pid_t pid, unsigned image)
{
	if (pid && image > 1)
		snprintf(o->base, sizeof(o->base), "%s/%s-rank%d-pid%d-exec%u",
			 dir, name, rank, (int)pid, image);
	else if (pid)
		snprintf(o->base, sizeof(o->base), "%s/%s-rank%d-pid%d", dir,
			 name, rank, (int)pid);
	else
		snprintf(o->base, sizeof(o->base), "%s/%s-rank%d", dir, name,
			 rank);
	snprintf(o->final, sizeof(o->final), "%s%s", o->base,
		 tp_output_suffix);
	snprintf(o->tmp, sizeof(o->tmp), "%s.tmp", o->final);
}

/* pid 0: the rank's own name. */
void tp_output_names(struct tp_output *o, const char *dir, const char *name,
		     int rank, pid_t pid)
{
	image_names(o, dir, name, rank, pid, 1);
}

enum owner { OWNER_NONE, OWNER_THIS_RUN, OWNER_LIVE, OWNER_STALE };

/* Who wrote path: read the run and pid from its gzip header comment
 * (the pid also to *pidp, 0 when unknown). */
static enum owner file_owner(const char *path, const char *run_id, int *pidp)
{
	unsigned char buf[512];
	char comment[400], run[300];
	int fd, pid;
	ssize_t n;

	/* Never through a link, never blocking on a FIFO planted there. */
	fd = open(path, O_RDONLY | O_CLOEXEC | O_NOFOLLOW | O_NONBLOCK);
	if (fd < 0)
		return errno == ENOENT ? OWNER_NONE : OWNER_LIVE;
	n = read(fd, buf, sizeof(buf));
	close(fd);
	/* Empty or partial: its creator has not written the header yet. */
	if (n <= 0 || tp_gz_read_comment(buf, (size_t)n, comment,
					 sizeof(comment)) < 0)
		return OWNER_LIVE;
	if (sscanf(comment, "tprof run=%299s pid=%d", run, &pid) != 2)
		return OWNER_STALE;
	*pidp = pid;
	if (!strcmp(run, run_id))
		return OWNER_THIS_RUN;
	if (kill(pid, 0) < 0 && errno == ESRCH)
		return OWNER_STALE;
	return OWNER_LIVE;
}

int tp_create_own_file(const char *dir, const char *prefix,
		       const char *suffix, char *path, size_t len,
		       const char **name)
{
	int n, fd = -1, at;

	if (tp_mkdir_p(dir) < 0)
		return -1;
	for (n = 0; n < 100; n++) {
		at = snprintf(path, len, "%s/", dir);
		snprintf(path + at, len - (size_t)at, "%s%d.%d%s", prefix,
			 (int)getpid(), n, suffix);
		if (name)
			*name = path + at;
		fd = open(path, O_RDWR | O_CREAT | O_EXCL | O_NOFOLLOW |
			  O_CLOEXEC, 0600);
		if (fd >= 0 || errno != EEXIST)
			return fd;
	}
	return -1;
}

static int create_tmp(struct tp_output *o, struct tp_gz *g, int excl,
		      const char *comment, int level)
{
	int flags = O_WRONLY | O_CREAT | O_EXCL | O_NOFOLLOW | O_CLOEXEC;
	int fd, tries;

	/* The -pid name (excl 0) is this process's alone: whatever is there
	 * (a stale file, a link someone planted) is removed, never followed
	 * or truncated. */
	for (tries = 0; tries < 4; tries++) {
		fd = tp_fd_open_high(o->tmp, flags, 0644);
		if (fd >= 0 || errno != EEXIST || excl)
			break;
		unlink(o->tmp);
	}
	if (fd < 0)
		return -1;
	if (tp_gz_open(g, fd, level, comment) < 0) {
		errno = g->err;
		close(fd);
		unlink(o->tmp);
		return -1;
	}
	return 0;
}

/* A .tmp left by a killed process of another run: moved to that
 * process's own -pid name, where `tprof recover` completes it, rather
 * than deleted; deleted only when that fails. */
static void move_stale(const struct tp_output *o, const char *dir,
		       const char *name, int rank, int pid)
{
	struct tp_output aside;

	if (pid > 0) {
		tp_output_names(&aside, dir, name, rank, pid);
		if (renameat2(AT_FDCWD, o->tmp, AT_FDCWD, aside.tmp,
			      RENAME_NOREPLACE) == 0)
			return;
	}
	unlink(o->tmp);
}

/* Claim the rank's own name: 1 claimed, 0 taken by another process of
 * this run (or a live one of another), -1 error. */
static int claim_rank_name(struct tp_output *o, struct tp_gz *g,
			   const char *run_id, const char *comment,
			   int level, const char *dir, const char *name,
			   int rank)
{
	int tries, pid = 0;

	for (tries = 0; tries < 4; tries++) {
		if (create_tmp(o, g, 1, comment, level) == 0)
			break;
		if (errno != EEXIST)
			return -1;
		switch (file_owner(o->tmp, run_id, &pid)) {
		case OWNER_NONE:	/* renamed meanwhile: look again */
			continue;
		case OWNER_STALE:	/* left by a killed process */
			move_stale(o, dir, name, rank, pid);
			continue;
		default:
			return 0;
		}
	}
	if (tries == 4)
		return 0;
	if (file_owner(o->final, run_id, &pid) != OWNER_THIS_RUN)
		return 1;
	tp_gz_abandon(g);
	close(g->fd);
	unlink(o->tmp);
	return 0;
}

/* The first -pid name with no completed file: an earlier image of this
 * pid (before an exec, or before a failed exec) keeps its file, and
 * whatever else sits at a completed name is never replaced. */
static int open_pid_name(struct tp_output *o, struct tp_gz *g,
			 const char *dir, const char *name, int rank,
			 pid_t pid, const char *comment, int level)
{
	struct stat st;
	unsigned image;

	for (image = 1; image <= TP_MAX_IMAGES; image++) {
		image_names(o, dir, name, rank, pid, image);
		if (lstat(o->final, &st) == 0)
			continue;
		if (errno != ENOENT)
			return -1;
		return create_tmp(o, g, 0, comment, level);
	}
	errno = EEXIST;
	return -1;
}

int tp_output_open(struct tp_output *o, struct tp_gz *g, const char *dir,
		   const char *name, int rank, int world_size,
		   const char *run_id, pid_t pid, int claim, int level)
{
	char comment[400];
	int rc;

	/* rank and world: for tprof recover, which completes a killed
	 * process's file without its trailer. */
	snprintf(comment, sizeof(comment), "tprof run=%s pid=%d rank=%d "
		 "world=%d", run_id, (int)pid, rank, world_size);
	if (claim) {
		tp_output_names(o, dir, name, rank, 0);
		rc = claim_rank_name(o, g, run_id, comment, level, dir, name,
				     rank);
		if (rc)
			return rc < 0 ? -1 : 0;
	}
	return open_pid_name(o, g, dir, name, rank, pid, comment, level);
}
