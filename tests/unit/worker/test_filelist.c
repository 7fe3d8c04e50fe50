/*
 * test_filelist.c - worker/filelist.c: %files applied to real buildroots made in a temp
 * directory, every directive and every error (expected values as Debian's rpmbuild 4.18
 * records them, or rpm 4.20's where the versions differ; see the comments).
 */
#include "util/util.h"

#include <fcntl.h>
#include <sys/stat.h>
#include <unistd.h>

#include "macro/macro.h"
#include "spec/spec.h"
#include "pack/pack.h"
#include "worker/worker.h"
#include "worker/filelist_int.h"
#include "tests/unit/harness.h"
#include "tests/unit/spec/spec_test.h"

struct ft {
	struct pt pt;
	char root[KILN_LIMIT_PATH];  /* the buildroot */
	char build[KILN_LIMIT_PATH]; /* the build subdirectory */
	struct worker_filelist fl;
	struct worker_filelist_opts o;
	struct kiln_err err;
	kiln_rc rc;
};

static void ft_init(struct ft *t)
{
	static int seq;
	const char *tmp = kiln_test_tmpdir();
	struct kiln_err err = KILN_ERR_INIT;

	memset(t, 0, sizeof(*t));
	pt_init(&t->pt);
	seq++;
	snprintf(t->root, sizeof(t->root), "%s/fl%d/BUILDROOT", tmp, seq);
	snprintf(t->build, sizeof(t->build), "%s/fl%d/BUILD", tmp, seq);
	assert_ok(util_mkdir_p(t->root, 0755, &err), &err);
	assert_ok(util_mkdir_p(t->build, 0755, &err), &err);
	pt_define(&t->pt, "__docdir_path %{_datadir}/doc:%{_datadir}/man");
	pt_define(&t->pt, "_missing_doc_files_terminate_build 1");
	t->o.buildroot = t->root;
	t->o.builddir = t->build;
	t->o.macros = t->pt.ctx;
	t->o.now = 1700000000;
}

static void ft_release(struct ft *t)
{
	worker_filelist_release(&t->fl);
	pt_release(&t->pt);
}

/* Create dir/rel (parents too) with content and mode. */
static void mkfile_in(const char *dir, const char *rel, const char *content, mode_t mode)
{
	char path[KILN_LIMIT_PATH * 2];
	struct kiln_buf d = KILN_BUF_INIT(KILN_LIMIT_PATH * 2);
	struct kiln_err err = KILN_ERR_INIT;
	int fd;

	snprintf(path, sizeof(path), "%s%s", dir, rel);
	util_path_dirname(path, &d);
	assert_ok(util_mkdir_p(d.ptr, 0755, &err), &err);
	kiln_buf_release(&d);
	fd = open(path, O_WRONLY | O_CREAT | O_TRUNC | O_CLOEXEC, 0600);
	assert_true(fd >= 0);
	assert_ok(util_write_all(fd, content, strlen(content), &err), &err);
	assert_int_equal(fchmod(fd, mode), 0);
	close(fd);
}

static void mkfile(struct ft *t, const char *rel, const char *content, mode_t mode)
{
	mkfile_in(t->root, rel, content, mode);
}

static void mkdir_at(const char *dir, const char *rel)
{
	char path[KILN_LIMIT_PATH * 2];
	struct kiln_err err = KILN_ERR_INIT;

	snprintf(path, sizeof(path), "%s%s", dir, rel);
	assert_ok(util_mkdir_p(path, 0755, &err), &err);
}

static void mklink(struct ft *t, const char *target, const char *rel)
{
	char path[KILN_LIMIT_PATH * 2];

	snprintf(path, sizeof(path), "%s%s", t->root, rel);
	assert_int_equal(symlink(target, path), 0);
}

/* Parse a spec whose main package has the given %files body and collect it. */
static kiln_rc ft_collect(struct ft *t, const char *files)
{
	char text[8192];

	snprintf(text, sizeof(text), "%s%%files\n%s", PT_MAIN, files);
	worker_filelist_release(&t->fl);
	kiln_err_clear(&t->err);
	assert_ok(pt_run(&t->pt, text, 0), &t->pt.err);
	t->pt.log[0] = '\0';
	t->pt.loglen = 0;
	t->rc =
	    worker_filelist_collect(&t->fl, t->pt.spec, t->pt.spec->packages[0], &t->o, &t->err);
	return t->rc;
}

static void ft_ok(struct ft *t, const char *files)
{
	assert_ok(ft_collect(t, files), &t->err);
}

/* Collect must fail with code and exactly msg ("%s" in msg stands for the buildroot). */
static void ft_fail(struct ft *t, const char *files, kiln_rc code, int line, const char *msg)
{
	char want[KILN_ERR_MSG_MAX];
	const char *p;
	size_t n = 0;

	/* msg: "%s" is the buildroot, "%%" a percent sign. */
	for (p = msg; *p && n + 1 < sizeof(want); p++) {
		if (p[0] == '%' && p[1] == 's') {
			n += (size_t)snprintf(want + n, sizeof(want) - n, "%s", t->root);
			p++;
		} else {
			want[n++] = *p;
			p += p[0] == '%' && p[1] == '%';
		}
	}
	want[n < sizeof(want) ? n : sizeof(want) - 1] = '\0';
	ft_collect(t, files);
	if (t->rc != code || strcmp(t->err.msg, want))
		print_error("got %d '%s'\nwant %d '%s'\n", t->rc, t->err.msg, code, want);
	assert_int_equal(t->rc, code);
	assert_string_equal(t->err.msg, want);
	if (line)
		assert_int_equal(t->err.line, line);
}

