/*
 * commands.c - the subcommand registry and the help and version commands.
 */
#include "util/util.h"

#include "cli/cli.h"

struct version_opts {
	bool verbose;
};

static const struct cli_opt version_opts[] = {
    {"verbose", 'v', CLI_OPT_FLAG, offsetof(struct version_opts, verbose), NULL, NULL,
     "also print the configuration directory"},
    CLI_OPT_END,
};

const struct cli_command cli_commands[] = {
    {"help", "show help for kiln or one of its commands", "[COMMAND]",
     "Without COMMAND, list the commands; with one, show its usage and options.", NULL,
     cli_cmd_help},
    {"eval", "expand rpm macro expressions, like rpm --eval",
     "[-D 'NAME BODY']... [--undefine NAME]... [--macros PATHLIST] [--rcfile PATHLIST] "
     "[--target T] EXPR...",
     "Expands each EXPR in one macro context, in order, and prints each result on a line. "
     "By default kiln reads its own rpmrc and macro files; --macros and --rcfile pointed at "
     "/usr/lib/rpm load exactly what rpm loads.",
     cli_eval_opts, cli_cmd_eval},
    {"spec", "parse spec files like rpmspec: -P, -q, or the model as JSON",
     "[--parse | -q [--qf FMT] [--srpm|--rpms|--builtrpms] | --json] [macro options] SPEC...",
     "Parses each SPEC the way rpmbuild 4.20 does (conditionals, %include, BuildSystem, "
     "-a/-p section hooks) in a fresh macro context. --parse prints the expanded spec like "
     "rpmspec -P; -q prints each package with a query format like rpmspec -q; --json dumps "
     "packages, tags, dependencies, sections, sources and %files entries. Errors name the "
     "file and line and exit 1.",
     cli_spec_opts, cli_cmd_spec},
    {"build", "build packages from a spec like rpmbuild (-ba, -bb, -bs, ...)",
     "-bSTAGE|-rSTAGE|-tSTAGE [--rebuild SRPM] [options] SPEC|SRPM|TARBALL",
     "Runs a spec's build stages and writes its binary and source packages the way "
     "rpmbuild does: -b from a spec, -r from a source package, -t from a tarball holding "
     "the spec; STAGE is p (prep), f (conf), c (build), i (install), l (file check), b "
     "(binary packages), s (source package), a (both) or r (buildrequires). Builds are "
     "reproducible by default (SOURCE_DATE_EPOCH from the changelog, clamped mtimes, a "
     "fixed build host). --json prints every output with its sha256, the stage times and "
     "the warnings.",
     cli_build_opts, cli_cmd_build},
    {"version", "print kiln's version", "[-v]",
     "With -v, also print where kiln found its configuration.", version_opts, cli_cmd_version},
    {"query", "show what is in package files, like rpm -qp", "-p [options] PKG...",
     "Prints rpm -qp's output byte for byte: the default NVRA line, a query format (--qf), "
     "-i, -l, --dump, --xml and --json (with rpm 6.0's tag names and layout, as rpm 6.0.2 "
     "prints them), dependency lists, changelog and scriptlets.",
     cli_query_opts, cli_cmd_query},
    {"keygen", "make an OpenPGP signing key", "--name NAME [--email ADDR] [options]",
     "Writes the secret key to DIR/KEYID.key (mode 0600) and the armored public key, "
     "self-signed like gpg's, to DIR/KEYID.asc.",
     cli_keygen_opts, cli_cmd_keygen},
    {"keys", "manage the keyring kiln verify trusts",
     "--import FILE... | --list | --delete KEYID...",
     "Like rpmkeys --import, --list and --delete. The keyring is a directory of armored "
     "certificates, by default $XDG_CONFIG_HOME/kiln/keyring or ~/.config/kiln/keyring.",
     cli_keys_opts, cli_cmd_keys},
    {"sign", "sign packages (or files) with an OpenPGP key",
     "--key KEYFILE [options] PKG... | --delete PKG... | --key KEYFILE --detached FILE...",
     "Adds a header-only signature to each package like rpmsign --addsign: RSAHEADER or "
     "DSAHEADER in v4 packages, OPENPGP in v6 ones, written into the reserved space so the "
     "header and payload do not move. The signature time is --time, else SOURCE_DATE_EPOCH "
     "(raised to the key's creation time when older), else now; the same key, package and "
     "time give the same bytes.",
     cli_sign_opts, cli_cmd_sign},
    {"verify", "check package digests and signatures against the keyring",
     "[--keyring DIR] [--signed] PKG... | --signature SIG [--keyring DIR] FILE",
     "Prints every digest and signature with OK, BAD or NOKEY, like rpm -K -v; exits 1 on "
     "any failure.",
     cli_verify_opts, cli_cmd_verify},
    {"cpio", "write a package's payload as a cpio archive, like rpm2cpio", "PKG > OUT.cpio",
     "Stripped (07070X) payloads are converted to plain newc cpio.", NULL, cli_cmd_cpio},
    {"archive", "write a package's payload as a tar archive, like rpm2archive", "[-o OUT] PKG",
     NULL, cli_archive_opts, cli_cmd_archive},
    {"check", "verify a package's digests, like rpm -K --nosignature", "[-v] PKG...",
     "Prints 'digests OK' or 'DIGESTS NOT OK' per package; exit status 1 if any is bad.",
     cli_check_opts, cli_cmd_check},
    {"diff", "compare two packages: tags, files, attributes and contents",
     "[--json] [-q] [-U N] OLD.rpm NEW.rpm",
     "Prints what differs between two packages: lead fields, main-header tags (the "
     "signature header is ignored), files added or removed, each file's mode, owner, "
     "group, mtime, size, digest, link target and flags, and a unified diff of text files "
     "whose contents differ. --json prints the same as one object for machines. Exit "
     "status 0 when identical, 1 when they differ, 2 on a usage error or a package that "
     "cannot be read. See docs/diff.md.",
     cli_diff_opts, cli_cmd_diff},
    {"sandbox", "run a command in the build sandbox, like mock --shell or bwrap",
     "[--root host|dir:PATH|tar:FILE] [--bind HOST:INSIDE[:ro]]... [--tmpfs PATH]... "
     "[--hostname H] [--enable-network] [--timeout S] [--memory BYTES] [--pids N] "
     "[--env K=V]... -- CMD [ARGS...]",
     "Runs CMD in new mount, PID, UTS, IPC and network namespaces (a user namespace when not "
     "root) on a read-only root, with private /tmp, /var/tmp and /home, a fresh /proc and a "
     "minimal /dev, and exits with CMD's status (128+N for signal N; 124 when the time "
     "limit killed it, 125 when the sandbox could not be set up, 127 when CMD was not "
     "found). Put -- before CMD when it has options. See docs/sandbox.md.",
     cli_sandbox_opts, cli_cmd_sandbox},
    {"image", "install package files into an image, or get a cached image by key",
     "install [options] DIR PKG... | get [--cache DIR] [--key KEY] [options] PKG...",
     "install: unpacks PKG... into the directory DIR with kiln's own payload reader (no host "
     "rpm or dnf), in rpm's transaction order, running their scriptlets and triggers in the "
     "sandbox chrooted into DIR, and, when rpm is among them, writing the image's rpm "
     "database with the image's own rpm. Packages with paths escaping the image, device "
     "nodes or (without --allow-setuid) setuid files are refused before anything is "
     "written. get: prints the path of the cached image KEY, making it from PKG... once "
     "however many processes ask at the same time. See docs/roots.md.",
     cli_image_opts, cli_cmd_image},
    {"fetch", "make a spec's sources present, verified and cached, like spectool -g",
     "[options] SPEC... | --git URL [--ref REF] [--spec PATH] [--checkout DIR] | --git URL "
     "[--ref REF] --archive FILE --prefix P/ | --url URL -o FILE [--sha256 HEX]",
     "Makes every Source and Patch of each SPEC present in %{_sourcedir}: files already "
     "there are kept when they match their checksum, URLs (http, https, ftp, file) are "
     "downloaded with retries, resume and verified TLS, or copied from the shared cache. "
     "Checksums come from a dist-git 'sources' file beside the spec (SHA512 (name) = hex); "
     "a mismatch is an error and nothing unverified enters the cache. --pin writes that "
     "file. --offline never touches the network. With --git, the repository is mirrored "
     "into the cache, REF is resolved to a commit (printed), and the tree is checked out "
     "and its spec's sources fetched, or written as a deterministic tarball.",
     cli_fetch_opts_table, cli_cmd_fetch},
    {"root", "build roots from RPM repositories: resolve a root configuration into a lock",
     "lock CONFIG [SPEC|SRPM] [--json] [--lock FILE] [--download DIR] [--cache DIR] "
     "[--offline] | create CONFIG [--lock FILE] | shell CONFIG [--lock FILE] [-- CMD...] | list",
     "CONFIG is a root configuration's name (NAME.cfg in /etc/kiln/roots or kiln's "
     "configs/roots) or path: an architecture, repositories and a base set, like a mock "
     "config. lock reads each repository's repomd.xml (its signature checked with the "
     "repository's gpgkey), its primary, comps and, when a file dependency needs them, "
     "filelists through the source cache, resolves the base set plus the spec's or source "
     "package's BuildRequires with libsolv, and prints the packages; --json prints the lock, "
     "whose sha256 is the root's identity. --lock FILE checks a lock against the "
     "repositories instead of resolving. create makes the lock's image once in the image "
     "cache (packages fetched and verified, installed by kiln with their scriptlets) and "
     "prints its path and key; shell runs CMD, or a shell, on a fresh overlay of it, like "
     "mock --shell. See docs/roots.md.",
     cli_root_opts, cli_cmd_root},
    {"cache", "show or clean the source cache",
     "[--cache DIR] [--stats | --gc [--max-size SIZE] "
     "[--verify]]",
     "The cache holds downloaded sources by sha256 and git mirrors, shared by every kiln "
     "process of the machine. --gc removes leftovers of interrupted downloads and index "
     "entries whose object is gone, and with --max-size evicts the least recently used "
     "objects and mirrors until the cache fits; build-root images (kiln image) are "
     "collected the same way, never one in use.",
     cli_cache_opts, cli_cmd_cache},
    /* The build farm (cmd_farm.c, cmd_worker.c). */
    {"scheduler", "run the build farm's scheduler (REST API, job store, leases)",
     "[--config FILE] [--listen HOST:PORT] [--worker-listen HOST:PORT] [--data-dir DIR] "
     "[--database URL] "
     "[--set SECTION.KEY=VALUE]...",
     "Serves REST API v1 (docs/api.md). With no configuration it listens on 127.0.0.1:8470, "
     "keeps its database, blobs, logs and keys in ./kiln-data, and prints an admin token on "
     "first start; --set store.url=postgresql://... (or --database URL, or [store] url in the "
     "configuration) keeps the job store in PostgreSQL instead, where several schedulers "
     "may share one database and one data directory. SIGTERM stops it gracefully.",
     cli_scheduler_opts, cli_cmd_scheduler},
    {"worker", "run a build farm worker: lease jobs from the scheduler and build them",
     "--scheduler URL[,URL] --token TOKEN [--name N] [--slots N] [--arch A]... [--tag T]... "
     "[--root ROOT] [--work-dir DIR] [--no-sandbox]",
     "Registers its capabilities, long-polls for leases, builds each job with the build "
     "pipeline in the sandbox, streams the log, uploads the packages (the scheduler signs "
     "them) and reports. Results wait in the work directory until the scheduler takes them, "
     "also across a crash: a restarted worker reports what it kept while its lease holds. "
     "SIGTERM: finish running builds and stop; a second SIGTERM hands them back.",
     cli_worker_opts, cli_cmd_worker},
    {"submit", "submit a build job to the scheduler",
     "[options] SPEC|SRPM | --git URL [--ref R] [--spec P] [--wait] [--follow] [--json] | "
     "--batch --root CONFIG [--bootstrap NAME,..] SPEC|SRPM|DIR...",
     "Uploads the spec (or source package) and --source files, then submits the job. With "
     "--wait or --follow it waits for the end and exits 0 only when the job succeeded. "
     "KILN_URL and KILN_TOKEN name the scheduler and the token.",
     cli_submit_opts, cli_cmd_client},
    {"jobs", "list jobs", "[--state STATE] [--project NAME] [--limit N] [--json]", NULL,
     cli_jobs_opts, cli_cmd_client},
    {"job", "show a job", "[--json] ID", NULL, cli_client_opts, cli_cmd_client},
    {"logs", "print a job's build log", "[-f] [--attempt N] ID",
     "With -f, follows the log until the job ends, through every attempt.", cli_logs_opts,
     cli_cmd_client},
    {"cancel", "cancel a job", "ID", NULL, cli_client_opts, cli_cmd_client},
    {"retry", "queue a failed or cancelled job again", "ID", NULL, cli_client_opts, cli_cmd_client},
    {"download", "download a job's packages (signed) and checks their sha256", "[-o DIR] ID", NULL,
     cli_download_opts, cli_cmd_client},
    {"reproduce", "rerun a farm job to check that it is reproducible",
     "[--count N] [--wait] [--json] JOB",
     "Asks the scheduler for N more reruns of JOB (default 1) on another worker, with "
     "variations (docs/api.md, Reproducibility). With --wait it waits for the verdict, prints "
     "the report (kiln diff's text for every package that differs) and exits 0 only when "
     "the job is reproducible.",
     cli_reproduce_opts, cli_cmd_client},
    {"rebuild", "rebuild a published source package and compare with its binaries",
     "[--arch A] [--wait] [--json] SRPM RPM...",
     "Rebuilder mode (as rebuilderd): SRPM and the published RPMs are files (uploaded) or "
     "http(s) URLs (fetched by the scheduler). The farm rebuilds SRPM with the published "
     "build time as SOURCE_DATE_EPOCH and build host as %_buildhost and reports per "
     "package whether payload and metadata match, ignoring the signature header and, when "
     "the original did not control them, BUILDTIME and BUILDHOST. With --wait it prints "
     "the report and exits 0 only when every package matches.",
     cli_rebuild_opts, cli_cmd_client},
    {"provenance", "verify a farm package's signed provenance", "verify [--key FILE] FILE RPM",
     "Checks the DSSE envelope(s) in FILE (GET /api/v1/artifacts/SHA256/provenance; one "
     "JSON object, or JSON lines): an OpenPGP signature over the envelope by the farm's key "
     "(--key, or kiln's keyring), and RPM's sha256 among the in-toto statement's subjects. "
     "Exit 0 only when every envelope holds.",
     cli_provenance_opts, cli_cmd_provenance},
    {"store", "move a farm's job store from sqlite3 to PostgreSQL",
     "migrate --from DATA_DIR --to postgresql://...",
     "Copies every table of DATA_DIR/kiln.db (jobs, attempts, artifacts, tokens, workers, "
     "reruns, verdicts, repositories, webhooks) into an empty PostgreSQL database in one "
     "transaction, committed only when each table's row count and sha256 digest read back "
     "match; prints them. Stop the scheduler first; then start it (and any more) with "
     "--set store.url=URL on the same data directory, which keeps the blobs, logs and keys.",
     cli_store_opts, cli_cmd_store},
    {"repo", "published repositories: list, show, remove a package, regenerate metadata",
     "list | show NAME | remove-package NAME NEVRA | regenerate NAME | regenerate --dir DIR "
     "[--key FILE] [--groups FILE] [--zstd] [--workers N] [--keep N] [--revision N]",
     "The scheduler publishes the signed packages of succeeded jobs into the repository "
     "each job names (docs/publish.md). list and show print what is published; "
     "remove-package drops one package (NAME-[EPOCH:]VERSION-RELEASE.ARCH) and republishes; "
     "regenerate rewrites a repository's metadata. With --dir, regenerate indexes the "
     "packages below a local directory instead, as createrepo_c does: repodata/ with "
     "primary, filelists and other (gzip, or --zstd), the revision and timestamps from the "
     "newest build time, repomd.xml.asc with --key, a comps file (group and group_gz) with "
     "--groups.",
     cli_repo_opts, cli_cmd_repo},
    {"workers", "list the scheduler's workers (JSON)", "", NULL, cli_client_opts, cli_cmd_client},
    {"token", "manage API tokens (admin)",
     "create --scope SCOPES [--name NAME] [--project NAME] | list | revoke ID",
     "Tokens are stored hashed; create prints the new token once. Scopes: submit, read, "
     "worker, admin, project-admin. A token acts in one project (--project; default: "
     "default): submit, read and project-admin (its project's tokens, settings and key) are "
     "inside it, admin and worker are farm-wide (default project only). A project's admin "
     "may run token create|list|revoke for its own project.",
     cli_token_opts, cli_cmd_client},
    {"project", "manage projects (admin): jobs, tokens and repositories belong to one",
     "create NAME [--public] [--max-running N] [--arch-caps ARCH=N,...] [--repositories "
     "NAME,...] | set NAME [--public | --private] [--max-running N] [--arch-caps ...] "
     "[--repositories ...] | show NAME | delete NAME | list | key show NAME | key extend NAME "
     "[--days N]",
     "A project owns jobs, tokens and repositories (--repositories: names of the "
     "scheduler's [repositories]; those no project was given are default's); a token of one "
     "project cannot see another's, and /repos/ serves a private project's repositories "
     "only with a token of it. Each project has its own signing key, made with the project "
     "(--days: its lifetime, default 730): its jobs' packages are signed with it; key show "
     "prints the public key, key extend gives the same key a later expiry (a new "
     "self-signature), so packages signed before still verify. The scheduler shares workers "
     "between projects with work queued (the "
     "project granted longest ago first, priority inside a project) and holds a project at "
     "its caps on running jobs (--max-running, --arch-caps). Existing data is in the "
     "project 'default'.",
     cli_project_opts, cli_cmd_client},
    {NULL, NULL, NULL, NULL, NULL, NULL},
};

