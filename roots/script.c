/*
 * script.c - scriptlets and install triggers, run as rpm runs them, but inside kiln's
 * sandbox with the image as its root used in place (chroot_config.root_direct): what a
 * scriptlet writes (useradd's /etc/passwd, ldconfig's cache, alternatives) lands in the
 * image itself. No network, a private /tmp, a fixed environment, /dev/null as stdin.
 *
 * rpm's conventions kept: the interpreter is the *PROG tag (default /bin/sh) and the body
 * goes to a file passed as its first argument, followed by the arguments ($1 = 1 for an
 * install; triggers also get $2 = 1); a program without a body (`%post -p /sbin/ldconfig`)
 * gets no arguments. A failing %pretrans or %pre stops the install (rpm skips the package,
 * and an image missing a package is of no use); a failing %post, %posttrans or trigger is a
 * warning ("warning: %post(NEVRA) scriptlet failed, exit status 1"), as with rpm.
 *
 * <lua> scriptlets need rpm's embedded Lua (its rpm.* and posix.* extensions), which kiln
 * does not have: they run through the image's own rpm (`rpm --eval '%{lua:...}'` on the
 * body, arg = {"<lua>", "1"}). One met while the image has no /usr/bin/rpm yet is deferred
 * until every package is unpacked (then run, before %posttrans) when it is a %post or a
 * trigger, and skipped with a warning when it is a %pretrans or %pre, which must not run
 * late (docs/roots.md).
 */
#include "util/util.h"

#include <fcntl.h>
#include <sys/stat.h>
#include <unistd.h>

#include "chroot/chroot.h"
#include "roots/install_int.h"

#define SCRIPT_DIR_INSIDE "/tmp/kiln-install"
#define SCRIPT_FILE "script"
#define DEFAULT_TIMEOUT_MS (10 * 60 * 1000)

static const char *const script_env[] = {"PATH=/usr/sbin:/usr/bin:/sbin:/bin", "LANG=C.UTF-8",
                                         "TERM=dumb", NULL};

struct script {
	const char *what;  /* "%pre", "%triggerin", ... */
	const char *nevra; /* the package the scriptlet belongs to */
	const char *body;  /* NULL: the program alone */
	const char *prog[16];
	size_t nprog;
	int arg1, arg2;    /* -1: not passed */
	bool fatal;        /* failure stops the install */
	const char *input; /* standard input (a file trigger's file list); NULL: /dev/null */
};

struct roots_scripts {
	struct script *deferred; /* owned (heap): <lua> scriptlets waiting for rpm; their
	                          * strings are borrowed from the set's headers */
	size_t ndeferred, capdeferred;
	char *image;            /* owned */
	char *dir;              /* owned: host temp directory bound at SCRIPT_DIR_INSIDE */
	struct chroot_exec *ex; /* owned */
	int log_fd;
	int64_t timeout_ms;
};

static kiln_rc make_exec(const char *image, const char *state_dir, const struct chroot_bind *binds,
                         size_t nbinds, struct chroot_exec **ex, struct kiln_err *err)
{
	static const char *const tmpfs[] = {"/tmp"};
	struct chroot_config cfg;

	chroot_config_init(&cfg);
	cfg.kind = CHROOT_EXEC_SANDBOX;
	cfg.root = CHROOT_ROOT_DIR;
	cfg.root_path = image;
	cfg.root_direct = true;
	cfg.binds = binds;
	cfg.nbinds = nbinds;
	/* Only /tmp is private (and HOME in it): /home and /var/tmp stay the image's own. */
	cfg.tmpfs = tmpfs;
	cfg.ntmpfs = 1;
	cfg.home = "/tmp";
	cfg.hostname = "kiln";
	cfg.state_dir = state_dir;
	/* The image is thrown away unless whole, and image.c keeps a whole image from an
	 * earlier boot only once it is known to be on disk; without this the image's rpm
	 * would sync the host's whole filesystem (rpmtsSync) at the end. */
	cfg.suppress_sync = true;
	return chroot_exec_new(&cfg, ex, err);
}

