/*
 * test_autodeps.c - worker/autodeps.c: dependency sets, and worker_autodeps_collect() over
 * small buildroots: ELF files (the fuzz corpus's real ones and synthetic ones), #! scripts,
 * .pc files, rpm's filters and its error messages. Expected values are what Debian's
 * rpmdeps 4.18 prints for the same files (tests/integration/test_autodeps.py compares the
 * two directly); where rpm 4.20 differs the test says so.
 */
#include "util/util.h"

#include <sys/stat.h>
#include <unistd.h>

#include "macro/macro.h"
#include "worker/worker.h"
#include "tests/unit/harness.h"
#include "tests/unit/worker/elfimg.h"

#define CORPUS "fuzz/corpus/elf/"
#define FP RPMTAG_DEP_FIND_PROVIDES
#define FR RPMTAG_DEP_FIND_REQUIRES

/* ---------------------------------------------------------------------------------------- */
/* Dependency sets */

static const char *set_text(const struct worker_deps *d, bool flags)
{
	static char text[16384];
	struct kiln_buf b = KILN_BUF_INIT(KILN_MIB);
	size_t i;

	for (i = 0; i < d->n; i++) {
		if (flags)
			kiln_buf_addf(&b, "%" PRIu32 " ", d->v[i].flags);
		worker_dep_format(&d->v[i], &b);
		kiln_buf_addch(&b, '\n');
	}
	snprintf(text, sizeof(text), "%s", b.ptr);
	kiln_buf_release(&b);
	return text;
}

KILN_TEST(deps_set_sorts_like_rpm_and_dedups)
{
	struct kiln_err err = KILN_ERR_INIT;
	struct worker_deps d;

	memset(&d, 0, sizeof(d)); /* a zeroed set is an empty set */
	assert_ok(worker_deps_add(&d, "b", "2", RPMTAG_DEP_GREATER | RPMTAG_DEP_EQUAL, &err), &err);
	assert_ok(worker_deps_add(&d, "b", "1", RPMTAG_DEP_EQUAL, &err), &err);
	assert_ok(worker_deps_add(&d, "b", "3", RPMTAG_DEP_LESS, &err), &err);
	assert_ok(worker_deps_add(&d, "b", NULL, FR, &err), &err);
	assert_ok(worker_deps_add(&d, "a(x)", "", FR, &err), &err);
	assert_ok(worker_deps_add(&d, "b", "0", RPMTAG_DEP_EQUAL, &err), &err);
	/* same name, comparison and version: one entry, the first one's flags */
	assert_ok(worker_deps_add(&d, "b", "1", RPMTAG_DEP_EQUAL | FR, &err), &err);
	assert_string_equal(set_text(&d, true), "16384 a(x)\n16384 b\n2 b < 3\n8 b = 0\n8 b = 1\n"
	                                        "12 b >= 2\n");
	assert_int_equal(worker_deps_find(&d, "b", "1", RPMTAG_DEP_EQUAL | FP), 4);
	assert_int_equal(worker_deps_find(&d, "b", "1", RPMTAG_DEP_LESS), -1);
	assert_int_equal(worker_deps_find(&d, "c", NULL, 0), -1);
	assert_int_equal(worker_deps_add(&d, "", "", 0, &err), KILN_EINVAL);
	worker_deps_release(&d);
	assert_int_equal(d.n, 0);
	worker_deps_release(&d);
	worker_deps_init(&d);
	assert_ok(worker_deps_add(&d, "x", "", 0, &err), &err);
	worker_deps_release(&d);
}

/* ---------------------------------------------------------------------------------------- */
/* A buildroot and a run of the collector */

struct br {
	char root[512];
	struct pack_file files[32];
	char paths[32][512];
	size_t n;
	struct macro_ctx *ctx;
	struct worker_autodeps_opts opts;
	struct worker_deps prov, req, rec;
	struct kiln_err err;
	char log[8192];
	size_t loglen;
};

static void br_diag(void *data, enum kiln_log_level level, const char *msg)
{
	struct br *b = data;
	int n = snprintf(b->log + b->loglen, sizeof(b->log) - b->loglen, "%s%s\n",
	                 level == KILN_LOG_WARN ? "warning: " : "", msg);

	if (n > 0)
		b->loglen += (size_t)n;
	if (b->loglen >= sizeof(b->log))
		b->loglen = sizeof(b->log) - 1;
}

