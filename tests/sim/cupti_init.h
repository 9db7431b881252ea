/* cupti_init.c: CUPTI's start-up, at its first subscription or buffer
 * registration (internal to libcupti). */
#ifndef SIM_CUPTI_INIT_H
#define SIM_CUPTI_INIT_H

void sim_cupti_start(void);

#endif