static kiln_rc make_tempdir(const char *state_dir, char **out, struct kiln_err *err)
{
	const char *base = state_dir ? state_dir : getenv("TMPDIR");
	char *t;

	if (!base || !*base)
		base = "/tmp";
	t = kiln_malloc(strlen(base) + 32);
	if (!t)
		return kiln_err_set(err, KILN_ENOMEM, "out of memory");
	snprintf(t, strlen(base) + 32, "%s/kiln-install-XXXXXX", base);
	if (!mkdtemp(t)) {
		free(t);
		return kiln_err_sys(err, KILN_EIO, "cannot create a directory in '%s'", base);
	}
	if (chmod(t, 0755)) {
		(void)rmdir(t);
		free(t);
		return kiln_err_sys(err, KILN_EIO, "cannot chmod a directory in '%s'", base);
	}
	*out = t;
	return KILN_OK;
}

kiln_rc roots_scripts_new(const char *image, const struct roots_install_opts *o,
                          struct roots_scripts **out, struct kiln_err *err)
{
	struct roots_scripts *s = kiln_calloc(1, sizeof(*s));
	struct chroot_bind b;
	kiln_rc rc;

	*out = NULL;
	if (!s)
		return kiln_err_set(err, KILN_ENOMEM, "out of memory");
	s->log_fd = o->log_fd;
	s->timeout_ms = o->script_timeout_ms > 0 ? o->script_timeout_ms : DEFAULT_TIMEOUT_MS;
	s->image = kiln_strdup(image);
	rc = s->image ? make_tempdir(o->state_dir, &s->dir, err)
	              : kiln_err_set(err, KILN_ENOMEM, "out of memory");
	if (!rc) {
		b = (struct chroot_bind){s->dir, SCRIPT_DIR_INSIDE, true};
		rc = make_exec(image, o->state_dir, &b, 1, &s->ex, err);
	}
	if (rc) {
		kiln_err_wrap(err, "scriptlet sandbox");
		roots_scripts_free(s);
		return rc;
	}
	*out = s;
	return KILN_OK;
}

void roots_scripts_free(struct roots_scripts *s)
{
	struct kiln_err err = KILN_ERR_INIT;

	if (!s)
		return;
	chroot_exec_free(s->ex);
	if (s->dir && util_rm_rf(s->dir, &err))
		kiln_log_err(KILN_LOG_WARN, &err);
	free(s->dir);
	free(s->image);
	free(s->deferred);
	free(s);
}

/* ---------------------------------------------------------------------------------------- */
/* One scriptlet */

static void log_line(const struct roots_scripts *s, const char *line)
{
	if (s->log_fd >= 0)
		(void)!write(s->log_fd, line, strlen(line));
}

static kiln_rc failed(const struct roots_scripts *s, const struct script *sc, const char *why,
                      size_t *warnings, struct kiln_err *err)
{
	char line[1024];

	if (sc->fatal)
		return kiln_err_set(err, KILN_EBUILD, "%s(%s) scriptlet failed, %s", sc->what,
		                    sc->nevra, why);
	snprintf(line, sizeof(line), "warning: %s(%s) scriptlet failed, %s\n", sc->what, sc->nevra,
	         why);
	log_line(s, line);
	(*warnings)++;
	return KILN_OK;
}

static bool image_has(const struct roots_scripts *s, const char *rel)
{
	char path[KILN_LIMIT_PATH];
	struct stat st;

	/* Only a hint for the message: the sandbox resolves the real thing. */
	snprintf(path, sizeof(path), "%s/%s", s->image, rel);
	return !lstat(path, &st);
}

/* argv for sc: a <lua> body through the image's rpm, else prog + file + arguments. */
static kiln_rc script_argv(const struct script *sc, struct kiln_arena *a, const char ***out,
                           struct kiln_err *err)
{
	const char **argv = kiln_arena_array(a, sc->nprog + 4, sizeof(*argv));
	size_t n = 0, i;