static const struct pack_file *ft_get(const struct ft *t, const char *path)
{
	size_t i;

	for (i = 0; i < t->fl.n; i++) {
		if (!strcmp(t->fl.files[i].path, path))
			return &t->fl.files[i];
	}
	return NULL;
}

static const struct pack_file *ft_must(const struct ft *t, const char *path)
{
	const struct pack_file *f = ft_get(t, path);

	if (!f)
		print_error("%s is not in the list\n", path);
	assert_non_null(f);
	return f;
}

static bool ft_logged(const struct ft *t, const char *s)
{
	return strstr(t->pt.log, s) != NULL;
}

/* ---------------------------------------------------------------------------------------- */

KILN_TEST(filelist_plain_dir_recursion_and_dir)
{
	struct ft t;
	const struct pack_file *f;

	ft_init(&t);
	mkfile(&t, "/usr/bin/a", "#!/bin/sh\necho a\n", 0755);
	mkfile(&t, "/usr/share/t/sub/x", "x\n", 0644);
	mkdir_at(t.root, "/var/lib/t/inner");
	ft_ok(&t, "/usr/bin/a\n/usr/share/t\n%dir /var/lib/t\n");
	assert_int_equal(t.fl.n, 5);
	assert_string_equal(t.fl.files[0].path, "/usr/bin/a");
	assert_string_equal(t.fl.files[1].path, "/usr/share/t");
	assert_string_equal(t.fl.files[2].path, "/usr/share/t/sub");
	assert_string_equal(t.fl.files[3].path, "/usr/share/t/sub/x");
	assert_string_equal(t.fl.files[4].path, "/var/lib/t");
	assert_null(ft_get(&t, "/var/lib/t/inner"));
	f = ft_must(&t, "/usr/bin/a");
	assert_int_equal(f->mode, S_IFREG | 0755);
	assert_string_equal(f->user, "root");
	assert_string_equal(f->group, "root");
	assert_int_equal(f->verify, (uint32_t)RPMTAG_VERIFY_ALL);
	assert_string_equal(f->fclass, "POSIX shell script, ASCII text executable");
	assert_int_equal(ft_must(&t, "/usr/share/t/sub")->size, 0);
	assert_string_equal(ft_must(&t, "/usr/share/t/sub")->fclass, "directory");
	assert_non_null(f->src);
	assert_int_equal(t.fl.nclaimed, 2);
	ft_release(&t);
}

KILN_TEST(filelist_globs_braces_sorted_and_no_match)
{
	struct ft t;

	ft_init(&t);
	mkfile(&t, "/usr/lib/libb.so", "", 0644);
	mkfile(&t, "/usr/lib/liba.so", "", 0644);
	mkfile(&t, "/usr/lib/.hidden.so", "", 0644);
	mkfile(&t, "/usr/lib/x.a", "", 0644);
	mkfile(&t, "/usr/lib/y.la", "", 0644);
	mkfile(&t, "/usr/lib/st*r", "", 0644);
	ft_ok(&t, "/usr/lib/*.so\n/usr/lib/{x.a,y.la}\n\"/usr/lib/st*r\"\n");
	assert_int_equal(t.fl.n, 5);
	assert_string_equal(t.fl.files[0].path, "/usr/lib/liba.so");
	assert_string_equal(t.fl.files[1].path, "/usr/lib/libb.so");
	assert_null(ft_get(&t, "/usr/lib/.hidden.so"));
	assert_string_equal(ft_must(&t, "/usr/lib/st*r")->fclass, "empty");
	/* rpm tries a glob that matches nothing as a plain name: "File not found". */
	ft_fail(&t, "/usr/lib/*.nomatch\n", KILN_ENOTFOUND, 9,
	        "File not found: %s/usr/lib/*.nomatch");
	ft_release(&t);
}

KILN_TEST(filelist_not_found_and_every_entry_reported)
{
	struct ft t;

	ft_init(&t);
	mkfile(&t, "/usr/bin/a", "", 0755);
	ft_fail(&t, "/usr/bin/a\n/usr/bin/nope\n/usr/bin/nope2\n", KILN_ENOTFOUND, 10,
	        "File not found: %s/usr/bin/nope");
	assert_string_equal(t.err.input, "t.spec");
	assert_true(ft_logged(&t, "error: File not found: "));
	assert_true(ft_logged(&t, "/usr/bin/nope2"));
	ft_fail(&t, "%dir /usr/nodir\n", KILN_ENOTFOUND, 0, "Directory not found: %s/usr/nodir");
	ft_fail(&t, "%dir /usr/bin/a\n", KILN_EINVAL, 0, "Not a directory: %s/usr/bin/a");
	ft_fail(&t, "/usr/bin/a /usr/bin/b\n", KILN_ESYNTAX, 0,
	        "More than one file on a line: /usr/bin/b");
	ft_fail(&t, "%attr(abc,-,-) /usr/bin/a\n", KILN_ESYNTAX, 0,
	        "Bad mode spec: %%attr(abc,-,-)");
	ft_release(&t);
}

KILN_TEST(filelist_illegal_character)
{
	struct ft t;

	ft_init(&t);
	ft_fail(&t, "\"/usr/bin/a\tb\"\n", KILN_EINVAL, 0,
	        "Illegal character (0x9) in filename: %s/usr/bin/a\tb");
	ft_release(&t);
}

