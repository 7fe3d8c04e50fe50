/*
 * build_int.h - state shared by the build pipeline's sources (build.c runs the stages,
 * package.c writes the packages, srpm.c handles -r and -t).
 */
#ifndef KILN_WORKER_BUILD_INT_H
#define KILN_WORKER_BUILD_INT_H

#include <string.h>

#include "worker/worker.h"

/* Bytes of stage output kept for the error report of a failing stage. */
#define BUILD_TAIL_MAX 4096
/* Where the sandbox shows the top directory (mock's path), so build paths never vary. */
#define BUILD_SANDBOX_TOPDIR "/builddir/build"
/* Where the sandbox shows kiln's configuration directory (its helper scripts), read-only,
 * so the commands kiln writes into packages do not depend on where kiln is installed. Not
 * under /usr: the host's /usr is bound read-only, with no room for a mount point. */
#define BUILD_SANDBOX_HELPERDIR "/builddir/kiln"

struct build {
	const struct worker_build_opts *o; /* borrowed */
	struct macro_ctx *mc;              /* borrowed: the caller's configured context */
	struct worker_build_result *res;   /* borrowed: where outputs and warnings go */
	struct spec *spec;                 /* owned: spec_free() */
	struct chroot_exec *ex;            /* owned: chroot_exec_free() */
	struct kiln_arena arena;           /* owns the strings below */
	const char **env;                  /* NULL-terminated stage environment */
	const char *topdir, *builddir, *buildroot, *sourcedir, *specdir, *rpmdir, *srcrpmdir;
	const char *subdir; /* %{buildsubdir} or NULL */
	/* --build-in-place (%_build_in_place): the directory kiln was started in, which
	 * %{_builddir}/%{buildsubdir} links to (and the sandbox binds at the same path);
	 * NULL otherwise. */
	const char *inplace;
	/* With the sandbox, the top directory is bound at BUILD_SANDBOX_TOPDIR and macros
	 * expand to paths inside; the fields above are the host's paths. */
	const char *in_top;        /* BUILD_SANDBOX_TOPDIR when sandboxed, else NULL */
	const char *in_builddir;   /* %{_builddir} as the stages see it */
	struct chroot_shell shell; /* %(...) of the parse, in the sandbox */
	int log_fd;                /* the build log, -1 before it is open */
	char tail[BUILD_TAIL_MAX]; /* ring of the last stage output */
	size_t tail_len, tail_pos;
	/* The source package's MD5 (its pkgid) once written in this build: binary packages
	 * name it as SOURCEPKGID, as rpmbuild's -ba writes them. */
	unsigned char srcpkgid[16];
	bool has_srcpkgid;
	const char **written; /* packages written so far (removed on failure) */
	size_t nwritten, capwritten;
};

/* Split text destructively at newlines: the next line (NUL-terminated, without its
 * newline) or NULL at the end; *rest advances. Empty lines are skipped. */
static inline char *build_line_next(char **rest)
{
	char *line = *rest, *nl;

	while (line && *line == '\n')
		line++;
	if (!line || !*line)
		return NULL;
	nl = strchr(line, '\n');
	if (nl) {
		*nl = '\0';
		*rest = nl + 1;
	} else {
		*rest = line + strlen(line);
	}
	return line;
}

/* Expand s in the build's macro context into the build's arena; NULL on failure (err set). */
const char *worker_build_expand(struct build *b, const char *s, struct kiln_err *err);
/* A warning: printed on stderr as "warning: ..." and recorded in the result. */
void worker_build_warn(struct build *b, const char *fmt, ...) KILN_PRINTF(2, 3);
/* Append to the build log (and, unless quiet, the output fd). */
void worker_build_log(struct build *b, const char *fmt, ...) KILN_PRINTF(2, 3);
/* Record a package written to path (kind "binary"/"source"), for the result and so that a
 * later failure removes it. */
KILN_MUST_CHECK kiln_rc worker_build_output_add(struct build *b, const char *path, const char *kind,
                                                const char *name, const char *arch,
                                                struct kiln_err *err);

/* A path as the stages see it (under BUILD_SANDBOX_TOPDIR) turned into the host's; other
 * paths are returned unchanged. NULL on ENOMEM. */
