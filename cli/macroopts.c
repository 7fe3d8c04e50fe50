/*
 * macroopts.c - the options every macro-using command shares (--define, --undefine,
 * --macros, --rcfile, --target, --with, --without, -v), and opening a configured context.
 */
#include "util/util.h"

#include "cli/cli.h"
#include "macro/macro.h"

static kiln_rc macro_op_add(struct cli_macro_opts *m, char kind, const char *arg,
                            struct kiln_err *err)
{
	struct cli_macro_op *p;

	p = kiln_reallocarray(m->ops, m->nops + 1, sizeof(*p));
	if (!p)
		return kiln_err_set(err, KILN_ENOMEM, "out of memory");
	m->ops = p;
	m->ops[m->nops].kind = kind;
	m->ops[m->nops].arg = arg;
	m->nops++;
	return KILN_OK;
}

kiln_rc cli_macro_define_cb(void *ctx, const char *arg, struct kiln_err *err)
{
	return macro_op_add(cli_macro_opts_of(ctx), 'D', arg, err);
}

kiln_rc cli_macro_undefine_cb(void *ctx, const char *arg, struct kiln_err *err)
{
	return macro_op_add(cli_macro_opts_of(ctx), 'U', arg, err);
}

kiln_rc cli_macro_load_cb(void *ctx, const char *arg, struct kiln_err *err)
{
	return macro_op_add(cli_macro_opts_of(ctx), 'L', arg, err);
}

kiln_rc cli_macro_with_cb(void *ctx, const char *arg, struct kiln_err *err)
{
	return macro_op_add(cli_macro_opts_of(ctx), 'W', arg, err);
}

kiln_rc cli_macro_without_cb(void *ctx, const char *arg, struct kiln_err *err)
{
	return macro_op_add(cli_macro_opts_of(ctx), 'O', arg, err);
}

void cli_macro_opts_release(struct cli_macro_opts *m)
{
	free(m->ops);
	m->ops = NULL;
	m->nops = 0;
}

kiln_rc cli_macro_ops_apply(struct macro_ctx *ctx, const struct cli_macro_opts *m,
                            struct kiln_err *err)
{
	kiln_rc rc = KILN_OK;
	size_t i;

	for (i = 0; !rc && i < m->nops; i++) {
		const struct cli_macro_op *op = &m->ops[i];
		struct kiln_err lerr = KILN_ERR_INIT;

		if (op->kind == 'L') {
			/* The file's own errors were reported line by line. */
			if (macro_load_file(ctx, op->arg, MACRO_LEVEL_FILE, &lerr))
				rc = kiln_err_set(err, lerr.code, "failed to load macro file %s",
				                  op->arg);
			continue;
		}
		if (op->kind == 'D')
			rc = macro_define_cmdline(ctx, op->arg, err);
		else if (op->kind == 'U')
			rc = macro_undefine(ctx, op->arg, err);
		else if (op->kind == 'L')
			rc = macro_load_file(ctx, op->arg, MACRO_LEVEL_FILE, err);
		else if (op->kind == 'W')
			rc = macro_define_bcond(ctx, true, op->arg, err);
		else
			rc = macro_define_bcond(ctx, false, op->arg, err);
	}
	return rc;
}

kiln_rc cli_macro_ctx_open(const struct cli_macro_opts *m, struct macro_ctx **out,
                           struct kiln_err *err)
{
	struct macro_config cfg = {
	    .rcfiles = m->rcfile, .macrofiles = m->macros, .target = m->target};
	kiln_rc rc;

	rc = macro_ctx_open_config(&cfg, m->verbose, out, err);
	if (!rc)
		rc = cli_macro_ops_apply(*out, m, err);
	if (rc) {
		macro_ctx_free(*out);
		*out = NULL;
	}
	return rc;
}
