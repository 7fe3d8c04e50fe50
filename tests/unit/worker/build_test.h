/*
 * build_test.h - helpers for the build pipeline's unit tests: a macro context with kiln's
 * own configuration and a fresh top directory per test, and a way to build a spec text.
 */
#ifndef KILN_TESTS_BUILD_TEST_H
#define KILN_TESTS_BUILD_TEST_H

#include "util/util.h"

#include <stdio.h>
#include <stdlib.h>
#include <fcntl.h>
#include <string.h>
#include <unistd.h>

#include "macro/macro.h"
#include "worker/worker.h"
#include "tests/unit/harness.h"

#define BT_TAGS "Name: t\nVersion: 1\nRelease: 1\nSummary: s\nLicense: MIT\n"
#define BT_HEAD BT_TAGS "%description\nd\n"

struct bt {
	struct macro_ctx *mc;
	char top[1024];  /* the test's %_topdir */
	char spec[1100]; /* where bt_spec() wrote the spec */
	struct worker_build_opts o;
	struct worker_build_result res;
	struct kiln_err err;
	int devnull;
};

static inline void bt_define(struct bt *t, const char *line)
{
	struct kiln_err err = KILN_ERR_INIT;

	assert_ok(macro_define_line(t->mc, line, MACRO_LEVEL_CMDLINE, &err), &err);
}

/* A context with kiln's configuration and _topdir in a fresh directory named name. */
static inline void bt_init(struct bt *t, const char *name)
{
	struct kiln_buf confdir = KILN_BUF_INIT(KILN_LIMIT_PATH);
	struct macro_config cfg = {0};
	struct kiln_err err = KILN_ERR_INIT;
	char line[1200];

	memset(t, 0, sizeof(*t));
	t->err = (struct kiln_err)KILN_ERR_INIT;
	snprintf(t->top, sizeof(t->top), "%s/%s", kiln_test_tmpdir(), name);
	assert_ok(util_mkdir_p(t->top, 0755, &err), &err);
	if (util_configdir_find(&confdir, &err)) {
		/* The source tree's, absolute: stage scripts run kiln's helpers from other
		 * directories (the %__os_install_post scripts from the build directory). */
		char *abs = realpath("configs", NULL);

		kiln_err_clear(&err);
		kiln_buf_reset(&confdir);
		kiln_buf_addstr(&confdir, abs ? abs : "configs");
		free(abs);
	}
	t->mc = macro_ctx_new(&err);
	assert_non_null(t->mc);
	cfg.confdir = confdir.ptr;
	assert_ok(macro_config_load(t->mc, &cfg, &err), &err);
	kiln_buf_release(&confdir);
	snprintf(line, sizeof(line), "_topdir %s", t->top);
	bt_define(t, line);
	worker_build_opts_init(&t->o);
	t->devnull = open("/dev/null", O_WRONLY | O_CLOEXEC);
	t->o.out_fd = t->devnull;
}

/* Write text as TOP/name and make it the build's spec. */
static inline void bt_spec(struct bt *t, const char *name, const char *text)
{
	struct kiln_err err = KILN_ERR_INIT;

	snprintf(t->spec, sizeof(t->spec), "%s/%s", t->top, name);
	assert_ok(util_write_atomic(t->spec, text, strlen(text), 0644, &err), &err);
	t->o.spec_path = t->spec;
}

static inline kiln_rc bt_run(struct bt *t, unsigned steps)
{
	worker_build_result_release(&t->res);
	kiln_err_clear(&t->err);
	t->o.steps = steps;
	return worker_build(&t->o, t->mc, &t->res, &t->err);
}

/* The contents of TOP/rel ("" when missing); caller frees. */
static inline char *bt_read(struct bt *t, const char *rel)
{
	struct kiln_buf b = KILN_BUF_INIT(KILN_MIB);
	struct kiln_err err = KILN_ERR_INIT;
	char path[2200];

	snprintf(path, sizeof(path), "%s/%s", t->top, rel);
	if (util_read_file(path, KILN_MIB, &b, &err))
		kiln_buf_addstr(&b, "");
	return kiln_buf_take(&b, NULL);
}

static inline void bt_release(struct bt *t)
{
	worker_build_result_release(&t->res);
	macro_ctx_free(t->mc);
	if (t->devnull >= 0)
		close(t->devnull);
}

#endif
