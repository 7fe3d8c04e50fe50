/*
 * test_elf.c - worker/elf.c: the ELF reader on synthetic images of every class and byte
 * order, on the real files of the fuzz corpus, on every truncation and on broken
 * structures; and the file color rules.
 */
#include "util/util.h"

#include <fcntl.h>
#include <sys/stat.h>
#include <unistd.h>

#include "worker/worker.h"
#include "tests/unit/harness.h"
#include "tests/unit/worker/elfimg.h"

#define CORPUS "fuzz/corpus/elf/"

static const struct elfimg_spec lib_spec = {
    .type = ET_DYN,
    .machine = EM_X86_64,
    .soname = "libfoo.so.1",
    .needed = {"libc.so.6", "libm.so.6"},
    .gnu_hash = true,
    .verdef_base = "libfoo.so.1",
    .verdefs = {"FOO_1.0", "FOO_2.0"},
    .vn_file = "libc.so.6",
    .vn_names = {"GLIBC_2.2.5", "GLIBC_2.34"},
};

static const struct elfimg_spec exe_spec = {
    .type = ET_DYN,
    .machine = EM_PPC64,
    .interp = "/lib64/ld64.so.2",
    .needed = {"libc.so.6"},
    .sysv_hash = true,
    .gnu_hash = true,
    .debug = true,
    .pie = true,
};

static size_t build(const struct elfimg_spec *base, int cls, int data, unsigned char *buf,
                    size_t cap, struct elfimg_layout *l)
{
	struct elfimg_spec s = *base;

	s.cls = cls;
	s.data = data;
	return elfimg_build(&s, buf, cap, l);
}

static void check_lib(const struct worker_elf *e, int cls, int data)
{
	assert_int_equal(e->elfclass, cls);
	assert_int_equal(e->data, data);
	assert_int_equal(e->type, ET_DYN);
	assert_int_equal(e->machine, EM_X86_64);
	assert_null(e->interp);
	assert_string_equal(e->soname, "libfoo.so.1");
	assert_int_equal(e->nneeded, 2);
	assert_string_equal(e->needed[0], "libc.so.6");
	assert_string_equal(e->needed[1], "libm.so.6");
	assert_int_equal(e->flags, WORKER_ELF_GNU_HASH | WORKER_ELF_DYNAMIC);
	assert_int_equal(e->nverdefs, 3);
	assert_int_equal(e->verdefs[0].flags, VER_FLG_BASE);
	assert_int_equal(e->verdefs[0].nnames, 1);
	assert_string_equal(e->verdefs[0].names[0], "libfoo.so.1");
	assert_int_equal(e->verdefs[2].flags, 0);
	assert_int_equal(e->verdefs[2].nnames, 2);
	assert_string_equal(e->verdefs[2].names[0], "FOO_2.0");
	assert_string_equal(e->verdefs[2].names[1], "FOO_1.0");
	assert_int_equal(e->verdefs[2].section, 0);
	assert_int_equal(e->nverneeds, 2);
	assert_string_equal(e->verneeds[0].file, "libc.so.6");
	assert_string_equal(e->verneeds[0].name, "GLIBC_2.2.5");
	assert_string_equal(e->verneeds[1].name, "GLIBC_2.34");
}

KILN_TEST(elf_synthetic_every_class_and_byte_order)
{
	static const int classes[] = {ELFCLASS32, ELFCLASS64};
	static const int orders[] = {ELFDATA2LSB, ELFDATA2MSB};
	unsigned char buf[4096];
	struct elfimg_layout l;
	size_t i, j;

	for (i = 0; i < 2; i++) {
		for (j = 0; j < 2; j++) {
			struct kiln_err err = KILN_ERR_INIT;
			struct worker_elf e;
			size_t len = build(&lib_spec, classes[i], orders[j], buf, sizeof(buf), &l);

			assert_ok(worker_elf_from_mem(buf, len, "lib", &e, &err), &err);
			check_lib(&e, classes[i], orders[j]);
			worker_elf_release(&e);
		}
	}
}

