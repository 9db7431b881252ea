/* tprof recover: the summary of a recovered trace, as the library
 * writes its own (recover_summary.c). */
#ifndef TP_CLI_RECOVER_SUMMARY_H
#define TP_CLI_RECOVER_SUMMARY_H

/* dir/summaries/<stem>.summary.json computed from the trace at final
 * (named final_name in dir); a warning line when it cannot be. */
void tp_recover_summary(const char *dir, const char *final_name,
			const char *final);

#endif
