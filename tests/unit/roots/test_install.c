/*
 * test_install.c - roots/'s installer: unpacking into an image (modes, links, hard links,
 * directories, owners from the image's accounts), and hostile packages refused before
 * anything is written. Scriptlets need the sandbox and a shell in the image: the
 * integration tests (test_roots_install.py) run them against rpm --root.
 */
#include "util/util.h"

#include <dirent.h>
#include <fcntl.h>
#include <sys/stat.h>
#include <unistd.h>

#include "tests/unit/roots/install_test.h"

static const char *image_dir(const char *name)
{
	static char path[1024];

	snprintf(path, sizeof(path), "%s/%s", kiln_test_tmpdir(), name);
	return path;
}

static size_t entries(const char *dir)
{
	DIR *d = opendir(dir);
	struct dirent *e;
	size_t n = 0;

	if (!d)
		return 0;
	while ((e = readdir(d)))
		n += strcmp(e->d_name, ".") && strcmp(e->d_name, "..");
	closedir(d);
	return n;
}

static kiln_rc install(const char *img, const char *const *pkgs, size_t n, unsigned flags,
                       struct roots_install_report *rep, struct kiln_err *err)
{
	struct roots_install_opts o;

	roots_install_opts_init(&o);
	o.flags = flags | ROOTS_INSTALL_F_NOSCRIPTS;
	return roots_install(img, pkgs, n, &o, rep, err);
}

static const struct it_file plain_files[] = {
    {"/usr", S_IFDIR | 0755, NULL, 0},
    {"/usr/bin", S_IFDIR | 0755, NULL, 0},
    {"/usr/bin/tool", S_IFREG | 0755, "#!/bin/sh\n", 0},
    {"/usr/bin/alias", S_IFLNK | 0777, "tool", 0},
    {"/usr/lib/x/a", S_IFREG | 0644, "same\n", 1},
    {"/usr/lib/x/b", S_IFREG | 0644, "same\n", 1},
    {"/var/empty", S_IFDIR | 0711, NULL, 0},
    {"/etc/passwd", S_IFREG | 0644, "root:x:0:0::/:/bin/sh\n", 0},
};

KILN_TEST(install_unpacks_files_links_and_dirs)
{
	struct kiln_err err = KILN_ERR_INIT;
	struct it_pkg d = {"plain", plain_files, KILN_ARRAY_SIZE(plain_files), NULL, 0, {NULL}};
	struct roots_install_report rep;
	char pkg[1024], link[64], p[4096];
	const char *img = image_dir("img-plain");
	const char *pkgs[1];
	struct stat a, b;
	ssize_t n;

	pkgs[0] = it_write(&d, pkg, sizeof(pkg));
	assert_ok(install(img, pkgs, 1, 0, &rep, &err), &err);
	assert_int_equal(rep.packages, 1);
	assert_int_equal(rep.files, 8);
	snprintf(p, sizeof(p), "%s/usr/bin/tool", img);
	assert_int_equal(stat(p, &a), 0);
	assert_int_equal(a.st_mode, S_IFREG | 0755);
	assert_int_equal(a.st_mtime, 1704067200);
	snprintf(p, sizeof(p), "%s/usr/bin/alias", img);
	n = readlink(p, link, sizeof(link) - 1);
	assert_int_equal(n, 4);
	link[n] = '\0';
	assert_string_equal(link, "tool");
	snprintf(p, sizeof(p), "%s/usr/lib/x/a", img);
	assert_int_equal(stat(p, &a), 0);
	snprintf(p, sizeof(p), "%s/usr/lib/x/b", img);
	assert_int_equal(stat(p, &b), 0);
	assert_int_equal(a.st_ino, b.st_ino);
	snprintf(p, sizeof(p), "%s/var/empty", img);
	assert_int_equal(stat(p, &a), 0);
	assert_int_equal(a.st_mode, S_IFDIR | 0711);
}

/* usrmerge: the image has /bin -> usr/bin (from an earlier package); a package still
 * listing /bin/x and the directory /bin writes through the link, as rpm does. */
