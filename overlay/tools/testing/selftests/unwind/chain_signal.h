/* SPDX-License-Identifier: GPL-2.0 */
/*
 * A signal handler that runs a call chain of table_chain.h from its own
 * frame: a walk from the bottom of that chain goes through the handler,
 * the signal trampoline (the handler's return address) and on into the
 * chain the signal interrupted. Used by eh_frame_walk and bpf_walk_task.
 */
#ifndef SELFTESTS_UNWIND_CHAIN_SIGNAL_H
#define SELFTESTS_UNWIND_CHAIN_SIGNAL_H

/* The handler's chain, set up by chain_prepare() before the signal. */
static struct chain *sig_chain;
/* The handler's return address: the signal trampoline. */
static unsigned long sig_handler_ra;

/*
 * The handler descends its chain itself (descend() is inlined), so that
 * the level-0 step returns into it and it returns to the trampoline.
 */
static __attribute__((noipa)) void chain_on_signal(int sig)
{
	sig_handler_ra = RA();
	descend(sig_chain, 0);
}

#endif /* SELFTESTS_UNWIND_CHAIN_SIGNAL_H */