KILN_TEST(elf_interp_pie_debug_hashes)
{
	unsigned char buf[4096];
	struct elfimg_layout l;
	struct kiln_err err = KILN_ERR_INIT;
	struct worker_elf e;
	size_t len = build(&exe_spec, ELFCLASS64, ELFDATA2MSB, buf, sizeof(buf), &l);

	assert_ok(worker_elf_from_mem(buf, len, "exe", &e, &err), &err);
	assert_string_equal(e.interp, "/lib64/ld64.so.2");
	assert_null(e.soname);
	assert_int_equal(e.machine, EM_PPC64);
	assert_int_equal(e.flags, WORKER_ELF_HASH | WORKER_ELF_GNU_HASH | WORKER_ELF_DEBUG |
	                              WORKER_ELF_PIE | WORKER_ELF_INTERP | WORKER_ELF_DYNAMIC);
	assert_int_equal(e.nverdefs, 0);
	assert_int_equal(e.nverneeds, 0);
	worker_elf_release(&e);
}

/* An empty PT_INTERP string is no interpreter (rpm 4.20 checks for an empty one). */
KILN_TEST(elf_empty_interp_is_none)
{
	struct elfimg_spec s = exe_spec;
	unsigned char buf[4096];
	struct elfimg_layout l;
	struct kiln_err err = KILN_ERR_INIT;
	struct worker_elf e;
	size_t len;

	s.interp = "";
	len = build(&s, ELFCLASS32, ELFDATA2LSB, buf, sizeof(buf), &l);
	assert_ok(worker_elf_from_mem(buf, len, "exe", &e, &err), &err);
	assert_string_equal(e.interp, "");
	assert_false(e.flags & WORKER_ELF_INTERP);
	worker_elf_release(&e);
}

/* Every prefix of a valid file is refused cleanly with the file's name, never read past. */
KILN_TEST(elf_every_truncation_is_refused)
{
	static const int classes[] = {ELFCLASS32, ELFCLASS64};
	unsigned char buf[4096];
	struct elfimg_layout l;
	size_t i, cut;

	for (i = 0; i < 2; i++) {
		size_t len = build(&lib_spec, classes[i], ELFDATA2LSB, buf, sizeof(buf), &l);

		for (cut = 0; cut < len; cut++) {
			struct kiln_err err = KILN_ERR_INIT;
			struct worker_elf e;
			unsigned char *copy = malloc(cut ? cut : 1);

			assert_non_null(copy);
			memcpy(copy, buf, cut);
			assert_int_equal(worker_elf_from_mem(copy, cut, "trunc.so", &e, &err),
			                 KILN_EFORMAT);
			assert_non_null(strstr(err.msg, "trunc.so"));
			assert_null(e.soname);
			free(copy);
		}
	}
}

static void expect_error(unsigned char *buf, size_t len, kiln_rc code, const char *what)
{
	struct kiln_err err = KILN_ERR_INIT;
	struct worker_elf e;

	assert_int_equal(worker_elf_from_mem(buf, len, "bad.so", &e, &err), code);
	if (!strstr(err.msg, what) || !strstr(err.msg, "bad.so"))
		fail_msg("message \"%s\" does not name \"%s\"", err.msg, what);
}

