/* SPDX-License-Identifier: GPL-2.0 */
/* Fuzz shim: counters files print nothing. */
#ifndef _FUZZ_LINUX_SEQ_FILE_H
#define _FUZZ_LINUX_SEQ_FILE_H

struct seq_file;

static inline void seq_printf(struct seq_file *m, const char *fmt, ...)
{
}

#endif /* _FUZZ_LINUX_SEQ_FILE_H */