static void br_define(struct br *b, const char *line)
{
	struct kiln_err err = KILN_ERR_INIT;

	assert_ok(macro_define_line(b->ctx, line, MACRO_LEVEL_CMDLINE, &err), &err);
}

static void br_init(struct br *b)
{
	struct kiln_err err = KILN_ERR_INIT;

	memset(b, 0, sizeof(*b));
	snprintf(b->root, sizeof(b->root), "%s", kiln_test_tmpdir());
	b->ctx = macro_ctx_new(&err);
	assert_non_null(b->ctx);
	macro_ctx_set_diag(b->ctx, br_diag, b);
	br_define(b, "_libdir /usr/lib64");
	br_define(b, "_datadir /usr/share");
	br_define(b, "_bindir /usr/bin");
	b->opts.macros = b->ctx;
	b->opts.autoreq = b->opts.autoprov = true;
	worker_deps_init(&b->prov);
	worker_deps_init(&b->req);
	worker_deps_init(&b->rec);
}

static void br_free(struct br *b)
{
	worker_deps_release(&b->prov);
	worker_deps_release(&b->req);
	worker_deps_release(&b->rec);
	macro_ctx_free(b->ctx);
}

/* A file entry; src under the buildroot (also for symlinks and ghosts, which have none). */
static struct pack_file *br_entry(struct br *b, const char *path, uint32_t mode)
{
	struct kiln_buf dir = KILN_BUF_INIT(KILN_LIMIT_PATH);
	struct kiln_err err = KILN_ERR_INIT;
	struct pack_file *f = &b->files[b->n];
	char full[1024];

	assert_true(b->n < KILN_ARRAY_SIZE(b->files));

	snprintf(full, sizeof(full), "%s%s", b->root, path);
	assert_true(strlen(full) < sizeof(b->paths[0]));
	memcpy(b->paths[b->n], full, strlen(full) + 1);
	util_path_dirname(b->paths[b->n], &dir);
	assert_ok(util_mkdir_p(dir.ptr, 0755, &err), &err);
	kiln_buf_release(&dir);
	memset(f, 0, sizeof(*f));
	f->path = b->paths[b->n] + strlen(b->root);
	f->src = b->paths[b->n];
	f->mode = mode;
	b->n++;
	return f;
}

static struct pack_file *br_write(struct br *b, const char *path, uint32_t mode, const void *data,
                                  size_t len)
{
	struct kiln_err err = KILN_ERR_INIT;
	struct pack_file *f = br_entry(b, path, S_IFREG | mode);

	assert_ok(util_write_atomic(f->src, data, len, mode, &err), &err);
	assert_int_equal(chmod(f->src, mode), 0);
	return f;
}

static struct pack_file *br_text(struct br *b, const char *path, uint32_t mode, const char *text)
{
	return br_write(b, path, mode, text, strlen(text));
}

static struct pack_file *br_copy(struct br *b, const char *path, uint32_t mode, const char *from)
{
	struct kiln_err err = KILN_ERR_INIT;
	struct pack_file *f = br_entry(b, path, S_IFREG | mode);

	assert_ok(util_copy_file(from, f->src, mode, &err), &err);
	assert_int_equal(chmod(f->src, mode), 0);
	return f;
}

static struct pack_file *br_link(struct br *b, const char *path, const char *to)
{
	struct pack_file *f = br_entry(b, path, S_IFLNK | 0777);

	assert_int_equal(symlink(to, f->src), 0);
	f->link = to;
	return f;
}

static kiln_rc br_run(struct br *b)
{
	kiln_err_clear(&b->err);
	return worker_autodeps_collect(b->files, b->n, &b->opts, &b->prov, &b->req, &b->rec,
	                               &b->err);
}

static void br_ok(struct br *b)
{
	assert_ok(br_run(b), &b->err);
}

#define PROVIDES(b) set_text(&(b)->prov, false)
#define REQUIRES(b) set_text(&(b)->req, false)

/* ---------------------------------------------------------------------------------------- */
/* ELF */

