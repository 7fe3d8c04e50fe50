/*
 * brp_int.h - what brp.c (kiln's brp scripts in process) and brp_debuginfo.c
 * (find-debuginfo in process) share: the buildroot's walk, its ELF checks and the
 * sandboxed scripts that run the real tools.
 */
#ifndef KILN_WORKER_BRP_INT_H
#define KILN_WORKER_BRP_INT_H

#include <sys/types.h>

#include "worker/build_int.h"

/* Files per tool process (xargs -n). */
#define BRP_BATCH 16

struct brp_ent {
	const char *rel; /* relative to the walk's top */
	const char *base;
	mode_t mode;
	off_t size;
	dev_t dev;
	ino_t ino;
	nlink_t nlink;
};

struct brp_walk {
	struct kiln_arena *a;
	struct brp_ent *v;
	size_t n, cap;
	const char *top; /* for messages */
	bool dirs;       /* directories are entries too (each before what is in it) */
};

/* Every file below top that is not a directory, as find walks it (directory order,
 * symbolic links not followed). w->v is the caller's to free(); names live in b's arena. */
KILN_MUST_CHECK kiln_rc worker_brp_walk(struct build *b, const char *top, struct brp_walk *w,
                                        struct kiln_err *err);
/* The same with the directories below top, as find lists them (each before its entries). */
KILN_MUST_CHECK kiln_rc worker_brp_walk_all(struct build *b, const char *top, struct brp_walk *w,
                                            struct kiln_err *err);
/* A word the shell takes as it is: no quoting, expansion or operator in it. */
bool worker_brp_word_plain(const char *w, size_t len);
bool worker_brp_elf_head(int rootfd, const struct brp_ent *e);
/* Whether e starts as an ELF file, and what readelf -S and objdump -h would show of it
 * (*s zeroed when they could not read it either): one open for both. */
enum worker_brp_elf { WORKER_BRP_NOT_ELF, WORKER_BRP_ELF_UNREADABLE, WORKER_BRP_ELF };
enum worker_brp_elf worker_brp_elf_read(int rootfd, const struct brp_ent *e,
                                        struct worker_elf_sections *s);

struct brp_run {
	struct build *b;
	const struct worker_brp_plan *p;
	const char *cmd;   /* %{__spec_install_cmd} */
	const char *pre;   /* %{___build_template}: #!shell and the environment */
	const char *root;  /* the buildroot as the stages see it */
	const char *hroot; /* ... and as kiln sees it */
	const char *ncpus;
	size_t nscripts;
};

/* Run body (shell lines) in the sandbox after the build's environment, as a script of
 * %install; code (optional) gets its exit code (worker_build_script_run). */
KILN_MUST_CHECK kiln_rc worker_brp_script(struct brp_run *r, const char *body, int *code,
                                          struct kiln_err *err);

/* A growing array of root-relative names (borrowed from the walk). */
struct brp_names {
	const char **v;
	size_t n, cap;
};

KILN_MUST_CHECK kiln_rc worker_brp_names_add(struct brp_names *l, const char *rel,
                                             struct kiln_err *err);

/* brp_debuginfo.c: a find-debuginfo step (st->fdi) on the walked buildroot; pwd is where
 * %install's script ended. *done false: kiln left it to the script, nothing touched. */
KILN_MUST_CHECK kiln_rc worker_brp_fdi_run(struct brp_run *r, int rootfd, const struct brp_walk *w,
                                           const struct worker_brp_step *st, const char *pwd,
                                           bool *done, struct kiln_err *err);

#endif
