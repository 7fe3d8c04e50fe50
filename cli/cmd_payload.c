/*
 * cmd_payload.c - `kiln cpio PKG` (rpm2cpio), `kiln archive PKG [-o OUT]` (rpm2archive) and
 * `kiln check PKG...` (rpm -K --nosignature).
 */
#include "util/util.h"

#include <fcntl.h>
#include <sys/stat.h>
#include <unistd.h>

#include "cli/cli.h"
#include "pack/pack.h"

enum payload_out {
	OUT_CPIO,
	OUT_TAR,
	OUT_TGZ,
};

static kiln_rc payload_to(const char *path, int outfd, enum payload_out how, struct kiln_err *err)
{
	struct pack_payload *pl = NULL;
	struct pack_package p;
	int fd = -1;
	kiln_rc rc = pack_package_open(&p, path, &fd, err);

	if (!rc)
		rc = pack_payload_open(&p, fd, &pl, err);
	if (!rc && how == OUT_CPIO)
		rc = pack_payload_to_cpio(pl, outfd, err);
	else if (!rc)
		rc = pack_payload_to_tar(pl, outfd, how == OUT_TGZ, err);
	if (rc)
		kiln_err_wrap(err, "%s", path);
	pack_payload_free(pl);
	pack_package_release(&p);
	util_close(fd);
	return rc;
}

int cli_cmd_cpio(int argc, char **argv)
{
	const struct cli_command *self = cli_command_find("cpio");
	struct kiln_err err = KILN_ERR_INIT;
	int nargs = 0;

	if (cli_opts_parse(NULL, NULL, argc, argv, &nargs, &err))
		return cli_usage_error(self, "%s", err.msg);
	if (nargs != 1)
		return cli_usage_error(self, "give one package");
	if (isatty(STDOUT_FILENO))
		return cli_usage_error(self, "standard output is a terminal: redirect it");
	return payload_to(argv[1], STDOUT_FILENO, OUT_CPIO, &err) ? cli_fail(&err) : CLI_EXIT_OK;
}

struct archive_opts {
	const char *out;
};

const struct cli_opt cli_archive_opts[] = {
    {"output", 'o', CLI_OPT_STRING, offsetof(struct archive_opts, out), NULL, "FILE",
     "write here ('-' for standard output); .tar means uncompressed; default PKG.tgz"},
    CLI_OPT_END,
};

static bool ends_with(const char *s, const char *suffix)
{
	size_t n = strlen(s), m = strlen(suffix);

	return n >= m && !strcmp(s + n - m, suffix);
}

int cli_cmd_archive(int argc, char **argv)
{
	const struct cli_command *self = cli_command_find("archive");
	struct kiln_buf out = KILN_BUF_INIT(KILN_LIMIT_PATH);
	struct util_atomic_file f = {.fd = -1};
	struct kiln_err err = KILN_ERR_INIT;
	struct archive_opts o = {0};
	enum payload_out how;
	int nargs = 0;
	kiln_rc rc;

	if (cli_opts_parse(cli_archive_opts, &o, argc, argv, &nargs, &err))
		return cli_usage_error(self, "%s", err.msg);
	if (nargs != 1)
		return cli_usage_error(self, "give one package");
	kiln_buf_addstr(&out, o.out ? o.out : argv[1]);
	if (!o.out)
		kiln_buf_addstr(&out, ".tgz");
	how = ends_with(out.ptr, ".tar") ? OUT_TAR : OUT_TGZ;
	if (!strcmp(out.ptr, "-")) {
		rc = payload_to(argv[1], STDOUT_FILENO, how, &err);
	} else {
		rc = util_atomic_open(&f, out.ptr, 0644, &err);
		if (!rc)
			rc = payload_to(argv[1], f.fd, how, &err);
		if (!rc)
			rc = util_atomic_commit(&f, &err);
		util_atomic_abort(&f);
	}
	kiln_buf_release(&out);
	return rc ? cli_fail(&err) : CLI_EXIT_OK;
}

struct check_opts {
	bool verbose, nosignature;
};

const struct cli_opt cli_check_opts[] = {
    {"verbose", 'v', CLI_OPT_FLAG, offsetof(struct check_opts, verbose), NULL, NULL,
     "show each digest"},
    {"nosignature", 0, CLI_OPT_FLAG, offsetof(struct check_opts, nosignature), NULL, NULL,
     "accepted for rpm compatibility (signatures are not checked here)"},
    CLI_OPT_END,
};

static int check_one(const char *path, bool verbose)
{
	struct kiln_err err = KILN_ERR_INIT;
	struct pack_check c;
	size_t i;

	if (pack_check_file(path, &c, &err))
		return cli_fail(&err);
	if (!verbose) {
		printf("%s: %s\n", path, c.ok ? "digests OK" : "DIGESTS NOT OK");
		return c.ok ? CLI_EXIT_OK : CLI_EXIT_FAIL;
	}
	printf("%s:\n", path);
	for (i = 0; i < c.n; i++) {
		if (c.items[i].res == PACK_CHECK_OK)
			printf("    %s: OK\n", c.items[i].what);
		else
			printf("    %s: BAD (Expected %s != %s)\n", c.items[i].what,
			       c.items[i].expected, c.items[i].actual);
	}
	return c.ok ? CLI_EXIT_OK : CLI_EXIT_FAIL;
}

int cli_cmd_check(int argc, char **argv)
{
	const struct cli_command *self = cli_command_find("check");
	struct kiln_err err = KILN_ERR_INIT;
	struct check_opts o = {0};
	int nargs = 0, i, status = CLI_EXIT_OK;

	if (cli_opts_parse(cli_check_opts, &o, argc, argv, &nargs, &err))
		return cli_usage_error(self, "%s", err.msg);
	if (!nargs)
		return cli_usage_error(self, "no package given");
	for (i = 1; i <= nargs; i++) {
		if (check_one(argv[i], o.verbose) != CLI_EXIT_OK)
			status = CLI_EXIT_FAIL;
		fflush(stdout);
	}
	return status;
}