KILN_TEST(autodeps_elf_library_provides_and_requires)
{
	struct br b;

	br_init(&b);
	/* a library needs no executable bit, for provides nor requires (rpm 4.17+) */
	br_copy(&b, "/usr/lib64/libfoo.so.1.0", 0644, CORPUS "libfoo-x86_64.so");
	br_ok(&b);
	assert_string_equal(PROVIDES(&b), "libfoo.so.1()(64bit)\nlibfoo.so.1(FOO_1.0)(64bit)\n"
	                                  "libfoo.so.1(FOO_2.0)(64bit)\n");
	assert_string_equal(REQUIRES(&b),
	                    "libc.so.6()(64bit)\nlibc.so.6(GLIBC_2.2.5)(64bit)\nrtld(GNU_HASH)\n");
	assert_string_equal(set_text(&b.prov, true), "32768 libfoo.so.1()(64bit)\n"
	                                             "32768 libfoo.so.1(FOO_1.0)(64bit)\n"
	                                             "32768 libfoo.so.1(FOO_2.0)(64bit)\n");
	assert_int_equal(b.req.v[0].flags, FR);
	br_free(&b);
}

KILN_TEST(autodeps_elf_executable_needs_its_exec_bit)
{
	struct br b;

	br_init(&b);
	br_copy(&b, "/usr/bin/hello", 0755, CORPUS "exe-x86_64");
	br_ok(&b);
	/* a PIE (DT_DEBUG) provides nothing */
	assert_string_equal(PROVIDES(&b), "");
	assert_string_equal(REQUIRES(&b), "libc.so.6()(64bit)\nlibc.so.6(GLIBC_2.2.5)(64bit)\n"
	                                  "libc.so.6(GLIBC_2.34)(64bit)\nrtld(GNU_HASH)\n");
	br_free(&b);

	/* with an interpreter but no exec bit on disk: no requires, whatever the packaged
	 * mode says (rpm looks at the buildroot file) */
	br_init(&b);
	br_copy(&b, "/usr/bin/hello", 0644, CORPUS "exe-x86_64")->mode = S_IFREG | 0755;
	br_ok(&b);
	assert_string_equal(REQUIRES(&b), "");
	br_free(&b);
}

KILN_TEST(autodeps_elf_32_bit_and_big_endian)
{
	struct br b;

	br_init(&b);
	br_copy(&b, "/usr/lib/libfoo.so.1", 0755, CORPUS "libfoo-i386.so");
	br_copy(&b, "/usr/bin/e", 0755, CORPUS "exe-i386");
	br_ok(&b);
	/* no marker for 32-bit files */
	assert_string_equal(PROVIDES(&b),
	                    "libfoo.so.1\nlibfoo.so.1(FOO_1.0)\nlibfoo.so.1(FOO_2.0)\n");
	assert_string_equal(REQUIRES(&b), "libc.so.6\nlibc.so.6(GLIBC_2.0)\nlibfoo.so.1\n"
	                                  "libfoo.so.1(FOO_2.0)\nrtld(GNU_HASH)\n");
	br_free(&b);

	br_init(&b);
	br_copy(&b, "/usr/lib64/libfoo.so.1", 0644, CORPUS "libfoo-powerpc64.so");
	br_ok(&b);
	assert_string_equal(PROVIDES(&b), "libfoo.so.1()(64bit)\nlibfoo.so.1(FOO_1.0)(64bit)\n"
	                                  "libfoo.so.1(FOO_2.0)(64bit)\n");
	assert_string_equal(REQUIRES(&b), "libstub.so.1()(64bit)\nlibstub.so.1(STUB_1)(64bit)\n");
	br_free(&b);
}

static void synth(struct br *b, const char *path, uint32_t mode, const struct elfimg_spec *s)
{
	unsigned char buf[4096];
	struct elfimg_layout l;
	size_t len = elfimg_build(s, buf, sizeof(buf), &l);

	br_write(b, path, mode, buf, len);
}

KILN_TEST(autodeps_elf_soname_rules)
{
	struct elfimg_spec s = {
	    .cls = ELFCLASS64, .data = ELFDATA2LSB, .type = ET_DYN, .machine = EM_X86_64};
	struct br b;

	br_init(&b);
	/* without DT_SONAME the file's name, when it is a sane soname */
	synth(&b, "/usr/lib64/libbar.so.3", 0755, &s);
	synth(&b, "/usr/lib64/plugin.so", 0755, &s);
	synth(&b, "/usr/lib64/libnoso", 0755, &s);
	s.soname = "ld-linux-x86-64.so.2";
	synth(&b, "/lib64/a", 0755, &s);
	s.soname = "ld64.so.2";
	synth(&b, "/lib64/b", 0755, &s);
	s.soname = "plugin";
	synth(&b, "/lib64/c", 0755, &s);
	s.soname = "libsp ace.so";
	synth(&b, "/lib64/d", 0755, &s);
	/* an executable that is not a PIE can still define versions */
	s.type = ET_EXEC;
	s.soname = NULL;
	s.verdef_base = "libexe.so.1";
	s.verdefs[0] = "EXE_1";
	synth(&b, "/usr/bin/x", 0755, &s);
	br_ok(&b);
	/* a blank in a soname splits it into two dependencies, as rpm parses elfdeps' line */
	assert_string_equal(PROVIDES(&b), "ace.so()(64bit)\nld-linux-x86-64.so.2()(64bit)\n"
	                                  "ld64.so.2()(64bit)\nlibbar.so.3()(64bit)\n"
	                                  "libexe.so.1(EXE_1)(64bit)\nlibsp\n");
	br_free(&b);
}