KILN_TEST(elf_broken_structures_are_named)
{
	unsigned char buf[4096];
	struct elfimg_layout l;
	size_t len;
	bool be = true;

#define FRESH() (len = build(&lib_spec, ELFCLASS64, ELFDATA2MSB, buf, sizeof(buf), &l))
	FRESH();
	elfimg_poke(buf, be, l.sh_dynamic + 40, 2, 4); /* sh_link: the dynamic section itself */
	expect_error(buf, len, KILN_EFORMAT, "not a string table");
	FRESH();
	elfimg_poke(buf, be, l.sh_dynamic + 40, 99, 4); /* sh_link past the sections */
	expect_error(buf, len, KILN_EFORMAT, "not a string table");
	FRESH();
	elfimg_poke(buf, be, l.dynamic + 8, 100000, 8); /* DT_NEEDED string offset */
	expect_error(buf, len, KILN_EFORMAT, "DT_NEEDED");
	FRESH();
	buf[l.dynstr + l.dynstr_len - 1] = 'x'; /* last string not terminated */
	expect_error(buf, len, KILN_EFORMAT, "not terminated");
	FRESH();
	elfimg_poke(buf, be, l.sh_dynamic + 56, 8, 8); /* sh_entsize */
	expect_error(buf, len, KILN_EFORMAT, ".dynamic");
	FRESH();
	elfimg_poke(buf, be, l.sh_dynamic + 32, 1u << 20, 8); /* sh_size past the end */
	expect_error(buf, len, KILN_EFORMAT, "section 2 (.dynamic)");
	FRESH();
	elfimg_poke(buf, be, l.verdef + 16, 0, 4); /* vd_next 0 before the last entry */
	expect_error(buf, len, KILN_EFORMAT, ".gnu.version_d entry 0");
	FRESH();
	elfimg_poke(buf, be, l.sh_verdef + 44, 0xffffffffu, 4); /* sh_info: entries */
	expect_error(buf, len, KILN_EFORMAT, ".gnu.version_d");
	FRESH();
	elfimg_poke(buf, be, l.verdef + 12, 4000, 4); /* vd_aux outside */
	expect_error(buf, len, KILN_EFORMAT, ".gnu.version_d aux entry 0");
	FRESH();
	elfimg_poke(buf, be, l.verneed + 8, 100000, 4); /* vn_aux outside */
	expect_error(buf, len, KILN_EFORMAT, ".gnu.version_r aux entry 0");
	FRESH();
	elfimg_poke(buf, be, l.verneed + 16 + 12, 0, 4); /* vna_next 0 before the last */
	expect_error(buf, len, KILN_EFORMAT, ".gnu.version_r aux entry 0");
	FRESH();
	elfimg_poke(buf, be, 58, 40, 2); /* e_shentsize */
	expect_error(buf, len, KILN_EFORMAT, "section header size 40");
	FRESH();
	elfimg_poke(buf, be, 40, 1u << 30, 8); /* e_shoff */
	expect_error(buf, len, KILN_EFORMAT, "section header");
	FRESH();
	elfimg_poke(buf, be, 60, 0, 2); /* extended numbering: count in section 0's sh_size */
	elfimg_poke(buf, be, l.shoff + 32, KILN_LIMIT_ELF_SECTIONS + 1, 8);
	expect_error(buf, len, KILN_ELIMIT, "sections");
	FRESH();
	buf[EI_CLASS] = 3;
	expect_error(buf, len, KILN_EFORMAT, "invalid class 3");
	FRESH();
	buf[EI_DATA] = 0;
	expect_error(buf, len, KILN_EFORMAT, "invalid byte order");
	FRESH();
	buf[EI_VERSION] = 2;
	expect_error(buf, len, KILN_EFORMAT, "invalid version");
	FRESH();
	buf[0] = 'x';
	expect_error(buf, len, KILN_EFORMAT, "not an ELF file");
#undef FRESH
}

KILN_TEST(elf_broken_interp)
{
	unsigned char buf[4096];
	struct elfimg_layout l;
	size_t len;

	len = build(&exe_spec, ELFCLASS32, ELFDATA2LSB, buf, sizeof(buf), &l);
	elfimg_poke(buf, false, l.phoff + 4, 1u << 30, 4); /* p_offset past the end */
	expect_error(buf, len, KILN_EFORMAT, "PT_INTERP");
	len = build(&exe_spec, ELFCLASS32, ELFDATA2LSB, buf, sizeof(buf), &l);
	elfimg_poke(buf, false, l.phoff + 4, len - 2, 4); /* string runs into the end */
	buf[len - 2] = buf[len - 1] = 'x';
	expect_error(buf, len, KILN_EFORMAT, "PT_INTERP");
	len = build(&exe_spec, ELFCLASS32, ELFDATA2LSB, buf, sizeof(buf), &l);
	elfimg_poke(buf, false, 42, 56, 2); /* e_phentsize */
	expect_error(buf, len, KILN_EFORMAT, "program header size 56");
}

