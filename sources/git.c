/*
 * git.c - git sources through libgit2 (the only file that sees libgit2): bare mirrors in
 * the cache keyed by URL, refs resolved to commit ids, a commit's tree exported into a
 * directory (a dist-git checkout) or written as a deterministic tarball (tar.c's layout,
 * gzip through pack/).
 *
 * A mirror is updated under its lock (kind "git", key sha256(url)), which gc also takes
 * before evicting it; the first clone goes to a temp directory renamed into place, so a
 * crash never leaves half a mirror under the final name. Trees come from outside, so names
 * are checked before anything is written and sizes, counts and depth are bounded.
 */
#include "util/util.h"

#include <dirent.h>
#include <fcntl.h>
#include <strings.h>
#include <sys/stat.h>
#include <unistd.h>

#include <git2.h>
#include "sources/libgit2_int.h"

#include "pack/pack.h"
#include "sources/sources.h"
#include "sources/sources_int.h"

/* Filled on first use (see sources/libgit2_int.h). */
static struct sources_libgit2_fns sources_libgit2;
static struct util_dl sources_libgit2_dl =
    UTIL_DL_INIT(SOURCES_LIBGIT2_SONAME, sources_libgit2_syms, sources_libgit2);

kiln_rc sources_git_global_init(struct kiln_err *err)
{
	if (util_dl_ready(&sources_libgit2_dl, err))
		return err && err->code ? err->code : KILN_ENOTFOUND;
	if (git_libgit2_init() < 0)
		return kiln_err_set(err, KILN_ENOMEM, "cannot initialise libgit2");
	return KILN_OK;
}

static const char *git_msg(void)
{
	const git_error *e = git_error_last();

	return e && e->message ? e->message : "unknown libgit2 error";
}

/* An open mirror, locked for the caller. */
struct mirror {
	git_repository *repo;
	int lock;
	char *path; /* owned */
	char shown[KILN_LIMIT_URL + 16];
};

static void mirror_close(struct mirror *m)
{
	git_repository_free(m->repo);
	m->repo = NULL;
	sources_cache_unlock(m->lock);
	m->lock = -1;
	free(m->path);
	m->path = NULL;
}

/* ---- fetching ------------------------------------------------------------------------------ */

struct cred_state {
	const struct sources_fetch_opts *o;
	int tries;
};

static int on_credentials(git_credential **out, const char *url, const char *user,
                          unsigned int allowed, void *payload)
{
	struct cred_state *c = payload;
	char pub[KILN_LIMIT_PATH];

	(void)url;
	/* Each method once: libgit2 asks again after a refusal, and would loop forever. */
	if (c->tries++ >= 2)
		return GIT_PASSTHROUGH;
	if ((allowed & GIT_CREDENTIAL_SSH_KEY) && c->o->ssh_key) {
		snprintf(pub, sizeof(pub), "%s.pub", c->o->ssh_key);
		return git_credential_ssh_key_new(out, user ? user : "git", pub, c->o->ssh_key,
		                                  NULL);
	}
	if (allowed & GIT_CREDENTIAL_SSH_KEY)
		return git_credential_ssh_key_from_agent(out, user ? user : "git");
	if (allowed & GIT_CREDENTIAL_USERNAME)
		return git_credential_username_new(out, user ? user : "git");
	return GIT_PASSTHROUGH;
}

static int on_certificate(git_cert *cert, int valid, const char *host, void *payload)
{
	const struct sources_fetch_opts *o = payload;

	(void)cert;
	(void)host;
	if (o->insecure)
		return 0;
	return valid ? 0 : GIT_PASSTHROUGH; /* libgit2 refuses an invalid certificate */
}

static int on_transfer(const git_indexer_progress *st, void *payload)
{
	const struct sources_fetch_opts *o = payload;

	(void)st;
	return o->cancel && *o->cancel ? -1 : 0;
}

static int on_certificate_cred(git_cert *cert, int valid, const char *host, void *payload)
{
	return on_certificate(cert, valid, host, (void *)((struct cred_state *)payload)->o);
}

