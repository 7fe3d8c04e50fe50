/*
 * fuzz_macro.c - the macro expander, expressions and definitions on arbitrary input.
 *
 * The context is restricted (no shell, no Lua I/O) and limited to 1 MiB per expansion, so
 * inputs that blow up end in an error instead of exhausting the machine.
 */
#include "util/util.h"

#include "macro/macro.h"

int LLVMFuzzerTestOneInput(const uint8_t *data, size_t size);

static void quiet(void *data, enum kiln_log_level level, const char *msg)
{
	(void)data;
	(void)level;
	(void)msg;
}

static const char *const predefined[] = {
    "a b",   "f(x:) [%{-x*}] [%1] [%*] [%#]",     "pm(ab:) <%{-a}|%{-b*}|%*|%#|%0|%**>", "rec %rec",
    "two 2", "lm(ab:) %{lua:print(#arg, opt.a)}",
};

int LLVMFuzzerTestOneInput(const uint8_t *data, size_t size)
{
	struct kiln_buf out = KILN_BUF_INIT(KILN_MIB);
	struct kiln_err err = KILN_ERR_INIT;
	struct macro_ctx *ctx;
	char *line;
	size_t i;

	if (size > 64 * KILN_KIB)
		return 0;
	ctx = macro_ctx_new(&err);
	if (!ctx)
		return 0;
	macro_ctx_set_diag(ctx, quiet, NULL);
	macro_ctx_set_restricted(ctx, true);
	macro_ctx_set_limit(ctx, KILN_MIB);
	for (i = 0; i < KILN_ARRAY_SIZE(predefined); i++)
		(void)!macro_define_line(ctx, predefined[i], MACRO_LEVEL_CMDLINE, &err);
	kiln_err_clear(&err);
	if (macro_expand(ctx, (const char *)data, size, &out, &err) == KILN_OK &&
	    out.len > KILN_MIB)
		KILN_BUG("expansion exceeded its limit");
	kiln_buf_reset(&out);
	kiln_err_clear(&err);
	(void)!macro_expr_eval(ctx, (const char *)data, size, MACRO_EXPR_EXPAND, &out, &err);
	kiln_err_clear(&err);
	line = kiln_strndup((const char *)data, size);
	if (line)
		(void)!macro_define_line(ctx, line, MACRO_LEVEL_CMDLINE, &err);
	free(line);
	kiln_buf_release(&out);
	macro_ctx_free(ctx);
	return 0;
}
