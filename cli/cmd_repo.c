/*
 * cmd_repo.c - `kiln repo`: the farm's published repositories (list, show, remove-package,
 * regenerate through the scheduler's API) and `kiln repo regenerate --dir DIR`, which
 * writes repository metadata for a local directory the way the scheduler does.
 */
#include "util/util.h"

#include <malloc.h>
#include <signal.h>
#include <unistd.h>

#include "api/api.h"
#include "cli/cli.h"
#include "repo/repo.h"
#include "scheduler/scheduler.h"
#include "sign/sign.h"

struct repo_opts {
	const char *url, *token;
	bool json;
	const char *dir;
	const char *key;
	const char *groups;
	bool zstd;
	int workers, keep;
	const char *revision;
};

#define ROFF(f) offsetof(struct repo_opts, f)

const struct cli_opt cli_repo_opts[] = {
    {"url", 0, CLI_OPT_STRING, ROFF(url), NULL, "URL[,URL]",
     "the scheduler, or several to fail over between (default $KILN_URL)"},
    {"token", 0, CLI_OPT_STRING, ROFF(token), NULL, "TOKEN", "bearer token (default $KILN_TOKEN)"},
    {"json", 0, CLI_OPT_FLAG, ROFF(json), NULL, NULL,
     "print the server's JSON instead of text for people"},
    {"dir", 0, CLI_OPT_STRING, ROFF(dir), NULL, "DIR",
     "regenerate: index the packages below DIR here instead of asking the scheduler"},
    {"key", 0, CLI_OPT_STRING, ROFF(key), NULL, "FILE",
     "with --dir: sign repomd.xml with this secret key (repomd.xml.asc)"},
    {"groups", 0, CLI_OPT_STRING, ROFF(groups), NULL, "FILE",
     "with --dir: add this comps file (package groups) as createrepo_c -g does"},
    {"zstd", 0, CLI_OPT_FLAG, ROFF(zstd), NULL, NULL, "with --dir: zstd instead of gzip"},
    {"workers", 0, CLI_OPT_INT, ROFF(workers), NULL, "N",
     "with --dir: threads reading packages (default one per CPU)"},
    {"keep", 0, CLI_OPT_INT, ROFF(keep), NULL, "N",
     "with --dir: metadata generations kept (default 3)"},
    {"revision", 0, CLI_OPT_STRING, ROFF(revision), NULL, "N",
     "with --dir: the revision and timestamps (default the newest build time)"},
    CLI_OPT_END,
};

static kiln_rc regenerate_dir(const struct repo_opts *o, struct kiln_err *err)
{
	struct repo_metadata_opts ro;
	struct repo_metadata_result res;
	struct sign_key *key = NULL;
	kiln_rc rc = KILN_OK;

	repo_metadata_opts_init(&ro);
	ro.zstd = o->zstd;
	ro.groups = o->groups;
	if (o->workers < 0 || o->workers > 64 || o->keep < 0 || o->keep > 100)
		return kiln_err_set(err, KILN_EINVAL, "--workers: 0 to 64, --keep: 1 to 100");
	ro.workers = (unsigned)o->workers;
	if (o->keep)
		ro.keep = (unsigned)o->keep;
	if (o->revision && (rc = util_parse_i64(o->revision, strlen(o->revision), 10, 0,
	                                        INT64_MAX / 2, &ro.revision, err)))
		return rc;
	/* Each package's headers are freed before the next is read: without a trim
	 * threshold glibc gives the heap back and asks for it again, a brk per package. */
	(void)mallopt(M_TRIM_THRESHOLD, 64 << 20);
	(void)mallopt(M_MMAP_THRESHOLD, 16 << 20);
	if (o->key && (rc = sign_key_load_secret(o->key, &key, err)))
		return rc;
	ro.key = key;
	rc = repo_metadata_write(o->dir, &ro, &res, err);
	if (!rc)
		printf("%s: %zu packages, revision %" PRId64 ", repomd.xml sha256 %s\n", o->dir,
		       res.npackages, res.revision, res.repomd_sha256);
	sign_key_free(key);
	return rc;
}

int cli_cmd_repo(int argc, char **argv)
{
	const struct cli_command *cmd = cli_command_find("repo");
	struct repo_opts o = {0};
	struct cli_client c = {0};
	struct kiln_err err = KILN_ERR_INIT;
	int nargs;
	kiln_rc rc;

	if (cli_opts_parse(cli_repo_opts, &o, argc, argv, &nargs, &err))
		return cli_usage_error(cmd, "%s", err.msg);
	if (nargs < 1)
		return cli_usage_error(cmd, "give list, show, remove-package or regenerate");
	c.url = o.url ? o.url : getenv("KILN_URL");
	c.token = o.token ? o.token : getenv("KILN_TOKEN");
	c.ca_file = getenv("KILN_CA_FILE");
	c.out_fd = STDOUT_FILENO;
	c.progress_fd = -1;
	c.json = o.json;
	if (o.dir) {
		if (strcmp(argv[1], "regenerate") || nargs != 1)
			return cli_usage_error(cmd, "--dir goes with regenerate alone");
		rc = regenerate_dir(&o, &err);
		return rc ? cli_fail(&err) : CLI_EXIT_OK;
	}
	if (api_global_init(&err))
		return cli_fail(&err);
	signal(SIGPIPE, SIG_IGN);
	if (!strcmp(argv[1], "list") && nargs == 1)
		rc = cli_client_repo(&c, "list", NULL, NULL, &err);
	else if ((!strcmp(argv[1], "show") || !strcmp(argv[1], "regenerate")) && nargs == 2)
		rc = cli_client_repo(&c, argv[1], argv[2], NULL, &err);
	else if (!strcmp(argv[1], "remove-package") && nargs == 3)
		rc = cli_client_repo(&c, argv[1], argv[2], argv[3], &err);
	else
		return cli_usage_error(cmd, "use list | show NAME | remove-package NAME PKG | "
		                            "regenerate NAME | regenerate --dir DIR");
	return rc ? cli_fail(&err) : CLI_EXIT_OK;
}