static int on_transfer_cred(const git_indexer_progress *st, void *payload)
{
	return on_transfer(st, (void *)((struct cred_state *)payload)->o);
}

/* All callbacks get the credential state, which points at the options. */
static void fetch_options(const struct sources_fetch_opts *o, struct cred_state *cred,
                          git_fetch_options *fo)
{
	cred->o = o;
	cred->tries = 0;
	git_fetch_options_init(fo, GIT_FETCH_OPTIONS_VERSION);
	fo->prune = GIT_FETCH_PRUNE;
	fo->download_tags = GIT_REMOTE_DOWNLOAD_TAGS_NONE; /* the refspec has them all */
	fo->callbacks.credentials = on_credentials;
	fo->callbacks.certificate_check = on_certificate_cred;
	fo->callbacks.transfer_progress = on_transfer_cred;
	fo->callbacks.payload = cred;
}

static kiln_rc mirror_fetch(struct sources *s, git_repository *repo, const char *url,
                            const char *shown, struct kiln_err *err)
{
	git_remote *remote = NULL;
	git_fetch_options fo;
	struct cred_state cred;
	kiln_rc rc = KILN_OK;

	char *mirror_spec[] = {(char *)"+refs/*:refs/*"};
	git_strarray specs = {mirror_spec, 1};
	git_buf head = {0};

	fetch_options(&s->o, &cred, &fo);
	git_remote_create_options ro;

	/* An anonymous remote given the mirror refspec at fetch time, and no url.insteadOf
	 * rewriting: nothing is read from the mirror's config, where libgit2 1.5's regex
	 * matching leaks memory, and a user's rewrite rules cannot redirect a source. */
	git_remote_create_options_init(&ro, GIT_REMOTE_CREATE_OPTIONS_VERSION);
	ro.repository = repo;
	ro.flags = GIT_REMOTE_CREATE_SKIP_INSTEADOF | GIT_REMOTE_CREATE_SKIP_DEFAULT_FETCHSPEC;
	if (git_remote_create_with_opts(&remote, url, &ro) < 0)
		return kiln_err_set(err, KILN_EIO, "cannot set up the mirror of '%s': %s", shown,
		                    git_msg());
	/* The remote's HEAD (asked while connected) becomes the mirror's, so a NULL ref means
	 * the default branch as the remote defines it. */
	if (git_remote_connect(remote, GIT_DIRECTION_FETCH, &fo.callbacks, NULL, NULL) < 0 ||
	    (git_remote_default_branch(&head, remote),
	     git_remote_fetch(remote, &specs, &fo, "kiln fetch") < 0)) {
		if (s->o.cancel && *s->o.cancel)
			rc = kiln_err_set(err, KILN_ECANCEL, "cancelled");
		else
			rc =
			    kiln_err_set(err, KILN_ENET, "cannot fetch '%s': %s", shown, git_msg());
	}
	if (!rc && head.ptr)
		(void)git_repository_set_head(repo, head.ptr);
	git_buf_dispose(&head);
	git_remote_free(remote);
	return rc;
}

/* First clone: init a bare repository beside the final path, fetch, rename into place. */
static kiln_rc mirror_create(struct sources *s, struct mirror *m, const char *url,
                             struct kiln_err *err)
{
	struct kiln_buf tmp = KILN_BUF_INIT(KILN_LIMIT_PATH);
	struct kiln_err ignore = KILN_ERR_INIT;
	git_repository *repo = NULL;
	kiln_rc rc;

