/*
 * cmd_image.c - `kiln image`: install package files into an image directory with kiln's
 * own installer (no host rpm or dnf), or get a cached image by key, made once.
 */
#include "util/util.h"

#include <unistd.h>

#include "cli/cli.h"
#include "roots/roots.h"
#include "sources/sources.h"

struct image_cli {
	const char *cache;
	const char *key;
	const char *state_dir;
	bool allow_setid, no_scripts, no_rpmdb, quiet;
};

const struct cli_opt cli_image_opts[] = {
    {"cache", 0, CLI_OPT_STRING, offsetof(struct image_cli, cache), NULL, "DIR",
     "get: kiln's cache directory (default $KILN_CACHE_DIR, else ~/.cache/kiln)"},
    {"key", 0, CLI_OPT_STRING, offsetof(struct image_cli, key), NULL, "KEY",
     "get: the image's key (default: sha256 of the packages' sha256 digests, sorted)"},
    {"allow-setuid", 0, CLI_OPT_FLAG, offsetof(struct image_cli, allow_setid), NULL, NULL,
     "accept setuid and setgid files"},
    {"no-scripts", 0, CLI_OPT_FLAG, offsetof(struct image_cli, no_scripts), NULL, NULL,
     "unpack only: no scriptlets or triggers"},
    {"no-rpmdb", 0, CLI_OPT_FLAG, offsetof(struct image_cli, no_rpmdb), NULL, NULL,
     "no rpm database, even when rpm is installed"},
    {"state-dir", 0, CLI_OPT_STRING, offsetof(struct image_cli, state_dir), NULL, "DIR",
     "where the scriptlet sandbox keeps its state (default $TMPDIR)"},
    {"quiet", 'q', CLI_OPT_FLAG, offsetof(struct image_cli, quiet), NULL, NULL,
     "no progress or scriptlet output"},
    CLI_OPT_END,
};

struct make_arg {
	const struct image_cli *c;
	const char *const *pkgs;
	size_t n;
	struct roots_install_report rep;
};

static void install_opts(const struct image_cli *c, struct roots_install_opts *o)
{
	roots_install_opts_init(o);
	o->log_fd = c->quiet ? -1 : STDERR_FILENO;
	o->state_dir = c->state_dir;
	o->flags = (c->allow_setid ? ROOTS_INSTALL_F_ALLOW_SETID : 0) |
	           (c->no_scripts ? ROOTS_INSTALL_F_NOSCRIPTS : 0) |
	           (c->no_rpmdb ? ROOTS_INSTALL_F_NORPMDB : 0);
}

static kiln_rc make_image(void *arg, const char *root, struct kiln_err *err)
{
	struct make_arg *m = arg;
	struct roots_install_opts o;

	install_opts(m->c, &o);
	return roots_install(root, m->pkgs, m->n, &o, &m->rep, err);
}

static void print_report(const struct roots_install_report *r)
{
	fprintf(stderr,
	        "installed %zu packages: %zu files, %zu scriptlets, %zu warnings, rpmdb %s; "
	        "read %.3f s, unpack %.3f s, scriptlets %.3f s, rpmdb %.3f s\n",
	        r->packages, r->files, r->scriptlets, r->warnings, r->rpmdb ? "yes" : "no",
	        (double)r->load_ns / 1e9, (double)r->unpack_ns / 1e9, (double)r->scriptlet_ns / 1e9,
	        (double)r->rpmdb_ns / 1e9);
}

static int sha_cmp(const void *a, const void *b)
{
	return strcmp(*(const char *const *)a, *(const char *const *)b);
}

/* The default key: sha256 over the sorted sha256 digests of the package files. */
static kiln_rc default_key(const char *const *pkgs, size_t n, char *key, struct kiln_err *err)
{
	struct kiln_buf all = KILN_BUF_INIT(KILN_MIB);
	char(*hex)[2 * UTIL_DIGEST_MAX + 1] = kiln_calloc(n ? n : 1, sizeof(*hex));
	const char **v = kiln_calloc(n ? n : 1, sizeof(*v));
	kiln_rc rc = hex && v ? KILN_OK : kiln_err_set(err, KILN_ENOMEM, "out of memory");
	size_t i;

	for (i = 0; !rc && i < n; i++) {
		rc = util_digest_file_hex(UTIL_DIGEST_SHA256, pkgs[i], hex[i], err);
		v[i] = hex[i];
	}
	if (!rc)
		qsort(v, n, sizeof(*v), sha_cmp);
	for (i = 0; !rc && i < n; i++)
		kiln_buf_addf(&all, "%s\n", v[i]);
	if (!rc)
		rc = kiln_buf_finish(&all, err);
	if (!rc)
		rc = util_digest_mem_hex(UTIL_DIGEST_SHA256, all.ptr, all.len, key, err);
	kiln_buf_release(&all);
	free(hex);
	free(v);
	return rc;
}

static int cmd_get(const struct image_cli *c, const char *const *pkgs, size_t n)
{
	struct kiln_buf dir = KILN_BUF_INIT(KILN_LIMIT_PATH);
	struct kiln_err err = KILN_ERR_INIT;
	struct make_arg m = {c, pkgs, n, {0}};
	struct roots_image img = {NULL, -1, false, 0};
	char key[2 * UTIL_DIGEST_MAX + 1];
	kiln_rc rc = KILN_OK;

	if (c->key)
		snprintf(key, sizeof(key), "%s", c->key);
	else
		rc = default_key(pkgs, n, key, &err);
	if (!rc && c->cache)
		kiln_buf_addstr(&dir, c->cache);
	if (!rc)
		rc = c->cache ? kiln_buf_finish(&dir, &err) : sources_cache_default_dir(&dir, &err);
	if (!rc)
		rc = roots_image_get(dir.ptr, key, make_image, &m, &img, &err);
	if (!rc && img.made && !c->quiet)
		print_report(&m.rep);
	if (!rc)
		printf("%s %s %s\n", img.root, key, img.made ? "made" : "cached");
	fflush(stdout);
	roots_image_release(&img);
	kiln_buf_release(&dir);
	return rc ? cli_fail(&err) : CLI_EXIT_OK;
}

static int cmd_install(const struct image_cli *c, const char *image, const char *const *pkgs,
                       size_t n)
{
	struct kiln_err err = KILN_ERR_INIT;
	struct roots_install_report rep;
	struct roots_install_opts o;
	kiln_rc rc;

	install_opts(c, &o);
	rc = roots_install(image, pkgs, n, &o, &rep, &err);
	if (!rc && !c->quiet)
		print_report(&rep);
	return rc ? cli_fail(&err) : CLI_EXIT_OK;
}

int cli_cmd_image(int argc, char **argv)
{
	const struct cli_command *self = cli_command_find("image");
	struct image_cli c = {0};
	int nargs = 0;

	if (cli_opts_parse(cli_image_opts, &c, argc, argv, &nargs, NULL))
		return cli_usage_error(self, "bad option");
	if (nargs >= 3 && !strcmp(argv[1], "install"))
		return cmd_install(&c, argv[2], (const char *const *)argv + 3, (size_t)nargs - 2);
	if (nargs >= 2 && !strcmp(argv[1], "get"))
		return cmd_get(&c, (const char *const *)argv + 2, (size_t)nargs - 1);
	return cli_usage_error(self, "want 'install DIR PKG...' or 'get PKG...'");
}
