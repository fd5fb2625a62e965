/* SPDX-License-Identifier: GPL-2.0 */
/*
 * Leaves whose CFA is kept in a scratch register, as OpenSSL's perlasm
 * keeps it (libcrypto: %rax, %rsi, %r9, %r11, and bn_mul_mont's "breg7 8;
 * breg9 0; lit8; mul; plus; deref; plus_uconst 8"), for struct chain's
 * leaf_asm: each makes system call @nr with @a0 to @a2 after realigning
 * its stack, so that only its scratch register tells where its frame is,
 * and stores its return address in *@ra. eh_frame_walk and bpf_walk_task
 * run them.
 */
#ifndef SELFTESTS_UNWIND_SCRATCH_LEAF_H
#define SELFTESTS_UNWIND_SCRATCH_LEAF_H

long scratch_cfa_leaf(long nr, long a0, long a1, long a2, unsigned long *ra);
long scratch_idx_leaf(long nr, long a0, long a1, long a2, unsigned long *ra);
/* The addresses right after their system calls: the interrupted IPs. */
extern const char scratch_cfa_ret[], scratch_idx_ret[];

#ifdef __x86_64__
/* CFA = %r10 + 8: the syscall instruction keeps %r10. */
asm(".pushsection .text\n"
	".globl scratch_cfa_leaf\n"
	".type scratch_cfa_leaf, @function\n"
	"scratch_cfa_leaf:\n"
	".cfi_startproc\n"
	"	mov (%rsp), %rax\n"
	"	mov %rax, (%r8)\n"
	"	mov %rsp, %r10\n"
	".cfi_def_cfa_register %r10\n"
	"	sub $64, %rsp\n"
	"	and $-32, %rsp\n"
	"	mov %rdi, %rax\n"
	"	mov %rsi, %rdi\n"
	"	mov %rdx, %rsi\n"
	"	mov %rcx, %rdx\n"
	"	syscall\n"
	".globl scratch_cfa_ret\n"
	"scratch_cfa_ret:\n"
	"	mov %r10, %rsp\n"
	".cfi_def_cfa_register %rsp\n"
	"	ret\n"
	".cfi_endproc\n"
	".size scratch_cfa_leaf, . - scratch_cfa_leaf\n"

/*
 * bn_mul_mont's frame: the entry stack pointer saved at SP + 8 + %r9 * 8,
 * %r9 the number of words of its argument.
 */
	".globl scratch_idx_leaf\n"
	".type scratch_idx_leaf, @function\n"
	"scratch_idx_leaf:\n"
	".cfi_startproc\n"
	"	mov (%rsp), %rax\n"
	"	mov %rax, (%r8)\n"
	"	mov %rsp, %rax\n"
	".cfi_def_cfa_register %rax\n"
	"	mov $5, %r9\n"
	"	sub $64, %rsp\n"
	"	and $-32, %rsp\n"
	"	mov %rax, 8(%rsp,%r9,8)\n"
	".cfi_escape 0x0f, 0x0a, 0x77, 0x08, 0x79, 0x00, 0x38, 0x1e, 0x22, 0x06, 0x23, 0x08\n"
	"	mov %rdi, %rax\n"
	"	mov %rsi, %rdi\n"
	"	mov %rdx, %rsi\n"
	"	mov %rcx, %rdx\n"
	"	syscall\n"
	".globl scratch_idx_ret\n"
	"scratch_idx_ret:\n"
	"	mov 8(%rsp,%r9,8), %rsp\n"
	".cfi_def_cfa %rsp, 8\n"
	"	ret\n"
	".cfi_endproc\n"
	".size scratch_idx_leaf, . - scratch_idx_leaf\n"
	".popsection\n");
