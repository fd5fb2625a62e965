// SPDX-License-Identifier: GPL-2.0
/*
 * Deferred user stack unwinding, checked from the program whose stack is
 * unwound. Through the test_unwind_deferred module the program asks for its
 * own user stack from task, hard IRQ and NMI context, from its exit and its
 * execve, and through 40 registered users; then it compares what the
 * callbacks received with the return addresses it recorded itself. Built
 * twice: as a 64-bit program and as an ia32 compat program.
 *
 * The tests are in the headers below, by subject. Included in this
 * order, they register the fixtures and tests in the order the harness
 * runs them.
 */
#include "unwind_deferred_common.h"
#include "unwind_deferred_requests.h"
#include "unwind_deferred_throttle.h"
#include "unwind_deferred_walk.h"
#include "unwind_deferred_prologue.h"
#include "unwind_deferred_hostile.h"

TEST_HARNESS_MAIN
