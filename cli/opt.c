/*
 * opt.c - a small table-driven option parser (GNU style: --long, --long=v, -s, -sv, -s v).
 */
#include "util/util.h"

#include "cli/cli.h"

static const struct cli_opt *opt_find_long(const struct cli_opt *opts, const char *name, size_t len)
{
	const struct cli_opt *o;

	for (o = opts; o && (o->lname || o->sname); o++) {
		if (o->lname && strlen(o->lname) == len && !memcmp(o->lname, name, len))
			return o;
	}
	return NULL;
}

static const struct cli_opt *opt_find_short(const struct cli_opt *opts, char c)
{
	const struct cli_opt *o;

	for (o = opts; o && (o->lname || o->sname); o++) {
		if (o->sname == c)
			return o;
	}
	return NULL;
}

static bool opt_takes_arg(const struct cli_opt *o)
{
	return o->argname && o->kind != CLI_OPT_OPTIONAL && o->kind != CLI_OPT_FLAG;
}

static kiln_rc opt_store(const struct cli_opt *o, void *ctx, const char *arg, struct kiln_err *err)
{
	char *field = (char *)ctx + o->off;
	kiln_rc rc;

	switch (o->kind) {
	case CLI_OPT_FLAG:
		*(bool *)(void *)field = true;
		return KILN_OK;
	case CLI_OPT_STRING:
	case CLI_OPT_OPTIONAL:
		*(const char **)(void *)field = arg ? arg : "";
		return KILN_OK;
	case CLI_OPT_INT:
		rc = util_parse_int(arg, INT_MIN, INT_MAX, (int *)(void *)field, err);
		return rc;
	case CLI_OPT_CALLBACK:
		return o->cb(ctx, arg, err);
	}
	return KILN_OK;
}

static void opt_name(const struct cli_opt *o, char *dst, size_t size)
{
	if (o->lname)
		snprintf(dst, size, "--%s", o->lname);
	else
		snprintf(dst, size, "-%c", o->sname);
}

static kiln_rc opt_apply(const struct cli_opt *o, void *ctx, const char *arg, struct kiln_err *err)
{
	char name[64];
	kiln_rc rc;

	rc = opt_store(o, ctx, arg, err);
	if (rc) {
		opt_name(o, name, sizeof(name));
		kiln_err_wrap(err, "option %s", name);
	}
	return rc;
}

static kiln_rc opt_parse_long(const struct cli_opt *opts, void *ctx, int argc, char **argv, int *i,
                              struct kiln_err *err)
{
	const char *name = argv[*i] + 2;
	const char *eq = strchr(name, '=');
	size_t len = eq ? (size_t)(eq - name) : strlen(name);
	const struct cli_opt *o = opt_find_long(opts, name, len);

	if (!o)
		return kiln_err_set(err, KILN_EINVAL, "unknown option '--%.*s'", (int)len, name);
	if (o->kind == CLI_OPT_OPTIONAL || (o->kind == CLI_OPT_CALLBACK && !o->argname))
		return opt_apply(o, ctx, eq ? eq + 1 : NULL, err);
	if (!opt_takes_arg(o)) {
		if (eq)
			return kiln_err_set(err, KILN_EINVAL, "option '--%s' takes no argument",
			                    o->lname);
		return opt_apply(o, ctx, NULL, err);
	}
	if (eq)
		return opt_apply(o, ctx, eq + 1, err);
	if (*i + 1 >= argc)
		return kiln_err_set(err, KILN_EINVAL, "option '--%s' needs an argument (%s)",
		                    o->lname, o->argname);
	(*i)++;
	return opt_apply(o, ctx, argv[*i], err);
}

static kiln_rc opt_parse_short(const struct cli_opt *opts, void *ctx, int argc, char **argv, int *i,
                               struct kiln_err *err)
{
	const char *p = argv[*i] + 1;
	kiln_rc rc;

	while (*p) {
		const struct cli_opt *o = opt_find_short(opts, *p);

		if (!o)
			return kiln_err_set(err, KILN_EINVAL, "unknown option '-%c'", *p);
		if (!opt_takes_arg(o)) {
			rc = opt_apply(o, ctx, NULL, err);
			if (rc)
				return rc;
			p++;
			continue;
		}
		if (p[1])
			return opt_apply(o, ctx, p + 1, err);
		if (*i + 1 >= argc)
			return kiln_err_set(err, KILN_EINVAL, "option '-%c' needs an argument (%s)",
			                    o->sname, o->argname);
		(*i)++;
		return opt_apply(o, ctx, argv[*i], err);
	}
	return KILN_OK;
}

kiln_rc cli_opts_parse(const struct cli_opt *opts, void *ctx, int argc, char **argv, int *nargs,
                       struct kiln_err *err)
{
	int n = 0;
	int i;
	kiln_rc rc;

	for (i = 1; i < argc; i++) {
		const char *a = argv[i];

		if (!strcmp(a, "--")) {
			while (++i < argc)
				argv[1 + n++] = argv[i];
			break;
		}
		if (a[0] == '-' && a[1] == '-')
			rc = opt_parse_long(opts, ctx, argc, argv, &i, err);
		else if (a[0] == '-' && a[1])
			rc = opt_parse_short(opts, ctx, argc, argv, &i, err);
		else {
			argv[1 + n++] = argv[i];
			rc = KILN_OK;
		}
		if (rc)
			return rc;
	}
	*nargs = n;
	return KILN_OK;
}

int cli_opt_words(const struct cli_opt *opts, int argc, char **argv, int i,
                  const struct cli_opt **out)
{
	const char *a = argv[i];
	const struct cli_opt *o = NULL;

	*out = NULL;
	if (a[0] != '-' || !a[1] || !strcmp(a, "--"))
		return 1;
	if (a[1] == '-') {
		const char *eq = strchr(a + 2, '=');

		o = opt_find_long(opts, a + 2, eq ? (size_t)(eq - a - 2) : strlen(a + 2));
		*out = o;
		return o && opt_takes_arg(o) && !eq && i + 1 < argc ? 2 : 1;
	}
	/* -xyz: flags, then at most one option whose argument is the rest or the next word */
	for (a++; *a; a++) {
		o = opt_find_short(opts, *a);
		*out = o;
		if (!o)
			return 1;
		if (opt_takes_arg(o))
			return !a[1] && i + 1 < argc ? 2 : 1;
	}
	return 1;
}

void cli_opts_print(const struct cli_opt *opts, FILE *out)
{
	const struct cli_opt *o;

	for (o = opts; o && (o->lname || o->sname); o++) {
		char left[96];
		int n = 0;

		if (!o->help)
			continue;
		if (o->sname && o->lname)
			n = snprintf(left, sizeof(left), "  -%c, --%s", o->sname, o->lname);
		else if (o->lname)
			n = snprintf(left, sizeof(left), "      --%s", o->lname);
		else
			n = snprintf(left, sizeof(left), "  -%c", o->sname);
		if (o->argname && n > 0 && (size_t)n < sizeof(left))
			snprintf(left + n, sizeof(left) - (size_t)n,
			         o->kind == CLI_OPT_OPTIONAL ? "[=%s]" : " %s", o->argname);
		fprintf(out, "%-30s %s\n", left, o->help);
	}
}
