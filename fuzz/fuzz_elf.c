/*
 * fuzz_elf.c - worker/elf.c's ELF reader and what dependency generation makes of a file
 * that parses. Every failure must be a clean error; a file that parses is also run through
 * worker_autodeps_collect() from a scratch file, as a library and as an executable, so the
 * generator output parser sees its sonames and versions. Every input is also read for the
 * post-install policy's section questions (worker_elf_sections_fd) from the scratch file.
 */
#include "util/util.h"

#include <fcntl.h>
#include <sys/stat.h>
#include <unistd.h>

#include "macro/macro.h"
#include "worker/worker.h"

int LLVMFuzzerTestOneInput(const uint8_t *data, size_t size);

/* The harness's scratch file and macro context, made once per process. */
static struct {
	char dir[256], path[300];
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

	if (util_rm_rf(scratch.dir, &err))
		fprintf(stderr, "%s\n", err.msg);
	macro_ctx_free(scratch.ctx);
}

static void scratch_init(void)
{
	struct kiln_err err = KILN_ERR_INIT;
	const char *tmp = getenv("TMPDIR");

	if (scratch.ctx)
		return;
	snprintf(scratch.dir, sizeof(scratch.dir), "%s/kiln-fuzz-elf-XXXXXX",
	         tmp && *tmp ? tmp : "/tmp");
	if (!mkdtemp(scratch.dir))
		KILN_BUG("mkdtemp failed");
	atexit(scratch_free);
	snprintf(scratch.path, sizeof(scratch.path), "%s/libx.so.1", scratch.dir);
	scratch.ctx = macro_ctx_new(&err);
	if (!scratch.ctx || macro_define_line(scratch.ctx, "_libdir /usr/lib64", 0, &err) ||
	    macro_define_line(scratch.ctx, "_datadir /usr/share", 0, &err) ||
	    macro_define_line(scratch.ctx, "_bindir /usr/bin", 0, &err))
		KILN_BUG("macro context: %s", err.msg);
	macro_ctx_set_diag(scratch.ctx, quiet, NULL);
}

static void check(const struct worker_elf *e)
{
	size_t i;
	uint32_t k;

	if (e->elfclass != 1 && e->elfclass != 2)
		KILN_BUG("class %u parsed", e->elfclass);
	for (i = 0; i < e->nneeded; i++)
		if (!e->needed[i])
			KILN_BUG("DT_NEEDED %zu is NULL", i);
	for (i = 0; i < e->nverdefs; i++)
		for (k = 0; k < e->verdefs[i].nnames; k++)
			if (!e->verdefs[i].names[k])
				KILN_BUG("version definition %zu name %u is NULL", i, k);
	for (i = 0; i < e->nverneeds; i++)
		if (!e->verneeds[i].file || !e->verneeds[i].name)
			KILN_BUG("version need %zu is NULL", i);
	if ((e->flags & WORKER_ELF_INTERP) && (!e->interp || !*e->interp))
		KILN_BUG("interpreter flag without an interpreter");
}

/* worker/brp.c's question of the same bytes: any failure a clean error naming the file. */
static void sections(const uint8_t *data, size_t size)
{
	struct worker_elf_sections s;
	struct kiln_err err = KILN_ERR_INIT;
	int fd;
	kiln_rc rc;

	fd = open(scratch.path, O_RDWR | O_CREAT | O_TRUNC | O_CLOEXEC, 0600);
	if (fd < 0 || util_write_all(fd, data, size, &err))
		KILN_BUG("cannot write %s", scratch.path);
	rc = worker_elf_sections_fd(fd, "fuzz", &s, &err);
	util_close(fd);
	if (rc && rc != KILN_EFORMAT && rc != KILN_ELIMIT && rc != KILN_ENOMEM && rc != KILN_EIO)
		KILN_BUG("sections: unexpected %s: %s", kiln_rc_str(rc), err.msg);
	if (rc && !strstr(err.msg, "fuzz"))
		KILN_BUG("sections: error does not name the file: %s", err.msg);
}

static void collect(const uint8_t *data, size_t size, uint32_t mode)
{
	struct pack_file f = {.path = "/usr/lib64/libx.so.1", .src = scratch.path};
	struct worker_autodeps_opts o = {scratch.ctx, true, true, NULL, NULL, NULL};
	struct worker_deps prov, req;
	struct kiln_err err = KILN_ERR_INIT;
	int fd;
	kiln_rc rc;

	fd = open(scratch.path, O_WRONLY | O_CREAT | O_TRUNC | O_CLOEXEC, 0600);
	if (fd < 0 || util_write_all(fd, data, size, &err) || fchmod(fd, mode) < 0)
		KILN_BUG("cannot write %s", scratch.path);
	util_close(fd);
	f.mode = S_IFREG | mode;
	worker_deps_init(&prov);
	worker_deps_init(&req);
	rc = worker_autodeps_collect(&f, 1, &o, &prov, &req, NULL, &err);
	if (rc && rc != KILN_ESYNTAX && rc != KILN_ELIMIT && rc != KILN_ENOMEM)
		KILN_BUG("collect: unexpected %s: %s", kiln_rc_str(rc), err.msg);
	worker_deps_release(&prov);
	worker_deps_release(&req);
}

int LLVMFuzzerTestOneInput(const uint8_t *data, size_t size)
{
	struct kiln_err err = KILN_ERR_INIT;
	struct worker_elf e;
	kiln_rc rc;

	scratch_init();
	rc = worker_elf_from_mem(data, size, "fuzz", &e, &err);
	if (rc && rc != KILN_EFORMAT && rc != KILN_ELIMIT && rc != KILN_ENOMEM)
		KILN_BUG("unexpected %s: %s", kiln_rc_str(rc), err.msg);
	if (rc && !strstr(err.msg, "fuzz"))
		KILN_BUG("error does not name the file: %s", err.msg);
	(void)worker_elf_color_head(data, size, S_IFREG | 0755);
	sections(data, size);
	if (!rc) {
		check(&e);
		collect(data, size, 0755);
		collect(data, size, 0644);
	}
	worker_elf_release(&e);
	return 0;
}
