/*
 * filelist_int.h - private to the %files collector (filelist.c, fileglob.c, fileclass.c,
 * filedoc.c, unpackaged.c) and its unit tests: its state and the pieces its files share.
 */
#ifndef KILN_WORKER_FILELIST_INT_H
#define KILN_WORKER_FILELIST_INT_H

#include "util/util.h"

#include <sys/stat.h>

#include "spec/spec.h"
#include "pack/pack.h"
#include "worker/worker.h"

/* A list of strings in an arena (the arena is the caller's). */
struct worker_strv {
	const char **v;
	size_t n, cap;
};

/* Expand GNU glob braces ("a{b,c{d,e}}f" -> abf acdf acef), appending to out in order;
 * escaped braces and an unbalanced "{" stay literal. */
KILN_MUST_CHECK kiln_rc worker_glob_braces(const char *pat, struct kiln_arena *a,
                                           struct worker_strv *out, struct kiln_err *err);
/* Does the glob pattern need globbing (an unescaped-or-escaped "*?[" or a brace with a
 * comma), as rpm's rpmIsGlob(pattern, 0) decides? */
bool worker_glob_is_magic(const char *pat);
/* Match an absolute pattern ("/usr/lib/x*.so") beneath rootfd, the way glob(3) with
 * GLOB_BRACE and rpm's sorting does: "*" and "?" skip leading dots, backslash escapes,
 * a trailing "/" keeps directories only. Appends the matches as absolute paths, sorted
 * (strcmp). A directory reached through a symlink that leaves rootfd is KILN_EPRIV. */
KILN_MUST_CHECK kiln_rc worker_glob_in_root(int rootfd, const char *pat, struct kiln_arena *a,
                                            struct worker_strv *out, struct kiln_err *err);
/* Lexically normalise an absolute path into out ("//", "/./", ".."); false when ".."
 * climbs above "/". A trailing "/" is kept when keep_slash. */
bool worker_path_clean(const char *path, bool keep_slash, struct kiln_buf *out);
/* The FILECOLORS value of a regular executable file (1 ELF32, 2 ELF64, 0 otherwise, and 0
 * for BPF objects), read from its ELF header through fd. */
uint32_t worker_elf_color_fd(int fd);
/* rpm's FILECLASS filter: is a libmagic description kept in the class dictionary? */
bool worker_fileclass_kept(const char *desc);

/* ---- The collector's state (filelist.c) ---- */

#define FL_EXCLUDE (1u << 16) /* internal: %exclude (rpm's RPMFILE_EXCLUDE) */
#define FL_MAX_DEPTH 256      /* directory recursion (paths are bounded too) */

/* One file as addFile() records it. Strings live in the list's arena. */
struct rec {
	const char *cpio; /* in-package path */
	const char *disk; /* host path with symlinked parents resolved */
	const char *drel; /* disk relative to the buildroot ("/usr/bin/x") */
	const char *link; /* symlink target, or NULL */
	struct stat st;
	uint32_t mode;
	const char *user, *group;
	uint32_t flags; /* SPEC_FILE_* | FL_EXCLUDE */
	uint32_t verify;
	const char *lang, *caps;
	unsigned wattr, wverify; /* rpm's precedence of duplicates (explicit > default) */
	size_t order;
};

/* The entry being applied (rpm's fl->cur and fl->def). */
struct cur {
	const struct spec_files_entry *e;
	int isdir; /* 1: %dir, -1: a trailing slash, 0: neither */
	const char *lang;
};

struct fl {
	const struct worker_filelist_opts *o;
	struct spec *spec;
	struct spec_package *pkg;
	struct worker_filelist *out;
	struct kiln_err *err;
	int rootfd;
	char *realroot; /* owned (heap): realpath of the buildroot */
	size_t realrootlen;
	struct rec *recs; /* owned (heap) */
	size_t nrecs, caprecs;
	struct worker_strv docdirs; /* in the arena */
	struct cur cur;
	uint32_t now;
	bool failed;
	kiln_rc fatal; /* ENOMEM / EIO: stop */
};

/* The files of %doc / %license entries without an absolute path (filedoc.c). */
struct special {
	const struct spec_files_entry **e; /* heap */
	const char **path;                 /* heap: the glob form of each file */
	size_t n, cap;
};

/* Helpers the collector's files share (filelist.c unless said). */
KILN_MUST_CHECK kiln_rc worker_strv_add(struct worker_strv *sv, struct kiln_arena *a, const char *s,
                                        struct kiln_err *err); /* fileglob.c */
int worker_str_cmp(const void *a, const void *b); /* qsort of const char *, fileglob.c */
void worker_fl_unescape(const char *s, size_t n, struct kiln_buf *out); /* fileglob.c */
/* The collector fails (the first failure wins) or warns, naming the entry's file:line. */
void worker_fl_fail(struct fl *fl, kiln_rc rc, const char *fmt, ...) KILN_PRINTF(3, 4);
void worker_fl_warn(struct fl *fl, const char *fmt, ...) KILN_PRINTF(2, 3);
kiln_rc worker_fl_nomem(struct fl *fl);
long worker_fl_macro_num(struct macro_ctx *m, const char *name, long dflt);
/* A string copied into the list's arena; NULL (and fl failed) on ENOMEM. */
const char *worker_fl_arena_str(struct fl *fl, const char *s);
/* Make e the current entry; false when its attributes are refused (fl failed). */
bool worker_fl_cur_set(struct fl *fl, const struct spec_files_entry *e);
/* addFile for a path of the buildroot (path: absolute in the package; glob: the form to
 * match, do_glob: expand it). */
KILN_MUST_CHECK kiln_rc worker_fl_add_binary(struct fl *fl, const char *path, const char *glob,
                                             bool do_glob);
/* rpm's build-id links of the files collected so far, made in the buildroot and added
 * (buildid.c); nothing unless %{?__debug_package} is set and the package is not noarch. */
KILN_MUST_CHECK kiln_rc worker_fl_build_ids(struct fl *fl);
/* Copy and add the special %doc (doc) or %license directory of sd (filedoc.c). */
KILN_MUST_CHECK kiln_rc worker_fl_special_dir(struct fl *fl, struct special *sd, bool doc);

#endif
