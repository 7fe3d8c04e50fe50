/*
 * macro.h - the rpm macro language: definitions, expansion, expressions, Lua, configuration
 * files (macro files and rpmrc), target selection, and rpm's version comparison.
 *
 * A struct macro_ctx holds one macro table, one Lua state and the configuration read into
 * it; two contexts never share state, so two specs can be expanded side by side. A context
 * is not thread-safe: use one per thread.
 *
 * Expansion follows rpm 4.20: the output of macro_expand() for a given table equals what
 * `rpm --eval` prints for the same definitions (docs/macros.md lists the built-ins).
 * Errors (rpm's "error: ..." messages) end the expansion and come back in a kiln_err;
 * warnings and %{echo:}/%{warn:} output go to the context's diagnostic sink. Like rpm,
 * messages are prefixed with "FILE: line N: " while the macros %__file_name and
 * %__file_lineno are defined (macro files do that while loading; the spec parser too).
 */
#ifndef KILN_MACRO_H
#define KILN_MACRO_H

#include "util/util.h"

struct macro_ctx;

/* Definition levels, as rpm numbers them: lower is more global. A parametric macro's
 * locals live at the call depth (1, 2, ...) and vanish when the call returns. */
enum macro_level {
	MACRO_LEVEL_BUILTIN = -20,
	MACRO_LEVEL_DEFAULT = -15,
	MACRO_LEVEL_FILE = -13,
	MACRO_LEVEL_RPMRC = -11,
	MACRO_LEVEL_CMDLINE = -7,
	MACRO_LEVEL_TARBALL = -5,
	MACRO_LEVEL_SPEC = -3,
	MACRO_LEVEL_GLOBAL = 0,
};

/* Where diagnostics go. level is KILN_LOG_WARN for rpm's warning: lines, KILN_LOG_INFO for
 * %{echo:} output (rpm prints it on stdout) and KILN_LOG_DEBUG for %dump (raw, to stderr).
 * msg has no trailing newline and no "warning: " prefix. Errors are not sent here: they
 * come back through kiln_err. */
typedef void (*macro_diag_fn)(void *data, enum kiln_log_level level, const char *msg);

/* Runs a %(...) command: append its stdout to out (trailing newlines are trimmed by the
 * caller). Return KILN_OK, or an error with err filled. The default runs /bin/sh -c on the
 * host; the build sandbox installs its own. */
typedef kiln_rc (*macro_shell_fn)(void *data, const char *cmd, struct kiln_buf *out,
                                  struct kiln_err *err);

/* For shells that run elsewhere (the build sandbox): append cmd's stdout to out and return
 * true when cmd is written in the side-effect-free shell subset of macro/shlite.c (variables,
 * tests of strings and numbers, echo, if, && || ;), whose output depends only on the
 * environment env the shell would start with ("NAME=value", NULL-terminated) and is the same
 * under dash and bash. No process starts and nothing outside the process is read. false, out
 * untouched, for anything else, and always with KILN_NO_SHLITE set: run the real shell. */
bool macro_shell_inprocess(const char *cmd, const char *const *env, struct kiln_buf *out);

/* A new, empty context holding only the built-ins. OUT: free with macro_ctx_free(). */
struct macro_ctx *macro_ctx_new(struct kiln_err *err);
void macro_ctx_free(struct macro_ctx *ctx);
/* A copy of src with every definition, the rpmrc tables and the settings, so one loaded
 * configuration serves many parses (each spec changes its own copy). The Lua state is not
 * copied: the copy starts a fresh one. Call it while no expansion runs in src. OUT: free
 * with macro_ctx_free(). */
struct macro_ctx *macro_ctx_dup(const struct macro_ctx *src, struct kiln_err *err);

void macro_ctx_set_diag(struct macro_ctx *ctx, macro_diag_fn fn, void *data);
/* Send a diagnostic to the context's sink (the log when none is set). Layers above (the
 * spec parser) use it so all of a parse's messages reach one place in order. */
void macro_diag(struct macro_ctx *ctx, enum kiln_log_level level, const char *fmt, ...)
    KILN_PRINTF(3, 4);
void macro_ctx_set_shell(struct macro_ctx *ctx, macro_shell_fn fn, void *data);
/* Paths under inside (a build sandbox's fixed top directory) are read by kiln on the host
 * under host: %{exists:}, Lua's posix.access/posix.stat and the spec parser's file checks
 * ask macro_path_host(). Both strings are copied; NULL clears the map. */
KILN_MUST_CHECK kiln_rc macro_ctx_set_path_map(struct macro_ctx *ctx, const char *inside,
                                               const char *host, struct kiln_err *err);
/* path as the host sees it: scratch's text when the map applies, else path itself. */
const char *macro_path_host(const struct macro_ctx *ctx, const char *path,
                            struct kiln_buf *scratch);
/* For untrusted input (the scheduler reading submitted specs, the fuzzers): %(...) fails,
 * %{load:} fails, and Lua gets only its pure libraries (no io, os, posix, rpm.execute,
 * rpm.load, rpm.glob). Set before the first %{lua:}. */
