/*
 * cmd_keys.c - `kiln keys`: manage the keyring that `kiln verify` trusts, like rpmkeys 4.20
 * --import, --list and --delete.
 */
#include "util/util.h"

#include <unistd.h>

#include "cli/cli.h"
#include "sign/sign.h"

struct keys_opts {
	bool import;
	bool list;
	bool del;
	const char *keyring;
};

const struct cli_opt cli_keys_opts[] = {
    {"import", 0, CLI_OPT_FLAG, offsetof(struct keys_opts, import), NULL, NULL,
     "import the certificates of each FILE (armored or binary; - for stdin)"},
    {"list", 'l', CLI_OPT_FLAG, offsetof(struct keys_opts, list), NULL, NULL,
     "list the keys (SHORTID-CREATED: USERID public key)"},
    {"delete", 'd', CLI_OPT_FLAG, offsetof(struct keys_opts, del), NULL, NULL,
     "delete the keys with each KEYID (short or long key ID, or fingerprint)"},
    {"keyring", 'k', CLI_OPT_STRING, offsetof(struct keys_opts, keyring), NULL, "DIR",
     "the keyring directory (default: ~/.config/kiln/keyring)"},
    CLI_OPT_END,
};

kiln_rc cli_keyring_open(const char *dir, struct sign_keyring **kr, struct kiln_err *err)
{
	struct kiln_buf def = KILN_BUF_INIT(KILN_LIMIT_PATH);
	kiln_rc rc = KILN_OK;

	if (!dir)
		rc = sign_keyring_default_dir(&def, err);
	if (!rc)
		rc = sign_keyring_open(dir ? dir : def.ptr, kr, err);
	kiln_buf_release(&def);
	return rc;
}

kiln_rc cli_read_input(const char *path, size_t max, struct kiln_buf *out, struct kiln_err *err)
{
	kiln_rc rc;

	if (strcmp(path, "-") != 0)
		return util_read_file(path, max, out, err);
	out->max = max;
	rc = util_read_fd(STDIN_FILENO, out, err);
	if (rc)
		kiln_err_wrap(err, "cannot read standard input");
	return rc;
}

static int import_files(struct sign_keyring *kr, int n, char **files)
{
	struct kiln_buf data = KILN_BUF_INIT(KILN_LIMIT_PGP_FILE);
	struct kiln_err err = KILN_ERR_INIT;
	size_t count = 0;
	int failed = 0;
	int i;

	for (i = 0; i < n; i++) {
		kiln_buf_reset(&data);
		kiln_err_clear(&err);
		if (cli_read_input(files[i], KILN_LIMIT_PGP_FILE, &data, &err) ||
		    sign_keyring_import(kr, data.ptr, data.len, &count, &err)) {
			kiln_err_wrap(&err, "%s: key %zu import failed", files[i], count + 1);
			kiln_log_err(KILN_LOG_ERROR, &err);
			failed++;
		}
	}
	kiln_buf_release(&data);
	return failed ? CLI_EXIT_FAIL : CLI_EXIT_OK;
}

static void list_keys(const struct sign_keyring *kr)
{
	struct sign_key_info info;
	size_t i;

	for (i = 0; i < sign_keyring_count(kr); i++) {
		sign_key_info_get(sign_keyring_get(kr, i), &info);
		printf("%s-%08" PRIx64 ": %s public key%s\n", info.short_id, (uint64_t)info.created,
		       info.uid, info.revoked ? " (revoked)" : "");
	}
}

static int delete_keys(struct sign_keyring *kr, int n, char **ids)
{
	struct kiln_err err = KILN_ERR_INIT;
	int failed = 0;
	int i;

	for (i = 0; i < n; i++) {
		kiln_err_clear(&err);
		if (sign_keyring_delete(kr, ids[i], &err)) {
			kiln_log_err(KILN_LOG_ERROR, &err);
			failed++;
		}
	}
	return failed ? CLI_EXIT_FAIL : CLI_EXIT_OK;
}

int cli_cmd_keys(int argc, char **argv)
{
	const struct cli_command *self = cli_command_find("keys");
	struct keys_opts o = {0};
	struct kiln_err err = KILN_ERR_INIT;
	struct sign_keyring *kr = NULL;
	int nargs = 0;
	int rc;

	if (cli_opts_parse(cli_keys_opts, &o, argc, argv, &nargs, &err))
		return cli_usage_error(self, "%s", err.msg);
	if (o.import + o.list + o.del != 1)
		return cli_usage_error(self, "give one of --import, --list or --delete");
	if (o.list && nargs)
		return cli_usage_error(self, "--list takes no arguments");
	if (!o.list && !nargs)
		return cli_usage_error(self, "--%s needs at least one argument",
		                       o.import ? "import" : "delete");
	if (cli_keyring_open(o.keyring, &kr, &err))
		return cli_fail(&err);
	if (o.import)
		rc = import_files(kr, nargs, argv + 1);
	else if (o.del)
		rc = delete_keys(kr, nargs, argv + 1);
	else {
		list_keys(kr);
		rc = CLI_EXIT_OK;
	}
	sign_keyring_free(kr);
	return rc;
}
