/* cupti/: the CUPTI client: GPU activity, API callbacks, devices, GPU
 * tracks; on util/ .. output/. */
/* Whether the program itself carries GPU code: nvcc puts it in an
 * .nv_fatbin section. Such a program may use a static cudart that no hook
 * sees, so CUPTI must be up before its first kernel, that is at load. */
#include <elf.h>
#include <fcntl.h>
#include <stdlib.h>
#include <string.h>
#include <unistd.h>

#include "cupti.h"

static int read_at(int fd, void *buf, size_t len, off_t off)
{
	return pread(fd, buf, len, off) == (ssize_t)len ? 0 : -1;
}

static int has_section(int fd, const char *want)
{
	Elf64_Ehdr eh;
	Elf64_Shdr sh, strh;
	char *names = NULL;
	int found = 0;
	unsigned i;

	if (read_at(fd, &eh, sizeof(eh), 0) < 0 ||
	    memcmp(eh.e_ident, ELFMAG, SELFMAG) ||
	    eh.e_ident[EI_CLASS] != ELFCLASS64 ||
	    eh.e_shentsize != sizeof(Elf64_Shdr) || eh.e_shstrndx >= eh.e_shnum)
		return 0;
	if (read_at(fd, &strh, sizeof(strh), (off_t)(eh.e_shoff +
		    (uint64_t)eh.e_shstrndx * sizeof(sh))) < 0 ||
	    strh.sh_size > (1u << 20))
		return 0;
	names = malloc(strh.sh_size + 1);
	if (!names || read_at(fd, names, strh.sh_size,
			      (off_t)strh.sh_offset) < 0)
		goto out;
	names[strh.sh_size] = '\0';
	for (i = 0; i < eh.e_shnum && !found; i++) {
		if (read_at(fd, &sh, sizeof(sh), (off_t)(eh.e_shoff +
			    (uint64_t)i * sizeof(sh))) < 0)
			break;
		found = sh.sh_name < strh.sh_size &&
			!strcmp(names + sh.sh_name, want);
	}
out:
	free(names);
	return found;
}

int tp_cupti_program_has_gpu_code(void)
{
	int fd = open("/proc/self/exe", O_RDONLY | O_CLOEXEC);
	int found;

	if (fd < 0)
		return 0;
	found = has_section(fd, ".nv_fatbin");
	close(fd);
	return found;
}
