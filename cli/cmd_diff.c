/*
 * cmd_diff.c - `kiln diff OLD.rpm NEW.rpm`: an RPM-aware structured diff of two packages
 * (pack_diff_files), as text or JSON. Exit status like diff(1) and diffoscope: 0 identical,
 * 1 different, 2 for a usage error or a package that cannot be read.
 */
#include "util/util.h"

#include <unistd.h>

#include "cli/cli.h"
#include "pack/pack.h"

struct diff_opts {
	bool json;
	bool quiet;
	int context;
};

const struct cli_opt cli_diff_opts[] = {
    {"json", 0, CLI_OPT_FLAG, offsetof(struct diff_opts, json), NULL, NULL,
     "print one JSON object (see docs/diff.md)"},
    {"quiet", 'q', CLI_OPT_FLAG, offsetof(struct diff_opts, quiet), NULL, NULL,
     "print nothing; only the exit status tells"},
    {"unified", 'U', CLI_OPT_INT, offsetof(struct diff_opts, context), NULL, "N",
     "lines of context in text diffs (default 3)"},
    CLI_OPT_END,
};

static int diff_fail(const struct kiln_err *err)
{
	kiln_log_err(KILN_LOG_ERROR, err);
	return CLI_EXIT_USAGE; /* 1 means "they differ": trouble is 2, as in diff(1) */
}

int cli_cmd_diff(int argc, char **argv)
{
	const struct cli_command *self = cli_command_find("diff");
	struct kiln_buf out = KILN_BUF_INIT(KILN_LIMIT_QF_OUTPUT);
	struct kiln_err err = KILN_ERR_INIT;
	struct diff_opts o = {.context = 3};
	struct pack_diff_opts po;
	struct pack_diff d = {0};
	int nargs = 0, status;
	kiln_rc rc;

	if (cli_opts_parse(cli_diff_opts, &o, argc, argv, &nargs, &err))
		return cli_usage_error(self, "%s", err.msg);
	if (nargs != 2)
		return cli_usage_error(self, "give two packages");
	if (o.context < 0 || o.context > 100000)
		return cli_usage_error(self, "--unified: %d is not between 0 and 100000",
		                       o.context);
	pack_diff_opts_init(&po);
	po.context = (unsigned)o.context;
	rc = pack_diff_files(argv[1], argv[2], &po, &d, &err);
	if (!rc && !o.quiet)
		rc = pack_diff_format(&d, argv[1], argv[2], o.json ? PACK_DIFF_F_JSON : 0, &out,
		                      &err);
	if (!rc)
		rc = util_write_all(STDOUT_FILENO, out.ptr, out.len, &err);
	status = rc ? diff_fail(&err) : d.n ? CLI_EXIT_FAIL : CLI_EXIT_OK;
	pack_diff_release(&d);
	kiln_buf_release(&out);
	return status;
}