void macro_ctx_set_restricted(struct macro_ctx *ctx, bool restricted);
/* The most bytes one expansion (and each of its intermediate buffers) may produce;
 * 0 restores the default KILN_LIMIT_MACRO_EXPANSION. */
void macro_ctx_set_limit(struct macro_ctx *ctx, size_t max_expansion);
/* %verbose and %{verbose:...} report this. */
void macro_ctx_set_verbose(struct macro_ctx *ctx, bool verbose);
/* rpm's configuration directory, what %getconfdir returns whatever directory kiln loads its
 * configuration from: specs see rpm's %_rpmconfigdir, %_rpmmacrodir, %_fileattrsdir... */
#define MACRO_RPM_CONFIGDIR "/usr/lib/rpm"
/* Where kiln itself found its configuration and helper scripts: defines %_kiln_confdir
 * (at MACRO_LEVEL_DEFAULT; the macro files may build on it). */
KILN_MUST_CHECK kiln_rc macro_ctx_set_confdir(struct macro_ctx *ctx, const char *dir,
                                              struct kiln_err *err);

/* ---------------------------------------------------------------------------------------- */
/* Definitions. */

/* Push a definition of name. opts NULL means non-parametric; "" or a getopt string makes
 * it parametric ("-" disables option processing). The body is stored as given (not
 * expanded). KILN_ESYNTAX for an illegal name, KILN_EPRIV for a built-in or automatic
 * macro. */
KILN_MUST_CHECK kiln_rc macro_define(struct macro_ctx *ctx, const char *name, const char *opts,
                                     const char *body, int level, struct kiln_err *err);
/* Define from one "NAME[(OPTS)] BODY" string, the way rpm --define and %define read it. */
KILN_MUST_CHECK kiln_rc macro_define_line(struct macro_ctx *ctx, const char *line, int level,
                                          struct kiln_err *err);
/* rpm's --define: "NAME[(OPTS)] BODY" after a leading '%' is dropped and every '-' of NAME
 * read as '_' (rpm's command line rewrites the name before defining), at
 * MACRO_LEVEL_CMDLINE. `kiln build` and the farm's jobs define through this one. */
KILN_MUST_CHECK kiln_rc macro_define_cmdline(struct macro_ctx *ctx, const char *line,
                                             struct kiln_err *err);
/* rpmbuild's --with NAME (with true) or --without NAME: %_with_NAME "--with-NAME" or
 * %_without_NAME "--without-NAME", as rpm's popt aliases define them, at
 * MACRO_LEVEL_CMDLINE. */
KILN_MUST_CHECK kiln_rc macro_define_bcond(struct macro_ctx *ctx, bool with, const char *name,
                                           struct kiln_err *err);
/* Pop one definition; a name with none is fine. KILN_EPRIV for built-ins. */
KILN_MUST_CHECK kiln_rc macro_undefine(struct macro_ctx *ctx, const char *name,
                                       struct kiln_err *err);
bool macro_is_defined(const struct macro_ctx *ctx, const char *name);
/* The body of the topmost definition, or NULL when undefined or a built-in. Borrowed:
 * valid until the macro is redefined or undefined. */
const char *macro_body_get(const struct macro_ctx *ctx, const char *name);

/* ---------------------------------------------------------------------------------------- */
/* Expansion. */

/* Expand [src, src+len) and append the result to out. On error nothing is appended, the
 * error is in err (KILN_EMACRO for a %{error:}, KILN_ESYNTAX for malformed input,
 * KILN_ELIMIT for the recursion and size limits). */
KILN_MUST_CHECK kiln_rc macro_expand(struct macro_ctx *ctx, const char *src, size_t len,
                                     struct kiln_buf *out, struct kiln_err *err);
/* rpm's rpmExpand(): like macro_expand(), but on an error out keeps what was expanded before
 * it (rpm's expansion stops there and drops the rest); the error is still returned. */
KILN_MUST_CHECK kiln_rc macro_expand_partial(struct macro_ctx *ctx, const char *src, size_t len,
                                             struct kiln_buf *out, struct kiln_err *err);
/* Convenience: expand a C string into a new malloc'ed string (OUT: caller frees). */
KILN_MUST_CHECK kiln_rc macro_expand_str(struct macro_ctx *ctx, const char *src, char **out,
                                         struct kiln_err *err);

/* ---------------------------------------------------------------------------------------- */
/* Expressions (%[...], %{expr:...}, and %if in specs). */

enum macro_expr_flags {
	MACRO_EXPR_EXPAND = 1 << 0, /* expand macros in each term, as %[...] does */
};

/* Evaluate and append the value as text (integer in decimal, string as is, version as
 * EVR). Errors carry rpm's messages. */
KILN_MUST_CHECK kiln_rc macro_expr_eval(struct macro_ctx *ctx, const char *expr, size_t len,
                                        unsigned flags, struct kiln_buf *out, struct kiln_err *err);
