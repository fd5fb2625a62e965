// SPDX-License-Identifier: GPL-2.0
/*
 * Find the unwind tables of the file an executable mapping is of, with no
 * help from the program or its libc: the file's ELF and program headers
 * are read from the page cache, and its PT_GNU_SFRAME and PT_GNU_EH_FRAME
 * segments, relocated by the mapping's load bias, give the tables' user
 * addresses. The tables are then read where the process maps them, with
 * fault-tolerant accessors: they cost no kernel memory per library.
 *
 * The vDSO has no file: its image is read where the process maps it.
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
#include <linux/uaccess.h>
#include <linux/unwind_user.h>

#include "tables.h"

/* The program header of an SFrame section (not in 6.12's uapi elf.h). */
#ifndef PT_GNU_SFRAME
#define PT_GNU_SFRAME		(PT_LOOS + 0x474e554)
#endif

/* The most program headers read from a file. */
#define UNWIND_MAX_PHDRS	128

/*
 * Read @len bytes at offset @pos of @file or, with no file, of the image
 * mapped at @image for @size bytes (the vDSO, which the kernel mapped from
 * its own memory). True when all of them were read.
 */
static bool unwind_probe_read(struct file *file, unsigned long image,
			      unsigned long size, void *buf, size_t len,
			      loff_t pos)
{
	if (file)
		return kernel_read(file, buf, len, &pos) == len;
	if (pos < 0 || pos > size || len > size - pos)
		return false;
	return !copy_from_user(buf, (const void __user *)(image + pos), len);
}

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
				 unsigned long bias, unsigned int ws,
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
	/*
	 * The bias wraps: a file linked above where it is mapped (a
	 * prelinked library moved down) has a negative one.
	 */
	start = load->p_vaddr + bias;
	end = start + load->p_memsz;
	if (end < start || end > TASK_SIZE_MAX)
		return -EINVAL;
	return eh_frame_section_init(sec, eh->p_vaddr + bias, eh->p_memsz,
				     start, end, ws);
#else
	return -ENOENT;
#endif
}

/*
 * The program headers of an i386 file (compat tasks, .eh_frame only), read
 * as ELF64 ones: @eh is its ELF header, read as the start of an ELF64 one.
 * Return: the number of headers in *@out (to be freed), 0 when the file is
 * not one, -ENOMEM.
 */
static int unwind_phdrs32(struct file *file, unsigned long image,
			  unsigned long size, const void *eh,
			  struct elf64_phdr **out)
{
#if defined(ARCH_EH_FRAME_COMPAT_MACHINE) && defined(CONFIG_UNWIND_USER_EH_FRAME)
	const struct elf32_hdr *h = eh;
	struct elf32_phdr *ph32;
	struct elf64_phdr *ph;
	loff_t pos = h->e_phoff;
	size_t len;
	int i, n = 0;

	if (h->e_machine != ARCH_EH_FRAME_COMPAT_MACHINE ||
	    (h->e_type != ET_EXEC && h->e_type != ET_DYN) ||
	    h->e_phentsize != sizeof(*ph32) || !h->e_phnum ||
	    h->e_phnum > UNWIND_MAX_PHDRS)
		return 0;
	len = h->e_phnum * sizeof(*ph32);
	ph32 = kmalloc(len, GFP_KERNEL);
	ph = kmalloc_array(h->e_phnum, sizeof(*ph), GFP_KERNEL);
	if (!ph32 || !ph) {
		n = -ENOMEM;
		goto out;
	}
	if (!unwind_probe_read(file, image, size, ph32, len, pos))
		goto out;
	for (i = 0; i < h->e_phnum; i++) {
		ph[i].p_type = ph32[i].p_type;
		ph[i].p_flags = ph32[i].p_flags;
		ph[i].p_offset = ph32[i].p_offset;
		ph[i].p_vaddr = ph32[i].p_vaddr;
		ph[i].p_filesz = ph32[i].p_filesz;
		ph[i].p_memsz = ph32[i].p_memsz;
	}
	n = h->e_phnum;
	*out = ph;
	ph = NULL;
out:
	kfree(ph32);
	kfree(ph);
	return n;
#else
	return 0;
#endif
}

