/*
 * cli.h - the kiln command: subcommand registry and the table-driven option parser.
 *
 * cli/ is the only module that decides to exit (shared/STYLE.md rule 6). A subcommand parses
 * its options from a const table into a struct, calls one module function and maps the
 * kiln_rc to an exit status: 0 success, 1 failure, 2 usage error.
 */
#ifndef KILN_CLI_H
#define KILN_CLI_H

#include "util/util.h"

#define CLI_EXIT_OK 0
#define CLI_EXIT_FAIL 1
#define CLI_EXIT_USAGE 2

enum cli_opt_kind {
	CLI_OPT_FLAG,     /* bool at off: set to true */
	CLI_OPT_STRING,   /* const char * at off: the argument (borrowed from argv) */
	CLI_OPT_INT,      /* int at off: the argument parsed as a decimal integer */
	CLI_OPT_CALLBACK, /* cb(ctx, arg): for repeated or structured options */
	CLI_OPT_OPTIONAL, /* const char * at off: "--name=VALUE" or "--name" (gets "") */
};

struct cli_opt {
	const char *lname; /* long name without "--", or NULL */
	char sname;        /* short letter, or 0 */
	enum cli_opt_kind kind;
	size_t off; /* offset of the destination field in the options struct */
	/* For CLI_OPT_CALLBACK (arg is NULL for flag-like callbacks without argname). */
	kiln_rc (*cb)(void *ctx, const char *arg, struct kiln_err *err);
	const char *argname; /* "DIR"; NULL when the option takes no argument */
	const char *help;
};

#define CLI_OPT_END                                                                                \
	{                                                                                          \
		NULL, 0, CLI_OPT_FLAG, 0, NULL, NULL, NULL                                         \
	}

/* Parse argv[1..argc) (argv[0] is the subcommand name) against opts, storing into ctx.
 * Options and operands may be interleaved; "--" ends options. On success the operands are
 * moved to the front of argv[1..] in order and *nargs gets their number. Errors name the
 * option (KILN_EINVAL). */
KILN_MUST_CHECK kiln_rc cli_opts_parse(const struct cli_opt *opts, void *ctx, int argc, char **argv,
                                       int *nargs, struct kiln_err *err);
/* For commands that hand their options on: how many words the option at argv[i] takes (1,
 * or 2 when its argument is the next word), and which option of opts it is (*o NULL for an
 * operand, "--" or an unknown option; for bundled short options, the last one). */
int cli_opt_words(const struct cli_opt *opts, int argc, char **argv, int i,
                  const struct cli_opt **o);
/* Print the option table as help text. */
void cli_opts_print(const struct cli_opt *opts, FILE *out);

struct cli_command {
	const char *name;
	const char *summary;        /* one line for `kiln help` */
	const char *usage;          /* "[options] EXPR..." */
	const char *description;    /* a paragraph for `kiln help CMD`, or NULL */
	const struct cli_opt *opts; /* may be NULL */
	int (*run)(int argc, char **argv);
};

/* The registry (a const table filled at compile time). */
extern const struct cli_command cli_commands[];
const struct cli_command *cli_command_find(const char *name);

/* Print "usage: kiln NAME USAGE" and return CLI_EXIT_USAGE. */
int cli_usage_error(const struct cli_command *cmd, const char *fmt, ...) KILN_PRINTF(2, 3);
/* Report err on stderr ("error: ...") and return CLI_EXIT_FAIL. */
int cli_fail(const struct kiln_err *err);
/* Print the kiln version line. */
void cli_print_version(FILE *out);

/* ---------------------------------------------------------------------------------------- */
/* Options shared by the commands that read macros (eval, spec, build). Embed a struct
 * cli_macro_opts as the FIRST member of the command's options struct and put
 * CLI_MACRO_OPTS(type, member) in its option table. */

struct macro_ctx;

struct cli_macro_op {
	char kind;       /* 'D' define, 'U' undefine, 'L' load, 'W' --with, 'O' --without */
	const char *arg; /* borrowed from argv */
};

struct cli_macro_opts {
	struct cli_macro_op *ops; /* owned; cli_macro_opts_release() */
	size_t nops;
	const char *macros; /* --macros PATHLIST */
	const char *rcfile; /* --rcfile PATHLIST */
	const char *target; /* --target CPU-VENDOR-OS */
	bool verbose;
};

