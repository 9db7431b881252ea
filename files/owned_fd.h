/* tprof's own file descriptors in a process that may close or dup2 over
 * any descriptor number (a daemon closing all it inherited, a shell
 * redirecting): each is kept at a high number, close-on-exec, and its
 * identity (device and inode) is checked before every use, so tprof never
 * writes to, reads from or closes a descriptor that is not its own. */
#ifndef TP_OWNED_FD_H
#define TP_OWNED_FD_H

#include <sys/types.h>

struct tp_owned_fd {
	int fd;			/* -1: none */
	dev_t dev;
	ino_t ino;
};

/* fd moved to a high number (close-on-exec; the low one is closed), or fd
 * itself when there is no room up there. */
int tp_fd_high(int fd);
/* open(path, flags | O_CLOEXEC | O_NOFOLLOW, mode) at a high number,
 * checked to be the file at path: the descriptor, or -1 with errno. */
int tp_fd_open_high(const char *path, int flags, mode_t mode);
/* Notes the identity of fd (already tprof's own): 0, or -1 with errno. */
int tp_fd_own(struct tp_owned_fd *o, int fd);
/* 1 while o->fd is still the file it was opened as. */
int tp_fd_is_ours(const struct tp_owned_fd *o);
/* 1 when fd refers to the file o was opened as. */
int tp_fd_same_file(const struct tp_owned_fd *o, int fd);
/* Closes o->fd only if it is still tprof's; forgets it either way.
 * Returns close's result (0 when there was nothing of ours to close). */
int tp_fd_close(struct tp_owned_fd *o);

#endif