const char *worker_build_host_path(struct build *b, const char *path);

/* Write text as the stage's script (.kiln-NAME-STAGE[SUFFIX].sh in the build directory) and
 * run it with cmd (%{__spec_STAGE_cmd}) through the build's executor; capture (optional)
 * takes its stdout. *code is its exit code (-1 when it did not end by itself). A non-zero
 * exit is KILN_EBUILD ("Bad exit status from ..."), a time-out KILN_ETIMEOUT. */
KILN_MUST_CHECK kiln_rc worker_build_script_run(struct build *b, const char *stage,
                                                const char *suffix, const char *text, size_t len,
                                                const char *cmd, struct kiln_buf *capture,
                                                int *code, struct kiln_err *err);

/* brp.c: %{__spec_install_post} in steps, kiln's own brp scripts done in process. */
enum worker_brp_kind {
	WORKER_BRP_SHELL, /* lines run as shell */
	WORKER_BRP_COMPRESS,
	WORKER_BRP_ELFPERMS,
	WORKER_BRP_STRIP,
	WORKER_BRP_STRIP_STATIC,
	WORKER_BRP_STRIP_COMMENT,
	WORKER_BRP_REMOVE_LA,
	WORKER_BRP_FIND_DEBUGINFO, /* %{__debug_install_post}: brp_debuginfo.c */
};

/* A find-debuginfo call whose options kiln knows (brp_debuginfo.c); in the build's arena. */
struct worker_brp_fdi {
	const char *tool;          /* the script: its debugedit is beside it */
	unsigned jobs;             /* -j */
	const char *seed;          /* --build-id-seed, NULL if not given or empty */
	const char *suffix;        /* --unique-debug-suffix, "" if not given */
	const char *srcbase;       /* --unique-debug-src-base */
	const char *srcout;        /* -S, NULL if not given */
	const char *strip_args;    /* -r, --keep-section, --remove-section: for eu-strip */
	bool strict, no_recompute; /* --strict-build-id, -n */
	const char *builddir;      /* the operand, "." if none */
};

struct worker_brp_step {
	enum worker_brp_kind kind;
	const char *line;    /* the line(s) as written: the shell to run, or the script call */
	const char *args[2]; /* a script's arguments */
	size_t nargs;
	const struct worker_brp_fdi *fdi; /* WORKER_BRP_FIND_DEBUGINFO */
};

/* Everything lives in the build's arena. */
struct worker_brp_plan {
	const char *lead; /* the lines before the first recognised step: %install's script */
	struct worker_brp_step *steps;
	size_t nsteps; /* 0: no line is kiln's; %install runs all of post as before */
	const char *env_file, *export_file; /* what the script leaves for the steps */
};

/* Is line (continuations joined) a call of tool (%{__find_debuginfo}) with options that
 * brp_debuginfo.c does itself? Then st says so. */
bool worker_brp_fdi_recognise(struct kiln_arena *a, const char *line, const char *tool,
                              struct worker_brp_step *st);

/* Split post (the expanded %{__spec_install_post}) unless %_kiln_brp_inprocess is 0. */
KILN_MUST_CHECK kiln_rc worker_brp_plan_make(struct build *b, const char *post,
                                             struct worker_brp_plan *p, struct kiln_err *err);
/* The lines that end %install's script: its environment written for the steps. */
void worker_brp_env_capture(const struct worker_brp_plan *p, struct kiln_buf *text);
/* Run the steps after the script of %install succeeded (none if it exited early). */
KILN_MUST_CHECK kiln_rc worker_brp_plan_run(struct build *b, const struct worker_brp_plan *p,
                                            const char *cmd, struct kiln_err *err);

/* Whether and to what file mtimes are clamped (%build_mtime_policy). */
KILN_MUST_CHECK kiln_rc worker_build_mtime_clamp(struct build *b, bool *clamp, uint32_t *to,
                                                 struct kiln_err *err);

/* package.c: the binary packages of every package with %files (steps BINARY, or only the
 * checks for FILECHECK), and the source package. */
KILN_MUST_CHECK kiln_rc worker_build_binaries(struct build *b, bool write, struct kiln_err *err);
KILN_MUST_CHECK kiln_rc worker_build_source(struct build *b, struct kiln_err *err);

#endif
