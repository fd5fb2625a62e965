/* SPDX-License-Identifier: GPL-2.0 */
/*
 * Reads of unwind tables where the process maps them, shared by the table
 * readers of kernel/unwind/. Internal to kernel/unwind/.
 */
#ifndef _KERNEL_UNWIND_UREAD_H
#define _KERNEL_UNWIND_UREAD_H

#include <linux/types.h>
#include <linux/uaccess.h>
#include <linux/unaligned.h>

/*
 * Read @len bytes of user memory at @addr into @dst: whole words, then the
 * bytes left, in one user access section. Reads are short (a header, a
 * cursor's buffer), and a byte-wise string copy costs more than the walk
 * itself where "rep movsb" is slow (emulators, older CPUs). Faults are
 * taken where the caller's context allows them.
 *
 * Return: 0, or -EFAULT when any byte could not be read.
 */
static inline int unwind_read_user(void *dst, unsigned long addr,
				   unsigned int len)
{
	const u8 __user *src = (const u8 __user *)addr;
	unsigned int i = 0;
	u8 *d = dst;
	u64 w;

	if (!user_read_access_begin(src, len))
		return -EFAULT;
	for (; len - i >= sizeof(w); i += sizeof(w)) {
		unsafe_get_user(w, (const u64 __user *)(src + i), efault);
		put_unaligned(w, (u64 *)(d + i));
	}
	for (; i < len; i++)
		unsafe_get_user(d[i], src + i, efault);
	user_read_access_end();
	return 0;

efault:
	user_read_access_end();
	return -EFAULT;
}

#endif /* _KERNEL_UNWIND_UREAD_H */