KILN_TEST(filelist_exclude_subtree_still_claimed)
{
	struct ft t;
	const struct worker_filelist *lists[1];
	struct kiln_buf report = KILN_BUF_INIT(65536);

	ft_init(&t);
	mkfile(&t, "/usr/share/t/keep", "k\n", 0644);
	mkfile(&t, "/usr/share/t/ex/gone", "g\n", 0644);
	mkfile(&t, "/usr/lib/x.la", "l\n", 0644);
	ft_ok(&t, "/usr/share/t\n%exclude /usr/share/t/ex\n%exclude /usr/lib/x.la\n"
	          "%exclude /usr/lib/missing\n");
	assert_non_null(ft_get(&t, "/usr/share/t/keep"));
	assert_null(ft_get(&t, "/usr/share/t/ex"));
	assert_null(ft_get(&t, "/usr/share/t/ex/gone"));
	assert_null(ft_get(&t, "/usr/lib/x.la"));
	/* An excluded file that does not exist is only a warning, and no "listed twice". */
	assert_true(ft_logged(&t, "warning: File not found: "));
	assert_false(ft_logged(&t, "listed twice"));
	lists[0] = &t.fl;
	assert_ok(worker_filelist_check_unpackaged(t.root, lists, 1, t.pt.ctx, &report, &t.err),
	          &t.err);
	assert_int_equal(report.len, 0);
	kiln_buf_release(&report);
	ft_release(&t);
}

KILN_TEST(filelist_ghost_and_dev)
{
	struct ft t;
	const struct pack_file *f;
	uint32_t vbits = RPMTAG_VERIFY_FILEDIGEST | RPMTAG_VERIFY_FILESIZE | RPMTAG_VERIFY_LINKTO |
	                 RPMTAG_VERIFY_MTIME;

	ft_init(&t);
	mkfile(&t, "/var/lib/t/exists", "gg\n", 0640);
	ft_ok(&t, "%ghost /var/lib/t/exists\n%ghost /var/lib/t/none\n"
	          "%ghost %attr(0600,-,-) /var/lib/t/none2\n%ghost %dir /var/run/t\n"
	          "%dev(c,1,3) /dev/null\n%dev(b,8,1) %attr(0660,root,disk) /dev/sda1\n");
	f = ft_must(&t, "/var/lib/t/exists");
	assert_int_equal(f->flags, RPMTAG_FILE_GHOST);
	assert_int_equal(f->size, 3);
	assert_null(f->src);
	assert_int_equal(f->verify, (uint32_t)RPMTAG_VERIFY_ALL & ~vbits);
	assert_string_equal(f->fclass, "ASCII text");
	f = ft_must(&t, "/var/lib/t/none");
	assert_int_equal(f->mode, S_IFREG);
	assert_int_equal(f->mtime, 1700000000);
	assert_string_equal(f->fclass, "");
	assert_int_equal(ft_must(&t, "/var/lib/t/none2")->mode, S_IFREG | 0600);
	assert_int_equal(ft_must(&t, "/var/run/t")->mode, S_IFDIR);
	f = ft_must(&t, "/dev/null");
	assert_int_equal(f->mode, S_IFCHR);
	assert_int_equal(f->rdev, (1 << 8) | 3);
	/* rpm 4.20's class table has no token for devices (4.18 kept "character special"). */
	assert_string_equal(f->fclass, "");
	f = ft_must(&t, "/dev/sda1");
	assert_int_equal(f->mode, S_IFBLK | 0660);
	assert_string_equal(f->group, "disk");
	assert_int_equal(f->rdev, (8 << 8) | 1);
	ft_release(&t);
}

KILN_TEST(filelist_config_doc_license_flags_docdir)
{
	struct ft t;

	ft_init(&t);
	mkfile(&t, "/etc/t.conf", "c\n", 0644);
	mkfile(&t, "/etc/t.d/x.conf", "c\n", 0644);
	mkfile(&t, "/usr/share/doc/t/README", "r\n", 0644);
	mkfile(&t, "/usr/share/t/api/index", "i\n", 0644);
	mkfile(&t, "/usr/share/t/LICENSE", "l\n", 0644);
	mkfile(&t, "/usr/share/t/READ", "l\n", 0644);
	mkfile(&t, "/usr/share/t/art", "l\n", 0644);
	ft_ok(&t, "%config(noreplace) /etc/t.conf\n%config(missingok) /etc/t.d\n"
	          "/usr/share/doc/t\n%docdir /usr/share/t/api\n/usr/share/t/api\n"
	          "%license /usr/share/t/LICENSE\n%readme /usr/share/t/READ\n"
	          "%artifact /usr/share/t/art\n");
	assert_int_equal(ft_must(&t, "/etc/t.conf")->flags,
	                 RPMTAG_FILE_CONFIG | RPMTAG_FILE_NOREPLACE);
	assert_int_equal(ft_must(&t, "/etc/t.d/x.conf")->flags,
	                 RPMTAG_FILE_CONFIG | RPMTAG_FILE_MISSINGOK);
	/* Directories never carry %config, %doc or %license. */
	assert_int_equal(ft_must(&t, "/etc/t.d")->flags, RPMTAG_FILE_MISSINGOK);
	assert_int_equal(ft_must(&t, "/usr/share/doc/t/README")->flags, RPMTAG_FILE_DOC);
	assert_int_equal(ft_must(&t, "/usr/share/doc/t")->flags, 0);
	assert_int_equal(ft_must(&t, "/usr/share/t/api/index")->flags, RPMTAG_FILE_DOC);
	assert_int_equal(ft_must(&t, "/usr/share/t/LICENSE")->flags, RPMTAG_FILE_LICENSE);
	assert_int_equal(ft_must(&t, "/usr/share/t/READ")->flags, RPMTAG_FILE_README);
	assert_int_equal(ft_must(&t, "/usr/share/t/art")->flags, RPMTAG_FILE_ARTIFACT);
	ft_release(&t);
}