/* The extended section count is honoured when it is sane. */
KILN_TEST(elf_extended_section_numbering)
{
	unsigned char buf[4096];
	struct elfimg_layout l;
	struct kiln_err err = KILN_ERR_INIT;
	struct worker_elf e;
	size_t len = build(&lib_spec, ELFCLASS32, ELFDATA2MSB, buf, sizeof(buf), &l);

	elfimg_poke(buf, true, 48, 0, 2);
	elfimg_poke(buf, true, l.shoff + 20, 5, 4);
	assert_ok(worker_elf_from_mem(buf, len, "lib", &e, &err), &err);
	check_lib(&e, ELFCLASS32, ELFDATA2MSB);
	worker_elf_release(&e);
}

/* Objects, core files and the like are read up to their header only. */
KILN_TEST(elf_relocatable_reads_header_only)
{
	struct elfimg_spec s = lib_spec;
	unsigned char buf[4096];
	struct elfimg_layout l;
	struct kiln_err err = KILN_ERR_INIT;
	struct worker_elf e;
	size_t len;

	s.type = ET_REL;
	len = build(&s, ELFCLASS64, ELFDATA2LSB, buf, sizeof(buf), &l);
	elfimg_poke(buf, false, l.sh_dynamic + 40, 99, 4); /* would be an error for ET_DYN */
	assert_ok(worker_elf_from_mem(buf, len, "x.o", &e, &err), &err);
	assert_int_equal(e.type, ET_REL);
	assert_null(e.soname);
	assert_int_equal(e.nneeded, 0);
	worker_elf_release(&e);
}

static void read_corpus(const char *name, struct worker_elf *e)
{
	struct kiln_err err = KILN_ERR_INIT;
	char path[256];
	int fd;

	snprintf(path, sizeof(path), CORPUS "%s", name);
	fd = open(path, O_RDONLY | O_CLOEXEC);
	assert_true(fd >= 0);
	assert_ok(worker_elf_read_fd(fd, path, e, &err), &err);
	close(fd);
}

static bool has_verneed(const struct worker_elf *e, const char *file, const char *name)
{
	size_t i;

	for (i = 0; i < e->nverneeds; i++) {
		if (!strcmp(e->verneeds[i].file, file) && !strcmp(e->verneeds[i].name, name))
			return true;
	}
	return false;
}

KILN_TEST(elf_real_x86_64_files)
{
	struct worker_elf e;

	read_corpus("libfoo-x86_64.so", &e);
	assert_int_equal(e.elfclass, ELFCLASS64);
	assert_int_equal(e.machine, EM_X86_64);
	assert_string_equal(e.soname, "libfoo.so.1");
	assert_true(e.flags & WORKER_ELF_GNU_HASH);
	assert_false(e.flags & (WORKER_ELF_DEBUG | WORKER_ELF_PIE | WORKER_ELF_INTERP));
	assert_int_equal(e.nverdefs, 3);
	assert_string_equal(e.verdefs[0].names[0], "libfoo.so.1");
	assert_string_equal(e.verdefs[2].names[0], "FOO_2.0");
	assert_true(has_verneed(&e, "libc.so.6", "GLIBC_2.2.5"));
	worker_elf_release(&e);

	read_corpus("exe-x86_64", &e);
	assert_string_equal(e.interp, "/lib64/ld-linux-x86-64.so.2");
	assert_int_equal(e.flags & (WORKER_ELF_DEBUG | WORKER_ELF_PIE | WORKER_ELF_INTERP),
	                 WORKER_ELF_DEBUG | WORKER_ELF_PIE | WORKER_ELF_INTERP);
	assert_int_equal(e.nneeded, 1);
	assert_string_equal(e.needed[0], "libc.so.6");
	assert_true(has_verneed(&e, "libc.so.6", "GLIBC_2.34"));
	worker_elf_release(&e);

	read_corpus("libsysv-x86_64.so", &e);
	assert_int_equal(e.flags & (WORKER_ELF_HASH | WORKER_ELF_GNU_HASH), WORKER_ELF_HASH);
	worker_elf_release(&e);
}

