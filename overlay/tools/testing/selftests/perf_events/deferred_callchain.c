// SPDX-License-Identifier: GPL-2.0
/*
 * Deferred user callchains: attr.defer_callchain, attr.defer_output and
 * PERF_RECORD_CALLCHAIN_DEFERRED, checked by reading the ring buffer.
 *
 * The program makes its samples happen at the bottom of a call chain whose
 * return addresses it records itself (../unwind/chain.h), and checks that a
 * sample carries its kernel part, PERF_CONTEXT_USER_DEFERRED and a cookie,
 * and that the one record with that cookie holds exactly the program's
 * frames. Every wait for a record is bounded and says what was missing.
 * Built twice: as a 64-bit program and as an ia32 compat program.
 *
 * The tests are in the headers below, by subject. Included in this
 * order, they register the fixtures and tests in the order the harness
 * runs them.
 */
#include "deferred_callchain_common.h"
#include "deferred_callchain_kind.h"
#include "deferred_callchain_attr.h"
#include "deferred_callchain_tasks.h"
#include "deferred_callchain_walk.h"
#include "deferred_callchain_perms.h"
#include "deferred_callchain_try_first.h"
#include "deferred_callchain_now.h"

TEST_HARNESS_MAIN