KILN_TEST(filelist_lang_caps_verify)
{
	struct ft t;
	const struct pack_file *f;

	ft_init(&t);
	mkfile(&t, "/usr/share/locale/de/x.mo", "m", 0644);
	mkfile(&t, "/usr/bin/ping", "p", 0755);
	ft_ok(&t, "%lang(fr,de) %verify(not md5 mtime) /usr/share/locale/de/x.mo\n"
	          "%caps(cap_net_raw=ep) /usr/bin/ping\n");
	f = ft_must(&t, "/usr/share/locale/de/x.mo");
	assert_string_equal(f->lang, "de|fr");
	assert_int_equal(f->verify, ~(uint32_t)(RPMTAG_VERIFY_FILEDIGEST | RPMTAG_VERIFY_MTIME));
	assert_null(f->caps);
	assert_string_equal(ft_must(&t, "/usr/bin/ping")->caps, "cap_net_raw=ep");
	ft_fail(&t, "%lang(x) /usr/bin/ping\n", KILN_ESYNTAX, 0,
	        "Unusual locale length: \"x\" in %%lang(x)");
	ft_ok(&t, "%lang(de,de) /usr/bin/ping\n");
	assert_true(ft_logged(&t, "warning: Duplicate locale de in %lang(de,de)"));
	ft_release(&t);
}

KILN_TEST(filelist_attr_defattr_owners)
{
	struct ft t;
	const struct pack_file *f;

	ft_init(&t);
	mkfile(&t, "/usr/share/d/sub/f", "f", 0644);
	mkfile(&t, "/usr/bin/x", "x", 0755);
	mklink(&t, "x", "/usr/bin/lx");
	ft_ok(&t, "%defattr(0640,bin,daemon,0750)\n/usr/bin/x\n%attr(0600,-,-) /usr/share/d\n"
	          "%attr(0644,-,-) /usr/bin/lx\n");
	f = ft_must(&t, "/usr/bin/x");
	assert_int_equal(f->mode, S_IFREG | 0640);
	assert_string_equal(f->user, "bin");
	assert_string_equal(f->group, "daemon");
	/* An explicit %attr mode covers everything below a directory, directories too. */
	assert_int_equal(ft_must(&t, "/usr/share/d/sub")->mode, S_IFDIR | 0600);
	assert_int_equal(ft_must(&t, "/usr/share/d/sub/f")->mode, S_IFREG | 0600);
	assert_int_equal(ft_must(&t, "/usr/bin/lx")->mode, S_IFLNK | 0777);
	assert_true(ft_logged(&t, "Explicit %attr() mode not applicable to symlink"));
	ft_ok(&t, "%defattr(-,-,-,0700)\n/usr/share/d\n");
	assert_int_equal(ft_must(&t, "/usr/share/d/sub")->mode, S_IFDIR | 0700);
	assert_int_equal(ft_must(&t, "/usr/share/d/sub/f")->mode, S_IFREG | 0644);
	ft_release(&t);
}

KILN_TEST(filelist_owner_from_disk_or_root)
{
	struct ft t;
	char path[KILN_LIMIT_PATH * 2];

	ft_init(&t);
	mkfile(&t, "/usr/bin/x", "x", 0755);
	snprintf(path, sizeof(path), "%s/usr/bin/x", t.root);
	if (getuid() == 0)
		assert_int_equal(chown(path, 1, 1), 0); /* daemon:daemon on Debian */
	/* rpm 4.20 never looks at the owner on disk (rpm PR #2797): root. */
	ft_ok(&t, "/usr/bin/x\n");
	assert_string_equal(ft_must(&t, "/usr/bin/x")->user, "root");
	t.o.owner_from_disk = true;
	ft_ok(&t, "/usr/bin/x\n");
	if (getuid() == 0) {
		assert_string_equal(ft_must(&t, "/usr/bin/x")->user, "daemon");
		assert_string_equal(ft_must(&t, "/usr/bin/x")->group, "daemon");
	}
	ft_release(&t);
}

KILN_TEST(filelist_symlinks)
{
	struct ft t;
	char msg[KILN_LIMIT_PATH * 2];

	ft_init(&t);
	mkfile(&t, "/usr/share/t/data", "d", 0644);
	mklink(&t, "data", "/usr/share/t/rel");
	mklink(&t, "/etc/passwd", "/usr/share/t/abs");
	ft_ok(&t, "/usr/share/t\n");
	assert_string_equal(ft_must(&t, "/usr/share/t/rel")->link, "data");
	assert_int_equal(ft_must(&t, "/usr/share/t/rel")->mode, S_IFLNK | 0777);
	assert_string_equal(ft_must(&t, "/usr/share/t/abs")->link, "/etc/passwd");
	/* rpm 4.20's class table drops "symbolic link to ..." (4.18 kept it). */
	assert_string_equal(ft_must(&t, "/usr/share/t/rel")->fclass, "");
	assert_true(ft_logged(&t, "warning: absolute symlink: /usr/share/t/abs -> /etc/passwd"));
	snprintf(msg, sizeof(msg), "%s/usr/share/t/data", t.root);
	mklink(&t, msg, "/usr/share/t/br");
	ft_fail(&t, "/usr/share/t\n", KILN_EINVAL, 0,
	        "Symlink points to BuildRoot: /usr/share/t/br -> %s/usr/share/t/data");
	ft_release(&t);
}