KILN_TEST(install_follows_image_symlinks_inside_the_image)
{
	static const struct it_file fs[] = {
	    {"/usr/bin", S_IFDIR | 0755, NULL, 0},
	    {"/bin", S_IFLNK | 0777, "usr/bin", 0},
	};
	static const struct it_file old[] = {
	    {"/bin", S_IFDIR | 0755, NULL, 0},
	    {"/bin/old", S_IFREG | 0755, "x\n", 0},
	};
	struct kiln_err err = KILN_ERR_INIT;
	struct it_pkg d1 = {"fs", fs, 2, NULL, 0, {NULL}};
	struct it_dep req = {"fs", RPMTAG_DEP_SCRIPT_PRE, NULL};
	struct it_pkg d2 = {"old", old, 2, &req, 1, {NULL}};
	char p1[1024], p2[1024], p[4096];
	const char *img = image_dir("img-usrmerge");
	const char *pkgs[2];
	struct stat st;

	pkgs[0] = it_write(&d2, p2, sizeof(p2)); /* the order comes from Requires(pre) */
	pkgs[1] = it_write(&d1, p1, sizeof(p1));
	assert_ok(install(img, pkgs, 2, 0, NULL, &err), &err);
	snprintf(p, sizeof(p), "%s/usr/bin/old", img);
	assert_int_equal(stat(p, &st), 0);
	snprintf(p, sizeof(p), "%s/bin", img);
	assert_int_equal(lstat(p, &st), 0);
	assert_true(S_ISLNK(st.st_mode));
}

/* A package planting a symlink to an absolute host path and writing through it: the link
 * resolves inside the image, never on the host. */
KILN_TEST(install_symlink_traversal_stays_in_the_image)
{
	char outside[1024], dirs[8][1024], pkg[1024], pkg2[1024], p[4096];
	struct it_file files[10], trap[2];
	struct kiln_err err = KILN_ERR_INIT;
	struct it_pkg d = {"dirs", files, 0, NULL, 0, {NULL}};
	struct it_dep req = {"dirs", RPMTAG_DEP_SCRIPT_PRE, NULL};
	struct it_pkg t = {"trap", trap, 2, &req, 1, {NULL}};
	const char *img = image_dir("img-trap");
	const char *pkgs[2];
	struct stat st;
	char *slash;
	size_t n = 0;

	/* The link's target exists on the host and, made by the package, in the image. */
	snprintf(outside, sizeof(outside), "%s/outside", kiln_test_tmpdir());
	assert_int_equal(mkdir(outside, 0755), 0);
	for (slash = strchr(outside + 1, '/'); n < 7; slash = strchr(slash + 1, '/')) {
		snprintf(dirs[n], sizeof(dirs[n]), "%.*s", slash ? (int)(slash - outside) : 1023,
		         outside);
		files[n] = (struct it_file){dirs[n], S_IFDIR | 0755, NULL, 0};
		n++;
		if (!slash)
			break;
	}
	assert_true(n < 7);
	d.nfiles = n;
	trap[0] = (struct it_file){"/evil", S_IFLNK | 0777, outside, 0};
	trap[1] = (struct it_file){"/evil/owned", S_IFREG | 0644, "gotcha\n", 0};
	pkgs[0] = it_write(&t, pkg2, sizeof(pkg2));
	pkgs[1] = it_write(&d, pkg, sizeof(pkg));
	assert_ok(install(img, pkgs, 2, 0, NULL, &err), &err);
	assert_int_equal(entries(outside), 0);
	snprintf(p, sizeof(p), "%s%s/owned", img, outside);
	assert_int_equal(stat(p, &st), 0);
}

static void assert_refused(const struct it_file *files, size_t n, unsigned flags,
                           const char *needle)
{
	struct kiln_err err = KILN_ERR_INIT;
	struct it_pkg d = {"hostile", files, n, NULL, 0, {NULL}};
	char pkg[1024], good[1024];
	const char *img = image_dir("img-hostile");
	const char *pkgs[2];
	struct it_pkg g = {"good", plain_files, KILN_ARRAY_SIZE(plain_files), NULL, 0, {NULL}};

	pkgs[0] = it_write(&g, good, sizeof(good));
	pkgs[1] = it_write(&d, pkg, sizeof(pkg));
	assert_int_equal(install(img, pkgs, 2, flags, NULL, &err), KILN_EPRIV);
	assert_non_null(strstr(err.msg, pkg));
	assert_non_null(strstr(err.msg, needle));
	/* Nothing written, not even the good package listed first. */
	assert_false(util_exists(img));
}

