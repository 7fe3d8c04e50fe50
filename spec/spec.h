/*
 * spec.h - spec files as rpmbuild 4.20 reads them: the parser, conditionals, %files,
 * BuildSystem, -a/-p, and the query-format source over a parsed spec (`kiln spec -q`).
 * rpm's tag table and query-format engine are rpmtag/rpmtag.h, a layer below.
 */
#ifndef KILN_SPEC_H
#define KILN_SPEC_H

#include "util/util.h"

#include "rpmtag/rpmtag.h"

/* ======================================================================================== */
/* Spec files                                                                               */
/* ======================================================================================== */

/* The parser reads a spec the way rpmbuild 4.20 does: line by line, each logical line
 * macro-expanded once in the caller's macro context (which the parse changes: tags define
 * %name and friends, %define/%global persist), with conditionals, %include, sections,
 * BuildSystem synthesis and -a/-p hooks. The result is a model of the spec plus the
 * "parsed" text `rpmspec -P` prints. Everything hangs off one struct spec and lives in its
 * arena until spec_free(). */

struct macro_ctx;

enum spec_parse_flags {
	/* Do not check ExclusiveArch/ExcludeArch/ExclusiveOS/ExcludeOS (rpmspec); without it
	 * an excluded target fails with KILN_EUNSUPP and rpm's "Architecture is excluded: X",
	 * "Architecture is not included: X", "OS is excluded: X" or "OS is not included: X". */
	SPEC_PARSE_ANYARCH = 1 << 0,
	SPEC_PARSE_FORCE = 1 << 1, /* keep going after %changelog errors (rpmspec -P does) */
	/* Read nothing but the spec text: %include and Icon: are errors. For specs from
	 * outside (the API, fuzzing), together with a restricted macro context. */
	SPEC_PARSE_NO_FILES = 1 << 2,
};

/* Build-time sections, in the order rpmbuild runs them. */
enum spec_section {
	SPEC_SEC_PREP,
	SPEC_SEC_BUILDREQUIRES, /* %generate_buildrequires */
	SPEC_SEC_CONF,
	SPEC_SEC_BUILD,
	SPEC_SEC_INSTALL,
	SPEC_SEC_CHECK,
	SPEC_SEC_CLEAN,
	SPEC_SEC_COUNT,
};

/* Runtime scriptlets and triggers. */
enum spec_script_kind {
	SPEC_SCRIPT_PRE,
	SPEC_SCRIPT_POST,
	SPEC_SCRIPT_PREUN,
	SPEC_SCRIPT_POSTUN,
	SPEC_SCRIPT_PRETRANS,
	SPEC_SCRIPT_POSTTRANS,
	SPEC_SCRIPT_PREUNTRANS,
	SPEC_SCRIPT_POSTUNTRANS,
	SPEC_SCRIPT_VERIFY,
	SPEC_SCRIPT_TRIGGERPREIN,
	SPEC_SCRIPT_TRIGGERIN,
	SPEC_SCRIPT_TRIGGERUN,
	SPEC_SCRIPT_TRIGGERPOSTUN,
	SPEC_SCRIPT_FILETRIGGERIN,
	SPEC_SCRIPT_FILETRIGGERUN,
	SPEC_SCRIPT_FILETRIGGERPOSTUN,
	SPEC_SCRIPT_TRANSFILETRIGGERIN,
	SPEC_SCRIPT_TRANSFILETRIGGERUN,
	SPEC_SCRIPT_TRANSFILETRIGGERPOSTUN,
	SPEC_SCRIPT_COUNT,
};

/* Dependency kinds of a package (and the build dependencies of the spec). */
enum spec_dep_kind {
	SPEC_DEPS_REQUIRES,
	SPEC_DEPS_PROVIDES,
	SPEC_DEPS_CONFLICTS,
	SPEC_DEPS_OBSOLETES,
	SPEC_DEPS_RECOMMENDS,
	SPEC_DEPS_SUGGESTS,
	SPEC_DEPS_SUPPLEMENTS,
	SPEC_DEPS_ENHANCES,
	SPEC_DEPS_ORDER,
	SPEC_DEPS_COUNT,
};

/* Script flags as rpm stores them (the *FLAGS tags). */
enum spec_script_flags {
	SPEC_SCRIPT_F_EXPAND = 1 << 0,  /* -e: macro-expand at install time */
	SPEC_SCRIPT_F_QFORMAT = 1 << 1, /* -q: query-format-expand */
	SPEC_SCRIPT_F_CRITICAL = 1 << 2,
};

/* All strings below are borrowed from the spec's arena. */