KILN_TEST(filelist_hardlinks_one_set)
{
	struct ft t;
	char a[KILN_LIMIT_PATH * 2], b[KILN_LIMIT_PATH * 2];

	ft_init(&t);
	mkfile(&t, "/usr/share/t/a", "same\n", 0644);
	mkfile(&t, "/usr/share/t/other", "x\n", 0644);
	snprintf(a, sizeof(a), "%s/usr/share/t/a", t.root);
	snprintf(b, sizeof(b), "%s/usr/share/t/b", t.root);
	assert_int_equal(link(a, b), 0);
	ft_ok(&t, "/usr/share/t\n");
	assert_true(ft_must(&t, "/usr/share/t/a")->hardlink != 0);
	assert_int_equal(ft_must(&t, "/usr/share/t/a")->hardlink,
	                 ft_must(&t, "/usr/share/t/b")->hardlink);
	assert_int_equal(ft_must(&t, "/usr/share/t/other")->hardlink, 0);
	ft_release(&t);
}

/* A minimal ELF header: class 1 or 2, little endian, machine m. */
static void mkelf(struct ft *t, const char *rel, int cls, unsigned m, mode_t mode)
{
	char path[KILN_LIMIT_PATH * 2];
	unsigned char h[64] = {0x7f, 'E', 'L', 'F'};
	int fd;

	h[4] = (unsigned char)cls;
	h[5] = 1;
	h[6] = 1;
	h[16] = 2;
	h[18] = (unsigned char)(m & 0xff);
	h[19] = (unsigned char)(m >> 8);
	snprintf(path, sizeof(path), "%s%s", t->root, rel);
	fd = open(path, O_WRONLY | O_CREAT | O_TRUNC | O_CLOEXEC, mode);
	assert_true(fd >= 0);
	assert_int_equal(write(fd, h, sizeof(h)), (ssize_t)sizeof(h));
	assert_int_equal(fchmod(fd, mode), 0);
	close(fd);
}

KILN_TEST(filelist_elf_colors)
{
	struct ft t;

	ft_init(&t);
	mkdir_at(t.root, "/usr/bin");
	mkelf(&t, "/usr/bin/e64", 2, 62, 0755);
	mkelf(&t, "/usr/bin/e32", 1, 3, 0755);
	mkelf(&t, "/usr/bin/noexec", 2, 62, 0644);
	mkelf(&t, "/usr/bin/bpf", 2, 247, 0755);
	mkelf(&t, "/usr/bin/attr", 2, 62, 0755);
	ft_ok(&t, "/usr/bin/e64\n/usr/bin/e32\n/usr/bin/noexec\n/usr/bin/bpf\n"
	          "%attr(0644,-,-) /usr/bin/attr\n");
	assert_int_equal(ft_must(&t, "/usr/bin/e64")->color, 2);
	assert_int_equal(ft_must(&t, "/usr/bin/e32")->color, 1);
	/* Colours come from executable files only, with the packaged mode (rpmfc.c). */
	assert_int_equal(ft_must(&t, "/usr/bin/noexec")->color, 0);
	assert_int_equal(ft_must(&t, "/usr/bin/attr")->color, 0);
	assert_int_equal(ft_must(&t, "/usr/bin/bpf")->color, 0);
	assert_non_null(strstr(ft_must(&t, "/usr/bin/e64")->fclass, "ELF 64-bit LSB"));
	assert_non_null(strstr(ft_must(&t, "/usr/bin/e32")->fclass, "ELF 32-bit LSB"));
	ft_release(&t);
}

KILN_TEST(filelist_class_filter_and_skipped_extensions)
{
	struct ft t;
	char bin[200];
	size_t i;

	ft_init(&t);
	for (i = 0; i < sizeof(bin) - 1; i++)
		bin[i] = (char)(1 + (i * 37) % 250);
	bin[sizeof(bin) - 1] = '\0';
	mkfile(&t, "/usr/share/t/data.bin", bin, 0644);
	mkfile(&t, "/usr/share/t/x.c", "int x;\n", 0644);
	mkfile(&t, "/usr/share/t/x.pc", "prefix=/usr\n", 0644);
	mkfile(&t, "/usr/share/t/x.html", "hi\n", 0644);
	ft_ok(&t, "/usr/share/t\n");
	/* "data" is no token of the class table: stored as "". */
	assert_string_equal(ft_must(&t, "/usr/share/t/data.bin")->fclass, "");
	assert_string_equal(ft_must(&t, "/usr/share/t/x.c")->fclass, "");
	assert_string_equal(ft_must(&t, "/usr/share/t/x.pc")->fclass, "pkgconfig file");
	/* rpm >= 4.19 names .html files without asking libmagic. */
	assert_string_equal(ft_must(&t, "/usr/share/t/x.html")->fclass, "HTML document");
	/* A v4 list asks libmagic for descriptions only, a v6 one for MIME types only. */
	assert_string_equal(ft_must(&t, "/usr/share/t/data.bin")->mime, "");
	t.o.rpmformat = 6;
	ft_ok(&t, "/usr/share/t\n");
	assert_string_equal(ft_must(&t, "/usr/share/t/x.c")->mime, "text/x-c");
	assert_string_equal(ft_must(&t, "/usr/share/t")->mime, "inode/directory");
	assert_string_equal(ft_must(&t, "/usr/share/t/x.c")->fclass, "");
	assert_true(worker_fileclass_kept("ASCII text"));
	assert_false(worker_fileclass_kept("symbolic link to `x'"));
	ft_release(&t);
}

/* defer_classify leaves libmagic and the ELF colours to worker_filelist_classify(), which
 * fills exactly what collection fills without it (the package writer calls it while the
 * payload is compressed). */
