/*
 * macro_int.h - the macro engine's internals, shared by the files of macro/ only.
 */
#ifndef KILN_MACRO_INT_H
#define KILN_MACRO_INT_H

#include "macro/macro.h"

/* Flags of one definition. */
enum macro_def_flags {
	MACRO_DEF_AUTO = 1 << 0,    /* %0 %1 %* %# %-f ...: per call, invisible to callees */
	MACRO_DEF_LITERAL = 1 << 1, /* the body is output as is, never expanded */
	MACRO_DEF_USED = 1 << 2,    /* looked up at least once (for warnings and %dump) */
	MACRO_DEF_POOLED = 1 << 3,  /* lives in the table's pool (a copied table) or file_defs,
	                            * not freed alone */
	MACRO_DEF_QUOTED = 1 << 4,  /* the body holds %{quote:} marks (rpm's ME_QUOTED) */
	MACRO_DEF_SMALL = 1 << 5,   /* a MACRO_SMALL_DEF-byte block, kept on the table's spares
	                            * when freed */
};

/* Size of the blocks short call-local definitions (%1, %-f ...) are recycled in. */
#define MACRO_SMALL_DEF 160

/* One definition of a name; definitions of a name form a stack (top first). The struct and
 * its strings are one allocation, freed by the table (or parked on the graveyard while an
 * expansion may still read the body). */
struct macro_def {
	struct macro_def *below; /* owned: the definition this one hides */
	struct macro_def *grave; /* graveyard link once popped */
	char *opts;              /* into this allocation; NULL = not parametric */
	char *body;              /* into this allocation */
	size_t body_len;
	int level;
	unsigned flags;
};

struct mbuf;
struct macro_builtin;

/* A built-in receives its arguments as argv (argv[0] is its name) after expansion, or the
 * raw text for the "parse" kind. It appends to mb's output and reports errors through mb. */
typedef void (*macro_builtin_fn)(struct mbuf *mb, const struct macro_builtin *bi, int argc,
                                 char **argv);
/* Parse-kind built-ins read their own syntax from raw text and return how many bytes of it
 * they consumed (only meaningful in the unbraced "%define ..." form). */
typedef size_t (*macro_parse_fn)(struct mbuf *mb, const struct macro_builtin *bi, const char *text,
                                 size_t len, bool braced);

enum macro_builtin_args {
	MACRO_BI_NONE,     /* takes no argument */
	MACRO_BI_ONE,      /* requires one (the first word, or the whole text after ':') */
	MACRO_BI_OPTIONAL, /* zero or one */
	MACRO_BI_MANY,     /* one or more words (4.19+ string built-ins) */
};

struct macro_builtin {
	const char *name;
	enum macro_builtin_args args;
	macro_builtin_fn fn;  /* NULL for parse-kind */
	macro_parse_fn parse; /* NULL for ordinary built-ins */
};

/* A name in the table: the stack of its definitions, or a built-in. */
struct macro_slot {
	char *name; /* in the slot's allocation, after the struct */
	size_t name_len;
	uint32_t hash;
	struct macro_def *top; /* owned stack; NULL when undefined */
	const struct macro_builtin *builtin;
	bool pooled; /* the slot and its name live in the pool or the arena: never freed alone */
};

/* Open-addressing hash table of heap-allocated slots (slot pointers stay valid when the
 * table grows, so the scope stack can hold them). */
struct macro_table {
	struct macro_slot **slots; /* owned, cap entries, NULL = empty */
	uint32_t *hashes;          /* owned, cap entries: slots[i]->hash, so probes stay in it */
	size_t cap;
	size_t used;
	void *pool; /* owned: one block with the slots and definitions a copy started with */
	struct kiln_arena slots_arena; /* slots added later, side by side (probes touch them) */
	struct kiln_arena file_defs;   /* definitions read from macro files (MACRO_DEF_POOLED) */
	struct macro_def *spare;       /* owned: freed MACRO_DEF_SMALL blocks, through below */
	size_t nspare;
};

struct macro_lua;        /* macro/lua.c */
struct macro_lua_arrays; /* macro/lua.c */