KILN_TEST(autodeps_elf_markers_and_hashes)
{
	struct elfimg_spec s = {.cls = ELFCLASS64,
	                        .data = ELFDATA2MSB,
	                        .type = ET_DYN,
	                        .machine = EM_ALPHA,
	                        .soname = "liba.so.1",
	                        .needed = {"libc.so.6.1"},
	                        .gnu_hash = true};
	struct br b;

	br_init(&b);
	/* Alpha has no 64-bit marker; GNU hash alone needs rtld(GNU_HASH) */
	synth(&b, "/usr/lib/liba.so.1", 0755, &s);
	s.machine = EM_S390;
	s.soname = "libb.so.1";
	s.sysv_hash = true;
	synth(&b, "/usr/lib64/libb.so.1", 0755, &s);
	br_ok(&b);
	assert_string_equal(PROVIDES(&b), "liba.so.1\nlibb.so.1()(64bit)\n");
	assert_string_equal(REQUIRES(&b), "libc.so.6.1\nlibc.so.6.1()(64bit)\nrtld(GNU_HASH)\n");
	br_free(&b);
}

KILN_TEST(autodeps_elf_broken_file_warns)
{
	struct br b;

	br_init(&b);
	br_copy(&b, "/usr/lib64/libt.so", 0755, CORPUS "trunc-2000");
	br_copy(&b, "/usr/lib64/libh.so", 0755, CORPUS "trunc-header");
	br_copy(&b, "/usr/lib64/x.o", 0755, CORPUS "obj-x86_64.o");
	br_ok(&b);
	assert_string_equal(PROVIDES(&b), "");
	assert_string_equal(REQUIRES(&b), "");
	assert_non_null(strstr(b.log, "warning: /usr/lib64/libt.so: truncated ELF file"));
	assert_non_null(strstr(b.log, "warning: /usr/lib64/libh.so: truncated ELF file"));
	assert_null(strstr(b.log, "x.o"));
	br_free(&b);
}

/* ---------------------------------------------------------------------------------------- */
/* Scripts */

KILN_TEST(autodeps_script_interpreters)
{
	struct br b;

	br_init(&b);
	br_text(&b, "/a", 0755, "#!/bin/sh\necho\n");
	br_text(&b, "/b", 0755, "#! /usr/bin/perl -w\n");
	br_text(&b, "/c", 0755, "#!/usr/bin/env python3\n");
	br_text(&b, "/d", 0755, "#!/x/bin/env /y\n");
	br_text(&b, "/e", 0755, "#!bash\n");
	br_text(&b, "/f", 0755, "#!\t/bin/bash\r\n");
	br_text(&b, "/g", 0644, "#!/bin/notexec\n");
	br_text(&b, "/h", 0755, "  #!/bin/notfirst\n");
	br_text(&b, "/i", 0755, "#!/usr/local/bin/tool arg\n\1\2binary");
	br_text(&b, "/j", 0755, "#!/bin/nonewline");
	br_text(&b, "/k", 0755, "#!/\n");
	br_text(&b, "/l", 0755, "#!/usr/bin/env /usr/bin/foo bar\n");
	br_text(&b, "/m", 0711, "#!/usr/bin/awk -f\n");
	br_text(&b, "/dev/n", 0755, "#!/bin/dev\n");
	br_ok(&b);
	assert_string_equal(PROVIDES(&b), "");
	assert_string_equal(REQUIRES(&b), "/bin/bash\n/bin/nonewline\n/bin/sh\n/usr/bin/awk\n"
	                                  "/usr/bin/env\n/usr/bin/foo\n/usr/bin/perl\n"
	                                  "/usr/local/bin/tool\n/x/bin/env\n/y\nbar\n");
	br_free(&b);
}