	if (!argv)
		return kiln_err_set(err, KILN_ENOMEM, "out of memory");
	if (!strcmp(sc->prog[0], "<lua>")) {
		argv[n++] = "/usr/bin/rpm";
		argv[n++] = "--eval";
		argv[n++] = kiln_arena_printf(a,
		                              "%%{lua: arg = {\"<lua>\", \"%d\"%s}; "
		                              "dofile(\"" SCRIPT_DIR_INSIDE "/" SCRIPT_FILE "\")}",
		                              sc->arg1, sc->arg2 >= 0 ? ", \"1\"" : "");
	} else {
		for (i = 0; i < sc->nprog; i++)
			argv[n++] = sc->prog[i];
		if (sc->body) {
			argv[n++] = SCRIPT_DIR_INSIDE "/" SCRIPT_FILE;
			if (sc->arg1 >= 0)
				argv[n++] = sc->arg1 ? "1" : "0";
			if (sc->arg2 >= 0)
				argv[n++] = sc->arg2 ? "1" : "0";
		}
	}
	argv[n] = NULL;
	*out = argv;
	return kiln_arena_finish(a, err);
}

/* A <lua> scriptlet before the image has rpm: deferred, or skipped (see the top). */
static kiln_rc lua_later(struct roots_scripts *s, const struct script *sc, size_t *warnings,
                         struct kiln_err *err)
{
	char line[600];

	if (sc->fatal || s->ndeferred >= 65536) {
		snprintf(line, sizeof(line),
		         "warning: %s(%s): <lua> scriptlet skipped: no rpm in the image yet\n",
		         sc->what, sc->nevra);
		log_line(s, line);
		(*warnings)++;
		return KILN_OK;
	}
	if (s->ndeferred == s->capdeferred) {
		size_t cap = s->capdeferred ? 2 * s->capdeferred : 16;
		struct script *v = kiln_reallocarray(s->deferred, cap, sizeof(*v));

		if (!v)
			return kiln_err_set(err, KILN_ENOMEM, "out of memory");
		s->deferred = v;
		s->capdeferred = cap;
	}
	s->deferred[s->ndeferred++] = *sc;
	snprintf(line, sizeof(line), "%s(%s): <lua> scriptlet deferred until rpm is in the image\n",
	         sc->what, sc->nevra);
	log_line(s, line);
	return KILN_OK;
}

/* A file holding text, opened for reading (a file trigger's standard input). */
static kiln_rc open_input(const struct roots_scripts *s, const char *text, int *fd,
                          struct kiln_err *err)
{
	char path[KILN_LIMIT_PATH];
	kiln_rc rc;

	snprintf(path, sizeof(path), "%s/stdin", s->dir);
	rc = util_write_atomic_nosync(path, text, strlen(text), 0600, err);
	if (rc)
		return rc;
	*fd = open(path, O_RDONLY | O_CLOEXEC);
	if (*fd < 0)
		return kiln_err_sys(err, KILN_EIO, "cannot open '%s'", path);
	return KILN_OK;
}

static kiln_rc script_run(struct roots_scripts *s, const struct script *sc, size_t *warnings,
                          struct kiln_err *err)
{
	struct kiln_arena a;
	struct chroot_run run;
	struct chroot_result res;
	struct kiln_err rerr = KILN_ERR_INIT;
	char file[KILN_LIMIT_PATH], why[600];
	const char **argv = NULL;
	int in_fd = -1;
	kiln_rc rc;

	if (!strcmp(sc->prog[0], "<lua>") && !image_has(s, "usr/bin/rpm"))
		return lua_later(s, sc, warnings, err);
	kiln_arena_init(&a, KILN_MIB);
	snprintf(file, sizeof(file), "%s/%s", s->dir, SCRIPT_FILE);
	rc = util_write_atomic_nosync(file, sc->body ? sc->body : "",
	                              sc->body ? strlen(sc->body) : 0, 0644, err);
	if (!rc)
		rc = script_argv(sc, &a, &argv, err);
	if (rc)
		goto out;
	memset(&run, 0, sizeof(run));
	run.argv = argv;
	run.env = script_env;
	run.cwd = "/";
	run.stdin_fd = -1;
	run.stdout_fd = s->log_fd;
	run.stderr_fd = s->log_fd;
	run.timeout_ms = s->timeout_ms;
	if (sc->input) {
		rc = open_input(s, sc->input, &in_fd, err);
		if (rc)
			goto out;
		run.stdin_fd = in_fd;
	}
	rc = chroot_exec_run(s->ex, &run, &res, &rerr);
	if (rc == KILN_EUNSUPP || rc == KILN_EPRIV || rc == KILN_EIO) {
		*err = rerr;
		kiln_err_wrap(err, "%s(%s)", sc->what, sc->nevra);
		goto out;
	}
	if (rc)
		snprintf(why, sizeof(why), "%s", rerr.msg);
	else if (res.signal)
		snprintf(why, sizeof(why), "signal %d", res.signal);
	else if (res.exit_code)
		snprintf(why, sizeof(why), "exit status %d", res.exit_code);
	else
		goto out;
	rc = failed(s, sc, why, warnings, err);
out:
	kiln_arena_release(&a);
	return rc;
}

