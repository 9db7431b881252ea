/* tprof recover: what a killed process left (a trace's .tmp file, cut
 * where it died) turned into a valid, renamed trace and its summary. */
#ifndef TP_CLI_RECOVER_H
#define TP_CLI_RECOVER_H

int tp_cmd_recover(int argc, char **argv);

/* Recovers every .tmp trace in dir whose process is gone and removes
 * the rings files of gone processes that left no .tmp; one line on
 * stderr per file recovered, left or removed. tprof report and merge
 * call it on the directories they read. The number of such files (0:
 * nothing to recover), or -1 when dir cannot be read; *failed (when
 * not NULL) is incremented for each file that could not be recovered. */
int tp_recover_dir(const char *dir, int *failed);

#endif