static void script_error(const char *line, const char *msg)
{
	struct br b;

	br_init(&b);
	br_text(&b, "/usr/bin/s", 0755, line);
	assert_int_equal(br_run(&b), KILN_ESYNTAX);
	assert_string_equal(b.err.msg, msg);
	br_free(&b);
}

KILN_TEST(autodeps_script_errors_are_rpms)
{
	script_error("#!/usr/bin/env /usr/bin/foo -x\n",
	             "/usr/bin/s: Dependency tokens must begin with alpha-numeric, '_' or '/': -x");
	script_error("#!/usr/bin/env /usr/bin/foo >= 3\n",
	             "/usr/bin/s: Versioned file name not permitted: /usr/bin/foo >= 3");
	script_error("#!/usr/bin/env /usr/bin/foo x >=\n", "/usr/bin/s: Version required: x >=");
}

/* ---------------------------------------------------------------------------------------- */
/* pkgconfig */

#define PC_FOO                                                                                     \
	"prefix=/usr\nver=1.2\nName: Foo\nVersion: ${ver}\nDescription: x\n"                       \
	"Requires: glib-2.0 >= 2.50, gobject-2.0\nRequires.private: zlib\n"                        \
	"Provides: foo-compat = 9\n"

KILN_TEST(autodeps_pkgconfig)
{
	struct br b;

	br_init(&b);
	br_text(&b, "/usr/lib64/pkgconfig/foo.pc", 0644, PC_FOO);
	br_text(&b, "/usr/share/pkgconfig/bar.pc", 0644, "Name: b\nVersion: 3\nDescription: d\n");
	/* not a pkgconfig directory of this %_libdir */
	br_text(&b, "/usr/lib/pkgconfig/no.pc", 0644, PC_FOO);
	br_text(&b, "/usr/lib64/pkgconfig/notpc", 0644, PC_FOO);
	br_entry(&b, "/usr/lib64/pkgconfig/ghost.pc", S_IFREG | 0644)->flags = RPMTAG_FILE_GHOST;
	br_ok(&b);
	assert_string_equal(PROVIDES(&b), "pkgconfig(bar) = 3\npkgconfig(foo) = 1.2\n"
	                                  "pkgconfig(foo-compat) = 9\n");
	assert_string_equal(REQUIRES(&b), "/usr/bin/pkg-config\npkgconfig(glib-2.0) >= 2.50\n"
	                                  "pkgconfig(gobject-2.0)\npkgconfig(zlib)\n");
	assert_string_equal(set_text(&b.prov, true), "32776 pkgconfig(bar) = 3\n"
	                                             "32776 pkgconfig(foo) = 1.2\n"
	                                             "32776 pkgconfig(foo-compat) = 9\n");
	br_free(&b);
}

KILN_TEST(autodeps_pkgconfig_symlinks_and_path)
{
	struct br b;

	br_init(&b);
	br_text(&b, "/usr/share/pkgconfig/real-1.pc", 0644,
	        "Name: r\nVersion: 7\nDescription: d\n");
	br_link(&b, "/usr/lib64/pkgconfig/alias.pc", "../../share/pkgconfig/real-1.pc");
	br_link(&b, "/usr/lib64/pkgconfig/abs.pc", "/usr/share/pkgconfig/real-1.pc");
	/* a dangling link still names pkg-config, like a file pkg-config cannot read */
	br_link(&b, "/usr/lib64/pkgconfig/gone.pc", "nowhere.pc");
	br_ok(&b);
	assert_string_equal(PROVIDES(&b), "pkgconfig(abs) = 7\npkgconfig(alias) = 7\n"
	                                  "pkgconfig(real-1) = 7\n");
	assert_string_equal(REQUIRES(&b), "/usr/bin/pkg-config\n");
	br_free(&b);

	br_init(&b);
	br_define(&b, "__pkgconfig_path ^/opt/pc/.*\\\\.pc$");
	br_text(&b, "/opt/pc/o.pc", 0644, "Name: o\nVersion: 1\nDescription: d\n");
	br_text(&b, "/usr/lib64/pkgconfig/x.pc", 0644, "Name: o\nVersion: 1\nDescription: d\n");
	br_ok(&b);
	assert_string_equal(PROVIDES(&b), "pkgconfig(o) = 1\n");
	br_free(&b);
}