KILN_TEST(filelist_deferred_classification_same_result)
{
	struct ft t;
	struct worker_filelist eager;
	size_t i;

	ft_init(&t);
	mkdir_at(t.root, "/usr/bin");
	mkelf(&t, "/usr/bin/e64", 2, 62, 0755);
	mkfile(&t, "/usr/share/t/x.sh", "#!/bin/sh\necho hi\n", 0755);
	mkfile(&t, "/usr/share/t/x.pc", "prefix=/usr\n", 0644);
	mklink(&t, "x.sh", "/usr/share/t/rel");
	ft_ok(&t, "/usr/bin/e64\n/usr/share/t\n");
	assert_true(t.fl.classified);
	eager = t.fl;
	memset(&t.fl, 0, sizeof(t.fl));
	t.o.defer_classify = true;
	ft_ok(&t, "/usr/bin/e64\n/usr/share/t\n");
	assert_false(t.fl.classified);
	assert_null(ft_must(&t, "/usr/share/t/x.sh")->fclass);
	assert_int_equal(ft_must(&t, "/usr/bin/e64")->color, 0);
	assert_ok(worker_filelist_classify(&t.fl, 4, &t.err), &t.err);
	assert_true(t.fl.classified);
	assert_int_equal(t.fl.n, eager.n);
	for (i = 0; i < eager.n; i++) {
		assert_string_equal(t.fl.files[i].path, eager.files[i].path);
		assert_string_equal(t.fl.files[i].fclass, eager.files[i].fclass);
		assert_string_equal(t.fl.files[i].mime, eager.files[i].mime);
		assert_int_equal(t.fl.files[i].color, eager.files[i].color);
	}
	assert_int_equal(ft_must(&t, "/usr/bin/e64")->color, 2);
	assert_string_equal(ft_must(&t, "/usr/share/t/x.pc")->fclass, "pkgconfig file");
	/* A second call keeps what the first filled. */
	assert_ok(worker_filelist_classify(&t.fl, 4, &t.err), &t.err);
	assert_string_equal(ft_must(&t, "/usr/share/t/x.pc")->fclass, "pkgconfig file");
	worker_filelist_release(&eager);
	ft_release(&t);
}

KILN_TEST(filelist_mtime_clamp)
{
	struct ft t;
	char path[KILN_LIMIT_PATH * 2];
	struct timespec ts[2] = {{.tv_sec = 1800000000}, {.tv_sec = 1800000000}};

	ft_init(&t);
	mkfile(&t, "/usr/bin/new", "n", 0755);
	mkfile(&t, "/usr/bin/old", "o", 0755);
	snprintf(path, sizeof(path), "%s/usr/bin/new", t.root);
	assert_int_equal(utimensat(AT_FDCWD, path, ts, 0), 0);
	ts[0].tv_sec = ts[1].tv_sec = 1000000000;
	snprintf(path, sizeof(path), "%s/usr/bin/old", t.root);
	assert_int_equal(utimensat(AT_FDCWD, path, ts, 0), 0);
	ft_ok(&t, "/usr/bin/new\n/usr/bin/old\n");
	assert_int_equal(ft_must(&t, "/usr/bin/new")->mtime, 1800000000);
	t.o.clamp_mtime = true;
	t.o.clamp_to = 1704067200;
	ft_ok(&t, "/usr/bin/new\n/usr/bin/old\n");
	assert_int_equal(ft_must(&t, "/usr/bin/new")->mtime, 1704067200);
	assert_int_equal(ft_must(&t, "/usr/bin/old")->mtime, 1000000000);
	ft_release(&t);
}

KILN_TEST(filelist_listed_twice)
{
	struct ft t;

	ft_init(&t);
	mkfile(&t, "/usr/share/t/a", "a", 0644);
	ft_ok(&t, "/usr/share/t\n%attr(0600,bin,-) %config /usr/share/t/a\n");
	assert_true(ft_logged(&t, "warning: File listed twice: /usr/share/t/a"));
	/* The explicit %attr wins, the flags are merged. */
	assert_int_equal(ft_must(&t, "/usr/share/t/a")->mode, S_IFREG | 0600);
	assert_string_equal(ft_must(&t, "/usr/share/t/a")->user, "bin");
	assert_int_equal(ft_must(&t, "/usr/share/t/a")->flags, RPMTAG_FILE_CONFIG);
	pt_define(&t.pt, "_duplicate_files_terminate_build 1");
	ft_fail(&t, "/usr/share/t\n/usr/share/t/a\n", KILN_EEXIST, 0,
	        "File listed twice: /usr/share/t/a");
	ft_release(&t);
}

KILN_TEST(filelist_outside_buildroot_refused)
{
	struct ft t;
	const char *tmp = kiln_test_tmpdir();
	char outside[KILN_LIMIT_PATH * 2];

	ft_init(&t);
	snprintf(outside, sizeof(outside), "%s/outside-%d", tmp, (int)getpid());
	mkdir_at(outside, "");
	mkfile_in(outside, "/secret", "s", 0600);
	mkdir_at(t.root, "/usr");
	mklink(&t, outside, "/usr/lib");
	mklink(&t, "../../..", "/usr/up");
	ft_fail(&t, "/usr/lib/secret\n", KILN_EPRIV, 0,
	        "Path is outside buildroot: %s/usr/lib/secret (a symlink leaves it)");
	assert_int_equal(ft_collect(&t, "/usr/lib/*\n"), KILN_EPRIV);
	assert_non_null(strstr(t.err.msg, "Path is outside buildroot: "));
	ft_fail(&t, "/usr/up/etc/passwd\n", KILN_EPRIV, 0,
	        "Path is outside buildroot: %s/usr/up/etc/passwd (a symlink leaves it)");
	ft_fail(&t, "/usr/../../etc/passwd\n", KILN_EPRIV, 0,
	        "Path is outside buildroot: %s/usr/../../etc/passwd");
	ft_release(&t);
}

