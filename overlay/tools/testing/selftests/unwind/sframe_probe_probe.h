/* SPDX-License-Identifier: GPL-2.0 */
/*
 * FIXTURE(probe): a uprobe at every instruction of a function with a
 * frame, and at every instruction of the .plt that a call into a
 * DT_NEEDED library runs.
 *
 * Included once, by sframe_probe.c.
 */
#include "sframe_probe_session.h"

static long plt_next(void *chain, int level)
{
	return level;
}

/*
 * A call through the .plt into libsframe_a.so, which records the return
 * address of that call (the PLT stub does not touch the stack).
 */
static __attribute__((noipa)) long plt_call(struct probe_chain *c)
{
	long ret;

	c->ras[c->n++] = RA();
	ret = sframe_lib_a_step(c, c->n, plt_next, c->ras);
	c->n++;
	return ret;
}

FIXTURE(probe) {
	struct session *s;
	struct probe_chain c;
	int try_first;
};

FIXTURE_SETUP(probe)
{
	const char *missing = probe_missing();

	self->s = NULL;
	self->try_first = -1;
	if (missing)
		SKIP(return, "%s", missing);
	try_first_kernel_off(&self->try_first);
	self->s = session_open(_metadata);
	self->c.a = 11;
	self->c.b = 29;
	TH_LOG("%s program, sframe_probed() at %#lx", SELF_KIND,
	       (unsigned long)sframe_probed);
}

FIXTURE_TEARDOWN(probe)
{
	session_close(self->s);
	try_first_restore(self->try_first);
}

/*
 * A uprobe on every instruction of sframe_probed(): each sample's deferred
 * chain is the probed address, then the return addresses into probe_mid(),
 * probe_top() and the test.
 */
TEST_F_TIMEOUT(probe, every_instruction_of_a_function_with_a_frame,
	       MANY_PROBES_TIMEOUT)
{
	add_probed_insns(_metadata, self->s, 1);
	self->c.inner = sframe_probed;
	session_run(_metadata, self->s, &self->c, 1);
	session_check(_metadata, self->s, &self->c, 0, false);
}

/* Lazy x86-64 PLT entries are 16 bytes: jmp *GOT; push $index; jmp PLT0. */
#define PLT_ENTRY	16

struct plt_stub {
	unsigned long plt0;	/* run-time addresses */
	unsigned long entry;
};

static bool read_file(const char *path, unsigned char **data, size_t *len)
{
	struct stat st;
	bool ok;
	int fd = open(path, O_RDONLY);

	if (fd < 0)
		return false;
	ok = !fstat(fd, &st) && (*data = malloc(st.st_size)) &&
	     read(fd, *data, st.st_size) == st.st_size;
	*len = st.st_size;
	close(fd);
	return ok;
}

static const struct elf64_shdr *find_section(const unsigned char *elf,
					     const char *name)
{
	const struct elf64_hdr *eh = (const void *)elf;
	const struct elf64_shdr *sh = (const void *)(elf + eh->e_shoff);
	const char *names = (const char *)elf + sh[eh->e_shstrndx].sh_offset;
	int i;

	for (i = 0; i < eh->e_shnum; i++)
		if (!strcmp(names + sh[i].sh_name, name))
			return &sh[i];
	return NULL;
}

/* The symbol @name of the symbol table @tab (.symtab or .dynsym), or NULL. */
static const struct elf64_sym *find_symbol(const unsigned char *elf,
					   const struct elf64_shdr *tab,
					   const char *name)
{
	const struct elf64_hdr *eh = (const void *)elf;
	const struct elf64_shdr *sh = (const void *)(elf + eh->e_shoff);
	const struct elf64_sym *sym = (const void *)(elf + tab->sh_offset);
	const char *names = (const char *)elf + sh[tab->sh_link].sh_offset;
	size_t i;

	for (i = 0; i < tab->sh_size / sizeof(*sym); i++)
		if (!strcmp(names + sym[i].st_name, name))
			return &sym[i];
	return NULL;
}

static int32_t rel32(unsigned long at)
{
	int32_t v;

	memcpy(&v, (const void *)at, sizeof(v));
	return v;
}

#define R_X86_64_JUMP_SLOT	7

/*
 * The .plt entry through which this program calls @func, from its
 * .rela.plt, checked against the code: a lazy entry whose jmp reads the
 * GOT slot of that relocation, pushes its index and jumps to PLT0.
 */
