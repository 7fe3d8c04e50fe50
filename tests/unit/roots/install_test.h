/*
 * install_test.h - packages for the installer's unit tests, written with pack_write() into
 * the test's temp directory from a compact description.
 */
#ifndef KILN_TESTS_ROOTS_INSTALL_TEST_H
#define KILN_TESTS_ROOTS_INSTALL_TEST_H

#include "util/util.h"

#include <sys/stat.h>

#include "pack/pack.h"
#include "roots/install_int.h"
#include "tests/unit/harness.h"

/* One file: path, mode with type bits, contents (regular) or link target (symlink). */
struct it_file {
	const char *path;
	uint32_t mode;
	const char *data;
	uint32_t hardlink;
};

/* One dependency: "name" or "name with flags" (flags: RPMTAG_DEP_*). */
struct it_dep {
	const char *name;
	uint32_t flags;
	const char *version;
};

struct it_pkg {
	const char *name;
	const struct it_file *files;
	size_t nfiles;
	const struct it_dep *requires;
	size_t nrequires;
	const char *provides[4];
};

static inline const char *it_write(const struct it_pkg *d, char *path, size_t size)
{
	struct kiln_err err = KILN_ERR_INIT;
	struct pack_file files[16];
	char src[16][1024];
	struct pack_write_opts o;
	struct pack_header h;
	const char *dir = kiln_test_tmpdir();
	size_t i;

	assert_true(d->nfiles <= 16);
	snprintf(path, size, "%s/%s-1-1.x86_64.rpm", dir, d->name);
	memset(files, 0, sizeof(files));
	for (i = 0; i < d->nfiles; i++) {
		const struct it_file *f = &d->files[i];

		files[i].path = f->path;
		files[i].mode = f->mode;
		files[i].mtime = 1704067200;
		files[i].verify = RPMTAG_VERIFY_ALL;
		files[i].hardlink = f->hardlink;
		if (S_ISREG(f->mode)) {
			snprintf(src[i], sizeof(src[i]), "%s/%s.%zu.src", dir, d->name, i);
			assert_ok(util_write_atomic(src[i], f->data, strlen(f->data), 0644, &err),
			          &err);
			files[i].src = src[i];
		} else if (S_ISLNK(f->mode)) {
			files[i].link = f->data;
		}
	}
	pack_header_init(&h);
	assert_ok(pack_header_put_string(&h, RPMTAG_NAME, d->name, &err), &err);
	assert_ok(pack_header_put_string(&h, RPMTAG_VERSION, "1", &err), &err);
	assert_ok(pack_header_put_string(&h, RPMTAG_RELEASE, "1", &err), &err);
	assert_ok(pack_header_put_string(&h, RPMTAG_ARCH, "x86_64", &err), &err);
	assert_ok(pack_header_put_string(&h, RPMTAG_SOURCERPM, "x-1-1.src.rpm", &err), &err);
	assert_ok(pack_deps_add(&h, PACK_DEP_PROVIDE, d->name, "1-1", RPMTAG_DEP_EQUAL, &err),
	          &err);
	for (i = 0; i < KILN_ARRAY_SIZE(d->provides) && d->provides[i]; i++)
		assert_ok(pack_deps_add(&h, PACK_DEP_PROVIDE, d->provides[i], "", 0, &err), &err);
	for (i = 0; i < d->nrequires; i++)
		assert_ok(pack_deps_add(&h, PACK_DEP_REQUIRE, d->requires[i].name,
		                        d->requires[i].version ? d->requires[i].version : "",
		                        d->requires[i].flags, &err),
		          &err);
	pack_write_opts_init(&o);
	assert_ok(pack_write(path, &h, files, d->nfiles, &o, &err), &err);
	pack_header_release(&h);
	return path;
}

#endif