struct spec_dep {
	const char *name;
	const char *evr; /* "" when unversioned */
	uint32_t flags;  /* enum rpmtag_dep_flags: comparison and qualifiers */
};

struct spec_deps {
	struct spec_dep *v;
	size_t n, cap;
};

struct spec_script {
	enum spec_script_kind kind;
	const char *body;  /* "" when empty */
	const char **prog; /* interpreter argv; NULL when the default /bin/sh */
	size_t nprog;
	unsigned flags;         /* enum spec_script_flags */
	uint32_t priority;      /* file triggers: -P, default 1000000 */
	struct spec_deps conds; /* triggers: the conditions after "--" */
	const char *file;       /* -f FILE, or NULL */
	int line;
};

/* One %files line's worth of metadata for its paths. */
enum spec_attr_fields {
	SPEC_ATTR_MODE = 1 << 0,
	SPEC_ATTR_USER = 1 << 1,
	SPEC_ATTR_GROUP = 1 << 2,
	SPEC_ATTR_DIRMODE = 1 << 3,
};

struct spec_attr {
	unsigned set; /* enum spec_attr_fields: which are given (not "-") */
	uint32_t mode, dirmode;
	const char *user, *group;
	bool given; /* the directive appeared, even as %attr(-,-,-) (rpm ranks duplicates by it) */
};

enum spec_entry_flags {
	SPEC_ENTRY_DIR = 1 << 0,       /* %dir */
	SPEC_ENTRY_DOCDIR = 1 << 1,    /* %docdir */
	SPEC_ENTRY_EXCLUDE = 1 << 2,   /* %exclude */
	SPEC_ENTRY_SPECIAL = 1 << 3,   /* relative %doc/%license: copied from the build dir */
	SPEC_ENTRY_DEV = 1 << 4,       /* %dev(...) */
	SPEC_ENTRY_VERIFY = 1 << 5,    /* %verify(...) on this line */
	SPEC_ENTRY_DEFVERIFY = 1 << 6, /* a %defverify(...) is in force */
};

struct spec_files_entry {
	const char **paths; /* the names or globs on the line, unquoted */
	const char **globs; /* the same as glob patterns: quoted or backslash-escaped glob
	                     * characters ("?*[]{}\\") carry a backslash, as rpm globs them */
	size_t npaths;
	uint32_t fileflags;       /* enum rpmtag_file_flags (CONFIG, DOC, GHOST, LICENSE, ...) */
	uint32_t verifyflags;     /* enum rpmtag_verify_flags */
	unsigned flags;           /* enum spec_entry_flags */
	struct spec_attr attr;    /* %attr on this line */
	struct spec_attr defattr; /* the %defattr in force */
	const char *lang;         /* %lang(...) or NULL */
	const char *caps;         /* %caps(...) or NULL */
	char dev_type;            /* %dev: 'b' or 'c' */
	uint32_t dev_major, dev_minor;
	const char *error; /* what is wrong with the line (reported when packaging), or NULL */
	const char *file;  /* the %files -f list the line came from; NULL for the spec */
	int line;
};

struct spec_changelog {
	int64_t time; /* 12:00 UTC of the date for date-only entries */
	const char *name;
	const char *text;
};

struct spec_package {
	const char *name;
	bool is_main;
	bool has_files; /* a %files section exists (only those are built) */
	bool has_description;
	struct spec_deps deps[SPEC_DEPS_COUNT];
	struct spec_script *scripts; /* every scriptlet and trigger, in spec order */
	size_t nscripts, capscripts;
	struct spec_files_entry *files; /* %files entries in order */
	size_t nfiles, capfiles;
	const char **file_lists; /* %files -f FILE names */
	size_t nfile_lists;
	/* The %defattr and %defverify in force at the end of %files (and of each list added
	 * with spec_files_add_text()): -f lists are read as if appended to the section. */
	struct spec_attr files_defattr;
	uint32_t files_defverify;
	bool files_defverify_given;
	bool autoreq, autoprov;
	const char **remove_postfixes; /* RemovePathPostfixes: entries, in order */
	size_t nremove_postfixes;
	struct rpmtag_set *tags; /* the header tags the parser set (qf source, JSON, pack) */
	int line;                /* where %package was, 0 for the main package */
};

struct spec_source {
	uint32_t num;
	bool is_patch;
	bool nosource;    /* NoSource/NoPatch */
	const char *url;  /* the value as written (after expansion) */
	const char *file; /* its last path component */
	const char *path; /* %{_sourcedir}/file */
};

/* What BuildOption lines gave for each build section. */
struct spec_buildopts {
	const char **v;
	size_t n, cap;
};