static void find_plt_stub(struct __test_metadata *_metadata, const char *func,
			  struct plt_stub *stub)
{
	const struct elf64_shdr *rela, *plt, *symtab, *dynsym, *sh;
	const struct elf64_sym *me, *sym;
	const struct elf64_rela *r;
	unsigned long bias, got = 0, plt0, e;
	unsigned char *elf;
	char path[PATH_MAX];
	size_t len, i;
	long idx = -1;

	self_path(path, sizeof(path));
	ASSERT_TRUE(read_file(path, &elf, &len)) TH_LOG("cannot read %s", path);
	rela = find_section(elf, ".rela.plt");
	plt = find_section(elf, ".plt");
	symtab = find_section(elf, ".symtab");
	ASSERT_TRUE(rela && plt && symtab) {
		TH_LOG("%s has no .rela.plt, .plt or .symtab", path);
	}
	/* Where the program is loaded, from a function's address. */
	me = find_symbol(elf, symtab, "sframe_probed");
	ASSERT_NE(NULL, me) TH_LOG("%s has no symbol sframe_probed", path);
	bias = (unsigned long)sframe_probed - me->st_value;

	sh = (const void *)(elf + ((struct elf64_hdr *)elf)->e_shoff);
	dynsym = &sh[rela->sh_link];
	r = (const void *)(elf + rela->sh_offset);
	for (i = 0; i < rela->sh_size / sizeof(*r); i++) {
		sym = (const struct elf64_sym *)(elf + dynsym->sh_offset) +
		      ELF64_R_SYM(r[i].r_info);
		if (ELF64_R_TYPE(r[i].r_info) == R_X86_64_JUMP_SLOT &&
		    sym == find_symbol(elf, dynsym, func)) {
			idx = i;
			got = r[i].r_offset + bias;
		}
	}
	plt0 = plt->sh_addr + bias;
	free(elf);
	ASSERT_LE(0, idx) TH_LOG("no .plt relocation for %s", func);

	stub->plt0 = plt0;
	stub->entry = plt0 + PLT_ENTRY * (idx + 1);
	e = stub->entry;
	TH_LOG("%s@plt at %#lx (entry %ld), PLT0 at %#lx", func, e, idx, plt0);
	/* ff 25: jmp *rel32(%rip), 68: push imm32, e9: jmp rel32 */
	ASSERT_TRUE(!memcmp((void *)e, "\xff\x25", 2) &&
		    e + 6 + rel32(e + 2) == got &&
		    *(unsigned char *)(e + 6) == 0x68 && rel32(e + 7) == idx &&
		    *(unsigned char *)(e + 11) == 0xe9 &&
		    e + 16 + rel32(e + 12) == plt0) {
		TH_LOG("%s@plt is not a lazy x86-64 PLT entry", func);
	}
	/* ff 35: push rel32(%rip), ff 25: jmp *rel32(%rip) */
	ASSERT_TRUE(!memcmp((void *)plt0, "\xff\x35", 2) &&
		    !memcmp((void *)(plt0 + 6), "\xff\x25", 2)) {
		TH_LOG("PLT0 is not the lazy x86-64 one");
	}
}

/*
 * A call into libsframe_a.so through the .plt, made twice: the first time
 * lazily bound, through every instruction of the library's PLT entry and of
 * PLT0 on its way to the dynamic linker; the second time bound, through
 * the entry's first jmp alone. Whatever instruction of the stub the sample
 * is at, the next frame is the caller's, at the return address the library
 * recorded.
 */
TEST_F(probe, plt_stub_of_a_call_into_a_needed_library)
{
	struct plt_stub stub;

	find_plt_stub(_metadata, "sframe_lib_a_step", &stub);
	session_add(_metadata, self->s, stub.entry, "sframe_lib_a_step@plt",
		    0, 2);
	session_add(_metadata, self->s, stub.entry + 6,
		    "sframe_lib_a_step@plt", 6, 1);
	session_add(_metadata, self->s, stub.entry + 11,
		    "sframe_lib_a_step@plt", 11, 1);
	session_add(_metadata, self->s, stub.plt0, "PLT0", 0, 1);
	session_add(_metadata, self->s, stub.plt0 + 6, "PLT0", 6, 1);
	self->c.inner = plt_call;
	session_run(_metadata, self->s, &self->c, 2);
	if (getenv("LD_BIND_NOW"))
		TH_LOG("LD_BIND_NOW is set: the lazy path is not run");
	session_check(_metadata, self->s, &self->c, 0, false);
}