	kiln_buf_addf(&tmp, "%s.tmp%d", m->path, (int)getpid());
	rc = kiln_buf_finish(&tmp, err);
	if (rc)
		goto out;
	if (util_rm_rf(tmp.ptr, &ignore))
		kiln_err_clear(
		    &ignore); /* a leftover of a crash; init below reports a real problem */
	if (git_repository_init(&repo, tmp.ptr, 1) < 0) {
		rc = kiln_err_set(err, KILN_EIO, "cannot create '%s': %s", tmp.ptr, git_msg());
		goto out;
	}
	rc = mirror_fetch(s, repo, url, m->shown, err);
	git_repository_free(repo);
	if (!rc && rename(tmp.ptr, m->path) < 0)
		rc = kiln_err_sys(err, KILN_EIO, "cannot move '%s' to '%s'", tmp.ptr, m->path);
	if (rc && util_rm_rf(tmp.ptr, &ignore))
		kiln_log_err(KILN_LOG_WARN, &ignore);
out:
	kiln_buf_release(&tmp);
	return rc;
}

/* ssh://, git+ssh:// or scp-like user@host:path */
static bool is_ssh(const char *url)
{
	const char *colon = strchr(url, ':');
	const char *slash = strchr(url, '/');

	if (!strncmp(url, "ssh://", 6) || !strncmp(url, "git+ssh://", 10) ||
	    !strncmp(url, "ssh+git://", 10))
		return true;
	return colon && strchr(url, '@') && strchr(url, '@') < colon && (!slash || colon < slash);
}

static kiln_rc check_transport(const char *url, const char *shown, struct kiln_err *err)
{
	if (is_ssh(url) && !(git_libgit2_features() & GIT_FEATURE_SSH))
		return kiln_err_set(err, KILN_EUNSUPP, "'%s': this libgit2 has no ssh support",
		                    shown);
	return KILN_OK;
}

/* Lock and open the mirror of url; with update, create or fetch it first (not offline). */
static kiln_rc mirror_open(struct sources *s, const char *url, bool update, struct mirror *m,
                           struct kiln_err *err)
{
	struct kiln_buf p = KILN_BUF_INIT(KILN_LIMIT_PATH);
	struct kiln_buf shown = KILN_BUF_INIT(KILN_LIMIT_URL + 16);
	char key[65];
	kiln_rc rc;

	memset(m, 0, sizeof(*m));
	m->lock = -1;
	sources_url_redact(url, &shown);
	snprintf(m->shown, sizeof(m->shown), "%s", shown.err ? "?" : shown.ptr);
	kiln_buf_release(&shown);
	rc = check_transport(url, m->shown, err);
	if (!rc)
		rc = sources_cache_git_path(&s->cache, url, &p, err);
	/* The lock key is sha256(url), the basename without ".git", as gc computes it. */
	snprintf(key, sizeof(key), "%.64s", util_path_basename(p.ptr));
	if (!rc)
		rc = sources_cache_lock(&s->cache, "git", key, true, &m->lock, err);
	if (!rc && !(m->path = kiln_buf_take(&p, NULL)))
		rc = kiln_err_set(err, KILN_ENOMEM, "out of memory");
	kiln_buf_release(&p);
	if (rc)
		goto fail;
	if (!util_is_dir(m->path)) {
		if (!update || s->o.offline) {
			rc = kiln_err_set(err, KILN_ENOTFOUND, "%sno mirror of '%s' in the cache",
			                  s->o.offline ? "offline: " : "", m->shown);
			goto fail;
		}
		rc = mirror_create(s, m, url, err);
		update = false;
	}
	if (!rc && git_repository_open_bare(&m->repo, m->path) < 0)
		rc = kiln_err_set(err, KILN_EIO, "cannot open the mirror '%s': %s", m->path,
		                  git_msg());
	if (!rc && update && !s->o.offline)
		rc = mirror_fetch(s, m->repo, url, m->shown, err);
	if (!rc) {
		(void)utimensat(AT_FDCWD, m->path, NULL, 0); /* last use, for gc's LRU order */
		return KILN_OK;
	}
fail:
	mirror_close(m);
	return rc;
}

/* ---- resolving ------------------------------------------------------------------------------ */

static bool full_id(const char *ref)
{
	size_t i;

	for (i = 0; ref[i]; i++) {
		if (!strchr("0123456789abcdef", ref[i]))
			return false;
	}
	return i == 40;
}

