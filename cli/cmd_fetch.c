/*
 * cmd_fetch.c - `kiln fetch`: make a spec's sources present in %{_sourcedir} (like
 * `spectool -g` plus verification and the shared cache), pin their checksums, fetch one
 * URL, or take a git repository: check out a dist-git tree and fetch its sources, or make
 * a deterministic tarball of a commit.
 */
#include "util/util.h"

#include "cli/cli.h"
#include "macro/macro.h"
#include "spec/spec.h"
#include "worker/worker.h"

struct fetch_cli {
	struct cli_macro_opts macros; /* first member: CLI_MACRO_OPTS */
	struct cli_fetch_opts net;
	const char *sourcedir;
	const char *sources;
	bool pin;
	const char *git, *ref, *spec, *checkout, *archive, *prefix;
	const char *url, *output, *sha256, *sha512;
	bool quiet;
};

#define FOPT(l, s, kind, field, arg, help)                                                         \
	{                                                                                          \
		l, s, kind, offsetof(struct fetch_cli, field), NULL, arg, help                     \
	}

const struct cli_opt cli_fetch_opts_table[] = {
    CLI_MACRO_OPTS(struct fetch_cli, macros),
    CLI_FETCH_OPTS(struct fetch_cli, net),
    FOPT("sourcedir", 'C', CLI_OPT_STRING, sourcedir, "DIR",
         "put the sources in DIR (defines %_sourcedir)"),
    FOPT("sources", 0, CLI_OPT_STRING, sources, "FILE",
         "the checksum file (default: 'sources' beside the spec)"),
    FOPT("pin", 0, CLI_OPT_FLAG, pin, NULL,
         "write the SHA512 of every downloaded source to the checksum file"),
    FOPT("git", 0, CLI_OPT_STRING, git, "URL", "a git repository (https, http, file, ssh, path)"),
    FOPT("ref", 0, CLI_OPT_STRING, ref, "REF", "branch, tag or commit (default: the remote HEAD)"),
    FOPT("spec", 0, CLI_OPT_STRING, spec, "PATH", "the spec inside the repository"),
    FOPT("checkout", 0, CLI_OPT_STRING, checkout, "DIR",
         "where to check the repository out (default: its name)"),
    FOPT("archive", 0, CLI_OPT_STRING, archive, "FILE",
         "write a deterministic .tar.gz of the commit instead"),
    FOPT("prefix", 0, CLI_OPT_STRING, prefix, "PREFIX/", "the path prefix inside --archive"),
    FOPT("url", 0, CLI_OPT_STRING, url, "URL", "fetch this one URL (with -o)"),
    FOPT("output", 'o', CLI_OPT_STRING, output, "FILE", "where --url goes"),
    FOPT("sha256", 0, CLI_OPT_STRING, sha256, "HEX", "the checksum --url must have"),
    FOPT("sha512", 0, CLI_OPT_STRING, sha512, "HEX", "the checksum --url must have"),
    FOPT("quiet", 'q', CLI_OPT_FLAG, quiet, NULL, "print nothing but errors"),
    CLI_OPT_END,
};

static const char *origin_word(enum sources_origin o)
{
	switch (o) {
	case SOURCES_ORIGIN_LOCAL:
		return "present";
	case SOURCES_ORIGIN_CACHE:
		return "from the cache";
	case SOURCES_ORIGIN_NETWORK:
		return "downloaded";
	case SOURCES_ORIGIN_GIT:
		return "made from git";
	}
	return "?";
}

static void print_result(const char *label, const struct sources_result *r)
{
	printf("%s: %s: %s, sha256 %s%s\n", label, r->path, origin_word(r->origin), r->sha256,
	       r->verified ? ", checksum verified" : "");
}

static void print_report(const struct sources_fetch_report *rep)
{
	char label[32];
	size_t i;

	for (i = 0; i < rep->n; i++) {
		snprintf(label, sizeof(label), "%s%" PRIu32,
		         rep->v[i].is_patch ? "Patch" : "Source", rep->v[i].num);
		print_result(label, &rep->v[i]);
	}
}

