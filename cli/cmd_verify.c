/*
 * cmd_verify.c - `kiln verify`: check packages (every digest and OpenPGP signature) or a
 * detached signature against the keyring, reporting each item like `rpm -K -v` (OK, BAD,
 * NOKEY); exit 1 on any failure.
 */
#include "util/util.h"

#include "cli/cli.h"
#include "sign/sign.h"

struct verify_opts {
	const char *keyring;
	const char *signature;
	bool require;
};

const struct cli_opt cli_verify_opts[] = {
    {"keyring", 'k', CLI_OPT_STRING, offsetof(struct verify_opts, keyring), NULL, "DIR",
     "the keyring directory (default: ~/.config/kiln/keyring)"},
    {"signed", 0, CLI_OPT_FLAG, offsetof(struct verify_opts, require), NULL, NULL,
     "fail packages without a good signature (rpm 6's default)"},
    {"signature", 's', CLI_OPT_STRING, offsetof(struct verify_opts, signature), NULL, "SIG",
     "check the detached signature SIG (binary or armored) over FILE"},
    CLI_OPT_END,
};

/* Print the item as rpm -K -v does ("    <what>: BAD"), and why a signature is BAD on
 * stderr, so stdout stays comparable with rpmkeys' output. */
static void print_item(const char *file, const char *what, const char *status, const char *detail,
                       bool signature)
{
	if (signature || !detail[0])
		printf("    %s: %s\n", what, status);
	else
		printf("    %s: %s (%s)\n", what, status, detail);
	if (signature && detail[0]) {
		fflush(stdout);
		kiln_warn("%s: %s: %s", file, what, detail);
	}
}

static bool report(const char *file, const struct sign_result *res)
{
	char what[128];

	sign_result_describe(res, what, sizeof(what));
	print_item(file, what, sign_status_name(res->status),
	           res->status == SIGN_STATUS_BAD ? res->reason : "", true);
	return res->status == SIGN_STATUS_OK;
}

static int verify_detached(const struct sign_keyring *kr, const char *sigfile, const char *file)
{
	struct kiln_buf sig = KILN_BUF_INIT(2 * KILN_LIMIT_PGP_PACKET);
	struct kiln_buf data = KILN_BUF_INIT(KILN_LIMIT_TEXT_FILE);
	struct kiln_err err = KILN_ERR_INIT;
	struct sign_result res;
	int rc = CLI_EXIT_FAIL;

	if (cli_read_input(sigfile, 2 * KILN_LIMIT_PGP_PACKET, &sig, &err) ||
	    util_read_file(file, KILN_LIMIT_TEXT_FILE, &data, &err)) {
		cli_fail(&err);
		goto out;
	}
	printf("%s:\n", file);
	kiln_err_clear(&err);
	if (sign_verify(kr, sig.ptr, sig.len, data.ptr, data.len, &res, &err) == KILN_ENOMEM) {
		cli_fail(&err);
		goto out;
	}
	if (report(file, &res))
		rc = CLI_EXIT_OK;
out:
	kiln_buf_release(&data);
	kiln_buf_release(&sig);
	return rc;
}

static int verify_package(const struct sign_keyring *kr, const char *path, unsigned flags)
{
	struct kiln_err err = KILN_ERR_INIT;
	struct sign_check *c = kiln_malloc(sizeof(*c));
	size_t i;
	int rc;

	if (!c) {
		kiln_err_set(&err, KILN_ENOMEM, "out of memory");
		return cli_fail(&err);
	}
	if (sign_package_check(kr, path, flags, c, &err)) {
		free(c);
		return cli_fail(&err);
	}
	printf("%s:\n", path);
	for (i = 0; i < c->n; i++) {
		const struct sign_check_item *it = &c->items[i];

		print_item(path, it->what, sign_item_status_name(it->status), it->detail,
		           it->signature);
	}
	rc = c->ok ? CLI_EXIT_OK : CLI_EXIT_FAIL;
	free(c);
	return rc;
}

int cli_cmd_verify(int argc, char **argv)
{
	const struct cli_command *self = cli_command_find("verify");
	struct verify_opts o = {0};
	struct kiln_err err = KILN_ERR_INIT;
	struct sign_keyring *kr = NULL;
	int nargs = 0;
	int rc = CLI_EXIT_OK;
	int i;

	if (cli_opts_parse(cli_verify_opts, &o, argc, argv, &nargs, &err))
		return cli_usage_error(self, "%s", err.msg);
	if (!nargs)
		return cli_usage_error(self, "nothing to verify");
	if (o.signature && (nargs != 1 || o.require))
		return cli_usage_error(self, "--signature checks exactly one FILE");
	if (cli_keyring_open(o.keyring, &kr, &err))
		return cli_fail(&err);
	if (o.signature)
		rc = verify_detached(kr, o.signature, argv[1]);
	for (i = 1; !o.signature && i <= nargs; i++) {
		if (verify_package(kr, argv[i], o.require ? SIGN_CHECK_REQUIRE_SIGNATURE : 0))
			rc = CLI_EXIT_FAIL;
		fflush(stdout);
	}
	sign_keyring_free(kr);
	return rc;
}
