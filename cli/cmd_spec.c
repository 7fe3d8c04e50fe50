/*
 * cmd_spec.c - `kiln spec`: parse spec files like rpmspec (-P, -q) and dump the model.
 */
#include "util/util.h"

#include <unistd.h>

#include "cli/cli.h"
#include "macro/macro.h"
#include "spec/spec.h"

struct spec_opts {
	struct cli_macro_opts macros; /* first member: CLI_MACRO_OPTS */
	bool parse, query, json;
	const char *qf;
	bool srpm, rpms, builtrpms;
	bool info, xml, qjson, requires, provides, conflicts, obsoletes, recommends, suggests,
	    supplements, enhances, buildrequires;
};

#define SFLAG(l, s, field, help)                                                                   \
	{                                                                                          \
		l, s, CLI_OPT_FLAG, offsetof(struct spec_opts, field), NULL, NULL, help            \
	}

const struct cli_opt cli_spec_opts[] = {
    CLI_MACRO_OPTS(struct spec_opts, macros),
    SFLAG("parse", 'P', parse, "print the parsed, expanded spec (rpmspec -P; the default)"),
    SFLAG("query", 'q', query, "print each package with a query format (rpmspec -q)"),
    SFLAG("json", 0, json, "print the parsed model as JSON (docs/spec-json.md)"),
    {"qf", 0, CLI_OPT_STRING, offsetof(struct spec_opts, qf), NULL, "FORMAT",
     "query format (default %{_query_all_fmt}, as rpm)"},
    {"queryformat", 0, CLI_OPT_STRING, offsetof(struct spec_opts, qf), NULL, "FORMAT",
     "same as --qf"},
    SFLAG("srpm", 0, srpm, "query the source package"),
    SFLAG("rpms", 0, rpms, "query every binary package (the default)"),
    SFLAG("builtrpms", 0, builtrpms, "query the binary packages that get built (have %files)"),
    SFLAG("info", 'i', info, "package information (rpm -qi's format)"),
    SFLAG("xml", 0, xml, "every tag as XML"),
    SFLAG("qjson", 0, qjson, "every tag with rpm 4.20's --json query format"),
    SFLAG("requires", 'R', requires, "list the requirements"),
    SFLAG("provides", 0, provides, "list the provides"),
    SFLAG("conflicts", 0, conflicts, "list the conflicts"),
    SFLAG("obsoletes", 0, obsoletes, "list the obsoletes"),
    SFLAG("recommends", 0, recommends, "list the recommends"),
    SFLAG("suggests", 0, suggests, "list the suggests"),
    SFLAG("supplements", 0, supplements, "list the supplements"),
    SFLAG("enhances", 0, enhances, "list the enhances"),
    SFLAG("buildrequires", 0, buildrequires, "list the build requirements (--srpm --requires)"),
    CLI_OPT_END,
};

/* The query format from --qf or an alias flag; *many counts how many were given. */
static const char *query_format(const struct spec_opts *o, int *many)
{
	const struct {
		bool set;
		const char *name;
	} a[] = {
	    {o->info, "info"},           {o->xml, "xml"},
	    {o->qjson, "json"},          {o->requires || o->buildrequires, "requires"},
	    {o->provides, "provides"},   {o->conflicts, "conflicts"},
	    {o->obsoletes, "obsoletes"}, {o->recommends, "recommends"},
	    {o->suggests, "suggests"},   {o->supplements, "supplements"},
	    {o->enhances, "enhances"},
	};
	const char *fmt = o->qf;
	size_t i;

	*many = fmt ? 1 : 0;
	for (i = 0; i < KILN_ARRAY_SIZE(a); i++) {
		if (a[i].set) {
			fmt = rpmtag_qf_alias(a[i].name);
			(*many)++;
		}
	}
	return fmt; /* NULL: rpm's default, %{_query_all_fmt} (see default_format) */
}

/* rpm queries without a format with "%{?_query_all_fmt}\n" (rpm's is %{nvr}%{archsuffix},
 * so rpmspec -q shows every package as .src: its headers have no SOURCERPM). */
static char *default_format(struct macro_ctx *ctx, struct kiln_err *err)
{
	char *fmt = NULL;

	if (macro_expand_str(ctx, "%{?_query_all_fmt}", &fmt, err))
		return NULL;
	if (!*fmt) {
		free(fmt);
		fmt = kiln_strdup("%{nvr}%{archsuffix}");
	}
	if (fmt) {
		size_t n = strlen(fmt);
		char *full = kiln_malloc(n + 2);

		if (full) {
			memcpy(full, fmt, n);
			memcpy(full + n, "\n", 2);
		}
		free(fmt);
		fmt = full;
	}
	if (!fmt)
		kiln_err_set(err, KILN_ENOMEM, "out of memory");
	return fmt;
}

