/* cupti/: the CUPTI client: GPU activity, API callbacks, devices, GPU
 * tracks; on util/ .. output/. */
/* Finding libcupti without linking it: the copy already in the process
 * (PyTorch wheels ship one), TPROF_CUPTI_LIB, the one next to the loaded
 * libcudart (of its CUDA major version), then the toolkit.
 *
 * CUPTI 13.x (API versions 130000-139999) and 12.6-12.9 (API 24-28) are
 * used. tprof reads its records through the CUDA 13 structs; the fields
 * it reads sit at the same offsets in CUPTI 12.x's (Kernel9 is Kernel10
 * without its last fields; Memcpy6, MemcpyPtoP4, Memset4,
 * Synchronization2, Memory4, Overhead3, Device5 and Context3 are the
 * same structs): tests/unit/test_cupti_layout.c checks this against the
 * CUPTI 12 headers when they are there. */
#define _GNU_SOURCE
#include <dlfcn.h>
#include <link.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "cupti.h"

static char SONAME[32];	/* libcupti.so.<the loaded cudart's major> */

struct tp_cupti_fns tp_cupti;
void *tp_cupti_lib;

static void *open_loaded(void)
{
	const char *const names[] = { SONAME, "libcupti.so.13",
				      "libcupti.so.12", "libcupti.so", NULL };
	unsigned i;
	void *h;

	for (i = 0; names[i]; i++) {
		h = dlopen(names[i], RTLD_NOW | RTLD_NOLOAD);
		if (h)
			return h;
	}
	return NULL;
}

static int find_cudart(struct dl_phdr_info *info, size_t size, void *arg)
{
	char *dir = arg;
	const char *base;

	(void)size;
	base = strrchr(info->dlpi_name, '/');
	if (!base || strncmp(base + 1, "libcudart.so", 12))
		return 0;
	snprintf(dir, PATH_MAX, "%.*s", (int)(base - info->dlpi_name),
		 info->dlpi_name);
	return 1;
}

/* The CUDA major version of the libcudart in the process: 12 for
 * libcudart.so.12, else 13. */
static int find_major(struct dl_phdr_info *info, size_t size, void *arg)
{
	const char *base = strrchr(info->dlpi_name, '/');

	(void)size;
	if (!base || strncmp(base + 1, "libcudart.so.", 13))
		return 0;
	*(int *)arg = atoi(base + 14);
	return 1;
}

/* Without a libcudart (the driver API alone: JAX, Triton), the driver
 * tells: one older than 13.0 runs no CUPTI 13. */
static int driver_major(void)
{
	void *h = dlopen("libcuda.so.1", RTLD_LAZY | RTLD_NOLOAD);
	int (*get)(int *);
	int v = 0;

	if (!h)
		return 13;
	*(void **)&get = dlsym(h, "cuDriverGetVersion");
	if (!get || get(&v) || v <= 0)
		v = 13000;
	dlclose(h);
	return v < 13000 ? 12 : 13;
}

static int cudart_major(void)
{
	int major = 0;

	dl_iterate_phdr(find_major, &major);
	if (!major)
		return driver_major();
	return major == 12 ? 12 : 13;
}

/* CUDA 12.6-12.9 or 13.x. */
int tp_cupti_version_ok(uint32_t v)
{
	return (v >= 24 && v <= 28) || (v >= 130000 && v <= 139999);
}

static void *try_open(const char *path, char *tried, size_t tlen)
{
	void *h = dlopen(path, RTLD_NOW | RTLD_LOCAL);
	size_t n = strlen(tried);

	if (!h && n + strlen(path) + 3 < tlen)
		snprintf(tried + n, tlen - n, "%s%s", n ? ", " : "", path);
	return h;
}

static void *try_in(const char *dir, const char *sub, char *tried,
		    size_t tlen)
{
	char p[PATH_MAX + 64];

	snprintf(p, sizeof(p), "%s%s%s%s", dir, *dir ? "/" : "", sub, SONAME);
	return try_open(p, tried, tlen);
}

/* Next to the loaded libcudart (the toolkit's lib64, or a pip wheel's
 * lib/ with cupti beside it), the loader's path, then CUDA_HOME and
 * /usr/local/cuda. */
