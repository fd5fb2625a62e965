/* SPDX-License-Identifier: GPL-2.0 */
/*
 * A library file read whole into memory, for the tests that damage its
 * unwind tables (eh_frame_damage.h, sframe_walk.c), and where one of its
 * program headers is.
 */
#ifndef SELFTESTS_UNWIND_ELF_FILE_H
#define SELFTESTS_UNWIND_ELF_FILE_H

#include <fcntl.h>
#include <linux/elf.h>
#include <stdbool.h>
#include <stdint.h>
#include <stdlib.h>
#include <sys/stat.h>
#include <unistd.h>

/*
 * Read the file at @path into *@data (malloc()ed, *@len bytes) and find its
 * program header of type @type. Return: that header, or NULL when the file
 * cannot be read or has none.
 */
static inline struct elf64_phdr *elf_file_read(const char *path,
					       unsigned char **data,
					       size_t *len, uint32_t type)
{
	struct elf64_hdr *eh;
	struct elf64_phdr *ph;
	struct stat st;
	bool ok;
	int fd, i;

	fd = open(path, O_RDONLY);
	if (fd < 0)
		return NULL;
	ok = !fstat(fd, &st);
	if (ok) {
		*len = st.st_size;
		*data = malloc(*len);
		ok = *data && read(fd, *data, *len) == (ssize_t)*len;
	}
	close(fd);
	if (!ok)
		return NULL;
	eh = (struct elf64_hdr *)*data;
	ph = (struct elf64_phdr *)(*data + eh->e_phoff);
	for (i = 0; i < eh->e_phnum; i++)
		if (ph[i].p_type == type)
			return &ph[i];
	return NULL;
}

#endif /* SELFTESTS_UNWIND_ELF_FILE_H */
