// SPDX-License-Identifier: GPL-2.0
/*
 * Find the unwind tables of the file an executable mapping is of, with no
 * help from the program or its libc: the file's ELF and program headers
 * are read from the page cache, and its PT_GNU_SFRAME and PT_GNU_EH_FRAME
 * segments, relocated by the mapping's load bias, give the tables' user
 * addresses. The tables are then read where the process maps them, with
 * fault-tolerant accessors: they cost no kernel memory per library.
 *
 * Context: task context, where page faults may be taken and no mmap lock
 * is held.
 */
#include <linux/eh_frame.h>
#include <linux/elf.h>
#include <linux/fs.h>
#include <linux/mm.h>
#include <linux/sframe.h>
#include <linux/slab.h>

#include "tables.h"

/* The program header of an SFrame section (not in 6.12's uapi elf.h). */
#ifndef PT_GNU_SFRAME
#define PT_GNU_SFRAME		(PT_LOOS + 0x474e554)
#endif

/* The most program headers read from a file. */
#define UNWIND_MAX_PHDRS	128

/* The PT_LOAD of @ph[0..@n) that holds virtual address @vaddr, or NULL. */
static const struct elf64_phdr *unwind_load_of(const struct elf64_phdr *ph,
					       unsigned int n, u64 vaddr)
{
	unsigned int i;

	for (i = 0; i < n; i++) {
		if (ph[i].p_type == PT_LOAD && vaddr >= ph[i].p_vaddr &&
		    vaddr - ph[i].p_vaddr < ph[i].p_memsz)
			return &ph[i];
	}
	return NULL;
}

/*
 * The .eh_frame of the file: its header must lie in a loaded segment, which
 * bounds what the reader may read of the section.
 */
static int unwind_probe_eh_frame(const struct elf64_phdr *ph, unsigned int n,
				 const struct elf64_phdr *eh,
				 unsigned long bias,
				 struct eh_frame_section *sec)
{
#ifdef CONFIG_UNWIND_USER_EH_FRAME
	const struct elf64_phdr *load;
	u64 start, end;

	if (!eh)
		return -ENOENT;
	load = unwind_load_of(ph, n, eh->p_vaddr);
	if (!load || eh->p_memsz > load->p_vaddr + load->p_memsz - eh->p_vaddr)
		return -EINVAL;
	start = load->p_vaddr + bias;
	end = start + load->p_memsz;
	if (start < load->p_vaddr || end < start || end > TASK_SIZE_MAX)
		return -EINVAL;
	return eh_frame_section_init(sec, eh->p_vaddr + bias, eh->p_memsz,
				     start, end);
#else
	return -ENOENT;
#endif
}

/**
 * unwind_tables_probe - find the unwind tables of a mapped file
 * @file: the file the executable mapping is of
 * @vm_start: the mapping's start
 * @vm_pgoff: its offset in the file, in pages
 * @vm_end: its end
 * @t: filled with the tables found (cleared first)
 * @res: how each kind of table fared
 *
 * Context: task context with no mmap lock held; may sleep and fault.
 *
 * Return: 0 when the file is an ELF file of this machine that the mapping
 * is an executable segment of (@res then says which tables it has);
 * -ENOENT when it is not; -ENOMEM.
 */
int unwind_tables_probe(struct file *file, unsigned long vm_start,
			unsigned long vm_pgoff, unsigned long vm_end,
			struct unwind_user_tables *t, struct unwind_probe *res)
{
	const struct elf64_phdr *text = NULL, *sf = NULL, *eh = NULL;
	unsigned long off, bias;
	struct elf64_hdr ehdr;
	struct elf64_phdr *ph;
	loff_t pos = 0;
	size_t len;
	int i, ret;

	memset(t, 0, sizeof(*t));
	res->sframe = -ENOENT;
	res->eh_frame = -ENOENT;
	if (!(file->f_mode & FMODE_READ) || !S_ISREG(file_inode(file)->i_mode))
		return -ENOENT;
	if (vm_pgoff > ULONG_MAX >> PAGE_SHIFT)
		return -ENOENT;
	off = vm_pgoff << PAGE_SHIFT;

	if (kernel_read(file, &ehdr, sizeof(ehdr), &pos) != sizeof(ehdr))
		return -ENOENT;
	if (memcmp(ehdr.e_ident, ELFMAG, SELFMAG) ||
	    ehdr.e_ident[EI_CLASS] != ELFCLASS64 ||
	    ehdr.e_ident[EI_DATA] != ELFDATA2LSB ||
	    ehdr.e_machine != ELF_ARCH ||
	    (ehdr.e_type != ET_EXEC && ehdr.e_type != ET_DYN) ||
	    ehdr.e_phentsize != sizeof(*ph) || !ehdr.e_phnum ||
	    ehdr.e_phnum > UNWIND_MAX_PHDRS)
		return -ENOENT;

	len = ehdr.e_phnum * sizeof(*ph);
	ph = kmalloc(len, GFP_KERNEL);
	if (!ph)
		return -ENOMEM;
	pos = ehdr.e_phoff;
	if (pos < 0 || kernel_read(file, ph, len, &pos) != len) {
		ret = -ENOENT;
		goto out;
	}

	for (i = 0; i < ehdr.e_phnum; i++) {
		const struct elf64_phdr *p = &ph[i];
		u64 seg = p->p_offset & PAGE_MASK;

		/* Two of a kind: neither is trusted. */
		if (p->p_type == PT_GNU_SFRAME)
			sf = sf ? ERR_PTR(-EINVAL) : p;
		if (p->p_type == PT_GNU_EH_FRAME)
			eh = eh ? ERR_PTR(-EINVAL) : p;
		/* The executable segment this mapping's file offset is in. */
		if (p->p_type == PT_LOAD && (p->p_flags & PF_X) && !text &&
		    seg <= off && off - seg < p->p_filesz + (p->p_offset - seg))
			text = p;
	}
	ret = 0;
	if (!text)
		goto out;

	t->text_start = vm_start;
	t->text_end = vm_end;
	/* Where file offset p_offset, at p_vaddr in the file, is mapped. */
	bias = vm_start + text->p_offset - off - text->p_vaddr;
	if (IS_ERR(sf))
		res->sframe = PTR_ERR(sf);
	else if (sf)
		res->sframe = sframe_section_init(&t->sframe, sf->p_vaddr + bias,
						  sf->p_memsz, vm_start, vm_end);
	if (IS_ERR(eh))
		res->eh_frame = PTR_ERR(eh);
	else
		res->eh_frame = unwind_probe_eh_frame(ph, ehdr.e_phnum, eh,
						      bias, &t->eh);
	if (res->sframe)
		memset(&t->sframe, 0, sizeof(t->sframe));
	if (res->eh_frame)
		memset(&t->eh, 0, sizeof(t->eh));
out:
	kfree(ph);
	return ret;
}
