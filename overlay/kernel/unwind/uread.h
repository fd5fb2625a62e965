/* SPDX-License-Identifier: GPL-2.0 */
/*
 * Reads of unwind tables where the process maps them, shared by the table
 * readers of kernel/unwind/. Internal to kernel/unwind/.
 */
#ifndef _KERNEL_UNWIND_UREAD_H
#define _KERNEL_UNWIND_UREAD_H

#include <linux/align.h>
#include <linux/minmax.h>
#include <linux/types.h>
#include <linux/uaccess.h>
#include <linux/unaligned.h>

#include <asm/page.h>

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

/*
 * A cursor that decodes user memory in order, reading it in chunks: a
 * table's bytes are decoded a few at a time, and a read per field would
 * cost a user access section each.
 */
struct unwind_cursor {
	unsigned long	pos;		/* the next byte to decode */
	unsigned long	end;		/* no byte at or past it is read */
	unsigned long	buf_addr;	/* user address of buf[0] */
	unsigned int	buf_len;
	int		err;		/* the first error; takes fail after it */
	unsigned int	*budget;	/* work left to the walk; NULL: none */
	u8		buf[128];
};

static inline void unwind_cursor_init(struct unwind_cursor *cur,
				      unsigned long pos, unsigned long end)
{
	cur->pos = pos;
	cur->end = end;
	cur->buf_addr = 0;
	cur->buf_len = 0;
	cur->err = 0;
	cur->budget = NULL;
}

/*
 * The work of a walk's table lookups, in units of about one instruction or
 * row decoded: each of those costs one, a read of @len bytes of a table
 * one and one a cache line, a probe of a binary search one.
 */
#define UNWIND_READ_COST(len)	(1 + (len) / 64)

/*
 * Charge @n units of work to @budget (NULL: none). Return: false when it
 * has less left, which is then spent.
 */
static inline bool unwind_charge(unsigned int *budget, unsigned int n)
{
	if (!budget)
		return true;
	if (*budget < n) {
		*budget = 0;
		return false;
	}
	*budget -= n;
	return true;
}

/*
 * Charge @n units of work (a row decoded, a buffer read) to the walk's
 * budget; once it is spent the cursor fails with -E2BIG, which ends the
 * lookup. Return: false when it is spent.
 */
static inline bool unwind_cursor_charge(struct unwind_cursor *cur,
					unsigned int n)
{
	if (unwind_charge(cur->budget, n))
		return true;
	cur->err = cur->err ?: -E2BIG;
	return false;
}

/*
 * How many bytes a refill for a take of @len bytes reads: as many as the
 * buffer holds, but not past the end of the page the take ends in, so that
 * a walk that may not fault needs no page it does not use.
 */
static inline unsigned int unwind_cursor_fill_len(const struct unwind_cursor *cur,
						  unsigned int len)
{
	unsigned long n = min_t(unsigned long, cur->end - cur->pos,
				sizeof(cur->buf));
	unsigned long page_end = ALIGN(cur->pos + len, PAGE_SIZE);

	if (page_end - cur->pos < n)
		n = page_end - cur->pos;
	return n;
}

/*
 * The next @len bytes (at most the buffer's size), valid until the next
 * take; the buffer is refilled from user memory when they are not all in
 * it. NULL with cur->err set: -EINVAL past the end, -EFAULT when they
 * cannot be read; every later take fails too.
 */
static inline const u8 *unwind_cursor_take(struct unwind_cursor *cur,
					   unsigned int len)
{
	unsigned long off = cur->pos - cur->buf_addr;
	const u8 *p;

	if (cur->err)
		return NULL;
	if (len > sizeof(cur->buf) || cur->pos > cur->end ||
	    len > cur->end - cur->pos) {
		cur->err = -EINVAL;
		return NULL;
	}
	if (cur->pos < cur->buf_addr || off + len > cur->buf_len) {
		cur->buf_len = unwind_cursor_fill_len(cur, len);
		if (!unwind_cursor_charge(cur, UNWIND_READ_COST(cur->buf_len))) {
			cur->buf_len = 0;
			return NULL;
		}
		if (unwind_read_user(cur->buf, cur->pos, cur->buf_len)) {
			cur->err = -EFAULT;
			return NULL;
		}
		cur->buf_addr = cur->pos;
		off = 0;
	}
	p = cur->buf + off;
	cur->pos += len;
	return p;
}

#endif /* _KERNEL_UNWIND_UREAD_H */
