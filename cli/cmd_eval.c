/*
 * cmd_eval.c - `kiln eval`: expand macro expressions like `rpm --eval`.
 */
#include "util/util.h"

#include "cli/cli.h"
#include "macro/macro.h"

struct eval_opts {
	struct cli_macro_opts macros;
	const char *exprs[256]; /* --eval EXPR, in order, before the operands */
	int nexprs;
};

static kiln_rc eval_add(void *ctx, const char *arg, struct kiln_err *err)
{
	struct eval_opts *o = ctx;

	if (o->nexprs >= (int)KILN_ARRAY_SIZE(o->exprs))
		return kiln_err_set(err, KILN_ELIMIT, "too many --eval options");
	o->exprs[o->nexprs++] = arg;
	return KILN_OK;
}

/* rpm's --trace is an alias of --eval '%trace' (rpmpopt): the same here, in its place
 * among the --eval options. */
static kiln_rc eval_trace(void *ctx, const char *arg, struct kiln_err *err)
{
	(void)arg;
	return eval_add(ctx, "%trace", err);
}

const struct cli_opt cli_eval_opts[] = {
    CLI_MACRO_OPTS(struct eval_opts, macros),
    {"eval", 'E', CLI_OPT_CALLBACK, 0, eval_add, "EXPR",
     "expand EXPR (like the operands; kept for rpm compatibility)"},
    {"trace", 0, CLI_OPT_CALLBACK, 0, eval_trace, NULL,
     "trace macro expansion on stderr, as rpm --trace (--eval '%trace')"},
    CLI_OPT_END,
};

static int print_expansion(struct macro_ctx *ctx, const char *expr)
{
	struct kiln_buf out = KILN_BUF_INIT(KILN_LIMIT_MACRO_EXPANSION);
	struct kiln_err err = KILN_ERR_INIT;
	int rc = CLI_EXIT_OK;

	if (macro_expand(ctx, expr, strlen(expr), &out, &err)) {
		rc = cli_fail(&err);
	} else {
		fwrite(out.ptr, 1, out.len, stdout);
		fputc('\n', stdout);
	}
	kiln_buf_release(&out);
	return rc;
}

int cli_cmd_eval(int argc, char **argv)
{
	const struct cli_command *self = cli_command_find("eval");
	struct eval_opts o = {0};
	struct kiln_err err = KILN_ERR_INIT;
	struct macro_ctx *ctx = NULL;
	int nargs = 0;
	int rc = CLI_EXIT_OK;
	int i;

	if (cli_opts_parse(cli_eval_opts, &o, argc, argv, &nargs, &err))
		return cli_usage_error(self, "%s", err.msg);
	if (!nargs && !o.nexprs)
		return cli_usage_error(self, "nothing to expand");
	if (cli_macro_ctx_open(&o.macros, &ctx, &err)) {
		rc = cli_fail(&err);
		goto out;
	}
	/* rpm stops at the first expression that fails. */
	for (i = 0; rc == CLI_EXIT_OK && i < o.nexprs; i++)
		rc = print_expansion(ctx, o.exprs[i]);
	for (i = 0; rc == CLI_EXIT_OK && i < nargs; i++)
		rc = print_expansion(ctx, argv[1 + i]);
out:
	fflush(stdout);
	macro_ctx_free(ctx);
	cli_macro_opts_release(&o.macros);
	return rc;
}