kiln_rc roots_scripts_run_deferred(struct roots_scripts *s, size_t *ran, size_t *warnings,
                                   struct kiln_err *err)
{
	size_t i, n = s->ndeferred;
	kiln_rc rc = KILN_OK;

	/* Run once: what is still without rpm now is skipped (script_run defers no more). */
	for (i = 0; !rc && i < n; i++) {
		s->deferred[i].fatal = true; /* not deferred again: skipped with a warning */
		if (image_has(s, "usr/bin/rpm"))
			s->deferred[i].fatal = false;
		(*ran)++;
		rc = script_run(s, &s->deferred[i], warnings, err);
	}
	s->ndeferred = 0;
	return rc;
}

/* ---------------------------------------------------------------------------------------- */
/* Package scriptlets */

struct kind_tags {
	const char *what;
	uint32_t body, prog;
	bool fatal;
};

static const struct kind_tags kinds[] = {
    [ROOTS_SCRIPT_PRETRANS] = {"%pretrans", RPMTAG_PRETRANS, RPMTAG_PRETRANSPROG, true},
    [ROOTS_SCRIPT_PRE] = {"%pre", RPMTAG_PREIN, RPMTAG_PREINPROG, true},
    [ROOTS_SCRIPT_POST] = {"%post", RPMTAG_POSTIN, RPMTAG_POSTINPROG, false},
    [ROOTS_SCRIPT_POSTTRANS] = {"%posttrans", RPMTAG_POSTTRANS, RPMTAG_POSTTRANSPROG, false},
};

/* The interpreter of a scriptlet: PROG's strings (one STRING or a STRING_ARRAY), else
 * /bin/sh. */
static void script_prog(struct script *sc, const struct pack_header *h, uint32_t tag, uint32_t i,
                        bool array_per_script)
{
	uint32_t n = roots_hdr_count(h, tag), j;

	sc->nprog = 0;
	if (array_per_script) {
		/* TRIGGERSCRIPTPROG: one interpreter (without arguments) per trigger script. */
		if (roots_hdr_str(h, tag, i))
			sc->prog[sc->nprog++] = roots_hdr_str(h, tag, i);
	} else {
		for (j = 0; j < n && sc->nprog < KILN_ARRAY_SIZE(sc->prog) - 1; j++) {
			if (roots_hdr_str(h, tag, j))
				sc->prog[sc->nprog++] = roots_hdr_str(h, tag, j);
		}
	}
	if (!sc->nprog)
		sc->prog[sc->nprog++] = "/bin/sh";
}

kiln_rc roots_scripts_run(struct roots_scripts *s, const struct roots_pkg *p,
                          enum roots_script_kind kind, bool *ran, size_t *warnings,
                          struct kiln_err *err)
{
	const struct kind_tags *k = &kinds[kind];
	const struct pack_header *h = &p->pkg.hdr;
	struct script sc = {k->what, p->nevra, NULL, {NULL}, 0, 1, -1, k->fatal, NULL};

	*ran = false;
	sc.body = pack_header_get_string(h, k->body);
	if (!sc.body && !roots_hdr_count(h, k->prog))
		return KILN_OK;
	script_prog(&sc, h, k->prog, 0, false);
	*ran = true;
	return script_run(s, &sc, warnings, err);
}

/* ---------------------------------------------------------------------------------------- */
/* Triggers */

#define TRIGGERS_MAX 4096