/* Resolve ref to a commit; *is_tag when it named a tag. KILN_ENOTFOUND when absent. */
static kiln_rc resolve_in(git_repository *repo, const char *ref, git_oid *oid, bool *is_tag,
                          struct kiln_err *err)
{
	static const char *const forms[] = {"refs/tags/", "refs/heads/", ""};
	git_object *obj = NULL, *commit = NULL;
	char spec[KILN_LIMIT_PATH];
	size_t i;

	*is_tag = false;
	if (!ref || !*ref)
		ref = "HEAD";
	for (i = 0; i < KILN_ARRAY_SIZE(forms) && !obj; i++) {
		if (i < 2 && (full_id(ref) || !strcmp(ref, "HEAD")))
			continue;
		snprintf(spec, sizeof(spec), "%s%s", forms[i], ref);
		if (git_revparse_single(&obj, repo, spec) == 0)
			*is_tag = i == 0;
	}
	if (!obj)
		return kiln_err_set(err, KILN_ENOTFOUND, "no ref or commit '%s'", ref);
	if (git_object_peel(&commit, obj, GIT_OBJECT_COMMIT) < 0) {
		git_object_free(obj);
		return kiln_err_set(err, KILN_ENOTFOUND, "'%s' is not a commit: %s", ref,
		                    git_msg());
	}
	git_oid_cpy(oid, git_object_id(commit));
	git_object_free(commit);
	git_object_free(obj);
	return KILN_OK;
}

kiln_rc sources_git_resolve(struct sources *s, const char *url, const char *ref,
                            struct sources_git_rev *rev, struct kiln_err *err)
{
	struct kiln_err ignore = KILN_ERR_INIT;
	struct mirror m;
	git_oid before, after;
	git_commit *c = NULL;
	bool had = false, is_tag = false;
	kiln_rc rc;

	memset(rev, 0, sizeof(*rev));
	/* What the mirror said before this fetch, to notice a moved tag. */
	if (!mirror_open(s, url, false, &m, &ignore)) {
		had = !resolve_in(m.repo, ref, &before, &is_tag, &ignore);
		mirror_close(&m);
	}
	rc = mirror_open(s, url, true, &m, err);
	if (rc)
		return rc;
	rc = resolve_in(m.repo, ref, &after, &is_tag, err);
	if (!rc && git_commit_lookup(&c, m.repo, &after) < 0)
		rc = kiln_err_set(err, KILN_EFORMAT, "cannot read commit: %s", git_msg());
	if (!rc) {
		git_oid_tostr(rev->commit, sizeof(rev->commit), &after);
		if (had)
			git_oid_tostr(rev->previous, sizeof(rev->previous), &before);
		rev->moved = had && !git_oid_equal(&before, &after);
		rev->time = (int64_t)git_commit_committer(c)->when.time;
		if (rev->moved && is_tag)
			kiln_warn("%s: tag '%s' moved: it was %s, it is now %s", m.shown, ref,
			          rev->previous, rev->commit);
	}
	if (rc)
		kiln_err_wrap(err, "%s", m.shown);
	git_commit_free(c);
	mirror_close(&m);
	return rc;
}

/* ---- walking a tree -------------------------------------------------------------------------- */

struct walk {
	git_repository *repo;
	uint64_t entries;
	/* Called for each entry in tree order, directories before their contents; a
	 * directory's children follow between enter and leave. */
	kiln_rc (*entry)(struct walk *w, const char *path, const char *name, unsigned mode,
	                 const git_oid *oid, const void *data, size_t size, struct kiln_err *err);
	kiln_rc (*leave)(struct walk *w, struct kiln_err *err);
};

/* Names that would escape the output or fool a later git: refused outright. */
static bool name_safe(const char *name)
{
	return *name && strcmp(name, ".") && strcmp(name, "..") && strcasecmp(name, ".git") &&
	       !strchr(name, '/') && !strchr(name, '\\');
}

static kiln_rc walk_tree(struct walk *w, const git_tree *tree, const char *base, int depth,
                         struct kiln_err *err);

