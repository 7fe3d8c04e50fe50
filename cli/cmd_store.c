/*
 * cmd_store.c - `kiln store migrate --from DATA_DIR --to postgresql://...`: a farm's
 * sqlite3 job store copied into PostgreSQL and verified (scheduler_store_migrate), so the
 * farm can go on with `kiln scheduler --set store.url=...` on the same data directory.
 */
#include "util/util.h"

#include <unistd.h>

#include "cli/cli.h"
#include "scheduler/scheduler.h"

struct store_opts {
	const char *from, *to;
};

#define SOFF(f) offsetof(struct store_opts, f)

const struct cli_opt cli_store_opts[] = {
    {"from", 0, CLI_OPT_STRING, SOFF(from), NULL, "DATA_DIR",
     "migrate: the data directory whose kiln.db is copied"},
    {"to", 0, CLI_OPT_STRING, SOFF(to), NULL, "URL",
     "migrate: the empty PostgreSQL database (postgresql://...)"},
    CLI_OPT_END,
};

int cli_cmd_store(int argc, char **argv)
{
	const struct cli_command *cmd = cli_command_find("store");
	struct store_opts o = {0};
	struct kiln_err err = KILN_ERR_INIT;
	int nargs;

	if (cli_opts_parse(cli_store_opts, &o, argc, argv, &nargs, &err))
		return cli_usage_error(cmd, "%s", err.msg);
	if (nargs != 1 || strcmp(argv[1], "migrate"))
		return cli_usage_error(cmd, "use migrate --from DATA_DIR --to postgresql://...");
	if (!o.from || !o.to)
		return cli_usage_error(cmd, "migrate needs --from DATA_DIR and --to URL");
	if (scheduler_store_migrate(o.from, o.to, STDOUT_FILENO, &err))
		return cli_fail(&err);
	return CLI_EXIT_OK;
}