/* The callbacks receive the command's options struct, whose first member is the
 * struct cli_macro_opts. */
#define cli_macro_opts_of(ctx) ((struct cli_macro_opts *)(ctx))

kiln_rc cli_macro_define_cb(void *ctx, const char *arg, struct kiln_err *err);
kiln_rc cli_macro_undefine_cb(void *ctx, const char *arg, struct kiln_err *err);
kiln_rc cli_macro_load_cb(void *ctx, const char *arg, struct kiln_err *err);
kiln_rc cli_macro_with_cb(void *ctx, const char *arg, struct kiln_err *err);
kiln_rc cli_macro_without_cb(void *ctx, const char *arg, struct kiln_err *err);

/* clang-format off */
#define CLI_MACRO_OPTS(type, member) \
	{"define", 'D', CLI_OPT_CALLBACK, 0, cli_macro_define_cb, "'NAME BODY'", \
	 "define macro NAME with BODY"}, \
	{"undefine", 0, CLI_OPT_CALLBACK, 0, cli_macro_undefine_cb, "NAME", \
	 "undefine macro NAME"}, \
	{"load", 0, CLI_OPT_CALLBACK, 0, cli_macro_load_cb, "FILE", \
	 "load the macro file FILE"}, \
	{"with", 0, CLI_OPT_CALLBACK, 0, cli_macro_with_cb, "OPTION", \
	 "enable the build condition OPTION (%_with_OPTION)"}, \
	{"without", 0, CLI_OPT_CALLBACK, 0, cli_macro_without_cb, "OPTION", \
	 "disable the build condition OPTION (%_without_OPTION)"}, \
	{"macros", 0, CLI_OPT_STRING, offsetof(type, member.macros), NULL, "PATHLIST", \
	 "read these macro files instead of kiln's (colon-separated, globs)"}, \
	{"rcfile", 0, CLI_OPT_STRING, offsetof(type, member.rcfile), NULL, "PATHLIST", \
	 "read these rpmrc files instead of kiln's"}, \
	{"target", 0, CLI_OPT_STRING, offsetof(type, member.target), NULL, "CPU-VENDOR-OS", \
	 "expand for this target platform"}, \
	{"verbose", 'v', CLI_OPT_FLAG, offsetof(type, member.verbose), NULL, NULL, \
	 "make %verbose true"}
/* clang-format on */

/* A macro context configured from the options: kiln's (or the given) rpmrc and macro
 * files, the target, then the defines in command-line order. OUT: macro_ctx_free(). */
KILN_MUST_CHECK kiln_rc cli_macro_ctx_open(const struct cli_macro_opts *m, struct macro_ctx **out,
                                           struct kiln_err *err);
/* The defines, undefines, loads and --with/--without of m, in command-line order, into an
 * already configured ctx (a build root's). */
KILN_MUST_CHECK kiln_rc cli_macro_ops_apply(struct macro_ctx *ctx, const struct cli_macro_opts *m,
                                            struct kiln_err *err);
void cli_macro_opts_release(struct cli_macro_opts *m);

/* Subcommands. */
int cli_cmd_help(int argc, char **argv);
int cli_cmd_version(int argc, char **argv);
int cli_cmd_eval(int argc, char **argv);

extern const struct cli_opt cli_eval_opts[];

/* Spec files (cli/cmd_spec.c). */
extern const struct cli_opt cli_spec_opts[];
int cli_cmd_spec(int argc, char **argv);

/* Package commands (cli/cmd_query.c, cli/cmd_payload.c). */
extern const struct cli_opt cli_query_opts[];
extern const struct cli_opt cli_archive_opts[];
extern const struct cli_opt cli_check_opts[];
int cli_cmd_query(int argc, char **argv);
int cli_cmd_archive(int argc, char **argv);
int cli_cmd_cpio(int argc, char **argv);
int cli_cmd_check(int argc, char **argv);

/* Signing (cmd_keygen.c, cmd_keys.c, cmd_sign.c, cmd_verify.c). */
extern const struct cli_opt cli_keygen_opts[];
extern const struct cli_opt cli_keys_opts[];
extern const struct cli_opt cli_sign_opts[];
extern const struct cli_opt cli_verify_opts[];
int cli_cmd_keygen(int argc, char **argv);
/* Published repositories (cli/cmd_repo.c). */
extern const struct cli_opt cli_repo_opts[];
int cli_cmd_repo(int argc, char **argv);
extern const struct cli_opt cli_store_opts[];
int cli_cmd_store(int argc, char **argv);
extern const struct cli_opt cli_root_opts[];
int cli_cmd_root(int argc, char **argv);
int cli_cmd_keys(int argc, char **argv);
int cli_cmd_sign(int argc, char **argv);
int cli_cmd_verify(int argc, char **argv);
/* Builds (cmd_build.c). */
extern const struct cli_opt cli_build_opts[];
int cli_cmd_build(int argc, char **argv);