KILN_TEST(elf_real_32_bit_and_big_endian_files)
{
	struct worker_elf e;

	read_corpus("exe-i386", &e);
	assert_int_equal(e.elfclass, ELFCLASS32);
	assert_int_equal(e.type, ET_EXEC);
	assert_string_equal(e.interp, "/lib/ld-linux.so.2");
	assert_true(has_verneed(&e, "libfoo.so.1", "FOO_2.0"));
	worker_elf_release(&e);

	read_corpus("libfoo-powerpc64.so", &e);
	assert_int_equal(e.data, ELFDATA2MSB);
	assert_int_equal(e.machine, EM_PPC64);
	assert_string_equal(e.soname, "libfoo.so.1");
	assert_true(has_verneed(&e, "libstub.so.1", "STUB_1"));
	worker_elf_release(&e);

	read_corpus("exe-powerpc", &e);
	assert_int_equal(e.elfclass, ELFCLASS32);
	assert_int_equal(e.data, ELFDATA2MSB);
	assert_string_equal(e.interp, "/lib/ld.so.1");
	assert_string_equal(e.needed[0], "libfoo.so.1");
	worker_elf_release(&e);
}

/* Reading through a file descriptor and from memory agree. */
KILN_TEST(elf_fd_and_memory_agree)
{
	struct kiln_buf b = KILN_BUF_INIT(KILN_MIB);
	struct kiln_err err = KILN_ERR_INIT;
	struct worker_elf a, m;
	size_t i;

	assert_ok(util_read_file(CORPUS "libfoo-mips.so", KILN_MIB, &b, &err), &err);
	assert_ok(worker_elf_from_mem(b.ptr, b.len, "mips", &m, &err), &err);
	read_corpus("libfoo-mips.so", &a);
	assert_string_equal(a.soname, m.soname);
	assert_int_equal(a.nverdefs, m.nverdefs);
	for (i = 0; i < a.nverdefs; i++)
		assert_string_equal(a.verdefs[i].names[0], m.verdefs[i].names[0]);
	assert_int_equal(a.nverneeds, m.nverneeds);
	assert_int_equal(a.flags, m.flags);
	worker_elf_release(&a);
	worker_elf_release(&m);
	kiln_buf_release(&b);
}

static void assert_build_id(const struct worker_elf *e, const char *hex)
{
	char got[2 * 64 + 1] = "";
	size_t i;

	assert_non_null(e->build_id);
	assert_int_equal(e->build_id_len * 2, strlen(hex));
	for (i = 0; i < e->build_id_len; i++)
		snprintf(got + 2 * i, 3, "%02x", e->build_id[i]);
	assert_string_equal(got, hex);
}

/* The ids readelf -n prints for the corpus files (gcc -Wl,--build-id=sha1; ld -r
 * --build-id=sha1 for the kernel-module-like object). */