/* Parse one spec in a copy of base and fetch its sources with s. */
static kiln_rc fetch_spec_with(const char *path, const struct fetch_cli *c,
                               const struct macro_ctx *base, struct sources *s,
                               struct kiln_err *err)
{
	struct macro_ctx *ctx = macro_ctx_dup(base, err);
	struct sources_fetch_report rep;
	struct spec *spec = NULL;
	kiln_rc rc = ctx ? KILN_OK : err->code;

	sources_fetch_report_init(&rep);
	if (!rc)
		rc = spec_parse_file(path, ctx, SPEC_PARSE_ANYARCH | SPEC_PARSE_FORCE, &spec, err);
	if (!rc)
		rc = sources_fetch_spec(s, spec, &rep, err);
	if (!c->quiet)
		print_report(&rep);
	sources_fetch_report_release(&rep);
	spec_free(spec);
	macro_ctx_free(ctx);
	return rc;
}

static kiln_rc fetch_specs(struct fetch_cli *c, int n, char **specs,
                           const struct sources_fetch_opts *wo, struct kiln_err *err)
{
	struct macro_ctx *base = NULL;
	struct sources *s = NULL;
	kiln_rc rc = cli_macro_ctx_open(&c->macros, &base, err);
	int i;

	if (!rc)
		rc = sources_new(wo, &s, err);
	for (i = 0; !rc && i < n; i++)
		rc = fetch_spec_with(specs[i], c, base, s, err);
	sources_free(s);
	macro_ctx_free(base);
	return rc;
}

static kiln_rc fetch_one_url(const struct fetch_cli *c, const struct sources_fetch_opts *wo,
                             struct kiln_err *err)
{
	struct sources *s = NULL;
	struct sources_result res;
	struct sources_sums sums;
	const struct sources_sum *sum = NULL;
	kiln_rc rc = KILN_OK;

	sources_sums_init(&sums);
	if (c->sha256 || c->sha512)
		rc = sources_sums_set(&sums, util_path_basename(c->output),
		                      c->sha512 ? UTIL_DIGEST_SHA512 : UTIL_DIGEST_SHA256,
		                      c->sha512 ? c->sha512 : c->sha256, err);
	if (!rc && sums.n)
		sum = &sums.v[0];
	if (!rc)
		rc = sources_new(wo, &s, err);
	if (!rc)
		rc = sources_fetch_url(s, c->url, sum, c->output, &res, err);
	if (!rc && !c->quiet)
		print_result(c->url, &res);
	sources_free(s);
	sources_sums_release(&sums);
	return rc;
}

static void print_commit(const struct sources_git_rev *rev)
{
	if (rev->moved)
		printf("commit: %s (moved from %s)\n", rev->commit, rev->previous);
	else
		printf("commit: %s\n", rev->commit);
	fflush(stdout);
}

/* "https://host/group/name.git" -> "name" */
static void repo_name(const char *url, char *out, size_t size)
{
	const char *b;
	size_t len = strlen(url);

	while (len > 1 && url[len - 1] == '/')
		len--;
	b = url + len;
	while (b > url && b[-1] != '/' && b[-1] != ':')
		b--;
	len = (size_t)(url + len - b);
	if (len > 4 && !strncmp(b + len - 4, ".git", 4))
		len -= 4;
	snprintf(out, size, "%.*s", (int)len, b);
	if (!*out)
		snprintf(out, size, "checkout");
}

static kiln_rc git_checkout(struct fetch_cli *c, struct sources *s, struct kiln_err *err)
{
	struct kiln_buf spec = KILN_BUF_INIT(KILN_LIMIT_PATH);
	struct kiln_buf dir = KILN_BUF_INIT(KILN_LIMIT_PATH);
	struct kiln_buf def = KILN_BUF_INIT(KILN_LIMIT_PATH * 2);
	struct sources_git_rev rev;
	char name[256];
	kiln_rc rc;

	repo_name(c->git, name, sizeof(name));
	rc = sources_checkout(s, c->git, c->ref, c->checkout ? c->checkout : name, c->spec, &rev,
	                      &dir, &spec, err);
	if (!rc && !c->quiet)
		print_commit(&rev);
	if (!rc && !c->quiet)
		printf("checkout: %s\n", dir.ptr);
	/* The spec's sources live beside it, as in a dist-git repository. */
	kiln_buf_addf(&def, "_sourcedir %s", dir.ptr);
	if (!rc)
		rc = kiln_buf_finish(&def, err);
	if (!rc)
		rc = cli_macro_define_cb(c, def.ptr, err);
	if (!rc) {
		struct macro_ctx *base = NULL;

		rc = cli_macro_ctx_open(&c->macros, &base, err);
		if (!rc)
			rc = fetch_spec_with(spec.ptr, c, base, s, err);
		macro_ctx_free(base);
	}
	kiln_buf_release(&def);
	kiln_buf_release(&dir);
	kiln_buf_release(&spec);
	return rc;
}