#else
/* CFA = %edi + 4 (DWARF 7), %edi and %ebx saved first. */
asm(".pushsection .text\n"
	".globl scratch_cfa_leaf\n"
	".type scratch_cfa_leaf, @function\n"
	"scratch_cfa_leaf:\n"
	".cfi_startproc\n"
	"	push %edi\n"
	".cfi_adjust_cfa_offset 4\n"
	".cfi_offset %edi, -8\n"
	"	push %ebx\n"
	".cfi_adjust_cfa_offset 4\n"
	".cfi_offset %ebx, -12\n"
	"	mov 8(%esp), %eax\n"
	"	mov 28(%esp), %edx\n"
	"	mov %eax, (%edx)\n"
	"	lea 8(%esp), %edi\n"
	".cfi_def_cfa %edi, 4\n"
	"	mov 12(%esp), %eax\n"
	"	mov 16(%esp), %ebx\n"
	"	mov 20(%esp), %ecx\n"
	"	mov 24(%esp), %edx\n"
	"	sub $64, %esp\n"
	"	and $-32, %esp\n"
	"	int $0x80\n"
	".globl scratch_cfa_ret\n"
	"scratch_cfa_ret:\n"
	"	lea -8(%edi), %esp\n"
	".cfi_def_cfa %esp, 12\n"
	"	pop %ebx\n"
	".cfi_adjust_cfa_offset -4\n"
	".cfi_restore %ebx\n"
	"	pop %edi\n"
	".cfi_adjust_cfa_offset -4\n"
	".cfi_restore %edi\n"
	"	ret\n"
	".cfi_endproc\n"
	".size scratch_cfa_leaf, . - scratch_cfa_leaf\n"

/* The entry stack pointer saved at SP + 4 + %esi * 4 (DWARF 6). */
	".globl scratch_idx_leaf\n"
	".type scratch_idx_leaf, @function\n"
	"scratch_idx_leaf:\n"
	".cfi_startproc\n"
	"	push %edi\n"
	".cfi_adjust_cfa_offset 4\n"
	".cfi_offset %edi, -8\n"
	"	push %esi\n"
	".cfi_adjust_cfa_offset 4\n"
	".cfi_offset %esi, -12\n"
	"	push %ebx\n"
	".cfi_adjust_cfa_offset 4\n"
	".cfi_offset %ebx, -16\n"
	"	mov 12(%esp), %eax\n"
	"	mov 32(%esp), %edx\n"
	"	mov %eax, (%edx)\n"
	"	mov %esp, %edi\n"
	".cfi_def_cfa_register %edi\n"
	"	mov $5, %esi\n"
	"	sub $64, %esp\n"
	"	and $-32, %esp\n"
	"	lea 12(%edi), %eax\n"
	"	mov %eax, 4(%esp,%esi,4)\n"
	".cfi_escape 0x0f, 0x0a, 0x74, 0x04, 0x76, 0x00, 0x34, 0x1e, 0x22, 0x06, 0x23, 0x04\n"
	"	mov 16(%edi), %eax\n"
	"	mov 20(%edi), %ebx\n"
	"	mov 24(%edi), %ecx\n"
	"	mov 28(%edi), %edx\n"
	"	int $0x80\n"
	".globl scratch_idx_ret\n"
	"scratch_idx_ret:\n"
	"	mov 4(%esp,%esi,4), %esp\n"
	".cfi_def_cfa %esp, 4\n"
	"	sub $12, %esp\n"
	".cfi_adjust_cfa_offset 12\n"
	"	pop %ebx\n"
	".cfi_adjust_cfa_offset -4\n"
	".cfi_restore %ebx\n"
	"	pop %esi\n"
	".cfi_adjust_cfa_offset -4\n"
	".cfi_restore %esi\n"
	"	pop %edi\n"
	".cfi_adjust_cfa_offset -4\n"
	".cfi_restore %edi\n"
	"	ret\n"
	".cfi_endproc\n"
	".size scratch_idx_leaf, . - scratch_idx_leaf\n"
	".popsection\n");
#endif

#endif /* SELFTESTS_UNWIND_SCRATCH_LEAF_H */
