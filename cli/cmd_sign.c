/*
 * cmd_sign.c - `kiln sign`: header-only OpenPGP signatures in RPM packages (like rpmsign
 * --addsign / --delsign), and detached signatures of any file, with a kiln or gpg-exported
 * secret key.
 */
#include "util/util.h"

#include <unistd.h>

#include "cli/cli.h"
#include "sign/sign.h"

struct sign_cli_opts {
	const char *key;
	bool del;
	bool rpmv4;
	bool rpmv6;
	bool detached;
	bool armor;
	const char *output;
	const char *time;
	const char *digest;
	int jobs;
};

const struct cli_opt cli_sign_opts[] = {
    {"key", 'k', CLI_OPT_STRING, offsetof(struct sign_cli_opts, key), NULL, "KEYFILE",
     "the secret key (kiln keygen output or gpg --export-secret-keys; mode 0600)"},
    {"delete", 'd', CLI_OPT_FLAG, offsetof(struct sign_cli_opts, del), NULL, NULL,
     "remove every OpenPGP signature from each PKG (no --key needed)"},
    {"rpmv4", 0, CLI_OPT_FLAG, offsetof(struct sign_cli_opts, rpmv4), NULL, NULL,
     "v6 packages: also add a legacy RSAHEADER/DSAHEADER signature"},
    {"rpmv6", 0, CLI_OPT_FLAG, offsetof(struct sign_cli_opts, rpmv6), NULL, NULL,
     "v4 packages: also add an OPENPGP (v6-style) signature"},
    {"detached", 0, CLI_OPT_FLAG, offsetof(struct sign_cli_opts, detached), NULL, NULL,
     "write a detached signature of each FILE (- for stdin) to FILE.sig (.asc with --armor)"},
    {"armor", 'a', CLI_OPT_FLAG, offsetof(struct sign_cli_opts, armor), NULL, NULL,
     "ASCII-armor detached signatures"},
    {"output", 'o', CLI_OPT_STRING, offsetof(struct sign_cli_opts, output), NULL, "FILE",
     "where to write the detached signature of a single FILE"},
    {"time", 0, CLI_OPT_STRING, offsetof(struct sign_cli_opts, time), NULL, "SECONDS",
     "signature creation time; default SOURCE_DATE_EPOCH, else now"},
    {"digest", 0, CLI_OPT_STRING, offsetof(struct sign_cli_opts, digest), NULL, "ALGO",
     "sha256 (default), sha384 or sha512"},
    {"jobs", 'j', CLI_OPT_INT, offsetof(struct sign_cli_opts, jobs), NULL, "N",
     "sign N packages at once; default 4 per CPU, at most 16"},
    CLI_OPT_END,
};

struct signer {
	struct sign_key *key;
	struct sign_opts opts;
};

static kiln_rc signer_setup(const struct sign_cli_opts *o, struct signer *s, struct kiln_err *err)
{
	int64_t requested = -1;
	kiln_rc rc;

	s->opts.hash = SIGN_HASH_SHA256;
	if (o->digest) {
		rc = sign_hash_algo_parse(o->digest, &s->opts.hash, err);
		if (rc)
			return rc;
	}
	if (o->time) {
		rc = cli_parse_time(o->time, &requested, err);
		if (rc)
			return rc;
	}
	rc = sign_key_load_secret(o->key, &s->key, err);
	if (!rc)
		rc = sign_time_pick(s->key, requested, &s->opts.time, err);
	return rc;
}

static kiln_rc sign_detached(const struct signer *s, const char *file, const char *output,
                             bool armor, struct kiln_err *err)
{
	struct kiln_buf data = KILN_BUF_INIT(KILN_LIMIT_TEXT_FILE);
	struct kiln_buf sig = KILN_BUF_INIT(KILN_LIMIT_PGP_PACKET);
	struct kiln_buf text = KILN_BUF_INIT(2 * KILN_LIMIT_PGP_PACKET);
	struct kiln_buf path = KILN_BUF_INIT(KILN_LIMIT_PATH);
	kiln_rc rc;

	if (output)
		kiln_buf_addstr(&path, output);
	else
		kiln_buf_addf(&path, "%s.%s", file, armor ? "asc" : "sig");
	rc = kiln_buf_finish(&path, err);
	if (!rc)
		rc = cli_read_input(file, KILN_LIMIT_TEXT_FILE, &data, err);
	if (!rc)
		rc = sign_data(s->key, data.ptr, data.len, &s->opts, &sig, err);
	if (!rc && armor)
		sign_armor_encode(SIGN_ARMOR_SIGNATURE, sig.ptr, sig.len, &text);
	else if (!rc)
		kiln_buf_add(&text, sig.ptr, sig.len);
	if (!rc)
		rc = kiln_buf_finish(&text, err);
	if (!rc)
		rc = util_write_atomic(path.ptr, text.ptr, text.len, 0644, err);
	if (rc)
		kiln_err_wrap(err, "cannot sign '%s'", file);
	kiln_buf_release(&path);
	kiln_buf_release(&text);
	kiln_buf_release(&sig);
	kiln_buf_release(&data);
	return rc;
}

