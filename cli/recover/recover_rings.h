/* tprof recover: what a killed process's rings file adds to its .tmp
 * (recover_rings.c). */
#ifndef TP_CLI_RECOVER_RINGS_H
#define TP_CLI_RECOVER_RINGS_H

#include <stdint.h>

#include "gzip/gzip.h"
#include "record/ringfile.h"

struct tp_rings_found {
	char path[4096];	/* "" when there is none */
	uint64_t tmp_len;	/* the .tmp's inflated length at its sync */
};

/* The rings file in dir of process pid that names tmp_name, with its
 * published sync point; 0 found, -1 none. */
int tp_rings_find(const char *dir, int pid, const char *tmp_name,
		  struct tp_rings_found *f);
/* Appends the rings' records past the sync point to g, through
 * libtprof.so's decoder; 0, or -1 with a reason in why. */
int tp_rings_append(const char *path, struct tp_gz *g, struct tp_rf_counts *c,
		    char *why, size_t whylen);
/* Removes rings files in dir whose process is gone and whose .tmp is
 * not there, with one line each; the number removed. */
int tp_rings_remove_orphans(const char *dir);

#endif
