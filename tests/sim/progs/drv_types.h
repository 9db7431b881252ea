/* The driver API entry points the driver-only programs find with dlsym
 * on libcuda.so.1 (driver_only.c, window_busy.c, static_rt.c), typed as
 * cuda.h declares them (CUresult as int, handles as void *), and the
 * simulation's simNextKernelDuration. */
#ifndef SIM_DRV_TYPES_H
#define SIM_DRV_TYPES_H

typedef int (*init_t)(unsigned);
typedef int (*load_t)(void **, const void *);
typedef int (*func_t)(void **, void *, const char *);
typedef int (*launch_t)(void *, unsigned, unsigned, unsigned, unsigned,
			unsigned, unsigned, unsigned, void *, void **,
			void **);
typedef int (*sync_t)(void);
typedef int (*retain_t)(void **, int);
typedef int (*setctx_t)(void *);
typedef int (*unload_t)(void *);
typedef void (*dur_t)(unsigned long long);

#endif