static int usage_check(const struct cli_command *self, const struct sign_cli_opts *o, int nargs,
                       char **argv)
{
	int i;

	if (!nargs)
		return cli_usage_error(self, "nothing to sign");
	if (o->del && (o->key || o->detached || o->rpmv4 || o->rpmv6 || o->time || o->digest))
		return cli_usage_error(self, "--delete takes no other option");
	if (!o->del && !o->key)
		return cli_usage_error(self, "--key is required");
	if (!o->detached && (o->armor || o->output))
		return cli_usage_error(self, "--armor and --output are for --detached signatures");
	if (o->detached && (o->rpmv4 || o->rpmv6))
		return cli_usage_error(self, "--rpmv4 and --rpmv6 are for packages");
	if (o->output && nargs != 1)
		return cli_usage_error(self, "--output needs exactly one FILE");
	if (o->jobs < 0 || o->jobs > SIGN_JOBS_MAX)
		return cli_usage_error(self, "--jobs must be 1 to %d", SIGN_JOBS_MAX);
	for (i = 1; i <= nargs; i++) {
		if (o->detached && !strcmp(argv[i], "-") && !o->output)
			return cli_usage_error(self, "signing standard input (-) needs --output");
	}
	return CLI_EXIT_OK;
}

static unsigned default_jobs(void)
{
	long cpus = sysconf(_SC_NPROCESSORS_ONLN);

	/* Mostly waiting for fsync: a few workers per CPU keep the disk and the CPUs busy. */
	if (cpus < 1)
		cpus = 1;
	return cpus * 4 > 16 ? 16 : (unsigned)cpus * 4;
}

/* Packages: sign (or delete) them all, in parallel, then report in argument order. */
static int sign_all(const struct sign_cli_opts *o, const struct signer *s, int n, char **paths)
{
	unsigned flags = (o->rpmv4 ? SIGN_PKG_RPMV4 : 0) | (o->rpmv6 ? SIGN_PKG_RPMV6 : 0);
	struct sign_batch_result *res = kiln_calloc((size_t)n, sizeof(*res));
	struct kiln_err err = KILN_ERR_INIT;
	int rc = CLI_EXIT_OK;
	int i;

	if (!res) {
		kiln_err_set(&err, KILN_ENOMEM, "out of memory");
		return cli_fail(&err);
	}
	if (sign_packages(o->del ? NULL : s->key, (const char *const *)paths, (size_t)n, &s->opts,
	                  flags, o->jobs ? (unsigned)o->jobs : default_jobs(), res, &err))
		rc = cli_fail(&err);
	for (i = 0; !rc && i < n; i++) {
		if (res[i].rc)
			cli_fail(&res[i].err);
	}
	for (i = 0; i < n; i++) {
		if (res[i].rc)
			rc = CLI_EXIT_FAIL;
	}
	free(res);
	return rc;
}

int cli_cmd_sign(int argc, char **argv)
{
	const struct cli_command *self = cli_command_find("sign");
	struct sign_cli_opts o = {0};
	struct kiln_err err = KILN_ERR_INIT;
	struct signer s = {0};
	int nargs = 0;
	int rc;
	int i;

	if (cli_opts_parse(cli_sign_opts, &o, argc, argv, &nargs, &err))
		return cli_usage_error(self, "%s", err.msg);
	rc = usage_check(self, &o, nargs, argv);
	if (rc)
		return rc;
	if (!o.del && signer_setup(&o, &s, &err)) {
		rc = cli_fail(&err);
		goto out;
	}
	if (!o.detached) {
		rc = sign_all(&o, &s, nargs, argv + 1);
		goto out;
	}
	for (i = 1; i <= nargs; i++) {
		kiln_err_clear(&err);
		if (sign_detached(&s, argv[i], o.output, o.armor, &err))
			rc = cli_fail(&err);
	}
out:
	sign_key_free(s.key);
	return rc;
}
