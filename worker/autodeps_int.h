/*
 * autodeps_int.h - private to worker/autodeps.c, pkgconfig.c and depline.c (and their
 * tests): the emulation of what Debian's pkgconfigdeps.sh gets from pkgconf 1.8 for one .pc
 * file, and rpm's reading of dependency generator output.
 */
#ifndef KILN_WORKER_AUTODEPS_INT_H
#define KILN_WORKER_AUTODEPS_INT_H

#include "util/util.h"

/* Which of pkgconf's dependency lists to print. */
enum worker_pc_list {
	WORKER_PC_PROVIDES, /* --print-provides: Provides: and "ID = VERSION" */
	WORKER_PC_REQUIRES, /* --print-requires --print-requires-private */
};

/* Read the .pc text [text, text+len) the way pkgconf 1.8 does (line continuation, comments,
 * NAME=VALUE variables expanded as they are defined, ${pcfiledir}, case-insensitive
 * fields) and append the lines pkg-config prints for list: "name", or "name OP version"
 * with OP one of < <= = != >= > (any). id is the file's name without ".pc"; pcfiledir is
 * the directory the file is in. *loaded is false, and nothing is appended, when pkgconf
 * refuses the file (a Name, Description or Version field is missing). KILN_ENOMEM or
 * KILN_ELIMIT (out's limit). Thread-safe. */
KILN_MUST_CHECK kiln_rc worker_pc_print(const char *text, size_t len, const char *id,
                                        const char *pcfiledir, enum worker_pc_list list,
                                        struct kiln_buf *out, bool *loaded, struct kiln_err *err);

/* pkgconfigdeps.sh's loop over pkgconf's output: bash's `read n r v` (backslash escapes,
 * line continuation), then "pkgconfig(n) r v" (r and v only when both are there), one line
 * each, appended to out. */
void worker_pc_rpm_lines(const char *text, size_t len, struct kiln_buf *out);

/* Generator output, read as rpmbuild reads it (parseRCPOT with FIND_REQUIRES/PROVIDES, in
 * spec_deps_scan): lines of "NAME [OP EVR]" items and, for requires, "(rich dependencies)",
 * separated by blanks or commas; a NUL, "\n" or "\r" ends a line. fn gets each dependency
 * (flags: RPMTAG_DEP_FIND_* and the comparison; evr "" when unversioned). Errors are rpm's
 * messages prefixed with what: "what: Versioned file name not permitted: /x >= 1", as
 * KILN_ESYNTAX; a bad version format is a warning (through macros) unless
 * terminate_bad_version. Whatever fn returns stops the parse. */
struct macro_ctx;
typedef kiln_rc (*worker_depline_fn)(void *data, const char *name, const char *evr, uint32_t flags,
                                     struct kiln_err *err);

struct worker_depline {
	const char *what;           /* the file the output is about */
	bool provides;              /* provides: no rich dependencies, RPMTAG_DEP_FIND_PROVIDES */
	bool terminate_bad_version; /* %_wrong_version_format_terminate_build */
	struct macro_ctx *macros;   /* where warnings go */
	worker_depline_fn fn;
	void *data;
};

KILN_MUST_CHECK kiln_rc worker_depline_parse(const struct worker_depline *p, const char *text,
                                             size_t len, struct kiln_err *err);

#endif
