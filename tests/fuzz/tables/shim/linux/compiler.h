/* SPDX-License-Identifier: GPL-2.0 */
/*
 * Fuzz shim: the kernel's compiler annotations, for building the unwind
 * table readers in user space (tests/fuzz/tables). Sparse's address spaces
 * are empty; the memory model helpers are the compiler's atomics.
 */
#ifndef _FUZZ_LINUX_COMPILER_H
#define _FUZZ_LINUX_COMPILER_H

#include <stdbool.h>
#include <stddef.h>

#define __user
#define __force
#define __percpu
#define __bitwise
#define __read_mostly
#define __must_check	__attribute__((__warn_unused_result__))
#define __packed	__attribute__((__packed__))
#undef __always_inline
#define __always_inline	inline __attribute__((__always_inline__))
#define noinline	__attribute__((__noinline__))
#define fallthrough	__attribute__((__fallthrough__))

#define likely(x)	__builtin_expect(!!(x), 1)
#define unlikely(x)	__builtin_expect(!!(x), 0)

#define READ_ONCE(x)	(*(const volatile __typeof__(x) *)&(x))
#define WRITE_ONCE(x, val) \
	do { *(volatile __typeof__(x) *)&(x) = (val); } while (0)

#define smp_load_acquire(p)	__atomic_load_n(p, __ATOMIC_ACQUIRE)
#define smp_store_release(p, v)	__atomic_store_n(p, v, __ATOMIC_RELEASE)
#define smp_rmb()		__atomic_thread_fence(__ATOMIC_ACQUIRE)
#define smp_wmb()		__atomic_thread_fence(__ATOMIC_RELEASE)
#define try_cmpxchg(p, oldp, new) \
	__atomic_compare_exchange_n(p, oldp, new, false, __ATOMIC_SEQ_CST, \
				    __ATOMIC_SEQ_CST)

#define BUILD_BUG_ON(cond)	_Static_assert(!(cond), "BUILD_BUG_ON: " #cond)
#define static_assert(expr, ...) __static_assert(expr, ##__VA_ARGS__, #expr)
#define __static_assert(expr, msg, ...) _Static_assert(expr, msg)

#define sizeof_field(TYPE, MEMBER) sizeof((((TYPE *)0)->MEMBER))

#endif /* _FUZZ_LINUX_COMPILER_H */
