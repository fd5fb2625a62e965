/* SPDX-License-Identifier: GPL-2.0 */
/* Fuzz shim: per-CPU variables of a machine with one CPU, plain globals. */
#ifndef _FUZZ_LINUX_PERCPU_H
#define _FUZZ_LINUX_PERCPU_H

#include <linux/compiler.h>

#define DECLARE_PER_CPU(type, name)	extern __typeof__(type) name
#define DEFINE_PER_CPU(type, name)	__typeof__(type) name

#define this_cpu_add(var, n)		do { (var) += (n); } while (0)
#define this_cpu_inc(var)		this_cpu_add(var, 1)
#define this_cpu_inc_return(var)	(++(var))
#define per_cpu_ptr(ptr, cpu)		((void)(cpu), (ptr))
#define for_each_possible_cpu(cpu)	for ((cpu) = 0; (cpu) < 1; (cpu)++)

#endif /* _FUZZ_LINUX_PERCPU_H */