const struct cli_command *cli_command_find(const char *name)
{
	const struct cli_command *c;

	for (c = cli_commands; c->name; c++) {
		if (!strcmp(c->name, name))
			return c;
	}
	return NULL;
}

void cli_print_version(FILE *out)
{
	fprintf(out, "kiln %s\n", KILN_VERSION);
}

int cli_usage_error(const struct cli_command *cmd, const char *fmt, ...)
{
	va_list ap;

	if (fmt) {
		fputs("kiln: ", stderr);
		va_start(ap, fmt);
		vfprintf(stderr, fmt, ap);
		va_end(ap);
		fputc('\n', stderr);
	}
	if (cmd)
		fprintf(stderr, "usage: kiln %s %s\n(see 'kiln help %s')\n", cmd->name, cmd->usage,
		        cmd->name);
	else
		fputs("usage: kiln [--version] [--help] COMMAND [ARGS]\n(see 'kiln help')\n",
		      stderr);
	return CLI_EXIT_USAGE;
}

int cli_fail(const struct kiln_err *err)
{
	kiln_log_err(KILN_LOG_ERROR, err);
	return CLI_EXIT_FAIL;
}

static void help_all(FILE *out)
{
	const struct cli_command *c;

	fputs("usage: kiln [--version] [--help] COMMAND [ARGS]\n\n"
	      "kiln builds, signs, checks and publishes RPM packages reproducibly.\n\n"
	      "Commands:\n",
	      out);
	for (c = cli_commands; c->name; c++)
		fprintf(out, "  %-12s %s\n", c->name, c->summary);
	fputs("\nRun 'kiln help COMMAND' for the options of one command.\n", out);
}

