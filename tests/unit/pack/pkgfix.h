/*
 * pkgfix.h - a small package written with pack_write() into the test's temp directory.
 */
#ifndef KILN_TESTS_PKGFIX_H
#define KILN_TESTS_PKGFIX_H

#include "util/util.h"

#include <sys/stat.h>

#include "pack/pack.h"
#include "tests/unit/harness.h"

/* Write name.rpm (format 4 or 6, payload mode) with a dir, a file, a symlink, a hard-link
 * pair and a ghost; returns the path (static buffer per call site is fine in tests). */
static inline const char *pkgfix_write(const char *name, int format, const char *mode, char *path,
                                       size_t size)
{
	struct kiln_err err = KILN_ERR_INIT;
	struct pack_write_opts o;
	struct pack_header h;
	char src[1024], hard[1024];
	const char *d = kiln_test_tmpdir();
	struct pack_file files[6];

	snprintf(src, sizeof(src), "%s/%s.src", d, name);
	snprintf(hard, sizeof(hard), "%s/%s.hard", d, name);
	snprintf(path, size, "%s/%s.rpm", d, name);
	assert_ok(util_write_atomic(src, "hello\n", 6, 0644, &err), &err);
	assert_ok(util_write_atomic(hard, "linked\n", 7, 0644, &err), &err);
	memset(files, 0, sizeof(files));
	files[0] = (struct pack_file){.path = "/usr/bin/hello",
	                              .src = src,
	                              .mode = S_IFREG | 0755,
	                              .mtime = 1704067200,
	                              .verify = RPMTAG_VERIFY_ALL};
	files[1] = (struct pack_file){.path = "/usr/bin",
	                              .mode = S_IFDIR | 0755,
	                              .mtime = 1704067200,
	                              .verify = RPMTAG_VERIFY_ALL};
	files[2] = (struct pack_file){.path = "/usr/bin/hi",
	                              .mode = S_IFLNK | 0777,
	                              .link = "hello",
	                              .mtime = 1704067200,
	                              .verify = RPMTAG_VERIFY_ALL};
	files[3] = (struct pack_file){.path = "/usr/lib/a",
	                              .src = hard,
	                              .mode = S_IFREG | 0644,
	                              .hardlink = 1,
	                              .verify = RPMTAG_VERIFY_ALL};
	files[4] = (struct pack_file){.path = "/usr/lib/b",
	                              .src = hard,
	                              .mode = S_IFREG | 0644,
	                              .hardlink = 1,
	                              .verify = RPMTAG_VERIFY_ALL};
	files[5] = (struct pack_file){.path = "/var/log/x.log",
	                              .mode = S_IFREG | 0644,
	                              .flags = RPMTAG_FILE_GHOST,
	                              .verify = RPMTAG_VERIFY_ALL};
	pack_header_init(&h);
	assert_ok(pack_header_put_string(&h, RPMTAG_NAME, name, &err), &err);
	assert_ok(pack_header_put_string(&h, RPMTAG_VERSION, "1.0", &err), &err);
	assert_ok(pack_header_put_string(&h, RPMTAG_RELEASE, "1", &err), &err);
	assert_ok(pack_header_put_string(&h, RPMTAG_ARCH, "noarch", &err), &err);
	assert_ok(pack_header_put_string(&h, RPMTAG_SOURCERPM, "x-1.0-1.src.rpm", &err), &err);
	pack_write_opts_init(&o);
	o.format = format;
	assert_ok(pack_compress_parse(mode, &o.comp, &err), &err);
	assert_ok(pack_write(path, &h, files, 6, &o, &err), &err);
	pack_header_release(&h);
	return path;
}

#endif