KILN_TEST(elf_build_id_and_modinfo)
{
	struct kiln_buf b = KILN_BUF_INIT(KILN_MIB);
	struct kiln_err err = KILN_ERR_INIT;
	struct worker_elf e;

	read_corpus("exe-buildid-x86_64", &e);
	assert_build_id(&e, "681ea6b34a29ec60b89f1b0ff93a42f53fbc3e7b");
	assert_false(e.modinfo);
	worker_elf_release(&e);
	read_corpus("mod-buildid-x86_64.ko", &e);
	assert_int_equal(e.type, ET_REL);
	assert_true(e.modinfo);
	assert_build_id(&e, "cde70f5ea90e63ab306e5e2b39fccd99f9bfe1f5");
	worker_elf_release(&e);
	read_corpus("obj-x86_64.o", &e);
	assert_false(e.modinfo);
	assert_null(e.build_id);
	worker_elf_release(&e);
	read_corpus("libfoo-x86_64.so", &e);
	assert_null(e.build_id);
	worker_elf_release(&e);
	/* A note whose name size runs past its section is skipped, not an error. */
	assert_ok(util_read_file(CORPUS "exe-buildid-x86_64", KILN_MIB, &b, &err), &err);
	elfimg_poke((unsigned char *)b.ptr, false, 0x158, 0x7fffffff, 4);
	assert_ok(worker_elf_from_mem(b.ptr, b.len, "bad note", &e, &err), &err);
	assert_null(e.build_id);
	worker_elf_release(&e);
	kiln_buf_release(&b);
}

KILN_TEST(elf_read_fd_refuses_non_regular)
{
	struct kiln_err err = KILN_ERR_INIT;
	struct worker_elf e;
	int fd = open(".", O_RDONLY | O_DIRECTORY | O_CLOEXEC);

	assert_true(fd >= 0);
	assert_int_equal(worker_elf_read_fd(fd, "dir", &e, &err), KILN_EFORMAT);
	assert_non_null(strstr(err.msg, "not a regular file"));
	close(fd);
}

KILN_TEST(elf_magic)
{
	assert_true(worker_elf_magic("\177ELF\1", 5));
	assert_true(worker_elf_magic("\177ELF\2\2", 6));
	assert_false(worker_elf_magic("\177ELF\3", 5));
	assert_false(worker_elf_magic("\177ELF", 4));
	assert_false(worker_elf_magic("#!/bin/sh", 9));
}

static const char *write_file(const void *data, size_t len)
{
	static char path[512];
	struct kiln_err err = KILN_ERR_INIT;

	snprintf(path, sizeof(path), "%s/f", kiln_test_tmpdir());
	assert_ok(util_write_atomic(path, data, len, 0755, &err), &err);
	return path;
}

KILN_TEST(elf_color)
{
	unsigned char buf[4096];
	struct elfimg_layout l;
	size_t len = build(&lib_spec, ELFCLASS64, ELFDATA2LSB, buf, sizeof(buf), &l);
	const char *p = write_file(buf, len);

	assert_int_equal(worker_elf_color(p, S_IFREG | 0755), 2);
	/* rpm colors executable regular files only */
	assert_int_equal(worker_elf_color(p, S_IFREG | 0644), 0);
	assert_int_equal(worker_elf_color(p, S_IFLNK | 0777), 0);
	assert_int_equal(worker_elf_color(CORPUS "exe-i386", S_IFREG | 0100), 1);
	assert_int_equal(worker_elf_color("/nonexistent/kiln", S_IFREG | 0755), 0);
	assert_int_equal(worker_elf_color_head(buf, 63, S_IFREG | 0755), 0); /* short header */
	assert_int_equal(worker_elf_color_head(buf, 64, S_IFREG | 0755), 2);
	buf[18] = EM_BPF;
	buf[19] = 0;
	assert_int_equal(worker_elf_color_head(buf, 64, S_IFREG | 0755), 0);
	assert_int_equal(worker_elf_color_head("#!/bin/sh\n", 10, S_IFREG | 0755), 0);
	len = build(&lib_spec, ELFCLASS32, ELFDATA2MSB, buf, sizeof(buf), &l);
	assert_int_equal(worker_elf_color_head(buf, 52, S_IFREG | 0755), 1);
}