/* Evaluate for truth (what %if does): *result is true for a non-zero integer or a
 * non-empty string. */
KILN_MUST_CHECK kiln_rc macro_expr_bool(struct macro_ctx *ctx, const char *expr, size_t len,
                                        unsigned flags, bool *result, struct kiln_err *err);

/* Lua tables the spec parser keeps (sources, source_nums, patches, patch_nums): append a
 * string or a number to the global array NAME, creating it; macro_lua_reset() sets it to an
 * empty table. */
KILN_MUST_CHECK kiln_rc macro_lua_append_str(struct macro_ctx *ctx, const char *name,
                                             const char *value, struct kiln_err *err);
KILN_MUST_CHECK kiln_rc macro_lua_append_num(struct macro_ctx *ctx, const char *name,
                                             long long value, struct kiln_err *err);
KILN_MUST_CHECK kiln_rc macro_lua_reset(struct macro_ctx *ctx, const char *name,
                                        struct kiln_err *err);

/* ---------------------------------------------------------------------------------------- */
/* Versions, exactly as rpm compares them. */

/* rpmvercmp: -1, 0 or 1. */
int macro_vercmp(const char *a, const char *b);

/* An [epoch:]version[-release] split into parts. Each part points into storage owned by the
 * struct (macro_evr_release). epoch is NULL when absent, release NULL when absent. */
struct macro_evr {
	char *buf;           /* owned */
	const char *epoch;   /* into buf, or NULL */
	const char *version; /* into buf */
	const char *release; /* into buf, or NULL */
};

KILN_MUST_CHECK kiln_rc macro_evr_parse(const char *evr, struct macro_evr *out,
                                        struct kiln_err *err);
void macro_evr_release(struct macro_evr *evr);
/* Compare as rpm does for dependencies: a missing epoch is 0, a missing release on either
 * side matches any release. */
int macro_evr_cmp(const struct macro_evr *a, const struct macro_evr *b);

/* ---------------------------------------------------------------------------------------- */
/* Configuration files. */

/* Load one macro file (rpm-macrofile(5) syntax). Lines that fail to parse are reported and
 * skipped, as rpm does; KILN_ENOTFOUND/KILN_EIO when the file cannot be read. */
KILN_MUST_CHECK kiln_rc macro_load_file(struct macro_ctx *ctx, const char *path, int level,
                                        struct kiln_err *err);
/* Load a colon-separated list of macro files: each entry is macro-expanded (so
 * %{_target} works) and globbed; missing files are skipped; later files override earlier
 * ones. */
KILN_MUST_CHECK kiln_rc macro_load_path(struct macro_ctx *ctx, const char *pathlist,
                                        struct kiln_err *err);

/* What to read, the way rpm's --rcfile, --macros and --target select it. NULL fields take
 * kiln's defaults (the configuration directory's rpmrc and macros, the host target). */
struct macro_config {
	const char *confdir;    /* borrowed; kiln's configuration directory */
	const char *rcfiles;    /* borrowed; colon list of rpmrc files, or NULL */
	const char *macrofiles; /* borrowed; colon list of macro files, or NULL */
	const char *target;     /* borrowed; "cpu[-vendor]-os", "cpu", or NULL for the host */
};

/* Read rpmrc files, pick the target, define the rpmrc and target macros, then load the
 * macro files: the same sequence as rpm's rpmReadConfigFiles(). */
KILN_MUST_CHECK kiln_rc macro_config_load(struct macro_ctx *ctx, const struct macro_config *cfg,
                                          struct kiln_err *err);

/* A new context configured by cfg, kiln's configuration directory found
 * (util_configdir_find) when cfg->confdir is NULL; verbose as macro_ctx_set_verbose. The
 * one way the CLI, the worker daemon and build roots open their contexts. OUT: *out,
 * macro_ctx_free(); NULL on failure. */
KILN_MUST_CHECK kiln_rc macro_ctx_open_config(const struct macro_config *cfg, bool verbose,
                                              struct macro_ctx **out, struct kiln_err *err);

/* Can this host build packages for arch (a BuildArch: value)? noarch and %_target_cpu
 * always can; otherwise arch must be reachable from the host arch through rpmrc's
 * buildarch_compat table, as rpm's machine score requires. */
bool macro_arch_buildable(struct macro_ctx *ctx, const char *arch);
/* The build machine's cpu into dst (size bytes), as rpm's %_build_cpu: the host's
 * canonical arch whatever --target or BuildArch say (kiln's platform files tie
 * %_build_cpu to %_target_cpu, so it cannot be expanded for this). "" without an rpmrc
 * (a context not opened from a configuration). */
void macro_build_cpu(const struct macro_ctx *ctx, char *dst, size_t size);

/* kiln's default list of macro files under confdir (for docs and `kiln eval --showrc`). */
void macro_default_macrofiles(const char *confdir, struct kiln_buf *out);
void macro_default_rcfiles(const char *confdir, struct kiln_buf *out);

#endif
