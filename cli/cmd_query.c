/*
 * cmd_query.c - `kiln query -p PKG...`: rpm -qp's output for package files.
 */
#include "util/util.h"

#include <unistd.h>

#include "cli/cli.h"
#include "pack/pack.h"

struct query_opts {
	bool package;
	const char *qf;
	bool info, list, dump, json, xml, verbose;
	bool requires, provides, conflicts, obsoletes, recommends, suggests, supplements, enhances;
	bool changelog, scripts, triggers, filetriggers;
	bool configfiles, docfiles, licensefiles, artifactfiles, noghost;
};

#define QFLAG(l, s, field, help)                                                                   \
	{                                                                                          \
		l, s, CLI_OPT_FLAG, offsetof(struct query_opts, field), NULL, NULL, help           \
	}

const struct cli_opt cli_query_opts[] = {
    QFLAG("package", 'p', package, "query package files (required)"),
    {"qf", 0, CLI_OPT_STRING, offsetof(struct query_opts, qf), NULL, "FORMAT",
     "print with an rpm query format"},
    {"queryformat", 0, CLI_OPT_STRING, offsetof(struct query_opts, qf), NULL, "FORMAT",
     "same as --qf"},
    QFLAG("info", 'i', info, "package information (rpm -qi)"),
    QFLAG("list", 'l', list, "list the files"),
    QFLAG("dump", 0, dump, "list the files with rpm's --dump fields"),
    QFLAG("json", 0, json, "every tag as JSON (rpm 6.0's tag names)"),
    QFLAG("xml", 0, xml, "every tag as XML (rpm 6.0's tag names)"),
    QFLAG("requires", 'R', requires, "list the requirements"),
    QFLAG("provides", 'P', provides, "list the provides"),
    QFLAG("conflicts", 0, conflicts, "list the conflicts"),
    QFLAG("obsoletes", 0, obsoletes, "list the obsoletes"),
    QFLAG("recommends", 0, recommends, "list the weak requirements (recommends)"),
    QFLAG("suggests", 0, suggests, "list the suggestions"),
    QFLAG("supplements", 0, supplements, "list the supplements"),
    QFLAG("enhances", 0, enhances, "list the enhances"),
    QFLAG("changelog", 0, changelog, "show the changelog"),
    QFLAG("scripts", 0, scripts, "show the scriptlets"),
    QFLAG("triggers", 0, triggers, "show the trigger scriptlets"),
    QFLAG("filetriggers", 0, filetriggers, "show the file trigger scriptlets"),
    QFLAG("configfiles", 'c', configfiles, "list the configuration files"),
    QFLAG("docfiles", 'd', docfiles, "list the documentation files"),
    QFLAG("licensefiles", 'L', licensefiles, "list the license files"),
    QFLAG("artifactfiles", 'A', artifactfiles, "list the artifact files"),
    QFLAG("noghost", 0, noghost, "with file lists, leave out %ghost files"),
    QFLAG("verbose", 'v', verbose,
          "with dependency lists, show each one's type; list files like ls -l"),
    CLI_OPT_END,
};

/* The format behind the alias flags; NULL when none; *many when more than one is set. */
static const char *alias_format(const struct query_opts *o, int *many)
{
	const struct {
		bool set;
		const char *name;
	} a[] = {
	    {o->info, "info"},
	    {o->json, "json"},
	    {o->xml, "xml"},
	    {o->requires, "requires"},
	    {o->provides, "provides"},
	    {o->conflicts, "conflicts"},
	    {o->obsoletes, "obsoletes"},
	    {o->recommends, "recommends"},
	    {o->suggests, "suggests"},
	    {o->supplements, "supplements"},
	    {o->enhances, "enhances"},
	    {o->changelog, "changelog"},
	    {o->scripts, "scripts"},
	    {o->triggers, "triggers"},
	    {o->filetriggers, "filetriggers"},
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
	return fmt;
}

/* rpm -qp refuses a package whose header digests do not match, naming each bad one. */
static kiln_rc header_ok(const char *path, const struct pack_package *pkg, struct kiln_err *err)
{
	struct pack_check c;
	size_t i;
	kiln_rc rc = pack_check_header(pkg, &c, err);

	for (i = 0; !rc && i < c.n; i++) {
		if (c.items[i].res == PACK_CHECK_BAD)
			fprintf(stderr, "error: %s: %s: BAD (Expected %s != %s)\n", path,
			        c.items[i].what, c.items[i].expected, c.items[i].actual);
	}
	if (!rc && !c.ok)
		rc = kiln_err_set(err, KILN_EDIGEST, "%s: not an rpm package (or package manifest)",
		                  path);
	return rc;
}

static int query_one(const char *path, const struct pack_query_opts *qo)
{
	struct kiln_buf out = KILN_BUF_INIT(KILN_LIMIT_QF_OUTPUT);
	struct kiln_err err = KILN_ERR_INIT;
	struct pack_package pkg;
	kiln_rc rc = pack_package_open(&pkg, path, NULL, &err);

	if (!rc)
		rc = header_ok(path, &pkg, &err);
	if (!rc)
		rc = pack_query(&pkg, qo, &out, &err);
	if (!rc)
		rc = util_write_all(STDOUT_FILENO, out.ptr, out.len, &err);
	pack_package_release(&pkg);
	kiln_buf_release(&out);
	return rc ? cli_fail(&err) : CLI_EXIT_OK;
}

int cli_cmd_query(int argc, char **argv)
{
	const struct cli_command *self = cli_command_find("query");
	struct kiln_err err = KILN_ERR_INIT;
	struct query_opts o = {0};
	struct pack_query_opts qo = {0};
	int nargs = 0, many = 0, i, status = CLI_EXIT_OK;

	if (cli_opts_parse(cli_query_opts, &o, argc, argv, &nargs, &err))
		return cli_usage_error(self, "%s", err.msg);
	if (!o.package)
		return cli_usage_error(self, "only package files can be queried: give -p");
	if (!nargs)
		return cli_usage_error(self, "no package given");
	qo.qf = alias_format(&o, &many);
	if (many > 1)
		return cli_usage_error(self,
		                       "give only one of --qf, -i, --json, --xml, --requires, ...");
	qo.only = (o.configfiles ? RPMTAG_FILE_CONFIG : 0) | (o.docfiles ? RPMTAG_FILE_DOC : 0) |
	          (o.licensefiles ? RPMTAG_FILE_LICENSE : 0) |
	          (o.artifactfiles ? RPMTAG_FILE_ARTIFACT : 0);
	qo.skip = o.noghost ? RPMTAG_FILE_GHOST : 0;
	qo.list = o.list || qo.only; /* as in rpm, -c and friends list files */
	qo.dump = o.dump;
	qo.verbose = o.verbose;
	for (i = 1; i <= nargs; i++) {
		if (query_one(argv[i], &qo) != CLI_EXIT_OK)
			status = CLI_EXIT_FAIL;
	}
	return status;
}
