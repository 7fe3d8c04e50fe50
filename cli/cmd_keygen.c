/*
 * cmd_keygen.c - `kiln keygen`: make an OpenPGP signing key.
 */
#include "util/util.h"

#include "cli/cli.h"
#include "sign/sign.h"

struct keygen_opts {
	const char *name;
	const char *email;
	const char *algo;
	const char *out;
	const char *time;
};

const struct cli_opt cli_keygen_opts[] = {
    {"name", 0, CLI_OPT_STRING, offsetof(struct keygen_opts, name), NULL, "NAME",
     "the user ID's name (required)"},
    {"email", 0, CLI_OPT_STRING, offsetof(struct keygen_opts, email), NULL, "ADDR",
     "the user ID's e-mail address"},
    {"algo", 0, CLI_OPT_STRING, offsetof(struct keygen_opts, algo), NULL, "ALGO",
     "rsa4096 (default), rsa3072, rsa2048 or ed25519"},
    {"out", 'o', CLI_OPT_STRING, offsetof(struct keygen_opts, out), NULL, "DIR",
     "where to write KEYID.key and KEYID.asc (default: .)"},
    {"time", 0, CLI_OPT_STRING, offsetof(struct keygen_opts, time), NULL, "SECONDS",
     "key creation time in seconds since 1970; default now"},
    CLI_OPT_END,
};

kiln_rc cli_parse_time(const char *s, int64_t *out, struct kiln_err *err)
{
	kiln_rc rc = util_parse_i64(s, strlen(s), 10, 0, UINT32_MAX, out, err);

	if (rc)
		kiln_err_wrap(err, "invalid time '%s' (seconds since 1970, UTC)", s);
	return rc;
}

static kiln_rc write_key(const struct sign_key *key, const char *dir, struct kiln_err *err)
{
	struct kiln_buf secret = KILN_BUF_INIT(KILN_LIMIT_PATH);
	struct kiln_buf public = KILN_BUF_INIT(KILN_LIMIT_PATH);
	struct kiln_buf text = KILN_BUF_INIT(KILN_LIMIT_PGP_FILE);
	struct sign_key_info info;
	kiln_rc rc;

	sign_key_info_get(key, &info);
	kiln_buf_addf(&secret, "%s/%s.key", dir, info.keyid);
	kiln_buf_addf(&public, "%s/%s.asc", dir, info.keyid);
	rc = kiln_buf_finish(&secret, err);
	if (!rc)
		rc = kiln_buf_finish(&public, err);
	if (!rc && util_exists(public.ptr))
		rc = kiln_err_set(err, KILN_EEXIST, "'%s' already exists", public.ptr);
	if (!rc)
		rc = util_mkdir_p(dir, 0700, err);
	if (!rc)
		rc = sign_key_export(key, SIGN_EXPORT_ARMOR, &text, err);
	if (!rc)
		rc = sign_key_save_secret(key, secret.ptr, err);
	if (!rc)
		rc = util_write_atomic(public.ptr, text.ptr, text.len, 0644, err);
	if (!rc)
		printf("key %s %s-%u\nuid %s\nsecret key: %s\npublic key: %s\n", info.fingerprint,
		       sign_pk_algo_name(info.algo), info.bits, info.uid, secret.ptr, public.ptr);
	kiln_buf_release(&text);
	kiln_buf_release(&public);
	kiln_buf_release(&secret);
	return rc;
}

int cli_cmd_keygen(int argc, char **argv)
{
	const struct cli_command *self = cli_command_find("keygen");
	struct keygen_opts o = {.algo = "rsa4096", .out = "."};
	struct kiln_err err = KILN_ERR_INIT;
	struct kiln_buf uid = KILN_BUF_INIT(KILN_LIMIT_LINE);
	struct sign_key *key = NULL;
	enum sign_keygen_algo algo;
	int64_t created;
	int nargs = 0;
	int rc = CLI_EXIT_OK;

	if (cli_opts_parse(cli_keygen_opts, &o, argc, argv, &nargs, &err))
		return cli_usage_error(self, "%s", err.msg);
	if (nargs)
		return cli_usage_error(self, "unexpected argument '%s'", argv[1]);
	if (!o.name || !o.name[0])
		return cli_usage_error(self, "--name is required");
	if (sign_keygen_algo_parse(o.algo, &algo, &err))
		return cli_usage_error(self, "%s", err.msg);
	created = util_clock_wall();
	if (o.time && cli_parse_time(o.time, &created, &err))
		return cli_usage_error(self, "%s", err.msg);
	if (o.email && o.email[0])
		kiln_buf_addf(&uid, "%s <%s>", o.name, o.email);
	else
		kiln_buf_addstr(&uid, o.name);
	if (kiln_buf_finish(&uid, &err) || sign_key_generate(algo, uid.ptr, created, &key, &err) ||
	    write_key(key, o.out, &err))
		rc = cli_fail(&err);
	sign_key_free(key);
	kiln_buf_release(&uid);
	return rc;
}
