/*
 * main.c - kiln's entry point: global options, then dispatch to a subcommand.
 */
#include "util/util.h"

#include "cli/cli.h"

static int dispatch(int argc, char **argv)
{
	const struct cli_command *c = cli_command_find(argv[0]);

	if (!c) {
		fprintf(stderr, "kiln: '%s' is not a kiln command\n", argv[0]);
		return cli_usage_error(NULL, NULL);
	}
	/* "kiln CMD --help" is "kiln help CMD". */
	if (argc == 2 && (!strcmp(argv[1], "--help") || !strcmp(argv[1], "-h"))) {
		char *help_argv[] = {(char *)"help", argv[0], NULL};

		return cli_cmd_help(2, help_argv);
	}
	return c->run(argc, argv);
}

static bool env_log_setup(void)
{
	const char *lvl = getenv("KILN_LOG_LEVEL");
	const char *fmt = getenv("KILN_LOG_FORMAT");
	enum kiln_log_level level = KILN_LOG_INFO;

	if (lvl && *lvl && kiln_log_level_parse(lvl, &level)) {
		fprintf(stderr, "kiln: KILN_LOG_LEVEL must be error, warn, info or debug\n");
		return false;
	}
	kiln_log_setup(level, fmt && !strcmp(fmt, "json") ? KILN_LOG_F_JSON : 0);
	return true;
}

int main(int argc, char **argv)
{
	int i = 1;

	if (!env_log_setup())
		return CLI_EXIT_USAGE;
	for (; i < argc && argv[i][0] == '-'; i++) {
		if (!strcmp(argv[i], "--version")) {
			cli_print_version(stdout);
			return CLI_EXIT_OK;
		}
		if (!strcmp(argv[i], "--help") || !strcmp(argv[i], "-h")) {
			char *help_argv[] = {(char *)"help", NULL};

			return cli_cmd_help(1, help_argv);
		}
		fprintf(stderr, "kiln: unknown option '%s'\n", argv[i]);
		return cli_usage_error(NULL, NULL);
	}
	if (i >= argc)
		return cli_usage_error(NULL, NULL);
	return dispatch(argc - i, argv + i);
}
