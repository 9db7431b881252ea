/* TPROF_* environment variables, parsed once at load.
 *
 * Parsing is a pure function of a lookup callback so the tests (and
 * `tprof env-check`, which tprof-run uses to vet its flags) run the very
 * same code as the preloaded library.
 */
#ifndef TP_CONFIG_H
#define TP_CONFIG_H

#include <stddef.h>

enum tp_source {
	TP_SRC_CUDA = 1u << 0,
	TP_SRC_GPU = 1u << 1,
	TP_SRC_CUBLAS = 1u << 2,
	TP_SRC_CUDNN = 1u << 3,
	TP_SRC_NCCL = 1u << 4,
	TP_SRC_NVTX = 1u << 5,
	TP_SRC_MEM = 1u << 6,
	TP_SRC_ALL = (1u << 7) - 1,
};

#define TP_DEFAULT_DIR "./tprof-traces"
#define TP_DEFAULT_NAME "tprof"
#define TP_DEFAULT_BUFFER_MB 16
#define TP_MAX_BUFFER_MB 4096

struct tp_config {
	char dir[4096];
	char name[256];
	unsigned sources;
	unsigned buffer_mb;
	int log_level;
	int disabled;
	int rank;
	int world_size;
	const char *rank_from;	/* the variable the rank came from */
};

typedef const char *(*tp_getenv_fn)(const char *name);

/* 0, or -1 with a one-line message (without the "tprof: error: " prefix)
 * in err. */
int tp_config_parse(struct tp_config *c, tp_getenv_fn get, char *err,
		    size_t errlen);
int tp_parse_sources(const char *s, unsigned *out, char *err, size_t errlen);
const char *tp_source_name(unsigned bit);
void tp_config_sources_str(unsigned sources, char *buf, size_t len);

#endif
