/*
 * cmd_provenance.c - `kiln provenance verify [--key FILE] FILE RPM`: check a DSSE-signed
 * in-toto statement from the farm (GET /api/v1/artifacts/SHA256/provenance) against a
 * package: a good signature by a known key, and the package's sha256 among its subjects.
 */
#include "util/util.h"

#include <unistd.h>

#include "cli/cli.h"
#include "scheduler/scheduler.h"

struct provenance_opts {
	const char *key;
};

const struct cli_opt cli_provenance_opts[] = {
    {"key", 'k', CLI_OPT_STRING, offsetof(struct provenance_opts, key), NULL, "FILE",
     "the farm's public key (GET /api/v1/keys/NAME); default kiln's keyring"},
    CLI_OPT_END,
};

int cli_cmd_provenance(int argc, char **argv)
{
	const struct cli_command *self = cli_command_find("provenance");
	struct kiln_err err = KILN_ERR_INIT;
	struct provenance_opts o = {0};
	int nargs = 0;

	if (cli_opts_parse(cli_provenance_opts, &o, argc, argv, &nargs, &err))
		return cli_usage_error(self, "%s", err.msg);
	if (nargs != 3 || strcmp(argv[1], "verify"))
		return cli_usage_error(self, "use: provenance verify [--key FILE] FILE RPM");
	if (scheduler_provenance_verify_file(argv[2], argv[3], o.key, STDOUT_FILENO, &err))
		return cli_fail(&err);
	return CLI_EXIT_OK;
}
