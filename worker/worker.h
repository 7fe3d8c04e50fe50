/*
 * worker.h - what a worker does with a job: fetch and cache sources, run a spec's build
 * stages through an executor (host process or the chroot sandbox), turn the buildroot into
 * package file lists with automatic dependencies, and write the binary and source packages.
 *
 * Sections (each owned by its sources; keep additions inside the matching section):
 *   1. Packaged files: %files applied to a buildroot      (worker/filelist.c)
 *   2. Automatic dependencies: ELF, interpreters, pkgconfig (worker/elf.c, worker/autodeps.c)
 *   3. Sources: fetching, verification and the cache     (worker/fetch*.c, worker/cache.c)
 *   4. The build pipeline                                (worker/build.c, package.c, srpm.c)
 */
#ifndef KILN_WORKER_H
#define KILN_WORKER_H

#include "util/util.h"
#include "macro/macro.h"
#include "spec/spec.h"
#include "pack/pack.h"
#include "sign/sign.h"
#include "chroot/chroot.h"

/* ======================================================================================== */
/* 1. Packaged files: %files applied to a buildroot                                         */
/* ======================================================================================== */

/* The files of one package, ready for pack_write(). Every string and the array live in
 * the list's arena; release with worker_filelist_release(). */
struct worker_filelist {
	struct pack_file *files; /* sorted by path */
	size_t n, cap;
	struct kiln_arena arena;
};

struct worker_filelist_opts {
	const char *buildroot;    /* absolute host path of %{buildroot} */
	const char *builddir;     /* absolute host path where relative %doc/%license are read
	                        * (the build subdirectory, %{_builddir}/%{buildsubdir}) */
	struct macro_ctx *macros; /* %_docdir, %_licensedir, %_docdir_fmt, %_*_terminate_build */
	bool clamp_mtime;         /* clamp mtimes to clamp_to (%build_mtime_policy) */
	uint32_t clamp_to;
};

/* PLACEHOLDER: the filelist helper defines the functions here (collect one package's
 * files, the "Installed (but unpackaged)" check over all packages). */

void worker_filelist_release(struct worker_filelist *fl);

/* ======================================================================================== */
/* 2. Automatic dependencies                                                                */
/* ======================================================================================== */

/* One dependency (flags: rpm's RPMSENSE_* bits as pack_deps_add takes them). */
struct worker_dep {
	const char *name;
	const char *version; /* "" for none */
	uint32_t flags;
};

/* A sorted, de-duplicated set of dependencies; strings in the set's arena. */
struct worker_deps {
	struct worker_dep *v;
	size_t n, cap;
	struct kiln_arena arena;
};

/* PLACEHOLDER: the autodeps helper defines the functions here. */
KILN_MUST_CHECK kiln_rc worker_autodeps_collect(const struct pack_file *files, size_t n,
                                                struct macro_ctx *mc, struct worker_deps *p,
                                                struct worker_deps *r,
                                                struct kiln_err *err); /* TMP */

void worker_deps_release(struct worker_deps *d);

/* ======================================================================================== */
/* 3. Sources                                                                               */
/* ======================================================================================== */

/* PLACEHOLDER: the sources helper defines fetching and the cache here. */

/* ======================================================================================== */
/* 4. The build pipeline                                                                    */
/* ======================================================================================== */

/* What to run, as rpmbuild's -b/-r/-t letters: a bit per step. */
enum worker_build_steps {
	WORKER_STEP_PREP = 1 << 0,      /* %prep */
	WORKER_STEP_CONF = 1 << 1,      /* %conf (rpm 4.20) and %generate_buildrequires */
	WORKER_STEP_BUILD = 1 << 2,     /* %build */
	WORKER_STEP_INSTALL = 1 << 3,   /* %install */
	WORKER_STEP_CHECK = 1 << 4,     /* %check */
	WORKER_STEP_FILECHECK = 1 << 5, /* -bl: %files against the buildroot, nothing written */
	WORKER_STEP_BINARY = 1 << 6,    /* write the binary packages */
	WORKER_STEP_SOURCE = 1 << 7,    /* write the source package */
	WORKER_STEP_CLEAN = 1 << 8,     /* %clean and remove the buildroot afterwards */
	WORKER_STEP_RMBUILD = 1 << 9,   /* --clean: remove the build directory afterwards */
	WORKER_STEP_RMSOURCE = 1 << 10, /* --rmsource */
	WORKER_STEP_RMSPEC = 1 << 11,   /* --rmspec */
	WORKER_STEP_BUILDREQS = 1 << 12 /* -br: stop after %generate_buildrequires */
};

/* rpmbuild's -bX letters. */
#define WORKER_STEPS_P (WORKER_STEP_PREP)
#define WORKER_STEPS_F (WORKER_STEPS_P | WORKER_STEP_CONF)
#define WORKER_STEPS_C (WORKER_STEPS_F | WORKER_STEP_BUILD)
#define WORKER_STEPS_I (WORKER_STEPS_C | WORKER_STEP_INSTALL | WORKER_STEP_CHECK)
#define WORKER_STEPS_L (WORKER_STEP_FILECHECK)
#define WORKER_STEPS_B (WORKER_STEPS_I | WORKER_STEP_BINARY | WORKER_STEP_CLEAN)
#define WORKER_STEPS_A (WORKER_STEPS_B | WORKER_STEP_SOURCE)
#define WORKER_STEPS_S (WORKER_STEP_SOURCE)
#define WORKER_STEPS_R (WORKER_STEPS_P | WORKER_STEP_CONF | WORKER_STEP_BUILDREQS)

