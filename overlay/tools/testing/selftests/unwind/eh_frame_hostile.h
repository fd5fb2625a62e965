/* SPDX-License-Identifier: GPL-2.0 */
/*
 * eh_frame_walk's hostile tests: copies of libeh_b.so whose .eh_frame (or
 * .eh_frame_hdr) the test damaged in one way each (eh_frame_damage.h), at
 * the FDE of the step function the chain calls. The walk must end
 * cleanly where the damage is (or fall back to frame pointers where the
 * table no longer claims the frame), count it by its reason, and never
 * warn: the guest's log is scanned for splats.
 */
#ifndef SELFTESTS_UNWIND_EH_FRAME_HOSTILE_H
#define SELFTESTS_UNWIND_EH_FRAME_HOSTILE_H

#include "eh_frame_damage.h"

FIXTURE(hostile_eh_frame) {
	int fd;
	struct results *res;
	struct chain *c;
	void *lib;
	char path[64];
};

FIXTURE_VARIANT(hostile_eh_frame) {
	void (*damage)(struct eh_lib *l);
	const char *counter;	/* must grow */
	int frames;		/* right frames the walk must find */
	bool exact;		/* and no more */
};

FIXTURE_VARIANT_ADD(hostile_eh_frame, fde_past_the_segment) {
	damage_fde_length, "eh_frame_bad_data", FRAMES_TO_LIB_B, true };
FIXTURE_VARIANT_ADD(hostile_eh_frame, cie_pointer_out_of_range) {
	damage_cie_pointer, "eh_frame_bad_data", FRAMES_TO_LIB_B, true };
FIXTURE_VARIANT_ADD(hostile_eh_frame, unknown_opcode) {
	damage_unknown_opcode, "eh_frame_unsupported_opcodes",
	FRAMES_TO_LIB_B, true };
FIXTURE_VARIANT_ADD(hostile_eh_frame, expression_not_evaluated) {
	damage_expression, "eh_frame_unsupported_expressions",
	FRAMES_TO_LIB_B, true };
FIXTURE_VARIANT_ADD(hostile_eh_frame, return_address_in_a_register) {
	damage_register, "eh_frame_unsupported_registers",
	FRAMES_TO_LIB_B, true };
/* An offset the frame's 32 bits cannot hold is bad data, not cut. */
FIXTURE_VARIANT_ADD(hostile_eh_frame, cfa_offset_past_32_bits) {
	damage_cfa_offset_wide, "eh_frame_bad_data", FRAMES_TO_LIB_B, true };
/* Found by the fuzzer: the lookup returned 0 with no rule written. */
FIXTURE_VARIANT_ADD(hostile_eh_frame, augmentation_past_the_fde) {
	damage_aug_length, "eh_frame_bad_data", FRAMES_TO_LIB_B, true };
FIXTURE_VARIANT_ADD(hostile_eh_frame, restore_without_remember) {
	damage_restore_state, "eh_frame_bad_data", FRAMES_TO_LIB_B, true };
/*
 * No longer claimed by its table, amid functions it claims: code without
 * CFI, whose frame pointer register may hold anything. The walk ends at
 * that frame rather than guess.
 */
FIXTURE_VARIANT_ADD(hostile_eh_frame, fde_not_covering_the_ip) {
	damage_range, "stop_no_row", FRAMES_TO_LIB_B, true };
/* Past the last function the table claims: frame pointers take it. */
FIXTURE_VARIANT_ADD(hostile_eh_frame, fde_not_covering_the_ip_past_the_last) {
	damage_range_last, "eh_frame_misses", FRAMES_TO_LIB_B, false };
FIXTURE_VARIANT_ADD(hostile_eh_frame, header_version_2) {
	damage_hdr_version, "eh_frame_bad_headers", FRAMES_TO_LIB_B, false };

FIXTURE_SETUP(hostile_eh_frame)
{
	struct eh_lib l = { };
	char path[4200];

	self->lib = NULL;
	self->path[0] = '\0';
	if (!ctl_open(_metadata, &self->fd, &self->res, (void **)&self->c,
		      sizeof(*self->c)))
		SKIP(return, NO_MODULE);
	if (counter("eh_frame_frames") < 0)
		SKIP(return, NO_EH_FRAME);

	lib_path(path, sizeof(path), "libeh_b.so");
	ASSERT_TRUE(eh_load(&l, path)) {
		TH_LOG("%s: no FDE for sframe_lib_b_step in the search table", path);
	}
	variant->damage(&l);
	open_damaged_copy(_metadata, l.data, l.len, self->path, &self->lib,
			  self->c);
	free(l.data);
}

FIXTURE_TEARDOWN(hostile_eh_frame)
{
	if (self->lib)
		dlclose(self->lib);
	if (self->path[0])
		unlink(self->path);
	ctl_close(self->fd, self->res, self->c, sizeof(*self->c));
}

/* The walk ends cleanly where the damage is, and the damage is counted. */
TEST_F(hostile_eh_frame, walk_ends_cleanly)
{
	walk_through_damage(_metadata, self->fd, self->res, self->c,
			    variant->counter, variant->frames, variant->exact);
}

#endif /* SELFTESTS_UNWIND_EH_FRAME_HOSTILE_H */