/* rpm drops an unversioned require when a file of the same color has it versioned. */
KILN_TEST(autodeps_unversioned_requires_yield_to_versioned)
{
	struct br b;

	br_init(&b);
	br_text(&b, "/usr/lib64/pkgconfig/a.pc", 0644,
	        "Name: a\nVersion: 1\nDescription: d\nRequires: glib-2.0, baz\n");
	br_text(&b, "/usr/lib64/pkgconfig/b.pc", 0644,
	        "Name: b\nVersion: 1\nDescription: d\nRequires: glib-2.0 >= 2.50 glib-2.0 < 3\n");
	br_ok(&b);
	assert_string_equal(REQUIRES(&b), "/usr/bin/pkg-config\npkgconfig(baz)\n"
	                                  "pkgconfig(glib-2.0) < 3\npkgconfig(glib-2.0) >= 2.50\n");
	br_free(&b);
}

static void pc_error(const char *requires, const char *msg)
{
	char text[512];
	struct br b;

	snprintf(text, sizeof(text), "Name: a\nVersion: 1\nDescription: d\n%s\n", requires);
	br_init(&b);
	br_text(&b, "/usr/lib64/pkgconfig/e.pc", 0644, text);
	assert_int_equal(br_run(&b), KILN_ESYNTAX);
	assert_string_equal(b.err.msg, msg);
	br_free(&b);
}

KILN_TEST(autodeps_pkgconfig_versions_rpm_refuses)
{
	pc_error("Requires: foo >= 1.0@x", "/usr/lib64/pkgconfig/e.pc: Illegal char '@' (0x40) "
	                                   "in: 1.0@x");
	pc_error("Requires: foo >= 1..2",
	         "/usr/lib64/pkgconfig/e.pc: Illegal sequence \"..\" in: 1..2");
	pc_error("Requires: foo = 1:2:3", "/usr/lib64/pkgconfig/e.pc: Invalid version (double "
	                                  "separator ':'): 1:2:3: pkgconfig(foo) = 1:2:3");
	pc_error("Requires: foo = a:2", "/usr/lib64/pkgconfig/e.pc: Invalid version (epoch must "
	                                "be unsigned integer): a:2: pkgconfig(foo) = a:2");
	pc_error("Requires: foo != 1.0", "/usr/lib64/pkgconfig/e.pc: Dependency tokens must begin "
	                                 "with alpha-numeric, '_' or '/': != 1.0");
	pc_error("Requires: foo >=1, bar", "/usr/lib64/pkgconfig/e.pc: Version required: "
	                                   "pkgconfig(foo) >= ,");
	pc_error("Provides: w == 4", "/usr/lib64/pkgconfig/e.pc: No rich dependencies allowed for "
	                             "this type: (any) 4");
}

KILN_TEST(autodeps_pkgconfig_versions_rpm_warns_about)
{
	struct br b;

	br_init(&b);
	br_define(&b, "_wrong_version_format_terminate_build 0");
	br_text(&b, "/usr/lib64/pkgconfig/w.pc", 0644,
	        "Name: a\nVersion: 1-2-3\nDescription: d\nRequires: w == 4, m = %{x}\n");
	br_ok(&b);
	assert_string_equal(PROVIDES(&b), "pkgconfig(w) = 1-2-3\n");
	/* "(any)" reads as a rich dependency and the version after it as a name */
	assert_string_equal(REQUIRES(&b), "(any)\n/usr/bin/pkg-config\n4\npkgconfig(m) = %{x}\n"
	                                  "pkgconfig(w)\n");
	assert_non_null(strstr(b.log, "warning: /usr/lib64/pkgconfig/w.pc: Invalid version "
	                              "(double separator '-'): 1-2-3: pkgconfig(w) = 1-2-3\n"));
	assert_non_null(strstr(b.log, "warning: /usr/lib64/pkgconfig/w.pc: Possible unexpanded "
	                              "macro in: %{x}\n"));
	br_free(&b);
}

/* ---------------------------------------------------------------------------------------- */
/* Filters and switches */

static void filtered_tree(struct br *b)
{
	br_copy(b, "/usr/lib64/libfoo.so.1", 0755, CORPUS "libfoo-x86_64.so");
	br_text(b, "/usr/lib64/pkgconfig/foo.pc", 0644, PC_FOO);
	br_text(b, "/usr/share/doc/x/run", 0755, "#!/bin/doc\n");
	br_text(b, "/usr/bin/s", 0755, "#!/bin/sh\n");
}