/* Fire owner's triggers of sense set off by trig (installed with EVR trig->evr). */
static kiln_rc fire(struct roots_scripts *s, const struct roots_pkg *owner,
                    const struct roots_pkg *trig, uint32_t sense, size_t *ran, size_t *warnings,
                    struct kiln_err *err)
{
	const struct pack_header *h = &owner->pkg.hdr;
	uint32_t n = roots_hdr_count(h, RPMTAG_TRIGGERNAME), i, j;
	uint32_t fired[64];
	size_t nfired = 0;
	kiln_rc rc = KILN_OK;

	for (i = 0; !rc && i < n && i < TRIGGERS_MAX; i++) {
		struct roots_dep cond;
		uint64_t flags = 0, idx = 0;
		bool seen = false;
		struct script sc = {sense == RPMTAG_DEP_TRIGGERPREIN ? "%triggerprein"
		                                                     : "%triggerin",
		                    owner->nevra,
		                    NULL,
		                    {NULL},
		                    0,
		                    1,
		                    1,
		                    false,
		                    NULL};

		cond.name = roots_hdr_str(h, RPMTAG_TRIGGERNAME, i);
		cond.version = roots_hdr_str(h, RPMTAG_TRIGGERVERSION, i);
		if (!cond.name || !cond.version ||
		    !roots_hdr_num(h, RPMTAG_TRIGGERFLAGS, i, &flags) ||
		    !roots_hdr_num(h, RPMTAG_TRIGGERINDEX, i, &idx))
			break;
		cond.flags = (uint32_t)flags;
		if (!(cond.flags & sense) ||
		    !roots_dep_matches(&cond, trig->name, RPMTAG_DEP_EQUAL, trig->evr))
			continue;
		/* One run per script, even when several of its conditions match. */
		for (j = 0; j < nfired; j++)
			seen |= fired[j] == (uint32_t)idx;
		if (seen || idx > UINT32_MAX)
			continue;
		if (nfired < KILN_ARRAY_SIZE(fired))
			fired[nfired++] = (uint32_t)idx;
		sc.body = roots_hdr_str(h, RPMTAG_TRIGGERSCRIPTS, (uint32_t)idx);
		script_prog(&sc, h, RPMTAG_TRIGGERSCRIPTPROG, (uint32_t)idx, true);
		(*ran)++;
		rc = script_run(s, &sc, warnings, err);
	}
	return rc;
}

kiln_rc roots_scripts_triggers(struct roots_scripts *s, const struct roots_set *set,
                               const size_t *installed, size_t ninstalled,
                               const struct roots_pkg *p, bool prein, size_t *ran, size_t *warnings,
                               struct kiln_err *err)
{
	uint32_t sense = prein ? RPMTAG_DEP_TRIGGERPREIN : RPMTAG_DEP_TRIGGERIN;
	kiln_rc rc = KILN_OK;
	size_t i;

	/* rpm's order (psm.c): triggers in other packages set off by p, then p's own set off
	 * by the packages already there (and, once p is in, by p itself). */
	for (i = 0; !rc && i < ninstalled; i++)
		rc = fire(s, &set->pkgs[installed[i]], p, sense, ran, warnings, err);
	for (i = 0; !rc && i < ninstalled; i++)
		rc = fire(s, p, &set->pkgs[installed[i]], sense, ran, warnings, err);
	if (!rc && !prein)
		rc = fire(s, p, p, sense, ran, warnings, err);
	return rc;
}

/* ---------------------------------------------------------------------------------------- */
/* The rpm database */

#define RPMDB_DIR_INSIDE "/tmp/kiln-rpmdb"
#define RPMDB_PIN "etc/rpm/macros.kiln-dbpath"

static kiln_rc run_captured(struct chroot_exec *ex, const char *const *argv, int log_fd,
                            struct kiln_buf *out, int *status, struct kiln_err *err)
{
	struct chroot_run run;
	struct chroot_result res;
	kiln_rc rc;