static kiln_rc walk_blob(struct walk *w, const git_tree_entry *e, const char *path, unsigned mode,
                         struct kiln_err *err)
{
	git_blob *blob = NULL;
	kiln_rc rc;

	if (git_blob_lookup(&blob, w->repo, git_tree_entry_id(e)) < 0)
		return kiln_err_set(err, KILN_EFORMAT, "%s: cannot read blob: %s", path, git_msg());
	if (git_blob_rawsize(blob) > (git_object_size_t)KILN_LIMIT_GIT_BLOB) {
		git_blob_free(blob);
		return kiln_err_set(err, KILN_ELIMIT, "%s: larger than %zu bytes", path,
		                    KILN_LIMIT_GIT_BLOB);
	}
	rc = w->entry(w, path, git_tree_entry_name(e), mode, git_tree_entry_id(e),
	              git_blob_rawcontent(blob), (size_t)git_blob_rawsize(blob), err);
	git_blob_free(blob);
	return rc;
}

static kiln_rc walk_subtree(struct walk *w, const git_tree_entry *e, const char *path, int depth,
                            struct kiln_err *err)
{
	git_tree *sub = NULL;
	kiln_rc rc;

	if (git_tree_lookup(&sub, w->repo, git_tree_entry_id(e)) < 0)
		return kiln_err_set(err, KILN_EFORMAT, "%s: cannot read tree: %s", path, git_msg());
	rc = w->entry(w, path, git_tree_entry_name(e), 040000, git_tree_entry_id(e), NULL, 0, err);
	if (!rc)
		rc = walk_tree(w, sub, path, depth + 1, err);
	if (!rc)
		rc = w->leave(w, err);
	git_tree_free(sub);
	return rc;
}

static kiln_rc walk_one(struct walk *w, const git_tree_entry *e, const char *base, int depth,
                        struct kiln_err *err)
{
	const char *name = git_tree_entry_name(e);
	unsigned mode = (unsigned)git_tree_entry_filemode_raw(e);
	char path[KILN_LIMIT_PATH];
	int n;

	if (!name_safe(name))
		return kiln_err_set(err, KILN_EPRIV, "%s: unsafe name '%s' in the tree",
		                    *base ? base : ".", name);
	if (++w->entries > KILN_LIMIT_GIT_ENTRIES)
		return kiln_err_set(err, KILN_ELIMIT, "more than %d entries",
		                    KILN_LIMIT_GIT_ENTRIES);
	n = snprintf(path, sizeof(path), "%s%s%s", base, *base ? "/" : "", name);
	if (n < 0 || (size_t)n >= sizeof(path))
		return kiln_err_set(err, KILN_ELIMIT, "path longer than %zu bytes", sizeof(path));
	switch (mode & 0170000) {
	case 0040000:
		return walk_subtree(w, e, path, depth, err);
	case 0160000: /* a submodule: an empty directory, as git archive writes it */
		if (w->entry(w, path, name, mode, git_tree_entry_id(e), NULL, 0, err))
			return err->code;
		return w->leave(w, err);
	default:
		return walk_blob(w, e, path, mode, err);
	}
}

static kiln_rc walk_tree(struct walk *w, const git_tree *tree, const char *base, int depth,
                         struct kiln_err *err)
{
	size_t i, n = git_tree_entrycount(tree);
	kiln_rc rc = KILN_OK;

	if (depth > KILN_LIMIT_GIT_DEPTH)
		return kiln_err_set(err, KILN_ELIMIT, "%s: directories nested deeper than %d", base,
		                    KILN_LIMIT_GIT_DEPTH);
	for (i = 0; i < n && !rc; i++)
		rc = walk_one(w, git_tree_entry_byindex(tree, i), base, depth, err);
	return rc;
}

