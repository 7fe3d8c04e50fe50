/*
 * spec_int.h - private to spec/: the spec parser's state and the helpers its files share.
 */
#ifndef KILN_SPEC_INT_H
#define KILN_SPEC_INT_H

#include "util/util.h"

#include "spec/spec.h"

/* ======================================================================================== */
/* The spec parser's private state.                                                          */

enum spec_strip {
	SPEC_STRIP_NOTHING = 0,
	SPEC_STRIP_TRAILINGSPACE = 1 << 0,
	SPEC_STRIP_COMMENTS = 1 << 1,
};

/* The parts (sections) of a spec, as the section dispatcher knows them. */
enum spec_part {
	SPEC_PART_NONE = 0, /* end of file */
	SPEC_PART_ERROR,
	SPEC_PART_PREAMBLE, /* %package */
	SPEC_PART_PREP,
	SPEC_PART_BUILDREQUIRES,
	SPEC_PART_CONF,
	SPEC_PART_BUILD,
	SPEC_PART_INSTALL,
	SPEC_PART_CHECK,
	SPEC_PART_CLEAN,
	SPEC_PART_SCRIPT, /* kind in spec_parse_priv.script_kind */
	SPEC_PART_FILES,
	SPEC_PART_CHANGELOG,
	SPEC_PART_DESCRIPTION,
	SPEC_PART_POLICIES,
	SPEC_PART_PATCHLIST,
	SPEC_PART_SOURCELIST,
	SPEC_PART_END,
	SPEC_PART_BUILDARCHS, /* BuildArch: seen in the main package: parse again */
};

struct spec_cond {
	bool reading; /* lines of this branch are used */
	bool taken;   /* some branch of this %if was true */
	bool seen_else;
	int line;
};

struct spec_file_frame {
	const char *name;     /* in the spec's arena */
	struct kiln_buf text; /* owned: the whole file */
	size_t pos;
	int lineno; /* physical lines read */
	struct spec_file_frame *up;
};

/* A -a / -p fragment of a build section, in spec order. */
struct spec_fragment {
	enum spec_section sec;
	bool prepend;
	const char *text;
};

struct spec_parse_priv {
	struct spec *spec;
	struct macro_ctx *ctx; /* borrowed */
	struct kiln_err *err;  /* borrowed */
	unsigned flags;        /* enum spec_parse_flags */
	/* Reader. */
	struct spec_file_frame *file;
	struct kiln_buf lbuf; /* the current logical line, expanded when reading */
	size_t next;          /* where the next line of lbuf starts */
	bool pending;         /* lbuf holds lines not yet returned */
	bool lbuf_reading;    /* lbuf was read while reading (and so expanded) */
	struct spec_cond conds[KILN_LIMIT_IF_DEPTH];
	int nconds;
	struct kiln_buf line; /* the current line, stripped, without its newline */
	bool line_nl;         /* the current line ended with a newline */
	int lineno;           /* line number of the current line */
	/* Sections. */
	enum spec_script_kind script_kind;
	struct spec_package *pkg; /* package of the section being parsed */
	bool have_section[SPEC_SEC_COUNT];
	struct kiln_buf secbuf[SPEC_SEC_COUNT]; /* main section texts */
	struct spec_fragment *frags;
	size_t nfrags, capfrags;
	uint32_t next_source, next_patch; /* auto numbering: highest number + 1 */
	bool any_source, any_patch;
	uint32_t dup_tag;         /* a single-valued tag given twice in this package */
	bool buildarch_restarted; /* this is the second pass after BuildArch: */
	bool prep_done;           /* %prep was parsed (rpm 4.18 then drops a line) */
	enum spec_part last_part; /* the section parsed before the current one (for %end) */
};

/* Reader (read.c). */
KILN_MUST_CHECK kiln_rc spec_read_open(struct spec_parse_priv *p, const char *name,
                                       const char *text, size_t len);
/* Read the next line into p->line with the strip mode, appending it to the parsed text.
 * Returns 0 with a line, 1 at end of input, -1 on error (p->err set). */
/* Read text (generated spec, e.g. BuildSystem sections) next, before the rest of the
 * current input; name is used in messages. */