static void help_one(const struct cli_command *c, FILE *out)
{
	fprintf(out, "usage: kiln %s %s\n\n%s.\n", c->name, c->usage, c->summary);
	if (c->description)
		fprintf(out, "\n%s\n", c->description);
	if (c->opts && (c->opts->lname || c->opts->sname)) {
		fputs("\nOptions:\n", out);
		cli_opts_print(c->opts, out);
	}
}

int cli_cmd_help(int argc, char **argv)
{
	const struct cli_command *c;

	if (argc < 2) {
		help_all(stdout);
		return CLI_EXIT_OK;
	}
	if (argc > 2)
		return cli_usage_error(cli_command_find("help"), "too many arguments");
	c = cli_command_find(argv[1]);
	if (!c) {
		fprintf(stderr, "kiln: '%s' is not a kiln command\n", argv[1]);
		return cli_usage_error(NULL, NULL);
	}
	help_one(c, stdout);
	return CLI_EXIT_OK;
}

int cli_cmd_version(int argc, char **argv)
{
	const struct cli_command *self = cli_command_find("version");
	struct kiln_buf dir = KILN_BUF_INIT(KILN_LIMIT_PATH);
	struct kiln_err err = KILN_ERR_INIT;
	struct version_opts o = {0};
	int nargs = 0;
	int rc = CLI_EXIT_OK;

	if (cli_opts_parse(version_opts, &o, argc, argv, &nargs, &err))
		return cli_usage_error(self, "%s", err.msg);
	if (nargs)
		return cli_usage_error(self, "unexpected argument '%s'", argv[1]);
	cli_print_version(stdout);
	if (o.verbose) {
		if (util_configdir_find(&dir, &err))
			rc = cli_fail(&err);
		else
			printf("configdir: %s\n", dir.ptr);
	}
	kiln_buf_release(&dir);
	return rc;
}