struct macro_ctx {
	struct macro_table table;
	struct macro_def *graveyard; /* popped definitions freed when no expansion runs */
	struct macro_slot **scope;   /* owned: slots that got a call-local definition */
	size_t nscope, capscope;
	int depth;  /* expansion nesting, for the recursion limit */
	int level;  /* parametric call depth */
	int active; /* expansions in progress (graveyard is emptied at 0) */
	bool verbose;
	/* rpm's print_macro_trace/print_expand_trace: %trace at the outermost level (rpm's
	 * --trace is --eval '%trace') traces every later expansion of the context. */
	bool trace;
	/* The depth an expansion started now counts from in its trace: rpm expands each term
	 * of %[...] as an expansion of its own, traced from depth 0 (expr.c sets it). */
	int trace_base;
	bool restricted;      /* no shell, no Lua I/O, no file loading (untrusted input) */
	size_t max_expansion; /* limit of every buffer an expansion fills */
	macro_diag_fn diag;
	void *diag_data;
	macro_shell_fn shell;
	void *shell_data;
	char *map_inside, *map_host;         /* owned: macro_ctx_set_path_map(), NULL when unset */
	struct macro_lua *lua;               /* owned; created on first use */
	struct macro_lua_arrays *lua_arrays; /* owned: spec arrays kept until Lua starts */
	struct macro_rpmrc *rpmrc; /* rpmrc tables, shared with copies; NULL before config load */
};

/* The state of one expansion (rpm's MacroBuf). */
struct mbuf {
	struct macro_ctx *ctx;
	struct kiln_buf *out; /* borrowed: where the text goes */
	struct kiln_err *err; /* borrowed */
	bool error;           /* sticky: stop expanding */
	/* rpm 4.20's RPMEXPAND_KEEP_QUOTED and _HAVE_QUOTED: %{quote:} writes its \037 marks
	 * only while the text is being expanded for argument splitting (keep_quoted) and says
	 * so in have_quoted; everywhere else it writes its argument bare. */
	bool keep_quoted;
	bool have_quoted;
	/* rpm's MacroBuf macro_trace/expand_trace: print each macro before it expands and
	 * each expansion's result on stderr. Set by %trace, kept until the expansion level
	 * that set it ends. */
	bool trace;
	int depth0; /* ctx->trace_base when this expansion started */
	/* The innermost user macro being expanded, for Lua's opt and arg tables: its name and
	 * options (NULL when not parametric), and the arguments of the innermost parametric
	 * call. All borrowed from the caller's frame. */
	const char *call_name;
	const char *call_opts;
	int call_argc;
	char **call_argv;
};

/* Table. */
void macro_table_release(struct macro_table *t);
/* Deep copy of src into the empty dst (definition stacks included). */
KILN_MUST_CHECK kiln_rc macro_table_copy(struct macro_table *dst, const struct macro_table *src,
                                         struct kiln_err *err);
/* dst (whose rpmrc is unset) shares src's rpmrc tables; macro_rpmrc_unref drops a
 * context's hold on them (the last one frees them). */
void macro_rpmrc_share(struct macro_ctx *dst, const struct macro_ctx *src);
void macro_rpmrc_unref(struct macro_rpmrc *rc);
struct macro_slot *macro_table_find(const struct macro_table *t, const char *name, size_t len);
KILN_MUST_CHECK kiln_rc macro_table_slot(struct macro_table *t, const char *name, size_t len,
                                         struct macro_slot **out, struct kiln_err *err);
/* Push a definition; records call-local ones on the scope stack. */
KILN_MUST_CHECK kiln_rc macro_push(struct macro_ctx *ctx, const char *name, size_t name_len,
                                   const char *opts, const char *body, size_t body_len, int level,
                                   unsigned flags, struct kiln_err *err);
/* Pop the top definition of slot (parked on the graveyard). */
void macro_pop(struct macro_ctx *ctx, struct macro_slot *slot);
/* Pop and free at once: only when no expansion can be reading the body. */
void macro_pop_free(struct macro_table *t, struct macro_slot *slot);
/* Pop every definition at level >= level recorded since mark; warns about unused locals. */
void macro_scope_unwind(struct mbuf *mb, size_t mark, int level);
void macro_graveyard_empty(struct macro_ctx *ctx);
/* The visible definition of a name for the current call level (automatic macros of outer
 * calls are hidden), or NULL. Marks it used. */
struct macro_def *macro_lookup(struct macro_ctx *ctx, struct macro_slot *slot);
bool macro_name_valid(const char *name, size_t len);

