/* SPDX-License-Identifier: GPL-2.0 */
/*
 * Copies of libeh_b.so whose .eh_frame (or .eh_frame_hdr) is damaged in
 * one way each, at the FDE of the step function the chain calls: the
 * hostile tests of eh_frame_walk (eh_frame_hostile.h) and bpf_walk.
 */
#ifndef SELFTESTS_UNWIND_EH_FRAME_DAMAGE_H
#define SELFTESTS_UNWIND_EH_FRAME_DAMAGE_H

#include <linux/elf.h>
#include <stdbool.h>
#include <stdint.h>
#include <stdlib.h>
#include <string.h>

#include "elf_file.h"

/* A library file in memory, and where the step function's FDE is. */
struct eh_lib {
	unsigned char *data;
	size_t len;
	unsigned char *hdr;	/* .eh_frame_hdr */
	unsigned char *fde;	/* the step's FDE: length, CIE pointer, ... */
	unsigned char *insns;	/* its instructions */
	unsigned char *end;	/* their end */
	uint32_t index;		/* its entry in the search table */
};

/* The file offset of virtual address @vaddr, by the PT_LOAD holding it. */
static unsigned char *eh_at(struct eh_lib *l, uint64_t vaddr)
{
	struct elf64_hdr *eh = (struct elf64_hdr *)l->data;
	struct elf64_phdr *ph = (struct elf64_phdr *)(l->data + eh->e_phoff);
	int i;

	for (i = 0; i < eh->e_phnum; i++)
		if (ph[i].p_type == PT_LOAD && vaddr >= ph[i].p_vaddr &&
		    vaddr - ph[i].p_vaddr < ph[i].p_filesz)
			return l->data + ph[i].p_offset + (vaddr - ph[i].p_vaddr);
	return NULL;
}

/* The address of dynamic symbol @name, or 0. */
static uint64_t eh_symbol(struct eh_lib *l, const char *name)
{
	struct elf64_hdr *eh = (struct elf64_hdr *)l->data;
	struct elf64_shdr *sh = (struct elf64_shdr *)(l->data + eh->e_shoff);
	int i, k;

	for (i = 0; i < eh->e_shnum; i++) {
		struct elf64_sym *sym;
		const char *str;

		if (sh[i].sh_type != SHT_DYNSYM)
			continue;
		sym = (struct elf64_sym *)(l->data + sh[i].sh_offset);
		str = (const char *)l->data + sh[sh[i].sh_link].sh_offset;
		for (k = 0; k < (int)(sh[i].sh_size / sizeof(*sym)); k++)
			if (!strcmp(str + sym[k].st_name, name))
				return sym[k].st_value;
	}
	return 0;
}

/* Read @path and find the FDE of sframe_lib_b_step by the search table. */
static bool eh_load(struct eh_lib *l, const char *path)
{
	struct elf64_phdr *ph;
	uint64_t step, hdr_vaddr;
	int32_t *table;
	uint32_t count, len, i;

	ph = elf_file_read(path, &l->data, &l->len, PT_GNU_EH_FRAME);
	if (!ph)
		return false;
	step = eh_symbol(l, "sframe_lib_b_step");
	if (!step)
		return false;
	hdr_vaddr = ph->p_vaddr;
	l->hdr = l->data + ph->p_offset;
	/* Version 1, pcrel sdata4 pointer, udata4 count, datarel table. */
	if (memcmp(l->hdr, "\x01\x1b\x03\x3b", 4))
		return false;
	memcpy(&count, l->hdr + 8, 4);
	table = (int32_t *)(l->hdr + 12);
	for (i = 0; i < count && hdr_vaddr + table[2 * i] != step; i++)
		;
	if (i == count)
		return false;
	l->index = i;
	l->fde = eh_at(l, hdr_vaddr + table[2 * i + 1]);
	if (!l->fde)
		return false;
	memcpy(&len, l->fde, 4);
	/* "zR" with pcrel sdata4: location, range, augmentation length 0. */
	l->insns = l->fde + 4 + 4 + 4 + 4 + 1;
	l->end = l->fde + 4 + len;
	return l->end - l->insns >= 4 && l->fde[16] == 0;
}

/* Each kind of damage, done to the library in memory. */
static void damage_fde_length(struct eh_lib *l)
{
	uint32_t huge = 0x7ffffff0;

	memcpy(l->fde, &huge, 4);	/* runs past the segment */
}

static void damage_cie_pointer(struct eh_lib *l)
{
	uint32_t far = 0x7ffffff0;

	memcpy(l->fde + 4, &far, 4);	/* before the start of the section */
}

static void damage_unknown_opcode(struct eh_lib *l)
{
	l->insns[0] = 0x3f;		/* not a DWARF call frame instruction */
}

static void damage_expression(struct eh_lib *l)
{
	/* DW_CFA_def_cfa_expression: DW_OP_lit0, a form never evaluated */
	memcpy(l->insns, "\x0f\x01\x30", 3);
	memset(l->insns + 3, 0, l->end - l->insns - 3);
}

static void damage_register(struct eh_lib *l)
{
	/* DW_CFA_register: the return address is in %rax */
	memcpy(l->insns, "\x09\x10\x00", 3);
	memset(l->insns + 3, 0, l->end - l->insns - 3);
}

static void damage_restore_state(struct eh_lib *l)
{
	/* DW_CFA_restore_state with nothing remembered */
	l->insns[0] = 0x0b;
}

static void damage_range(struct eh_lib *l)
{
	uint32_t one = 1;

	memcpy(l->fde + 12, &one, 4);	/* the FDE covers one byte */
}

static void damage_cfa_offset_wide(struct eh_lib *l)
{
	/* DW_CFA_def_cfa %rsp, 2^32 + 16: 16 once cut to 32 bits */
	memcpy(l->insns, "\x0c\x07\x90\x80\x80\x80\x10", 7);
	memset(l->insns + 7, 0, l->end - l->insns - 7);
}

static void damage_aug_length(struct eh_lib *l)
{
	l->fde[16] = 0x7f;		/* augmentation data past the FDE's end */
}

/* As damage_range(), and the search table ends with the step's entry. */
static void damage_range_last(struct eh_lib *l)
{
	uint32_t count = l->index + 1;

	damage_range(l);
	memcpy(l->hdr + 8, &count, 4);
}

static void damage_hdr_version(struct eh_lib *l)
{
	l->hdr[0] = 2;
}

#endif /* SELFTESTS_UNWIND_EH_FRAME_DAMAGE_H */