/* kiln build --chain (cmd_chain.c): what cli_cmd_build parsed, and its command line as
 * given (argv[0] "build"), whose other options go to every package's build. */
struct cli_chain_opts {
	const char *root;      /* --root CONFIG */
	const char *localrepo; /* --localrepo DIR, or NULL: a new directory */
	const char *bootstrap; /* --bootstrap NAME[,NAME...], or NULL */
	const struct cli_macro_opts *macros;
	int argc;
	char **argv;
};
/* Build operands[0..nargs) in dependency order; the exit status. */
int cli_build_chain(const struct cli_chain_opts *o, int nargs, char **operands);

/* Provenance (cmd_provenance.c). */
extern const struct cli_opt cli_provenance_opts[];
int cli_cmd_provenance(int argc, char **argv);

/* Comparing packages (cmd_diff.c). */
extern const struct cli_opt cli_diff_opts[];
int cli_cmd_diff(int argc, char **argv);
/* Installing packages into images, the image cache (cmd_image.c). */
extern const struct cli_opt cli_image_opts[];
int cli_cmd_image(int argc, char **argv);
/* The sandbox (cmd_sandbox.c). */
extern const struct cli_opt cli_sandbox_opts[];
int cli_cmd_sandbox(int argc, char **argv);
/* The build farm (cmd_farm.c). */
extern const struct cli_opt cli_scheduler_opts[];
extern const struct cli_opt cli_submit_opts[];
extern const struct cli_opt cli_jobs_opts[];
extern const struct cli_opt cli_client_opts[];
extern const struct cli_opt cli_logs_opts[];
extern const struct cli_opt cli_download_opts[];
extern const struct cli_opt cli_token_opts[];
extern const struct cli_opt cli_project_opts[];
extern const struct cli_opt cli_reproduce_opts[];
extern const struct cli_opt cli_rebuild_opts[];
int cli_cmd_scheduler(int argc, char **argv);
int cli_cmd_client(int argc, char **argv);
/* The worker daemon (cmd_worker.c). */
extern const struct cli_opt cli_worker_opts[];
int cli_cmd_worker(int argc, char **argv);
/* Parse a --time argument: seconds since the epoch, 0 .. 2^32-1. */
KILN_MUST_CHECK kiln_rc cli_parse_time(const char *s, int64_t *out, struct kiln_err *err);
/* Read a file, or standard input for "-", into out (at most max bytes). */
KILN_MUST_CHECK kiln_rc cli_read_input(const char *path, size_t max, struct kiln_buf *out,
                                       struct kiln_err *err);
struct sign_keyring;
/* Open the keyring at dir, or at the default location when dir is NULL. */
KILN_MUST_CHECK kiln_rc cli_keyring_open(const char *dir, struct sign_keyring **kr,
                                         struct kiln_err *err);

/* ---------------------------------------------------------------------------------------- */
/* Options shared by the commands that fetch sources (fetch, build). Embed a struct
 * cli_fetch_opts in the command's options and put CLI_FETCH_OPTS(type, member) in its
 * table; cli_fetch_opts_apply() fills a struct sources_fetch_opts (strings borrowed). */

struct cli_fetch_opts {
	const char *cache, *cache_max, *max_size;
	bool offline, insecure, progress, no_progress;
	const char *ca_file;
	const char *retries, *retry_delay, *connect_timeout, *low_speed_time, *low_speed_limit,
	    *max_redirs; /* NULL: the worker's default */
};