	memset(&run, 0, sizeof(run));
	run.argv = argv;
	run.env = script_env;
	run.cwd = "/";
	run.stdin_fd = -1;
	run.stdout_fd = log_fd;
	run.stderr_fd = log_fd;
	run.capture = out;
	run.timeout_ms = DEFAULT_TIMEOUT_MS;
	rc = chroot_exec_run(ex, &run, &res, err);
	*status = res.signal ? 128 + res.signal : res.exit_code;
	return rc;
}

/* The image's rpm keeps its database where %_dbpath says. A distribution's rpm names a
 * fixed place (/var/lib/rpm, /usr/lib/sysimage/rpm); Debian's says ~/.rpmdb, which in a
 * sandbox is a throw-away HOME: then kiln pins /var/lib/rpm with a macro file in the image,
 * so every later rpm in a build finds the same database. */
static kiln_rc pin_dbpath(struct chroot_exec *ex, const char *image, int log_fd,
                          struct kiln_err *err)
{
	static const char *const argv[] = {"rpm", "--eval", "%{_dbpath}", NULL};
	struct kiln_buf out = KILN_BUF_INIT(64 * KILN_KIB);
	kiln_rc rc;
	int status = 0, rootfd = -1;

	rc = run_captured(ex, argv, log_fd, &out, &status, err);
	if (!rc && status)
		rc = kiln_err_set(err, KILN_EBUILD, "rpm --eval %%{_dbpath} in the image: exit %d",
		                  status);
	while (!rc && out.len && (out.ptr[out.len - 1] == '\n' || out.ptr[out.len - 1] == ' '))
		out.ptr[--out.len] = '\0';
	if (rc || (out.ptr[0] == '/' && strncmp(out.ptr, "/tmp", 4)))
		goto out;
	rootfd = open(image, O_RDONLY | O_DIRECTORY | O_CLOEXEC);
	if (rootfd < 0) {
		rc = kiln_err_sys(err, KILN_EIO, "cannot open '%s'", image);
		goto out;
	}
	rc = roots_image_put_file(rootfd, RPMDB_PIN,
	                          "# kiln: the image's rpm database lives here (docs/roots.md)\n"
	                          "%_dbpath /var/lib/rpm\n",
	                          err);
out:
	util_close(rootfd);
	kiln_buf_release(&out);
	return rc;
}

/* --nosignature --nodigest: kiln checked every header digest when it read the set and every
 * payload digest while unpacking (and the fetcher the signatures); rpm checking them again
 * would read all the payloads a second time for nothing. */
static kiln_rc rpmdb_binds(const struct roots_set *set, struct kiln_arena *a,
                           struct chroot_bind **out, const char ***argv, struct kiln_err *err)
{
	static const char *const head[] = {
	    "rpm",          "-i",           "--justdb",      "--nodeps",  "--noscripts",
	    "--notriggers", "--ignoresize", "--nosignature", "--nodigest"};
	struct chroot_bind *b = kiln_arena_array(a, set->n ? set->n : 1, sizeof(*b));
	const char **v = kiln_arena_array(a, set->n + KILN_ARRAY_SIZE(head) + 1, sizeof(*v));
	size_t i, n = 0;

	if (!b || !v)
		return kiln_err_set(err, KILN_ENOMEM, "out of memory");
	for (i = 0; i < KILN_ARRAY_SIZE(head); i++)
		v[n++] = head[i];
	for (i = 0; i < set->n; i++) {
		char *real = realpath(set->pkgs[i].path, NULL);

		if (!real)
			return kiln_err_sys(err, KILN_EIO, "cannot resolve '%s'",
			                    set->pkgs[i].path);
		b[i].host = kiln_arena_strdup(a, real);
		free(real);
		b[i].inside = kiln_arena_printf(a, RPMDB_DIR_INSIDE "/%zu.rpm", i);
		b[i].readonly = true;
		v[n++] = b[i].inside;
	}
	v[n] = NULL;
	*out = b;
	*argv = v;
	return kiln_arena_finish(a, err);
}