KILN_TEST(autodeps_excludes)
{
	struct br b;

	br_init(&b);
	/* the regex sees "NAME OP VERSION"; macro expansion eats one level of backslashes */
	br_define(&b, "__requires_exclude ^(libc|pkgconfig\\\\(glib-2.0\\\\) >= 2)");
	br_define(&b, "__provides_exclude \\\\(FOO_");
	br_define(&b, "__requires_exclude_from ^/usr/bin/");
	br_define(&b, "__global_requires_exclude_from ^/usr/share/doc");
	br_define(&b, "__global_provides_exclude_from ^/usr/lib64/pkgconfig/");
	filtered_tree(&b);
	br_ok(&b);
	assert_string_equal(PROVIDES(&b), "libfoo.so.1()(64bit)\n");
	assert_string_equal(REQUIRES(&b), "/usr/bin/pkg-config\npkgconfig(gobject-2.0)\n"
	                                  "pkgconfig(zlib)\nrtld(GNU_HASH)\n");
	br_free(&b);
}

KILN_TEST(autodeps_exclude_paths_and_bad_regex)
{
	struct br b;

	br_init(&b);
	br_define(&b, "__elf_exclude_path ^/usr/lib64/");
	br_define(&b, "__script_exclude_path ^/usr/share");
	br_define(&b, "__pkgconfig_exclude_path foo");
	br_define(&b, "__provides_exclude (unclosed");
	filtered_tree(&b);
	br_ok(&b);
	assert_string_equal(PROVIDES(&b), "");
	assert_string_equal(REQUIRES(&b), "/bin/sh\n");
	assert_non_null(strstr(b.log, "warning: Ignoring invalid regex (unclosed\n"));
	br_free(&b);
}

KILN_TEST(autodeps_autoreq_autoprov_off)
{
	struct br b;

	br_init(&b);
	b.opts.autoreq = false;
	filtered_tree(&b);
	br_ok(&b);
	assert_string_equal(REQUIRES(&b), "");
	assert_int_equal(b.prov.n, 5);
	br_free(&b);

	br_init(&b);
	b.opts.autoprov = false;
	filtered_tree(&b);
	br_ok(&b);
	assert_string_equal(PROVIDES(&b), "");
	assert_int_equal(b.req.n, 9);
	br_free(&b);
}

KILN_TEST(autodeps_config_and_owners)
{
	struct br b;
	struct pack_file *f;

	br_init(&b);
	b.opts.name = "hello";
	b.opts.evr = "1:1.0-1";
	f = br_text(&b, "/etc/hello.conf", 0644, "x\n");
	f->flags = RPMTAG_FILE_CONFIG;
	f->user = "daemon";
	f->group = "root";
	f = br_entry(&b, "/var/lib/hello", S_IFDIR | 0755);
	f->user = "root";
	f->group = "hello";
	br_ok(&b);
	assert_string_equal(set_text(&b.prov, true), "268435464 config(hello) = 1:1.0-1\n");
	/* rpm 4.19+ (pinned: 4.18 has neither): config() is required too, and non-root owners
	 * are required as user() and group() for %pre and %postun */
	assert_string_equal(set_text(&b.req, true), "268435464 config(hello) = 1:1.0-1\n"
	                                            "4608 group(hello)\n4608 user(daemon)\n");
	br_free(&b);

	br_init(&b);
	br_define(&b, "_use_weak_usergroup_deps 1");
	br_entry(&b, "/var/lib/x", S_IFDIR | 0755)->user = "u";
	br_ok(&b);
	assert_string_equal(REQUIRES(&b), "");
	assert_string_equal(set_text(&b.rec, false), "user(u)\n");
	br_free(&b);
}

KILN_TEST(autodeps_missing_file_and_arguments)
{
	struct br b;

	br_init(&b);
	br_entry(&b, "/usr/bin/gone", S_IFREG | 0755);
	assert_int_equal(br_run(&b), KILN_EIO);
	assert_non_null(strstr(b.err.msg, "/usr/bin/gone: cannot open"));
	kiln_err_clear(&b.err);
	assert_int_equal(worker_autodeps_collect(NULL, 0, NULL, &b.prov, &b.req, NULL, &b.err),
	                 KILN_EINVAL);
	br_free(&b);
}