KILN_TEST(filelist_symlinked_parent_inside_is_followed)
{
	struct ft t;
	const struct pack_file *f;

	ft_init(&t);
	mkfile(&t, "/usr/lib64/libx.so", "x", 0755);
	mklink(&t, "lib64", "/usr/lib");
	ft_ok(&t, "/usr/lib/libx.so\n/usr/lib/../lib64\n");
	f = ft_must(&t, "/usr/lib/libx.so");
	assert_int_equal(f->mode, S_IFREG | 0755);
	assert_non_null(strstr(f->src, "/usr/lib64/libx.so"));
	assert_non_null(ft_get(&t, "/usr/lib64"));
	assert_true(ft_logged(&t, "File listed twice") == false);
	ft_release(&t);
}

KILN_TEST(filelist_special_doc_and_license)
{
	struct ft t;
	const struct pack_file *f;
	char path[KILN_LIMIT_PATH * 2];
	struct stat st;

	ft_init(&t);
	mkfile_in(t.build, "/README", "r\n", 0644);
	mkfile_in(t.build, "/COPYING", "c\n", 0644);
	mkfile_in(t.build, "/docs/a.txt", "a\n", 0600);
	mkfile_in(t.build, "/NEWS.1", "n\n", 0644);
	mkfile_in(t.build, "/NEWS.2", "n\n", 0644);
	snprintf(path, sizeof(path), "%s/escape", t.build);
	assert_int_equal(symlink("/etc/passwd", path), 0);
	ft_ok(&t, "%doc README docs NEWS.* escape\n%license COPYING\n");
	/* Without %_docdir_fmt rpm names the directory %{NAME}-%{VERSION}. */
	f = ft_must(&t, "/usr/share/doc/t-1");
	assert_int_equal(f->mode, S_IFDIR | 0755);
	assert_int_equal(f->flags, 0);
	assert_int_equal(ft_must(&t, "/usr/share/doc/t-1/README")->flags, RPMTAG_FILE_DOC);
	assert_int_equal(ft_must(&t, "/usr/share/doc/t-1/docs/a.txt")->mode, S_IFREG | 0600);
	assert_non_null(ft_get(&t, "/usr/share/doc/t-1/NEWS.1"));
	assert_non_null(ft_get(&t, "/usr/share/doc/t-1/NEWS.2"));
	/* A symlink is copied as a symlink, never followed out of the build directory. */
	assert_string_equal(ft_must(&t, "/usr/share/doc/t-1/escape")->link, "/etc/passwd");
	assert_int_equal(ft_must(&t, "/usr/share/licenses/t-1/COPYING")->flags,
	                 RPMTAG_FILE_LICENSE);
	snprintf(path, sizeof(path), "%s/usr/share/doc/t-1/README", t.root);
	assert_int_equal(lstat(path, &st), 0);
	pt_define(&t.pt, "_docdir_fmt %%{NAME}");
	ft_ok(&t, "%doc README\n");
	assert_non_null(ft_get(&t, "/usr/share/doc/t/README"));
	ft_release(&t);
}

KILN_TEST(filelist_special_errors)
{
	struct ft t;

	ft_init(&t);
	mkfile_in(t.build, "/README", "r\n", 0644);
	mkfile(&t, "/usr/bin/a", "", 0755);
	ft_fail(&t, "%doc README /usr/bin/a\n", KILN_ESYNTAX, 0,
	        "Can't mix special %%doc with other forms: /usr/bin/a");
	ft_fail(&t, "%doc %config README\n", KILN_ESYNTAX, 0,
	        "Can't mix special %%doc with other forms: README");
	ft_fail(&t, "%license NOPE\n", KILN_ENOTFOUND, 0,
	        "File not found: %s/usr/share/licenses/t-1/NOPE");
	ft_fail(&t, "%doc NOPE\n", KILN_ENOTFOUND, 0, "File not found: %s/usr/share/doc/t-1/NOPE");
	pt_define(&t.pt, "_missing_doc_files_terminate_build 0");
	ft_ok(&t, "%doc NOPE README\n");
	assert_true(ft_logged(&t, "warning: File not found: "));
	assert_non_null(ft_get(&t, "/usr/share/doc/t-1/README"));
	ft_release(&t);
}

static kiln_rc ft_collect_lists(struct ft *t, const char *lists, const char *files)
{
	char text[8192];

	snprintf(text, sizeof(text), "%s%%files %s\n%s", PT_MAIN, lists, files);
	worker_filelist_release(&t->fl);
	kiln_err_clear(&t->err);
	assert_ok(pt_run(&t->pt, text, 0), &t->pt.err);
	t->rc =
	    worker_filelist_collect(&t->fl, t->pt.spec, t->pt.spec->packages[0], &t->o, &t->err);
	return t->rc;
}