/* clang-format off */
#define CLI_FETCH_OPTS(type, member) \
	{"cache", 0, CLI_OPT_STRING, offsetof(type, member.cache), NULL, "DIR", \
	 "the source cache (default $KILN_CACHE_DIR, else ~/.cache/kiln)"}, \
	{"cache-max", 0, CLI_OPT_STRING, offsetof(type, member.cache_max), NULL, "SIZE", \
	 "evict least recently used cache entries beyond SIZE (default $KILN_CACHE_MAX)"}, \
	{"offline", 0, CLI_OPT_FLAG, offsetof(type, member.offline), NULL, NULL, \
	 "no network: use local files and the cache only"}, \
	{"insecure", 0, CLI_OPT_FLAG, offsetof(type, member.insecure), NULL, NULL, \
	 "do not verify TLS certificates (warns for every URL)"}, \
	{"ca-file", 0, CLI_OPT_STRING, offsetof(type, member.ca_file), NULL, "PEM", \
	 "trust these CA certificates instead of the system's"}, \
	{"retries", 0, CLI_OPT_STRING, offsetof(type, member.retries), NULL, "N", \
	 "retries on transient failures (default 4)"}, \
	{"retry-delay", 0, CLI_OPT_STRING, offsetof(type, member.retry_delay), NULL, "MS", \
	 "first retry delay in ms, doubled for every retry (default 1000)"}, \
	{"connect-timeout", 0, CLI_OPT_STRING, offsetof(type, member.connect_timeout), NULL, "S", \
	 "seconds to connect (default 30)"}, \
	{"low-speed-time", 0, CLI_OPT_STRING, offsetof(type, member.low_speed_time), NULL, "S", \
	 "give up after S seconds below the low speed limit (default 60)"}, \
	{"low-speed-limit", 0, CLI_OPT_STRING, offsetof(type, member.low_speed_limit), NULL, \
	 "BYTES", "the low speed limit in bytes per second (default 1024)"}, \
	{"max-redirs", 0, CLI_OPT_STRING, offsetof(type, member.max_redirs), NULL, "N", \
	 "redirects to follow (default 10; 0: none)"}, \
	{"max-size", 0, CLI_OPT_STRING, offsetof(type, member.max_size), NULL, "SIZE", \
	 "largest file to download (default 8G)"}, \
	{"progress", 0, CLI_OPT_FLAG, offsetof(type, member.progress), NULL, NULL, \
	 "show download progress even when stderr is not a terminal"}, \
	{"no-progress", 0, CLI_OPT_FLAG, offsetof(type, member.no_progress), NULL, NULL, \
	 "never show download progress"}
/* clang-format on */

struct sources_fetch_opts;
KILN_MUST_CHECK kiln_rc cli_fetch_opts_apply(const struct cli_fetch_opts *c,
                                             struct sources_fetch_opts *o, struct kiln_err *err);
/* "1024", "512K", "10G": bytes. */
KILN_MUST_CHECK kiln_rc cli_parse_size(const char *s, uint64_t *out, struct kiln_err *err);

/* Sources (cmd_fetch.c, cmd_cache.c). */
extern const struct cli_opt cli_fetch_opts_table[];
extern const struct cli_opt cli_cache_opts[];
int cli_cmd_fetch(int argc, char **argv);
int cli_cmd_cache(int argc, char **argv);

/* ======================================================================================== */
/* The farm client (kiln submit, jobs, job, logs, cancel, retry, download, token; client.c) */
/* ======================================================================================== */

struct cli_client {
	const char *url;     /* KILN_URL */
	const char *token;   /* KILN_TOKEN */
	const char *ca_file; /* KILN_CA_FILE: CA bundle for https, NULL for the system's */
	int out_fd;          /* where results are printed (stdout) */
	int progress_fd;     /* where the progress line goes (-1 for none: stderr on a tty) */
	bool json;           /* print JSON instead of text */
};

struct cli_submit {
	const char *spec_path; /* a spec file, or */
	const char *srpm_path; /* a source package, or */
	const char *git_url;   /* a git repository */
	const char *git_ref, *git_spec;
	const char **sources; /* files uploaded as the spec's sources */
	size_t nsources;
	const char **defines; /* "NAME VALUE" */
	size_t ndefines;
	const char **with, **without, **tags;
	size_t nwith, nwithout, ntags;
	const char *arch, *sign_key, *repository, *formats;
	const char *root;    /* a root configuration's name (kiln submit --root) */
	const char *project; /* the project (kiln submit --project; NULL: the token's) */
	int64_t priority, reruns, timeout;
	const char *idempotency_key;
	bool wait, follow;
};

/* Submit; with wait/follow, wait for the end (following the log). KILN_OK when submitted
 * (and, when waiting, the job succeeded); KILN_EBUILD when it failed or was cancelled. */