/* The commit's tree and time, from a mirror opened without fetching. */
static kiln_rc commit_tree(struct mirror *m, const char *commit, git_tree **tree, int64_t *when,
                           git_oid *tree_id, struct kiln_err *err)
{
	git_commit *c = NULL;
	git_oid oid;

	if (!full_id(commit) || git_oid_fromstr(&oid, commit) < 0)
		return kiln_err_set(err, KILN_EINVAL, "'%s' is not a full commit id", commit);
	if (git_commit_lookup(&c, m->repo, &oid) < 0)
		return kiln_err_set(err, KILN_ENOTFOUND, "%s: no commit %s: %s", m->shown, commit,
		                    git_msg());
	*when = (int64_t)git_commit_committer(c)->when.time;
	git_oid_cpy(tree_id, git_commit_tree_id(c));
	if (git_commit_tree(tree, c) < 0) {
		git_commit_free(c);
		return kiln_err_set(err, KILN_EFORMAT, "%s: cannot read the tree of %s: %s",
		                    m->shown, commit, git_msg());
	}
	git_commit_free(c);
	return KILN_OK;
}

/* Open the mirror with the commit in it: fetch only when the commit is not there yet. */
static kiln_rc mirror_with_commit(struct sources *s, const char *url, const char *commit,
                                  struct mirror *m, struct kiln_err *err)
{
	struct kiln_err miss = KILN_ERR_INIT;
	git_oid oid;
	git_commit *c = NULL;

	if (!mirror_open(s, url, false, m, &miss)) {
		if (git_oid_fromstr(&oid, commit) == 0 &&
		    git_commit_lookup(&c, m->repo, &oid) == 0) {
			git_commit_free(c);
			return KILN_OK;
		}
		mirror_close(m);
	}
	return mirror_open(s, url, true, m, err);
}

/* A relative path without empty, "." or ".." parts. */
static bool path_plain(const char *path)
{
	const char *p = path;

	if (!*p || *p == '/')
		return false;
	while (*p) {
		size_t n = strcspn(p, "/");

		if (!n || (n == 1 && p[0] == '.') || (n == 2 && p[0] == '.' && p[1] == '.'))
			return false;
		p += n;
		if (*p && !*++p)
			return false; /* a trailing "/" */
	}
	return true;
}

kiln_rc sources_git_has_file(struct sources *s, const char *url, const char *commit,
                             const char *path, bool *found, struct kiln_err *err)
{
	struct mirror m;
	git_tree *tree = NULL;
	git_tree_entry *e = NULL;
	git_oid tree_id;
	int64_t when;
	kiln_rc rc;

	*found = false;
	if (!path_plain(path) || strlen(path) >= KILN_LIMIT_PATH)
		return kiln_err_set(err, KILN_EINVAL, "'%s' is not a path in a repository", path);
	if (!full_id(commit))
		return kiln_err_set(err, KILN_EINVAL, "'%s' is not a full commit id", commit);
	rc = mirror_with_commit(s, url, commit, &m, err);
	if (rc)
		return rc;
	rc = commit_tree(&m, commit, &tree, &when, &tree_id, err);
	if (!rc && git_tree_entry_bypath(&e, tree, path) == 0) {
		unsigned mode = (unsigned)git_tree_entry_filemode_raw(e);

		*found = (mode & 0170000) == 0100000 || (mode & 0170000) == 0120000;
	}
	git_tree_entry_free(e);
	git_tree_free(tree);
	mirror_close(&m);
	return rc;
}

/* ---- export into a directory ---------------------------------------------------------------- */

#define EXPORT_DEPTH_MAX (KILN_LIMIT_GIT_DEPTH + 2)

struct export
{
	struct walk w;
	int fds[EXPORT_DEPTH_MAX]; /* directory fds: [0] the top, then one per level */
	int depth;
};