struct spec {
	const char *path;               /* the spec file as given */
	struct spec_package **packages; /* [0] is the main package */
	size_t npackages, cappackages;
	struct spec_source *sources; /* sources and patches in declaration order */
	size_t nsources, capsources;
	const char *sections[SPEC_SEC_COUNT]; /* final script text (after BuildSystem and
					       * -a/-p), NULL when the section is absent */
	struct spec_deps buildrequires;
	struct spec_deps buildconflicts;
	const char *buildsystem; /* BuildSystem: name or NULL */
	struct spec_buildopts buildopts[SPEC_SEC_COUNT];
	const char **buildarchs; /* BuildArch: of the main package */
	size_t nbuildarchs;
	const char **exclusivearch, **excludearch, **exclusiveos, **excludeos;
	size_t nexclusivearch, nexcludearch, nexclusiveos, nexcludeos;
	struct spec_changelog *changelog; /* newest first, as written */
	size_t nchangelog, capchangelog;
	struct kiln_buf parsed;       /* what `rpmspec -P` prints (rpm 4.20 form) */
	struct rpmtag_set *srctags;   /* the source package's header tags */
	struct macro_ctx *macros;     /* borrowed from the caller */
	struct kiln_arena arena;      /* owns everything above */
	struct spec_parse_priv *priv; /* parser state, freed with the spec */
};

/* Parse path in macro context ctx (configured by the caller; the parse defines macros in
 * it). On error the message uses rpm's wording ("line 12: Unknown tag: Foo: bar") and
 * err->input/err->line name the file and line. OUT: *out, free with spec_free(). */
KILN_MUST_CHECK kiln_rc spec_parse_file(const char *path, struct macro_ctx *ctx, unsigned flags,
                                        struct spec **out, struct kiln_err *err);
/* The same from memory; name is used in messages and %__file_name. */
KILN_MUST_CHECK kiln_rc spec_parse_mem(const char *name, const char *text, size_t len,
                                       struct macro_ctx *ctx, unsigned flags, struct spec **out,
                                       struct kiln_err *err);
void spec_free(struct spec *spec);

/* Add the tags rpm adds only when it packages (rpmbuild, not rpmspec -q): the trigger and
 * file trigger scripts with their programs, flags and priorities, and the changelog in
 * subpackages. Call once per package that gets built, before writing it. Scriptlets read
 * with -f FILE are the build's business (the file exists only after %install). */
KILN_MUST_CHECK kiln_rc spec_package_build_tags(struct spec *spec, struct spec_package *pkg,
                                                struct kiln_err *err);

/* Parse dependency text ("a >= 1, b, (c or d)") the way BuildRequires: reads it and append
 * the result to out (memory from the spec's arena). For what %generate_buildrequires
 * prints. Errors use rpm's wording for BuildRequires. */
KILN_MUST_CHECK kiln_rc spec_deps_add_text(struct spec *spec, struct spec_deps *out,
                                           const char *text, struct kiln_err *err);

/* ---------------------------------------------------------------------------------------- */
/* rpm's dependency grammar, for the spec's tags and for dependency generator output alike.
 * spec_deps_scan() reads a list the way rpm 4.18's parseRCPOT does: items separated by
 * blanks or commas, each "NAME [OP EVR]" (OP one of < <= =< = == >= => >, a word of its
 * own) or a rich dependency "(...)" read by rpm's rpmrichParse rules (and/or/if/unless/
 * else/with/without, chaining and contexts; nested at most KILN_LIMIT_EXPR_DEPTH deep).
 * Every name gets rpm's checkDep: its first character, no version on a file name,
 * rpmCharCheck on the version, checkSep/checkEpoch. The scanner stores nothing and words
 * no location: it reports each item and each complaint, and the caller keeps the one and
 * turns the other into its own "line N: ..." or "FILE: ..." message. */

enum spec_deps_scan_flags {
	/* Rich dependencies are allowed (else rpm's "No rich dependencies allowed for this
	 * type"), judged as in a requirement-like tag: a top-level "unless" is refused. */
	SPEC_DEPS_SCAN_RICH = 1 << 0,
	/* With _RICH: judged as in a conflict-like tag instead: a top-level "if" is refused. */
	SPEC_DEPS_SCAN_NEGATIVE = 1 << 1,
	/* File trigger conditions: a name not beginning with '/' is refused before checkDep,
	 * as rpm's parseRCPOT does for the file trigger tags. */
	SPEC_DEPS_SCAN_PATHS = 1 << 2,
};