static kiln_rc fetch_git(struct fetch_cli *c, struct sources_fetch_opts *wo, struct kiln_err *err)
{
	struct sources *s = NULL;
	struct sources_git_rev rev;
	kiln_rc rc = sources_new(wo, &s, err);

	if (!rc && !c->archive)
		rc = git_checkout(c, s, err);
	else if (!rc)
		rc = sources_git_resolve(s, c->git, c->ref, &rev, err);
	if (!rc && c->archive && !c->quiet)
		print_commit(&rev);
	if (!rc && c->archive)
		rc = sources_git_tarball(s, c->git, rev.commit, c->prefix ? c->prefix : "",
		                         c->archive, err);
	if (!rc && c->archive && !c->quiet)
		printf("archive: %s\n", c->archive);
	sources_free(s);
	return rc;
}

static int check_usage(const struct cli_command *self, const struct fetch_cli *c, int nargs)
{
	if (c->url && (!c->output || nargs || c->git))
		return cli_usage_error(self, "--url needs -o FILE and no SPEC or --git");
	if (c->output && !c->url)
		return cli_usage_error(self, "-o is for --url");
	if ((c->sha256 || c->sha512) && !c->url)
		return cli_usage_error(self, "--sha256 and --sha512 are for --url");
	if (c->sha256 && c->sha512)
		return cli_usage_error(self, "give one of --sha256 and --sha512");
	if (c->git && nargs)
		return cli_usage_error(self,
		                       "--git takes no SPEC (use --spec PATH in the repository)");
	if (!c->git && (c->ref || c->spec || c->checkout || c->archive || c->prefix))
		return cli_usage_error(
		    self, "--ref, --spec, --checkout, --archive and --prefix need --git");
	if (c->archive && (c->spec || c->checkout))
		return cli_usage_error(self, "--archive takes no --spec or --checkout");
	if (!c->git && !c->url && !nargs)
		return cli_usage_error(self, "no spec file given");
	return CLI_EXIT_OK;
}

int cli_cmd_fetch(int argc, char **argv)
{
	const struct cli_command *self = cli_command_find("fetch");
	struct kiln_err err = KILN_ERR_INIT;
	struct sources_fetch_opts wo = {0};
	struct fetch_cli c = {0};
	char def[KILN_LIMIT_PATH + 16]; /* the macro options borrow it */
	kiln_rc rc = KILN_OK;
	int nargs = 0, status;

	if (cli_opts_parse(cli_fetch_opts_table, &c, argc, argv, &nargs, &err)) {
		status = cli_usage_error(self, "%s", err.msg);
		goto out;
	}
	status = check_usage(self, &c, nargs);
	if (status)
		goto out;
	if (c.sourcedir) {
		snprintf(def, sizeof(def), "_sourcedir %s", c.sourcedir);
		rc = cli_macro_define_cb(&c, def, &err);
	}
	if (!rc)
		rc = cli_fetch_opts_apply(&c.net, &wo, &err);
	wo.pin = c.pin;
	wo.sums_file = c.sources;
	if (!rc)
		rc = sources_global_init(&err);
	if (!rc && c.url)
		rc = fetch_one_url(&c, &wo, &err);
	else if (!rc && c.git)
		rc = fetch_git(&c, &wo, &err);
	else if (!rc)
		rc = fetch_specs(&c, nargs, argv + 1, &wo, &err);
	fflush(stdout);
	if (rc)
		status = cli_fail(&err);
out:
	cli_macro_opts_release(&c.macros);
	return status;
}
