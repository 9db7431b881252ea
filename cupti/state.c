/* cupti/: the CUPTI client: GPU activity, API callbacks, devices, GPU
 * tracks; on util/ .. output/. */
/* The collection's state, below every part of it (collect.h). */
#include "collect.h"

struct tp_cupti_state tp_cs = {
	.lock = PTHREAD_MUTEX_INITIALIZER,
};

unsigned tp_cupti_inside;
int tp_cupti_graphs;
int tp_cupti_detach_wanted;
