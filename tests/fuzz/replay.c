/* Runs a harness's LLVMFuzzerTestOneInput over files, without libFuzzer:
 * make test builds each harness with this main and gcc (no clang needed)
 * and replays the committed corpus, so the inputs that once crashed stay
 * fixed. Prints "PASS fuzz-replay NAME: FILE" per file; a crash or a
 * sanitizer report fails the program. The harness's own outcome is not
 * checked: it only has to return (each file's behaviour is pinned by a
 * unit or integration test). */
#include <dirent.h>
#include <fcntl.h>
#include <stdint.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/stat.h>
#include <unistd.h>

int LLVMFuzzerTestOneInput(const uint8_t *data, size_t size);
/* In a sanitized build: where its reports go. */
void __sanitizer_set_report_fd(void *fd) __attribute__((weak));

/* The harness's messages (the CLI's errors about the bad input) are not
 * the test's: stderr is /dev/null while it runs, the sanitizer's reports
 * go to the real one. */
static int real_stderr = -1, devnull = -1;

static void quiet(int on)
{
	if (real_stderr < 0) {
		real_stderr = dup(2);
		devnull = open("/dev/null", O_WRONLY | O_CLOEXEC);
		if (__sanitizer_set_report_fd && real_stderr >= 0)
			__sanitizer_set_report_fd((void *)(intptr_t)real_stderr);
	}
	if (real_stderr < 0 || devnull < 0)
		return;
	fflush(stderr);
	dup2(on ? devnull : real_stderr, 2);
}

static int replay(const char *name, const char *path)
{
	FILE *f = fopen(path, "rb");
	uint8_t *buf = NULL;
	size_t len = 0, cap = 0, n;

	if (!f) {
		printf("FAIL fuzz-replay %s: %s: cannot open\n", name, path);
		return 1;
	}
	do {
		if (len == cap) {
			uint8_t *p = realloc(buf, cap = cap ? 2 * cap : 65536);

			if (!p) {
				free(buf);
				fclose(f);
				return 1;
			}
			buf = p;
		}
		n = fread(buf + len, 1, cap - len, f);
		len += n;
	} while (n);
	fclose(f);
	quiet(1);
	LLVMFuzzerTestOneInput(buf, len);
	quiet(0);
	free(buf);
	printf("PASS fuzz-replay %s: %s\n", name, path);
	fflush(stdout);
	return 0;
}

/* test_fuzz_NAME [DIR_OR_FILE...]: by default the committed corpus,
 * tests/fuzz/corpus/NAME (tests/run.sh runs from the repository root). */
int main(int argc, char **argv)
{
	char *dflt[] = { argv[0], "tests/fuzz/corpus/" FUZZ_NAME, NULL };
	int bad = 0;

	if (argc < 2) {
		argv = dflt;
		argc = 2;
	}
	for (int i = 1; i < argc; i++) {
		struct stat st;
		struct dirent **ents;
		int n;

		if (stat(argv[i], &st) || !S_ISDIR(st.st_mode)) {
			bad |= replay(FUZZ_NAME, argv[i]);
			continue;
		}
		n = scandir(argv[i], &ents, NULL, alphasort);
		for (int k = 0; k < n; k++) {
			char p[4096];

			if (ents[k]->d_name[0] != '.') {
				snprintf(p, sizeof(p), "%s/%s", argv[i],
					 ents[k]->d_name);
				bad |= replay(FUZZ_NAME, p);
			}
			free(ents[k]);
		}
		free(n >= 0 ? ents : NULL);
	}
	return bad;
}