/* One item; the strings are borrowed until the callback returns. */
struct spec_deps_item {
	const char *name; /* the name, or a whole rich dependency as rpm spells it again:
	                   * "( a  =>  1 )" is "(a >= 1)" */
	const char *evr;  /* NULL when unversioned (always for a rich dependency) */
	uint32_t sense;   /* RPMTAG_DEP_LESS/_GREATER/_EQUAL, 0 when unversioned */
	bool rich;
};

enum spec_deps_note_kind {
	SPEC_DEPS_NOTE_ERROR,   /* the list is refused */
	SPEC_DEPS_NOTE_WARNING, /* rpmCharCheck's "Possible unexpanded macro" */
	/* checkSep/checkEpoch: an error only with %_wrong_version_format_terminate_build
	 * (which rpm's macros set), else a warning. */
	SPEC_DEPS_NOTE_BAD_VERSION,
};

/* What rpm quotes after a message. */
enum spec_deps_quote {
	/* parseRCPOT on generator output quotes the text from the item on (from after a rich
	 * dependency that its tag's context refuses); rpm's spec parser quotes the line. */
	SPEC_DEPS_QUOTE_REST,
	/* rpmCharCheck without a spec quotes the version; with one, the spec's current line. */
	SPEC_DEPS_QUOTE_FIELD,
	SPEC_DEPS_QUOTE_NAME, /* the file trigger condition, in every reader */
};

struct spec_deps_note {
	enum spec_deps_note_kind kind;
	kiln_rc code;               /* as an error: KILN_ESYNTAX, KILN_ELIMIT for nesting */
	char msg[KILN_ERR_MSG_MAX]; /* rpm's message: "Versioned file name not permitted" */
	enum spec_deps_quote quote_kind;
	const char *quote; /* in the scanned text; quote_len bytes, no NUL */
	size_t quote_len;
};

/* The callbacks get the err given to spec_deps_scan(); what they return other than
 * KILN_OK stops the scan and is its result. An error note stops it in any case (with
 * note->code when its callback returns KILN_OK). */
struct spec_deps_scan_ops {
	kiln_rc (*item)(void *ctx, const struct spec_deps_item *item, struct kiln_err *err);
	kiln_rc (*note)(void *ctx, const struct spec_deps_note *note, struct kiln_err *err);
};

/* Scan [text, text+len) (a NUL ends it too) with flags from enum spec_deps_scan_flags.
 * err gets only the scanner's own failures: KILN_ENOMEM, or KILN_ELIMIT for an item
 * longer than KILN_LIMIT_LINE. Thread-safe. */
KILN_MUST_CHECK kiln_rc spec_deps_scan(const char *text, size_t len, unsigned flags,
                                       const struct spec_deps_scan_ops *ops, void *ctx,
                                       struct kiln_err *err);

/* Parse text (a %files -f list, read after %install) as more lines of pkg's %files
 * section, with the %defattr/%defverify in force at its end, as rpmbuild does: each line is
 * macro-expanded in spec->macros (with %license kept as the directive), lines whose first
 * non-blank character is '#' are comments. name is the list's path, kept in each entry's
 * file for messages. A list with no lines is rpm's "Empty %files file NAME" (KILN_ESYNTAX),
 * a warning through the macro context's diagnostics when %_empty_manifest_terminate_build
 * is 0. Problems of single lines stay in the entries' error, as for the spec's lines;
 * expansion errors fail with err located at name:line. Not thread-safe for one spec. */
KILN_MUST_CHECK kiln_rc spec_files_add_text(struct spec *spec, struct spec_package *pkg,
                                            const char *name, const char *text, size_t len,
                                            struct kiln_err *err);

/* rpm's section names ("prep", "generate_buildrequires", ...) and scriptlet names ("pre",
 * "triggerin", ...). */
const char *spec_section_name(enum spec_section sec);
const char *spec_script_name(enum spec_script_kind kind);
/* The header tags of a scriptlet kind: body, program and flags tags. */
void spec_script_tags(enum spec_script_kind kind, uint32_t *body, uint32_t *prog, uint32_t *flags);

/* A query-format source over tags (a package's, or spec->srctags for the source package),
 * with :expand in the spec's macro context. The source borrows from spec (its context is
 * allocated in spec's arena); valid while spec lives. */
KILN_MUST_CHECK kiln_rc spec_qf_source_make(struct spec *spec, const struct rpmtag_set *tags,
                                            struct rpmtag_qf_source *src, struct kiln_err *err);
/* Append the JSON model (packages, tags, dependencies, sections, sources, build system,
 * files entries, changelog) to out. */
KILN_MUST_CHECK kiln_rc spec_json_write(const struct spec *spec, struct kiln_buf *out,
                                        struct kiln_err *err);

#endif