KILN_TEST(filelist_files_f_lists)
{
	struct ft t;
	char want[KILN_LIMIT_PATH * 2];

	ft_init(&t);
	mkfile(&t, "/usr/bin/a", "a", 0755);
	mkfile(&t, "/usr/bin/b", "b", 0755);
	mkfile(&t, "/usr/share/locale/de/LC_MESSAGES/t.mo", "m", 0644);
	mkfile_in(t.build, "/t.lang", "%lang(de) /usr/share/locale/de/LC_MESSAGES/t.mo\n", 0644);
	mkfile_in(t.build, "/more.list", "# a comment %{_bindir}\n\n%{_bindir}/b\n", 0644);
	pt_define(&t.pt, "_bindir /usr/bin");
	assert_ok(ft_collect_lists(&t, "-f t.lang -f more.list",
	                           "%defattr(0640,root,root)\n/usr/bin/a\n"),
	          &t.err);
	assert_string_equal(ft_must(&t, "/usr/share/locale/de/LC_MESSAGES/t.mo")->lang, "de");
	/* The section's %defattr is in force in the lists. */
	assert_int_equal(ft_must(&t, "/usr/bin/b")->mode, S_IFREG | 0640);
	assert_int_equal(ft_must(&t, "/usr/bin/a")->mode, S_IFREG | 0640);
	assert_int_equal(ft_collect_lists(&t, "-f missing.list", "/usr/bin/a\n"), KILN_ENOTFOUND);
	snprintf(want, sizeof(want), "Could not open %%files file %s/missing.list: ", t.build);
	assert_non_null(strstr(t.err.msg, want));
	mkfile_in(t.build, "/empty.list", "", 0644);
	assert_int_equal(ft_collect_lists(&t, "-f empty.list", "/usr/bin/a\n"), KILN_ESYNTAX);
	snprintf(want, sizeof(want), "Empty %%files file %s/empty.list", t.build);
	assert_string_equal(t.err.msg, want);
	mkfile_in(t.build, "/bad.list", "/usr/bin/a\n%attr(9,-,-) /usr/bin/b\n", 0644);
	assert_int_equal(ft_collect_lists(&t, "-f bad.list", ""), KILN_ESYNTAX);
	assert_string_equal(t.err.msg, "Bad mode spec: %attr(9,-,-)");
	snprintf(want, sizeof(want), "%s/bad.list", t.build);
	assert_string_equal(t.err.input, want);
	assert_int_equal(t.err.line, 2);
	ft_release(&t);
}

KILN_TEST(filelist_remove_path_postfixes)
{
	struct ft t;
	char text[4096];

	ft_init(&t);
	mkfile(&t, "/usr/bin/tool.py3", "t", 0755);
	snprintf(text, sizeof(text),
	         "%sRemovePathPostfixes: .py3\n%%description\nd\n"
	         "%%files\n/usr/bin/tool.py3\n",
	         PT_HEAD);
	assert_ok(pt_run(&t.pt, text, 0), &t.pt.err);
	assert_ok(worker_filelist_collect(&t.fl, t.pt.spec, t.pt.spec->packages[0], &t.o, &t.err),
	          &t.err);
	assert_non_null(ft_get(&t, "/usr/bin/tool"));
	assert_string_equal(t.fl.claimed[0], "/usr/bin/tool.py3");
	ft_release(&t);
}

KILN_TEST(filelist_unpackaged_check)
{
	struct ft t;
	const struct worker_filelist *lists[1];
	struct kiln_buf report = KILN_BUF_INIT(65536);

	ft_init(&t);
	mkfile(&t, "/usr/bin/a", "a", 0755);
	mkfile(&t, "/usr/bin/z", "z", 0755);
	mkfile(&t, "/usr/lib/b", "b", 0644);
	mklink(&t, "a", "/usr/bin/l");
	mkdir_at(t.root, "/usr/emptydir");
	ft_ok(&t, "/usr/bin/a\n");
	lists[0] = &t.fl;
	assert_int_equal(
	    worker_filelist_check_unpackaged(t.root, lists, 1, t.pt.ctx, &report, &t.err),
	    KILN_EBUILD);
	assert_string_equal(report.ptr, "Installed (but unpackaged) file(s) found:\n"
	                                "   /usr/bin/l\n   /usr/bin/z\n   /usr/lib/b\n");
	assert_string_equal(t.err.msg, report.ptr);
	kiln_buf_reset(&report);
	kiln_err_clear(&t.err);
	pt_define(&t.pt, "_unpackaged_files_terminate_build 0");
	assert_ok(worker_filelist_check_unpackaged(t.root, lists, 1, t.pt.ctx, &report, &t.err),
	          &t.err);
	assert_true(
	    ft_logged(&t, "warning: Installed (but unpackaged) file(s) found:\n   /usr/bin/l"));
	pt_define(&t.pt, "nil %{!?nil}");
	pt_define(&t.pt, "__check_files %{nil}");
	kiln_buf_reset(&report);
	assert_ok(worker_filelist_check_unpackaged(t.root, lists, 1, t.pt.ctx, &report, &t.err),
	          &t.err);
	assert_int_equal(report.len, 0);
	kiln_buf_release(&report);
	ft_release(&t);
}

KILN_TEST(filelist_glob_helpers)
{
	struct kiln_arena a = KILN_ARENA_INIT(KILN_MIB);
	struct worker_strv v = {0};
	struct kiln_buf b = KILN_BUF_INIT(4096);
	struct kiln_err err = KILN_ERR_INIT;

	assert_ok(worker_glob_braces("a{b,c{d,e}}f\\{x,y}", &a, &v, &err), &err);
	assert_int_equal(v.n, 3);
	assert_string_equal(v.v[0], "abf\\{x,y}");
	assert_string_equal(v.v[2], "acef\\{x,y}");
	v.n = 0;
	assert_ok(worker_glob_braces("un{balanced", &a, &v, &err), &err);
	assert_string_equal(v.v[0], "un{balanced");
	assert_true(worker_glob_is_magic("/usr/*"));
	assert_true(worker_glob_is_magic("/usr/{a,b}"));
	assert_false(worker_glob_is_magic("/usr/{a}"));
	assert_false(worker_glob_is_magic("/usr/bin"));
	assert_true(worker_path_clean("//usr/./lib/../bin/", false, &b));
	assert_string_equal(b.ptr, "/usr/bin");
	assert_true(worker_path_clean("/usr/bin/", true, &b));
	assert_string_equal(b.ptr, "/usr/bin/");
	assert_false(worker_path_clean("/usr/../..", false, &b));
	kiln_buf_release(&b);
	kiln_arena_release(&a);
}
