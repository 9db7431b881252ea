/* hooks/: the hooked entry points (cudart, cuBLAS, cuDNN, NCCL, NVTX),
 * each library in its own folder, and how the real functions are found; on
 * every library folder below preload/. */
/* Finding the real entry points behind our hooks, at run time only:
 * libtprof.so has no DT_NEEDED on any CUDA library. */
#ifndef TP_RESOLVE_H
#define TP_RESOLVE_H

/* NULL-terminated soname lists, most recent first. */
extern const char *const tp_libs_cudart[];
extern const char *const tp_libs_cudnn[];
/* 1 once any hook has looked for its real function. */
int tp_resolve_used(void);

/* Stores the real `name` in *slot and returns 1, or prints one line (once
 * per symbol) and returns 0. dlsym(RTLD_NEXT) first; when the library was
 * dlopen-ed RTLD_LOCAL that finds nothing, so the already-loaded library
 * is then looked up by soname with RTLD_NOLOAD (never loaded by us). */
int tp_resolve(void **slot, const char *name, const char *const *libs);
/* The same for the entry points a library's generated constructors call
 * (module registration): CUPTI is not started from there, under the
 * dynamic loader's lock (resolve.c). */
int tp_resolve_ctor(void **slot, const char *name, const char *const *libs);

/* The real function, once TP_REAL_OK said it is there. An atomic load, as
 * tp_resolve's store on another thread may be racing with it. */
#define TP_REAL(name) __atomic_load_n(&real_##name, __ATOMIC_RELAXED)

#define TP_REAL_OK(name, libs)                                           \
	(__builtin_expect(__atomic_load_n(&real_##name, __ATOMIC_RELAXED) \
			  != NULL, 1) ||                                 \
	 tp_resolve((void **)&real_##name, #name, libs))

#define TP_REAL_OK_CTOR(name, libs)                                      \
	(__builtin_expect(__atomic_load_n(&real_##name, __ATOMIC_RELAXED) \
			  != NULL, 1) ||                                 \
	 tp_resolve_ctor((void **)&real_##name, #name, libs))

/* The error-name functions the writer's formatters call (cudart's
 * cudaGetErrorName, cuDNN's cudnnGetErrorString), or NULL. They are
 * looked up by tp_resolve, on a program thread, with the first function
 * of their library: the writer itself never calls dlsym, which takes
 * the loader lock that a thread running a new library's constructors
 * holds (and keeps, if it then waits in a hook after SIGTERM). */
enum tp_companion { TP_CUDART_ERROR_NAME, TP_CUDNN_ERROR_STRING };
void *tp_resolve_companion(enum tp_companion c);

/* No error line for a function not found (the rings decoder). */
void tp_resolve_set_quiet(void);

#endif