KILN_MUST_CHECK kiln_rc spec_read_push(struct spec_parse_priv *p, const char *name,
                                       const char *text, size_t len);
int spec_read_line(struct spec_parse_priv *p, unsigned strip);
void spec_read_close(struct spec_parse_priv *p);
/* The part a line starts, SPEC_PART_NONE when it is not a section header. */
enum spec_part spec_is_part(struct spec_parse_priv *p, const char *line);

/* rpm's rpmCharCheck (4.18): each character of v alphanumeric or in allowed (the first in
 * first_allowed, when given), no "..". The error names the last bad character, as rpm's
 * does; a '%', '{' or '}' first warns "Possible unexpanded macro". Messages quote the
 * current line. */
KILN_MUST_CHECK kiln_rc spec_char_check(struct spec_parse_priv *p, const char *v,
                                        const char *allowed, const char *first_allowed);
/* Errors with rpm's "line N: " prefix. */
kiln_rc spec_error(struct spec_parse_priv *p, kiln_rc rc, const char *fmt, ...) KILN_PRINTF(3, 4);
void spec_warn(struct spec_parse_priv *p, const char *fmt, ...) KILN_PRINTF(2, 3);
/* An error the forced parse (rpmspec) reports and goes on after: send it, with its
 * location, to the macro context's diagnostic sink and clear p->err. */
void spec_report(struct spec_parse_priv *p);
/* Append raw text to the parsed output. */
void spec_parsed_add(struct spec_parse_priv *p, const char *s, size_t len);

/* Sections (one file each). */
enum spec_part spec_parse_preamble(struct spec_parse_priv *p, bool initial);
enum spec_part spec_parse_prep(struct spec_parse_priv *p);
enum spec_part spec_parse_build_section(struct spec_parse_priv *p, enum spec_part part);
enum spec_part spec_parse_description(struct spec_parse_priv *p);
enum spec_part spec_parse_script(struct spec_parse_priv *p);
enum spec_part spec_parse_files(struct spec_parse_priv *p);
enum spec_part spec_parse_changelog(struct spec_parse_priv *p);
enum spec_part spec_parse_list(struct spec_parse_priv *p, bool patches);
enum spec_part spec_parse_skip(struct spec_parse_priv *p); /* %sepolicy */

/* Final steps (final.c). */
KILN_MUST_CHECK kiln_rc spec_preamble_done(struct spec_parse_priv *p, struct spec_package *pkg);
KILN_MUST_CHECK kiln_rc spec_buildsystem_check(struct spec_parse_priv *p, const char *name);
KILN_MUST_CHECK kiln_rc spec_finish(struct spec_parse_priv *p);
/* Parse the section that starts at the current line and those after it (parse.c). */
enum spec_part spec_dispatch_part(struct spec_parse_priv *p, enum spec_part part);
/* %prep post-processing: %setup and %patch lines into shell (prep.c). */
KILN_MUST_CHECK kiln_rc spec_prep_process(struct spec_parse_priv *p, const struct kiln_buf *raw,
                                          struct kiln_buf *out);
KILN_MUST_CHECK kiln_rc spec_lua_add_source(struct spec_parse_priv *p,
                                            const struct spec_source *src);
/* Resolve "[-n] NAME" from argv[from..] to a package; *used gets the argv entries
 * consumed. NULL name = main package. */
KILN_MUST_CHECK kiln_rc spec_lookup_package(struct spec_parse_priv *p, const char *name, bool full,
                                            struct spec_package **out);

/* A section header's options, parsed the way rpm's popt tables do (sections.c). */
struct spec_header_args {
	const char *line;     /* borrowed: the header as rpm quotes it in messages */
	const char *name;     /* borrowed from argv: -n NAME, or the first word no option */
	bool full;            /* -n */
	const char *prog;     /* -p (scripts) */
	const char *file;     /* -f (scripts; %files takes its -f words itself) */
	const char *lang;     /* -l (description) */
	const char *priority; /* -P (triggers) */
	bool expand, qformat; /* -e, -q */
};
/* Options from argv[1..argc) among the letters in allowed (clusters, attached values,
 * "--" ends them), then at most one name, and none beside -n: rpm's "Bad option X: LINE"
 * and "Too many names: LINE". -p's value is checked as it is read. */
