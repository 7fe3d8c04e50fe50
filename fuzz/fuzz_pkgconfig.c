/*
 * fuzz_pkgconfig.c - the text readers of automatic dependencies: pkgconf's .pc reading
 * (worker_pc_print), pkgconfigdeps.sh's read loop (worker_pc_rpm_lines), rpm's parser of
 * generator output (worker_depline_parse, directly and on what the others produce), and,
 * through worker_autodeps_collect() on scratch files, script.req's #! line. The input is
 * tried as a .pc file, as generator output and as an executable script.
 */
#include "util/util.h"

#include <fcntl.h>
#include <sys/stat.h>
#include <unistd.h>

#include "macro/macro.h"
#include "worker/worker.h"
#include "worker/autodeps_int.h"

int LLVMFuzzerTestOneInput(const uint8_t *data, size_t size);

static struct {
	char root[256], pc[320], script[320];
	struct macro_ctx *ctx;
} scratch;

static void quiet(void *data, enum kiln_log_level level, const char *msg)
{
	(void)data;
	(void)level;
	(void)msg;
}

static void scratch_free(void)
{
	struct kiln_err err = KILN_ERR_INIT;

	if (util_rm_rf(scratch.root, &err))
		fprintf(stderr, "%s\n", err.msg);
	macro_ctx_free(scratch.ctx);
}

static void scratch_init(void)
{
	struct kiln_err err = KILN_ERR_INIT;
	struct kiln_buf d = KILN_BUF_INIT(KILN_LIMIT_PATH);
	const char *tmp = getenv("TMPDIR");

	if (scratch.ctx)
		return;
	snprintf(scratch.root, sizeof(scratch.root), "%s/kiln-fuzz-pc-XXXXXX",
	         tmp && *tmp ? tmp : "/tmp");
	if (!mkdtemp(scratch.root))
		KILN_BUG("mkdtemp failed");
	atexit(scratch_free);
	snprintf(scratch.pc, sizeof(scratch.pc), "%s/usr/lib64/pkgconfig/f.pc", scratch.root);
	snprintf(scratch.script, sizeof(scratch.script), "%s/usr/bin/s", scratch.root);
	kiln_buf_addf(&d, "%s/usr/lib64/pkgconfig", scratch.root);
	if (util_mkdir_p(d.ptr, 0755, &err))
		KILN_BUG("%s", err.msg);
	kiln_buf_reset(&d);
	kiln_buf_addf(&d, "%s/usr/bin", scratch.root);
	if (util_mkdir_p(d.ptr, 0755, &err))
		KILN_BUG("%s", err.msg);
	kiln_buf_release(&d);
	scratch.ctx = macro_ctx_new(&err);
	if (!scratch.ctx || macro_define_line(scratch.ctx, "_libdir /usr/lib64", 0, &err) ||
	    macro_define_line(scratch.ctx, "_datadir /usr/share", 0, &err) ||
	    macro_define_line(scratch.ctx, "_bindir /usr/bin", 0, &err))
		KILN_BUG("macro context: %s", err.msg);
	macro_ctx_set_diag(scratch.ctx, quiet, NULL);
}

static void put(const char *path, const uint8_t *data, size_t size, mode_t mode)
{
	struct kiln_err err = KILN_ERR_INIT;
	int fd = open(path, O_WRONLY | O_CREAT | O_TRUNC | O_CLOEXEC, 0600);

	if (fd < 0 || util_write_all(fd, data, size, &err) || fchmod(fd, mode) < 0)
		KILN_BUG("cannot write %s", path);
	util_close(fd);
}

static void collect(const uint8_t *data, size_t size)
{
	struct pack_file f[2] = {
	    {.path = "/usr/lib64/pkgconfig/f.pc", .src = scratch.pc, .mode = S_IFREG | 0644},
	    {.path = "/usr/bin/s", .src = scratch.script, .mode = S_IFREG | 0755},
	};
	struct worker_autodeps_opts o = {scratch.ctx, true, true, "p", "1-1", NULL};
	struct worker_deps prov, req;
	struct kiln_err err = KILN_ERR_INIT;
	kiln_rc rc;

	put(scratch.pc, data, size, 0644);
	put(scratch.script, data, size, 0755);
	worker_deps_init(&prov);
	worker_deps_init(&req);
	rc = worker_autodeps_collect(f, 2, &o, &prov, &req, NULL, &err);
	if (rc && rc != KILN_ESYNTAX && rc != KILN_ELIMIT && rc != KILN_ENOMEM)
		KILN_BUG("collect: unexpected %s: %s", kiln_rc_str(rc), err.msg);
	if (!rc && worker_deps_find(&req, "/usr/bin/pkg-config", "", RPMTAG_DEP_FIND_REQUIRES) < 0)
		KILN_BUG("a .pc file must require /usr/bin/pkg-config");
	worker_deps_release(&prov);
	worker_deps_release(&req);
}

static kiln_rc count(void *data, const char *name, const char *evr, uint32_t flags,
                     struct kiln_err *err)
{
	size_t *n = data;

	(void)err;
	if (!*name ||
	    (!!(flags & (RPMTAG_DEP_LESS | RPMTAG_DEP_GREATER | RPMTAG_DEP_EQUAL)) != !!*evr))
		KILN_BUG("bad dependency \"%s\" \"%s\" %u", name, evr, flags);
	(*n)++;
	return KILN_OK;
}

/* rpm's parser on text, as provides and as requires. */
static void depline(const char *text, size_t len)
{
	size_t n = 0;
	int k;

	for (k = 0; k < 2; k++) {
		struct worker_depline p = {"/f", k == 0, k == 0, scratch.ctx, count, &n};
		struct kiln_err err = KILN_ERR_INIT;
		kiln_rc rc = worker_depline_parse(&p, text, len, &err);

		if (rc && rc != KILN_ESYNTAX && rc != KILN_ENOMEM && rc != KILN_ELIMIT)
			KILN_BUG("depline: unexpected %s: %s", kiln_rc_str(rc), err.msg);
	}
}

int LLVMFuzzerTestOneInput(const uint8_t *data, size_t size)
{
	static const enum worker_pc_list lists[] = {WORKER_PC_PROVIDES, WORKER_PC_REQUIRES};
	struct kiln_err err = KILN_ERR_INIT;
	size_t i;

	scratch_init();
	if (size > KILN_LIMIT_PC_FILE)
		return 0;
	for (i = 0; i < KILN_ARRAY_SIZE(lists); i++) {
		struct kiln_buf out = KILN_BUF_INIT(KILN_LIMIT_PC_FILE * 4);
		struct kiln_buf rpm = KILN_BUF_INIT(KILN_LIMIT_PC_FILE * 8);
		bool loaded = false;

		if (worker_pc_print((const char *)data, size, "f", "/d", lists[i], &out, &loaded,
		                    &err))
			kiln_err_clear(&err);
		else if (!loaded && out.len)
			KILN_BUG("output for a refused file");
		worker_pc_rpm_lines(out.ptr, out.len, &rpm);
		depline(rpm.ptr, rpm.len);
		kiln_buf_release(&out);
		kiln_buf_release(&rpm);
	}
	depline((const char *)data, size);
	collect(data, size);
	return 0;
}