static kiln_rc render(struct spec *spec, const struct rpmtag_qf *qf, const struct rpmtag_set *tags,
                      struct kiln_buf *out, struct kiln_err *err)
{
	struct rpmtag_qf_source src;
	kiln_rc rc = spec_qf_source_make(spec, tags, &src, err);

	if (!rc)
		rc = rpmtag_qf_render(qf, &src, out, err);
	return rc;
}

static kiln_rc query_spec(struct spec *spec, const struct spec_opts *o, const char *fmt,
                          struct kiln_buf *out, struct kiln_err *err)
{
	struct rpmtag_qf *qf = NULL;
	kiln_rc rc = rpmtag_qf_compile(fmt, strlen(fmt), &qf, err);
	size_t i;

	if (rc)
		return rc;
	if (o->srpm || o->buildrequires) {
		rc = render(spec, qf, spec->srctags, out, err);
	} else {
		for (i = 0; !rc && i < spec->npackages; i++) {
			if (o->builtrpms && !spec->packages[i]->has_files)
				continue;
			rc = render(spec, qf, spec->packages[i]->tags, out, err);
		}
	}
	rpmtag_qf_free(qf);
	return rc;
}

static kiln_rc one_spec(const char *path, const struct spec_opts *o, const char *fmt,
                        const struct macro_ctx *base, struct kiln_err *err)
{
	struct kiln_buf out = KILN_BUF_INIT(KILN_LIMIT_QF_OUTPUT);
	struct spec *spec = NULL;
	kiln_rc rc = KILN_OK;
	/* A fresh copy of the configuration per spec: one spec's %global must not leak into
	 * the next (rpmspec lets it). */
	struct macro_ctx *ctx = macro_ctx_dup(base, err);

	if (!ctx)
		rc = err->code;
	if (!rc)
		rc = spec_parse_file(path, ctx, SPEC_PARSE_ANYARCH | SPEC_PARSE_FORCE, &spec, err);
	if (!rc && o->json)
		rc = spec_json_write(spec, &out, err);
	else if (!rc && o->query && fmt)
		rc = query_spec(spec, o, fmt, &out, err);
	else if (!rc && o->query) {
		char *def = default_format(ctx, err);

		rc = def ? query_spec(spec, o, def, &out, err) : err->code;
		free(def);
	} else if (!rc)
		kiln_buf_add(&out, spec->parsed.ptr, spec->parsed.len);
	if (!rc)
		rc = kiln_buf_finish(&out, err);
	if (!rc)
		rc = util_write_all(STDOUT_FILENO, out.ptr, out.len, err);
	spec_free(spec);
	macro_ctx_free(ctx);
	kiln_buf_release(&out);
	return rc;
}

int cli_cmd_spec(int argc, char **argv)
{
	const struct cli_command *self = cli_command_find("spec");
	struct kiln_err err = KILN_ERR_INIT;
	struct spec_opts o = {0};
	struct macro_ctx *base = NULL;
	const char *fmt;
	int nargs = 0, many = 0, i, status = CLI_EXIT_OK;

	if (cli_opts_parse(cli_spec_opts, &o, argc, argv, &nargs, &err)) {
		status = cli_usage_error(self, "%s", err.msg);
		goto out;
	}
	fmt = query_format(&o, &many);
	if (many || o.srpm || o.rpms || o.builtrpms)
		o.query = true;
	if ((int)o.parse + (int)o.query + (int)o.json > 1) {
		status = cli_usage_error(self, "give only one of --parse, -q and --json");
		goto out;
	}
	if (many > 1) {
		status = cli_usage_error(self, "give only one of --qf, -i, --requires, ...");
		goto out;
	}
	if (!nargs) {
		status = cli_usage_error(self, "no spec file given");
		goto out;
	}
	if (cli_macro_ctx_open(&o.macros, &base, &err)) {
		status = cli_fail(&err);
		goto out;
	}
	for (i = 1; i <= nargs && status == CLI_EXIT_OK; i++) {
		kiln_err_clear(&err);
		if (one_spec(argv[i], &o, fmt, base, &err))
			status = cli_fail(&err);
	}
out:
	macro_ctx_free(base);
	cli_macro_opts_release(&o.macros);
	return status;
}