KILN_TEST(install_refuses_device_nodes_and_setuid_before_writing)
{
	static const struct it_file dev[] = {{"/dev/sda", S_IFBLK | 0600, NULL, 0}};
	static const struct it_file suid[] = {{"/usr/bin/su", S_IFREG | 04755, "x", 0}};
	static const struct it_file sgid[] = {{"/usr/bin/wall", S_IFREG | 02755, "x", 0}};
	struct kiln_err err = KILN_ERR_INIT;
	struct it_pkg d = {"suid", suid, 1, NULL, 0, {NULL}};
	char pkg[1024], p[4096];
	const char *pkgs[1];
	const char *img = image_dir("img-suid-ok");
	struct stat st;

	assert_refused(dev, 1, 0, "file '/dev/sda': device node");
	assert_refused(suid, 1, 0, "file '/usr/bin/su': setuid or setgid");
	assert_refused(sgid, 1, 0, "file '/usr/bin/wall': setuid or setgid");
	assert_refused(dev, 1, ROOTS_INSTALL_F_ALLOW_SETID, "device node");
	/* Allowed on request, with the bit kept (chown runs before chmod). */
	pkgs[0] = it_write(&d, pkg, sizeof(pkg));
	assert_ok(install(img, pkgs, 1, ROOTS_INSTALL_F_ALLOW_SETID, NULL, &err), &err);
	snprintf(p, sizeof(p), "%s/usr/bin/su", img);
	assert_int_equal(stat(p, &st), 0);
	assert_int_equal(st.st_mode & 07777, 04755);
}

/* pack_write will not make a package with "..": the check is given one by hand. */
KILN_TEST(install_check_refuses_paths_escaping_the_image)
{
	static const char *const bad[] = {
	    "/usr/../../etc/passwd", "/usr//x", "/usr/./x", "relative", "/usr/x/", "/.."};
	struct it_pkg d = {"esc", plain_files, 3, NULL, 0, {NULL}};
	struct kiln_err err = KILN_ERR_INIT;
	struct roots_set set;
	char pkg[1024];
	const char *pkgs[1];
	size_t i;

	pkgs[0] = it_write(&d, pkg, sizeof(pkg));
	for (i = 0; i < KILN_ARRAY_SIZE(bad); i++) {
		kiln_err_clear(&err);
		assert_ok(roots_set_load(&set, pkgs, 1, &err), &err);
		assert_ok(roots_set_check(&set, 0, &err), &err);
		set.pkgs[0].files[2] = bad[i];
		assert_int_equal(roots_set_check(&set, 0, &err), KILN_EPRIV);
		assert_non_null(strstr(err.msg, bad[i]));
		assert_non_null(strstr(err.msg, "escapes the image"));
		roots_set_release(&set);
	}
}

KILN_TEST(install_owners_come_from_the_image_accounts)
{
	static const struct it_file acc[] = {
	    {"/etc/passwd", S_IFREG | 0644, "root:x:0:0::/:/bin/sh\nsvc:x:321:0::/:/bin/sh\n", 0},
	    {"/etc/group", S_IFREG | 0644, "root:x:0:\nsvc:x:654:\n", 0},
	};
	struct kiln_err err = KILN_ERR_INIT;
	struct roots_ids ids;
	static const char text[] = "bad line\nroot:x:0:0::/:/bin/sh\nsvc:x:321:0\n:x:5:\n"
	                           "huge:x:99999999999:\nsvc:x:7:\n";
	uint32_t id = 0;
	const char *pkgs[1];
	char pkg[1024];
	struct it_pkg d = {"acc", acc, 2, NULL, 0, {NULL}};

	assert_ok(roots_ids_parse(&ids, text, sizeof(text) - 1, &err), &err);
	assert_true(roots_ids_find(&ids, "svc", &id));
	assert_int_equal(id, 321); /* the first entry wins */
	assert_false(roots_ids_find(&ids, "huge", &id));
	assert_false(roots_ids_find(&ids, "bad line", &id));
	roots_ids_release(&ids);
	/* The accounts file a package installs is what later packages' owners resolve in. */
	pkgs[0] = it_write(&d, pkg, sizeof(pkg));
	assert_ok(install(image_dir("img-acc"), pkgs, 1, 0, NULL, &err), &err);
}

KILN_TEST(install_a_corrupt_package_is_an_error_naming_it)
{
	struct kiln_err err = KILN_ERR_INIT;
	char path[1024];
	const char *pkgs[1] = {path};

	snprintf(path, sizeof(path), "%s/junk.rpm", kiln_test_tmpdir());
	assert_ok(
	    util_write_atomic(path, "not an rpm at all, not even close to it", 40, 0644, &err),
	    &err);
	assert_int_not_equal(install(image_dir("img-junk"), pkgs, 1, 0, NULL, &err), KILN_OK);
	assert_non_null(strstr(err.msg, "junk.rpm"));
	assert_false(util_exists(image_dir("img-junk")));
}
