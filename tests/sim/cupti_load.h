/* cupti_load.c: a loaded machine's preemptions inside CUPTI's calls
 * (internal to libcupti). */
#ifndef SIM_CUPTI_LOAD_H
#define SIM_CUPTI_LOAD_H

/* at: 0 before the call reads its clock, 1 after. */
void sim_preempt(int at);

#endif