KILN_MUST_CHECK kiln_rc cli_client_submit(const struct cli_client *c, const struct cli_submit *s,
                                          struct kiln_err *err);
/* [batches] kiln submit --batch: every spec of paths (a spec file or an SRPM; a package directory: its
 * spec, its other files the sources; a directory of specs or of package directories) as a
 * member of one batch on s->root, with s's options each; s->repository is the batch's.
 * With s->wait, wait for its end: KILN_EBUILD unless every job succeeded. */
struct cli_batch {
	struct cli_submit s;
	const char *const *paths;
	size_t npaths;
	const char *bootstrap; /* "a,b": built first, breaking cycles; NULL none */
};
KILN_MUST_CHECK kiln_rc cli_client_batch(const struct cli_client *c, const struct cli_batch *b,
                                         struct kiln_err *err);
/* project NULL: every project the token reads. */
KILN_MUST_CHECK kiln_rc cli_client_jobs(const struct cli_client *c, const char *state,
                                        const char *project, int64_t limit, struct kiln_err *err);
KILN_MUST_CHECK kiln_rc cli_client_job(const struct cli_client *c, int64_t id,
                                       struct kiln_err *err);
/* attempt 0 = the latest. */
KILN_MUST_CHECK kiln_rc cli_client_logs(const struct cli_client *c, int64_t id, int64_t attempt,
                                        bool follow, struct kiln_err *err);
/* action: "cancel" or "retry". */
KILN_MUST_CHECK kiln_rc cli_client_action(const struct cli_client *c, int64_t id,
                                          const char *action, struct kiln_err *err);

/* More reproducibility reruns (count 0: one); with wait, wait for the verdict and print
 * the report: KILN_EBUILD unless the job is reproducible. */
KILN_MUST_CHECK kiln_rc cli_client_reproduce(const struct cli_client *c, int64_t id, int64_t count,
                                             bool wait, struct kiln_err *err);
/* Rebuilder mode: srpm and rpms are files (uploaded) or http(s) URLs; with wait, wait for
 * the verdict and print the report: KILN_EBUILD unless every package matches. */
KILN_MUST_CHECK kiln_rc cli_client_rebuild(const struct cli_client *c, const char *srpm,
                                           const char *const *rpms, size_t nrpms, const char *arch,
                                           bool wait, struct kiln_err *err);
KILN_MUST_CHECK kiln_rc cli_client_download(const struct cli_client *c, int64_t id, const char *dir,
                                            struct kiln_err *err);
/* kiln repo: op "list" (name NULL), "show", "regenerate" (waits for the publish),
 * "remove-package" (pkg: a file name or NAME-[E:]V-R.ARCH; waits); prints the JSON. */
KILN_MUST_CHECK kiln_rc cli_client_repo(const struct cli_client *c, const char *op,
                                        const char *name, const char *pkg, struct kiln_err *err);
KILN_MUST_CHECK kiln_rc cli_client_workers(const struct cli_client *c, struct kiln_err *err);
/* Tokens (admin): create prints the new token once. */
KILN_MUST_CHECK kiln_rc cli_client_token_create(const struct cli_client *c, const char *scopes,
                                                const char *name, const char *project,
                                                struct kiln_err *err);
/* kiln project (issue 27). */
struct cli_project_opts {
	bool public_read, private_read; /* --public, --private */
	int64_t max_running;            /* --max-running N (-1: not given) */
	const char *arch_caps;          /* --arch-caps ARCH=N,... (NULL: not given) */
	const char *repositories;       /* --repositories A,B (NULL: not given; "": none) */
	int64_t days;                   /* --days N: create, key extend (0: the default) */
	const char *roots;              /* --roots A,B: root configurations (NULL: not given;
	                                 * "": any) */
};
/* op "create", "set" (name and o), "list" (name NULL), "show", "delete", "key" (prints the
 * public key), "key-extend"; prints what the server answers (a table for list, unless
 * --json). */
KILN_MUST_CHECK kiln_rc cli_client_project(const struct cli_client *c, const char *op,
                                           const char *name, const struct cli_project_opts *o,
                                           struct kiln_err *err);
KILN_MUST_CHECK kiln_rc cli_client_tokens(const struct cli_client *c, struct kiln_err *err);
KILN_MUST_CHECK kiln_rc cli_client_token_revoke(const struct cli_client *c, int64_t id,
                                                struct kiln_err *err);

#endif