kiln_rc roots_rpmdb_write(const char *image, const struct roots_set *set,
                          const struct roots_install_opts *o, struct kiln_err *err)
{
	struct kiln_buf out = KILN_BUF_INIT(KILN_LIMIT_SHELL_OUTPUT);
	struct chroot_exec *ex = NULL;
	struct chroot_bind *binds = NULL;
	const char **argv = NULL;
	struct kiln_arena a;
	int status = 0;
	kiln_rc rc;

	kiln_arena_init(&a, 64 * KILN_MIB);
	rc = rpmdb_binds(set, &a, &binds, &argv, err);
	if (!rc)
		rc = make_exec(image, o->state_dir, binds, set->n, &ex, err);
	if (!rc)
		rc = pin_dbpath(ex, image, o->log_fd, err);
	if (!rc)
		rc = run_captured(ex, argv, o->log_fd, &out, &status, err);
	if (!rc && status)
		rc = kiln_err_set(err, KILN_EBUILD, "rpm --justdb in the image failed, exit %d",
		                  status);
	if (rc)
		kiln_err_wrap(err, "rpm database");
	chroot_exec_free(ex);
	kiln_arena_release(&a);
	kiln_buf_release(&out);
	return rc;
}

/* ---------------------------------------------------------------------------------------- */
/* File triggers (install side): %filetriggerin and %transfiletriggerin */

#define FILETRIGGER_DEFAULT_PRIORITY 1000000
#define FILETRIGGER_EARLY 100000 /* above: before the standard scriptlets */

struct ftrig_tags {
	const char *what;
	uint32_t scripts, prog, name, index, flags, prio;
};

static const struct ftrig_tags per_package = {"%filetriggerin",
                                              RPMTAG_FILETRIGGERSCRIPTS,
                                              RPMTAG_FILETRIGGERSCRIPTPROG,
                                              RPMTAG_FILETRIGGERNAME,
                                              RPMTAG_FILETRIGGERINDEX,
                                              RPMTAG_FILETRIGGERFLAGS,
                                              RPMTAG_FILETRIGGERPRIORITIES};
static const struct ftrig_tags per_transaction = {"%transfiletriggerin",
                                                  RPMTAG_TRANSFILETRIGGERSCRIPTS,
                                                  RPMTAG_TRANSFILETRIGGERSCRIPTPROG,
                                                  RPMTAG_TRANSFILETRIGGERNAME,
                                                  RPMTAG_TRANSFILETRIGGERINDEX,
                                                  RPMTAG_TRANSFILETRIGGERFLAGS,
                                                  RPMTAG_TRANSFILETRIGGERPRIORITIES};

/* One trigger script to consider: its owner, script index and priority. */
struct ftrig {
	const struct roots_pkg *owner;
	uint32_t idx;
	uint64_t prio;
};

/* A plain string prefix, as rpm matches them: "/lib" also matches "/lib64/x" (rpm 4.18
 * does, test_install_runs_scriptlets_like_rpm). */
static bool under_prefix(const char *path, const char *prefix)
{
	size_t n = strlen(prefix);

	return n && !strncmp(path, prefix, n);
}

/* Append to out the files of p matching one of the trigger's install prefixes. */
static void match_files(const struct ftrig_tags *t, const struct ftrig *f,
                        const struct roots_pkg *p, struct kiln_buf *out)
{
	const struct pack_header *h = &f->owner->pkg.hdr;
	uint32_t n = roots_hdr_count(h, t->name), i, j;

	for (j = 0; j < p->nfiles; j++) {
		for (i = 0; i < n; i++) {
			uint64_t idx = 0, flags = 0;
			const char *prefix = roots_hdr_str(h, t->name, i);

			if (!prefix || !roots_hdr_num(h, t->index, i, &idx) || idx != f->idx ||
			    !roots_hdr_num(h, t->flags, i, &flags) ||
			    !(flags & RPMTAG_DEP_TRIGGERIN) || !under_prefix(p->files[j], prefix))
				continue;
			kiln_buf_addf(out, "%s\n", p->files[j]);
			break;
		}
	}
}

