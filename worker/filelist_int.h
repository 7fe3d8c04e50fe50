/*
 * filelist_int.h - private to worker/filelist.c and its unit tests: the pieces of the
 * %files collector that are worth testing on their own.
 */
#ifndef KILN_WORKER_FILELIST_INT_H
#define KILN_WORKER_FILELIST_INT_H

#include "util/util.h"

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

#endif