/* Expansion. */
void macro_mb_expand(struct mbuf *mb, const char *src, size_t len);
/* Expand into a separate buffer (for arguments); returns false on error. */
bool macro_mb_expand_to(struct mbuf *mb, const char *src, size_t len, struct kiln_buf *dst);
/* macro_mb_expand_to() with the quote flags of rpm's expandThis(): keep_quoted for the
 * nested expansion; *have (may be NULL) tells whether %{quote:} marks came out. */
bool macro_mb_expand_quoted(struct mbuf *mb, const char *src, size_t len, struct kiln_buf *dst,
                            bool keep, bool *have);
/* The %{quote:} mark, and its removal from out[from..] (rpm's mbUnquote). */
#define MACRO_QUOTE_MARK '\037'
void macro_unquote(struct kiln_buf *out, size_t from);
/* Report an error (stops the expansion) or a warning, rpm-style. */
void macro_mb_error(struct mbuf *mb, kiln_rc rc, const char *fmt, ...) KILN_PRINTF(3, 4);
void macro_mb_warn(struct mbuf *mb, const char *fmt, ...) KILN_PRINTF(2, 3);
/* Define from "NAME[(OPTS)] BODY" text (rpm's doDefine); returns bytes consumed. */
size_t macro_parse_define(struct mbuf *mb, const char *text, size_t len, int level,
                          bool expand_body, const char *what);
/* Split on blanks, honouring the \037 quote marks of %{quote:} (which are removed). */
KILN_MUST_CHECK kiln_rc macro_split_args(const char *s, size_t len, char ***argv, int *argc,
                                         struct kiln_err *err);
void macro_argv_free(char **argv, int argc);
/* Append a copy of [s, s+len) to a NULL-terminated argv built only by this function. */
KILN_MUST_CHECK kiln_rc macro_argv_add(char ***argv, int *argc, const char *s, size_t len,
                                       struct kiln_err *err);

/* Built-ins. */
const struct macro_builtin *macro_builtins_table(size_t *count);
/* Call a built-in or parametric macro with literal arguments (used by Lua's macros.X()). */
void macro_call_with_args(struct mbuf *mb, struct macro_slot *slot, int argc, char **argv);
/* macro_call_with_args as one expansion level of its own, traced as rpm's
 * expandThisMacro() traces it (Lua's macros.NAME(...) calls). */
void macro_call_traced(struct mbuf *mb, struct macro_slot *slot, int argc, char **argv);

/* Shell. macro_shell_host runs cmd with /bin/sh -c on the host, unless macro_shlite_run
 * can give its output in-process (KILN_NO_SHLITE=1 in the environment turns that off). */
kiln_rc macro_shell_host(void *data, const char *cmd, struct kiln_buf *out, struct kiln_err *err);
/* cmd's stdout appended to out, exactly as a POSIX shell started with the environment env
 * ("NAME=value" strings, NULL-terminated) prints it, when cmd is written only in the small
 * side-effect-free subset macro/shlite.c accepts (assignments, tests, echo, if, && || ;);
 * true then. false, out untouched, for anything else (and when the output would not fit
 * out): the caller runs the real shell. With MACRO_SHLITE_PROGRAMS, a script without
 * variables may also start one program by its absolute path with its output sent to
 * /dev/null (`! /usr/bin/make --version -O >/dev/null 2>&1 || echo -O`): the program
 * runs once, whatever the answer. */
#define MACRO_SHLITE_PROGRAMS 1u
bool macro_shlite_run(const char *cmd, const char *const *env, unsigned flags,
                      struct kiln_buf *out);

/* Lua (macro/lua.c). */
void macro_lua_free(struct macro_lua *lua);
void macro_lua_arrays_free(struct macro_lua_arrays *arrays);
/* Run code; print() output and returned values are appended to mb's output. opt/arg are
 * set when called from a parametric macro (argv after options; opts as "-x" -> value). */
void macro_lua_run(struct mbuf *mb, const char *code, size_t len);
/* Call global Lua function name with string arguments, result appended to out (for
 * expressions' lua:NAME(...)). */
KILN_MUST_CHECK kiln_rc macro_lua_call(struct macro_ctx *ctx, const char *name, int argc,
                                       const char *const *argv, struct kiln_buf *out,
                                       struct kiln_err *err);

/* Expressions share the value type with Lua's rpm.ver. */
int macro_rpmvercmp_n(const char *a, size_t alen, const char *b, size_t blen);

/* rpmrc (macro/rpmrc.c). */
struct macro_rpmrc;

#endif