/* The program headers of a native file, or as unwind_phdrs32(). */
static int unwind_phdrs(struct file *file, unsigned long image,
			unsigned long size, const struct elf64_hdr *eh,
			struct elf64_phdr **out)
{
	struct elf64_phdr *ph;
	loff_t pos = eh->e_phoff;
	size_t len;

	if (eh->e_machine != ELF_ARCH ||
	    (eh->e_type != ET_EXEC && eh->e_type != ET_DYN) ||
	    eh->e_phentsize != sizeof(*ph) || !eh->e_phnum ||
	    eh->e_phnum > UNWIND_MAX_PHDRS)
		return 0;
	len = eh->e_phnum * sizeof(*ph);
	ph = kmalloc(len, GFP_KERNEL);
	if (!ph)
		return -ENOMEM;
	if (!unwind_probe_read(file, image, size, ph, len, pos)) {
		kfree(ph);
		return 0;
	}
	*out = ph;
	return eh->e_phnum;
}

/**
 * unwind_tables_probe - find the unwind tables of a mapped file
 * @file: the file the executable mapping is of; NULL for the vDSO, whose
 *	  ELF image is read where it is mapped
 * @vm_start: the mapping's start
 * @vm_pgoff: its offset in the file, in pages
 * @vm_end: its end
 * @t: filled with the tables found (cleared first)
 * @res: how each kind of table fared
 *
 * A native ELF file may have SFrame and .eh_frame; an i386 one (the code
 * of compat tasks) .eh_frame only, whose word size the table notes.
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
	struct elf64_phdr *ph = NULL;
	unsigned long off, bias;
	struct elf64_hdr ehdr;
	unsigned int ws;
	int i, n;

	memset(t, 0, sizeof(*t));
	res->sframe = -ENOENT;
	res->eh_frame = -ENOENT;
	if (file && (!(file->f_mode & FMODE_READ) ||
		     !S_ISREG(file_inode(file)->i_mode)))
		return -ENOENT;
	if (vm_pgoff > ULONG_MAX >> PAGE_SHIFT)
		return -ENOENT;
	off = vm_pgoff << PAGE_SHIFT;

	/* An ELF32 header is shorter: any file that has one is this long. */
	if (!unwind_probe_read(file, vm_start, vm_end - vm_start, &ehdr,
			       sizeof(ehdr), 0))
		return -ENOENT;
	if (memcmp(ehdr.e_ident, ELFMAG, SELFMAG) ||
	    ehdr.e_ident[EI_DATA] != ELFDATA2LSB)
		return -ENOENT;
	switch (ehdr.e_ident[EI_CLASS]) {
	case ELFCLASS64:
		ws = 8;
		n = unwind_phdrs(file, vm_start, vm_end - vm_start, &ehdr, &ph);
		break;
	case ELFCLASS32:
		ws = 4;
		n = unwind_phdrs32(file, vm_start, vm_end - vm_start, &ehdr,
				   &ph);
		break;
	default:
		return -ENOENT;
	}
	if (n <= 0)
		return n ?: -ENOENT;

	for (i = 0; i < n; i++) {
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
	if (!text)
		goto out;

	t->text_start = vm_start;
	t->text_end = vm_end;
	/* Where file offset p_offset, at p_vaddr in the file, is mapped. */
	bias = vm_start + text->p_offset - off - text->p_vaddr;
	/* SFrame has no i386 ABI. */
	if (IS_ERR(sf) && ws == 8)
		res->sframe = PTR_ERR(sf);
	else if (sf && ws == 8)
		res->sframe = sframe_section_init(&t->sframe, sf->p_vaddr + bias,
						  sf->p_memsz, vm_start, vm_end);
	if (IS_ERR(eh))
		res->eh_frame = PTR_ERR(eh);
	else
		res->eh_frame = unwind_probe_eh_frame(ph, n, eh, bias, ws,
						      &t->eh);
	if (res->sframe)
		memset(&t->sframe, 0, sizeof(t->sframe));
	if (res->eh_frame)
		memset(&t->eh, 0, sizeof(t->eh));
out:
	kfree(ph);
	return 0;
}