static void *open_search(char *tried, size_t tlen)
{
	const char *home = getenv("CUDA_HOME");
	char dir[PATH_MAX] = "";
	const struct {
		const char *dir, *sub;
	} where[] = {
		{ dir, "" }, { dir, "../../cuda_cupti/lib/" }, { "", "" },
		{ home, "lib64/" }, { home, "extras/CUPTI/lib64/" },
		{ "/usr/local/cuda", "lib64/" },
		{ "/usr/local/cuda", "extras/CUPTI/lib64/" },
	};
	unsigned i;
	void *h;

	dl_iterate_phdr(find_cudart, dir);
	for (i = 0; i < sizeof(where) / sizeof(where[0]); i++) {
		/* An unknown directory is skipped, not the loader's path. */
		if (!where[i].dir || (i < 2 && !dir[0]) ||
		    (where[i].dir == home && !*home))
			continue;
		h = try_in(where[i].dir, where[i].sub, tried, tlen);
		if (h)
			return h;
	}
	return NULL;
}

#define SYM(field, name)                                                 \
	do {                                                             \
		*(void **)&tp_cupti.field = dlsym(h, name);              \
		if (!tp_cupti.field) {                                   \
			missing = name;                                  \
			goto out;                                        \
		}                                                        \
	} while (0)

static const char *resolve_all(void *h)
{
	const char *missing = NULL;

	SYM(get_version, "cuptiGetVersion");
	SYM(get_result_string, "cuptiGetResultString");
	SYM(subscribe, "cuptiSubscribe");
	SYM(unsubscribe, "cuptiUnsubscribe");
	SYM(enable_callback, "cuptiEnableCallback");
	SYM(get_callback_name, "cuptiGetCallbackName");
	SYM(activity_enable, "cuptiActivityEnable");
	SYM(activity_disable, "cuptiActivityDisable");
	SYM(register_callbacks, "cuptiActivityRegisterCallbacks");
	SYM(register_timestamp, "cuptiActivityRegisterTimestampCallback");
	SYM(flush_all, "cuptiActivityFlushAll");
	SYM(get_next_record, "cuptiActivityGetNextRecord");
	SYM(get_num_dropped, "cuptiActivityGetNumDroppedRecords");
	SYM(finalize, "cuptiFinalize");
	SYM(enable_domain, "cuptiEnableDomain");
	SYM(set_attribute, "cuptiActivitySetAttribute");
	SYM(get_timestamp, "cuptiGetTimestamp");
out:
	return missing;
}

static void lib_path(void *h, char *path, size_t plen)
{
	struct link_map *lm = NULL;

	if (dlinfo(h, RTLD_DI_LINKMAP, &lm) == 0 && lm && lm->l_name)
		snprintf(path, plen, "%s", lm->l_name);
}

int tp_cupti_load(const struct tp_config *c, char *path, size_t plen,
		  uint32_t *version, char *why, size_t wlen)
{
	char tried[1024] = "";
	const char *missing;
	void *h;

	snprintf(SONAME, sizeof(SONAME), "libcupti.so.%d", cudart_major());
	h = open_loaded();

	if (!h && c->cupti_lib[0]) {
		h = dlopen(c->cupti_lib, RTLD_NOW | RTLD_LOCAL);
		if (!h) {
			snprintf(why, wlen, "TPROF_CUPTI_LIB='%s' cannot be "
				 "loaded (%s); point it at the %s of your CUDA "
				 "toolkit", c->cupti_lib, dlerror(), SONAME);
			return -1;
		}
	}
	if (!h)
		h = open_search(tried, sizeof(tried));
	if (!h) {
		snprintf(why, wlen, "libcupti not found (tried %s); set "
			 "TPROF_CUPTI_LIB to the %s of your CUDA toolkit",
			 tried, SONAME);
		return -1;
	}
	lib_path(h, path, plen);
	tp_cupti_lib = h;
	missing = resolve_all(h);
	*(void **)&tp_cupti.enable_and_dump =
		dlsym(h, "cuptiActivityEnableAndDump");
	if (missing) {
		snprintf(why, wlen, "%s has no %s; set TPROF_CUPTI_LIB to the "
			 "%s of your CUDA (12.6 or later)", path, missing,
			 SONAME);
		return -1;
	}
	if (tp_cuda_driver_check(why, wlen) < 0)
		return -1;
	*version = 0;
	if (tp_cupti.get_version(version) != CUPTI_SUCCESS ||
	    !tp_cupti_version_ok(*version)) {
		snprintf(why, wlen, "%s is CUPTI API version %u; tprof reads "
			 "the records of CUDA 12.6-12.9 (API 24-28) and 13.x "
			 "(130000-139999): set TPROF_CUPTI_LIB to the %s of a "
			 "CUDA it reads", path, *version, SONAME);
		return -1;
	}
	return 0;
}

const char *tp_cupti_result(CUptiResult r)
{
	const char *s = NULL;

	if (!tp_cupti.get_result_string ||
	    tp_cupti.get_result_string(r, &s) != CUPTI_SUCCESS || !s)
		return "unknown CUPTI error";
	return s;
}