static kiln_rc export_entry(struct walk *w, const char *path, const char *name, unsigned mode,
                            const git_oid *oid, const void *data, size_t size, struct kiln_err *err)
{
	struct export *x = (struct export *)w;
	int dfd = x->fds[x->depth], fd;
	kiln_rc rc = KILN_OK;

	(void)oid;
	switch (mode & 0170000) {
	case 0040000:
	case 0160000:
		if (x->depth + 1 >= EXPORT_DEPTH_MAX)
			return kiln_err_set(err, KILN_ELIMIT, "%s: too deep", path);
		if (mkdirat(dfd, name, 0755) < 0)
			return kiln_err_sys(err, KILN_EIO, "cannot create '%s'", path);
		fd = openat(dfd, name, O_RDONLY | O_DIRECTORY | O_NOFOLLOW | O_CLOEXEC);
		if (fd < 0)
			return kiln_err_sys(err, KILN_EIO, "cannot open '%s'", path);
		x->fds[++x->depth] = fd;
		return KILN_OK;
	case 0120000: {
		char target[KILN_LIMIT_PATH];

		if (size >= sizeof(target) || memchr(data, '\0', size))
			return kiln_err_set(err, KILN_EFORMAT, "%s: bad symlink target", path);
		memcpy(target, data, size);
		target[size] = '\0';
		if (symlinkat(target, dfd, name) < 0)
			return kiln_err_sys(err, KILN_EIO, "cannot create '%s'", path);
		return KILN_OK;
	}
	default:
		/* O_EXCL | O_NOFOLLOW: everything here is new, so nothing is written through a
		 * link the tree planted. */
		fd = openat(dfd, name, O_WRONLY | O_CREAT | O_EXCL | O_NOFOLLOW | O_CLOEXEC,
		            (mode & 0100) ? 0755 : 0644);
		if (fd < 0)
			return kiln_err_sys(err, KILN_EIO, "cannot create '%s'", path);
		rc = util_write_all(fd, data, size, err);
		if (close(fd) < 0 && !rc)
			rc = kiln_err_sys(err, KILN_EIO, "cannot write '%s'", path);
		return rc;
	}
}

static kiln_rc export_leave(struct walk *w, struct kiln_err *err)
{
	struct export *x = (struct export *)w;

	(void)err;
	util_close(x->fds[x->depth]);
	x->fds[x->depth--] = -1;
	return KILN_OK;
}

static kiln_rc export_top(const char *dir, int *fd, struct kiln_err *err)
{
	kiln_rc rc = util_mkdir_p(dir, 0755, err);
	int n = 0;
	DIR *d;

	if (rc)
		return rc;
	*fd = open(dir, O_RDONLY | O_DIRECTORY | O_CLOEXEC);
	if (*fd < 0)
		return kiln_err_sys(err, KILN_EIO, "cannot open '%s'", dir);
	d = opendir(dir);
	while (d && readdir(d))
		n++;
	if (d)
		closedir(d);
	if (n > 2) {
		util_close(*fd);
		*fd = -1;
		return kiln_err_set(err, KILN_EEXIST, "'%s' is not empty", dir);
	}
	return KILN_OK;
}

kiln_rc sources_git_export(struct sources *s, const char *url, const char *commit, const char *dir,
                           struct kiln_err *err)
{
	struct export x = {.w = {.entry = export_entry, .leave = export_leave}};
	struct mirror m;
	git_tree *tree = NULL;
	git_oid tree_id;
	int64_t when;
	kiln_rc rc;

	x.fds[0] = -1;
	rc = mirror_with_commit(s, url, commit, &m, err);
	if (rc)
		return rc;
	x.w.repo = m.repo;
	rc = commit_tree(&m, commit, &tree, &when, &tree_id, err);
	if (!rc)
		rc = export_top(dir, &x.fds[0], err);
	if (!rc)
		rc = walk_tree(&x.w, tree, "", 0, err);
	while (x.depth > 0)
		(void)export_leave(&x.w, err);
	util_close(x.fds[0]);
	if (rc)
		kiln_err_wrap(err, "cannot check out %s of '%s' into '%s'", commit, m.shown, dir);
	git_tree_free(tree);
	mirror_close(&m);
	return rc;
}

/* ---- tarballs ------------------------------------------------------------------------------- */

struct tarball {
	struct walk w;
	struct sources_tar tar;
	struct sources_tar_sink sink;
	struct pack_compfile *gz;
	const char *prefix;
};