KILN_MUST_CHECK kiln_rc spec_header_args(struct spec_parse_priv *p, char **argv, int argc,
                                         const char *allowed, const char *line,
                                         struct spec_header_args *a);
/* The package a header names: "LINE: package NAME does not exist" (KILN_ENOTFOUND). */
KILN_MUST_CHECK kiln_rc spec_header_package(struct spec_parse_priv *p,
                                            const struct spec_header_args *a,
                                            struct spec_package **out);

/* Shared helpers. */
/* rpmExpandNumeric(): expand expr; a number (any base strtoll() reads), y/Y 1, n/N 0,
 * anything else (or an error) 0. */
int64_t spec_expand_numeric(struct spec_parse_priv *p, const char *expr);
struct spec_package *spec_package_find(struct spec *spec, const char *name);
KILN_MUST_CHECK kiln_rc spec_package_add(struct spec_parse_priv *p, const char *name,
                                         struct spec_package **out);
/* "[-n] NAME" options of %package/%description/%files/scripts: resolve the package. */
/* Where rich dependencies may appear: rpm refuses a top-level "unless" in requirement-like
 * tags and a top-level "if" in conflict-like ones. */
enum spec_rich_ctx {
	SPEC_RICH_NONE,     /* Provides, Obsoletes, OrderWithRequires, trigger conditions */
	SPEC_RICH_POSITIVE, /* Requires, Recommends, Suggests, BuildRequires */
	SPEC_RICH_NEGATIVE, /* Conflicts, BuildConflicts, Supplements, Enhances */
};
enum spec_dep_parse_opts {
	SPEC_DEPP_PROVIDES = 1 << 0,     /* Provides: rpmlib() names are "invalid dependency" */
	SPEC_DEPP_OBSOLETES = 1 << 1,    /* Obsoletes: names are package names (rpmCharCheck) */
	SPEC_DEPP_TRIGGER = 1 << 2,      /* trigger conditions: no two may overlap */
	SPEC_DEPP_FILE_TRIGGER = 1 << 3, /* file trigger conditions: absolute paths */
};
/* Parse a dependency list into out: base_flags (qualifiers, trigger senses) on every item,
 * rich dependencies as rich allows, opts from enum spec_dep_parse_opts. Messages quote
 * what (the line). KILN_ESYNTAX with rpm's message, KILN_ELIMIT for a rich dependency
 * nested deeper than KILN_LIMIT_EXPR_DEPTH. */
KILN_MUST_CHECK kiln_rc spec_dep_parse(struct spec_parse_priv *p, const char *text,
                                       uint32_t base_flags, enum spec_rich_ctx rich, unsigned opts,
                                       struct spec_deps *out, const char *what);
/* rpm's rpmdsCompare: do two dependencies match a common version? Different names never
 * do; an unversioned one matches everything of its name. */
bool spec_dep_overlap(const struct spec_dep *a, const struct spec_dep *b);
KILN_MUST_CHECK kiln_rc spec_deps_add(struct spec *spec, struct spec_deps *d, const char *name,
                                      const char *evr, uint32_t flags, struct kiln_err *err);
KILN_MUST_CHECK kiln_rc spec_add_source(struct spec_parse_priv *p, const char *value, bool is_patch,
                                        bool numbered, uint32_t num);
/* Split a section header's options into argv (shell-like quotes allowed, as popt does). */
KILN_MUST_CHECK kiln_rc spec_split_options(struct spec_parse_priv *p, const char *s, char ***argv,
                                           int *argc);
void spec_argv_free(char **argv, int argc);
char *spec_strdup(struct spec_parse_priv *p, const char *s, size_t len);
/* Translated strings (Summary(de), %description -l de): set tag's element for lang (NULL
 * or "" = "C"), growing the locale table. value must outlive the tag set. */
KILN_MUST_CHECK kiln_rc spec_put_i18n(struct spec_parse_priv *p, struct rpmtag_set *ts,
                                      uint32_t tag, const char *lang, const char *value);
bool spec_has_i18n(const struct rpmtag_set *ts, uint32_t tag, const char *lang);
#endif