/* The TRIGGERIN scripts of owner into v (growing), with their priorities. */
static kiln_rc collect(const struct ftrig_tags *t, const struct roots_pkg *owner, struct ftrig **v,
                       size_t *n, size_t *cap, struct kiln_err *err)
{
	const struct pack_header *h = &owner->pkg.hdr;
	uint32_t nscripts = roots_hdr_count(h, t->scripts), k;

	for (k = 0; k < nscripts && k < TRIGGERS_MAX; k++) {
		uint64_t prio = FILETRIGGER_DEFAULT_PRIORITY;

		(void)roots_hdr_num(h, t->prio, k, &prio);
		if (*n == *cap) {
			size_t c = *cap ? 2 * *cap : 16;
			struct ftrig *nv = kiln_reallocarray(*v, c, sizeof(*nv));

			if (!nv)
				return kiln_err_set(err, KILN_ENOMEM, "out of memory");
			*v = nv;
			*cap = c;
		}
		(*v)[(*n)++] = (struct ftrig){owner, k, prio};
	}
	return KILN_OK;
}

/* Higher priority first; equal ones keep the install order (insertion sort is stable). */
static void sort_by_priority(struct ftrig *v, size_t n)
{
	size_t i, j;

	for (i = 1; i < n; i++) {
		struct ftrig x = v[i];

		for (j = i; j > 0 && v[j - 1].prio < x.prio; j--)
			v[j] = v[j - 1];
		v[j] = x;
	}
}

static kiln_rc fire_file(struct roots_scripts *s, const struct ftrig_tags *t, const struct ftrig *f,
                         const char *files, size_t *ran, size_t *warnings, struct kiln_err *err)
{
	const struct pack_header *h = &f->owner->pkg.hdr;
	struct script sc = {t->what, f->owner->nevra, NULL, {NULL}, 0, 1, -1, false, files};

	sc.body = roots_hdr_str(h, t->scripts, f->idx);
	script_prog(&sc, h, t->prog, f->idx, true);
	(*ran)++;
	return script_run(s, &sc, warnings, err);
}

/* The files the trigger f sees: p's when p set it off, or every installed package's when
 * its owner is the package just installed. */
static kiln_rc trigger_files(const struct ftrig_tags *t, const struct ftrig *f,
                             const struct roots_set *set, const size_t *installed, size_t n,
                             const struct roots_pkg *p, struct kiln_buf *out, struct kiln_err *err)
{
	size_t i;

	kiln_buf_reset(out);
	if (t == &per_package && f->owner != p)
		match_files(t, f, p, out);
	else
		for (i = 0; i < n; i++)
			match_files(t, f, &set->pkgs[installed[i]], out);
	return kiln_buf_finish(out, err);
}

static kiln_rc run_file_triggers(struct roots_scripts *s, const struct ftrig_tags *t,
                                 const struct roots_set *set, const size_t *installed, size_t n,
                                 const struct roots_pkg *p, int phase, size_t *ran,
                                 size_t *warnings, struct kiln_err *err)
{
	struct kiln_buf files = KILN_BUF_INIT(64 * KILN_MIB);
	struct ftrig *v = NULL;
	size_t nv = 0, cap = 0, i;
	kiln_rc rc = KILN_OK;

	for (i = 0; !rc && i < n; i++)
		rc = collect(t, &set->pkgs[installed[i]], &v, &nv, &cap, err);
	if (!rc)
		sort_by_priority(v, nv);
	for (i = 0; !rc && i < nv; i++) {
		if (phase == 1 && v[i].prio <= FILETRIGGER_EARLY)
			continue;
		if (phase == 2 && v[i].prio > FILETRIGGER_EARLY)
			continue;
		rc = trigger_files(t, &v[i], set, installed, n, p, &files, err);
		if (!rc && files.len)
			rc = fire_file(s, t, &v[i], files.ptr, ran, warnings, err);
	}
	free(v);
	kiln_buf_release(&files);
	return rc;
}

kiln_rc roots_scripts_file_triggers(struct roots_scripts *s, const struct roots_set *set,
                                    const size_t *installed, size_t ninstalled, int phase,
                                    size_t *ran, size_t *warnings, struct kiln_err *err)
{
	const struct roots_pkg *p = ninstalled ? &set->pkgs[installed[ninstalled - 1]] : NULL;

	if (phase == 0)
		return run_file_triggers(s, &per_transaction, set, installed, ninstalled, NULL, 0,
		                         ran, warnings, err);
	return run_file_triggers(s, &per_package, set, installed, ninstalled, p, phase, ran,
	                         warnings, err);
}