static kiln_rc gz_write(struct sources_tar_sink *sink, const void *data, size_t len,
                        struct kiln_err *err)
{
	struct tarball *t = (struct tarball *)((char *)sink - offsetof(struct tarball, sink));

	return pack_compfile_write(t->gz, data, len, err);
}

static kiln_rc tar_entry(struct walk *w, const char *path, const char *name, unsigned mode,
                         const git_oid *oid, const void *data, size_t size, struct kiln_err *err)
{
	struct tarball *t = (struct tarball *)w;
	char full[KILN_LIMIT_PATH + 256], hex[GIT_OID_HEXSZ + 1];
	int n = snprintf(full, sizeof(full), "%s%s", t->prefix, path);

	(void)name;
	if (n < 0 || (size_t)n >= sizeof(full))
		return kiln_err_set(err, KILN_ELIMIT, "path longer than %zu bytes", sizeof(full));
	git_oid_tostr(hex, sizeof(hex), oid);
	return sources_tar_entry(&t->tar, full, mode, hex, data, size, err);
}

static kiln_rc tar_leave(struct walk *w, struct kiln_err *err)
{
	(void)w;
	(void)err;
	return KILN_OK;
}

/* The archive itself, into fd: global header, the prefix directory, the tree, the end. */
static kiln_rc tarball_write(struct tarball *t, git_tree *tree, const git_oid *tree_id,
                             const char *commit, int fd, struct kiln_err *err)
{
	struct pack_compress gz;
	char hex[GIT_OID_HEXSZ + 1], top[KILN_LIMIT_PATH];
	size_t plen = strlen(t->prefix);
	kiln_rc rc = pack_compress_parse("w6.gzdio", &gz, err);

	if (!rc)
		rc = pack_compfile_open(&gz, fd, &t->gz, err);
	if (!rc)
		rc = sources_tar_global(&t->tar, commit, err);
	/* A prefix ending in '/' is a directory of its own, written first (with the tree's
	 * id, as git does). */
	if (!rc && plen > 1 && t->prefix[plen - 1] == '/' && plen < sizeof(top)) {
		memcpy(top, t->prefix, plen - 1);
		top[plen - 1] = '\0';
		git_oid_tostr(hex, sizeof(hex), tree_id);
		rc = sources_tar_entry(&t->tar, top, 040000, hex, NULL, 0, err);
	}
	if (!rc)
		rc = walk_tree(&t->w, tree, "", 0, err);
	if (!rc)
		rc = sources_tar_finish(&t->tar, err);
	if (!rc)
		rc = pack_compfile_finish(t->gz, err);
	pack_compfile_free(t->gz);
	t->gz = NULL;
	return rc;
}

kiln_rc sources_git_tarball(struct sources *s, const char *url, const char *commit,
                            const char *prefix, const char *out_path, struct kiln_err *err)
{
	struct tarball t = {.w = {.entry = tar_entry, .leave = tar_leave}, .prefix = prefix};
	struct util_atomic_file f = {.fd = -1};
	struct mirror m;
	git_tree *tree = NULL;
	git_oid tree_id;
	int64_t when = 0;
	kiln_rc rc;

	t.sink.write = gz_write;
	rc = mirror_with_commit(s, url, commit, &m, err);
	if (rc)
		return rc;
	t.w.repo = m.repo;
	rc = commit_tree(&m, commit, &tree, &when, &tree_id, err);
	sources_tar_init(&t.tar, &t.sink, when < 0 ? 0 : (uint64_t)when);
	if (!rc)
		rc = util_atomic_open(&f, out_path, 0644, err);
	if (!rc)
		rc = tarball_write(&t, tree, &tree_id, commit, f.fd, err);
	if (!rc)
		rc = util_atomic_commit(&f, err);
	util_atomic_abort(&f);
	if (rc)
		kiln_err_wrap(err, "cannot make '%s' from %s of '%s'", out_path, commit, m.shown);
	git_tree_free(tree);
	mirror_close(&m);
	return rc;
}