/* Options of one build. Strings are borrowed for the call. */
struct worker_build_opts {
	const char *spec_path;
	unsigned steps;     /* enum worker_build_steps */
	bool short_circuit; /* only the last stage of steps (-bc --short-circuit ...) */
	bool nodeps;        /* skip the BuildRequires check */
	bool nocheck;       /* skip %check */
	bool noprep;        /* skip %prep (rpm 4.18's --noprep) */
	bool noclean;       /* keep the buildroot (no %clean) */
	bool quiet;         /* stage output only in the build log */
	bool anyarch;       /* -bs: build the source package on any architecture */
	/* How stages run: NULL runs them as plain host processes. Borrowed. */
	const struct chroot_config *exec;
	int out_fd; /* where stage output streams (besides the log); -1 = none */
	/* Sign every written package with this key (sign/), NULL for none. Borrowed. */
	const struct sign_key *sign_key;
};
void worker_build_opts_init(struct worker_build_opts *o);

struct worker_build_output {
	const char *path; /* written package */
	const char *kind; /* "binary" or "source" */
	const char *name; /* package name */
	const char *arch; /* "x86_64", "noarch", "src" */
	char sha256[65];
};

struct worker_build_stage {
	const char *name; /* "prep", "build", ..., "package" */
	int64_t ms;
	int exit_code;
};

/* The result of worker_build(), filled also on failure as far as the build got. Release
 * with worker_build_result_release(). */
struct worker_build_result {
	struct worker_build_output *outputs;
	size_t noutputs, capoutputs;
	struct worker_build_stage *stages;
	size_t nstages, capstages;
	const char **warnings;
	size_t nwarnings, capwarnings;
	const char *log_path;      /* the build log, NULL before the build dir exists */
	int64_t source_date_epoch; /* -1 when none */
	int64_t buildtime;
	bool buildreqs_unmet; /* -br: %generate_buildrequires asked for missing ones */
	bool sandboxed;       /* the stages ran in the namespace sandbox */
	bool network;         /* ... with the host network shared */
	struct kiln_arena arena;
};

/* Run the steps of o on o->spec_path with macro context mc (configured by the caller:
 * rpmrc, macro files, --define...; the build adds its own definitions). On failure err has
 * rpm's message ("Bad exit status from /.../BUILD/.kiln-build.sh (%build)") and nothing is
 * left half-written in the output directories. */
KILN_MUST_CHECK kiln_rc worker_build(const struct worker_build_opts *o, struct macro_ctx *mc,
                                     struct worker_build_result *res, struct kiln_err *err);
void worker_build_result_release(struct worker_build_result *res);
/* Append the result as JSON ({"outputs":[{path,kind,name,arch,sha256}],"stages":[...],
 * "warnings":[...],"log":...,"source_date_epoch":...}) to out. */
void worker_build_result_json(const struct worker_build_result *res, bool ok,
                              const struct kiln_err *err, struct kiln_buf *out);

/* Reproducibility verification (kiln build --verify-reproducible): the build runs `runs`
 * times, the first as asked (its packages are the build's output), the others in fresh
 * top directories with deliberate variations: another path outside the sandbox, another
 * wall-clock time (at least a second later), another umask outside, another host name and
 * CPU count inside the sandbox, noise in kiln's environment. Every package of the first
 * run is compared with pack_diff_files() with its namesake of each rerun. */
struct worker_verify_diff {
	unsigned run;        /* the rerun (2..runs) that differed */
	const char *package; /* relative to the top directory: "RPMS/x86_64/a-1-1.x86_64.rpm" */
	const char *what;    /* "/usr/share/a/stamp: contents differ", "tag BUILDTIME", ... */
};

struct worker_verify_result {
	unsigned runs;
	size_t npackages; /* packages of the first run */
	struct worker_verify_diff *diffs;
	size_t ndiffs, capdiffs;
	struct worker_build_result first; /* the first run: the build's own result */
	struct kiln_arena arena;
};

/* Run and compare as above; mc is duplicated for each run (not changed). KILN_OK when
 * every run built: vr->ndiffs == 0 means reproducible. A failing run is an error. */
KILN_MUST_CHECK kiln_rc worker_build_verify(const struct worker_build_opts *o,
                                            const struct macro_ctx *mc, unsigned runs,
                                            struct worker_verify_result *vr,
                                            struct kiln_err *err);
void worker_verify_result_release(struct worker_verify_result *vr);
/* The first run's worker_build_result_json() plus "reproducible": {"runs", "identical",
 * "differences": [{"run", "package", "what"}]}. */
void worker_verify_result_json(const struct worker_verify_result *vr, bool ok,
                               const struct kiln_err *err, struct kiln_buf *out);

/* -r: install a source package's files into %{_sourcedir} and its spec into %{_specdir}
 * (as rpm -i of a .src.rpm does); *spec_path gets the spec's path (in arena a). */
KILN_MUST_CHECK kiln_rc worker_srpm_install(const char *srpm, struct macro_ctx *mc,
                                            struct kiln_arena *a, const char **spec_path,
                                            struct kiln_err *err);
/* -t: unpack the tarball's spec file (the first *.spec of the archive) into %{_specdir}
 * and copy the tarball to %{_sourcedir}; *spec_path as above. */
KILN_MUST_CHECK kiln_rc worker_tarball_spec(const char *tarball, struct macro_ctx *mc,
                                            struct kiln_arena *a, const char **spec_path,
                                            struct kiln_err *err);

#endif
