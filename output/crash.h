/* output/: the background writer: drains the rings into the trace file,
 * with its metadata and trailer; on every folder above. */
/* Completing the trace when the process is about to die: a crash signal,
 * _exit, or any other trigger that cannot run the normal exit path.
 *
 * The work is handed to the writer thread, and the caller waits on a futex
 * while the writer keeps making progress: the dying thread itself does no
 * formatting, no malloc and takes no lock, so it cannot deadlock on a lock
 * it held when it crashed. If the writer needs such a lock (the crash was
 * inside malloc and the writer must allocate), it stops making progress
 * and the wait ends after stall_ms with one line on stderr; the .tmp file
 * keeps everything synced so far (see tp_writer_sync in writer.h) and
 * `tprof recover` completes it. */
#ifndef TP_CRASH_H
#define TP_CRASH_H

/* Completes and renames the trace now; async-signal-safe, callable from
 * any thread but the writer, any number of times (and from several
 * threads at once: every caller returns once the file is complete or
 * given up). sig: the signal that kills the process, or 0 for _exit.
 * Returns 0 when the trace is complete, -1 when the writer never started
 * or was given up. */
int tp_crash_dump(int sig, int stall_ms);

#endif
