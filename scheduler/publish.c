/*
 * publish.c - publishing: the signed packages of a succeeded job (reproducible, when it
 * asked for reruns) go into the repository it names; publisher threads lay each
 * repository out (ARCH/Packages/L/FILE, SRPMS/FILE, v6 packages in NAME-v6) and write its
 * metadata (repo/repodata.c), key and .repo file; the repositories are served read-only at
 * /repos/ with Range and ETag, and described at /api/v1/repos.
 *
 * The store is the truth (repo_packages); a repository directory is made from it, so a
 * publish after a crash, a removal or a regenerate gives the same tree. Publishes of one
 * repository are serialised (a busy flag), different repositories run on different
 * threads, and a burst of jobs ending while a repository is being published makes one
 * more publish of it, not one per job. With several schedulers on one store, each
 * repository is laid out by the one holding its duty (scheduler_publish_duties); the
 * others announce what they added to it.
 */
#include "util/util.h"

#include <dirent.h>
#include <fcntl.h>
#include <poll.h>
#include <sys/stat.h>
#include <sys/utsname.h>
#include <unistd.h>

#include "macro/macro.h"
#include "pack/pack.h"
#include "scheduler/http_int.h"

#define PUB_THREADS 2

struct pub_repo {
	char name[140]; /* configured name, or name + "-v6" */
	const char *path;
	bool v6;
	bool dirty, busy;
	bool owned; /* this scheduler holds its "publish:NAME" duty (scheduler_publish_duties) */
};

struct scheduler_publisher {
	pthread_mutex_t lock;
	pthread_cond_t cond;
	struct pub_repo *repos; /* owned: 2 per configured repository */
	size_t n;
	pthread_t th[PUB_THREADS];
	size_t nth;
	bool stop;
	int64_t publishes; /* done, for the metrics and tests */
};

/* ---------------------------------------------------------------------------------------- */
/* Repositories by name */

static struct pub_repo *repo_find(struct scheduler_publisher *p, const char *name)
{
	size_t i;

	for (i = 0; p && i < p->n; i++)
		if (!strcmp(p->repos[i].name, name))
			return &p->repos[i];
	return NULL;
}

/* The directory of a repository: its configured path (+ "-v6"), or DATA/repos/NAME. */
static void repo_dir(const struct scheduler *s, const struct pub_repo *r, struct kiln_buf *out)
{
	kiln_buf_reset(out);
	if (r->path && *r->path)
		kiln_buf_addf(out, "%s%s", r->path, r->v6 ? "-v6" : "");
	else
		kiln_buf_addf(out, "%s/repos/%s", s->cfg->data_dir, r->name);
}

/* Mark repository name for a publish here; when another scheduler holds its duty, tell
 * that one (announce) too. */
static void mark_dirty(struct scheduler *s, const char *name)
{
	struct scheduler_publisher *p = s->publisher;
	struct kiln_err err = KILN_ERR_INIT;
	struct pub_repo *r;
	bool owned = true;

	if (!p)
		return;
	pthread_mutex_lock(&p->lock);
	r = repo_find(p, name);
	if (r) {
		owned = r->owned;
		r->dirty = true;
		pthread_cond_broadcast(&p->cond);
	}
	pthread_mutex_unlock(&p->lock);
	if (!owned && s->store->ops->announce(s->store, name, &err))
		kiln_log_err(KILN_LOG_WARN, &err);
}

/* Which repositories this scheduler publishes: those whose duty it holds (one scheduler
 * at a time among those sharing the store). One taken over is published at once: the
 * scheduler that held it may have died with packages waiting or a publish half done. */
void scheduler_publish_duties(struct scheduler *s)
{
	struct scheduler_publisher *p = s->publisher;
	char duty[160];
	size_t i;

	for (i = 0; p && i < p->n; i++) {
		struct kiln_err err = KILN_ERR_INIT;
		bool held = false;

		snprintf(duty, sizeof(duty), "publish:%s", p->repos[i].name);
		if (s->store->ops->duty(s->store, duty, &held, &err))
			kiln_log_err(KILN_LOG_DEBUG, &err);
		pthread_mutex_lock(&p->lock);
		if (held && !p->repos[i].owned) {
			kiln_log(KILN_LOG_INFO, "repository %s is published by this scheduler",
			         p->repos[i].name);
			p->repos[i].dirty = true;
			pthread_cond_broadcast(&p->cond);
		} else if (!held && p->repos[i].owned) {
			kiln_log(KILN_LOG_WARN,
			         "repository %s: this scheduler publishes it no more",
			         p->repos[i].name);
		}
		p->repos[i].owned = held;
		pthread_mutex_unlock(&p->lock);
	}
}

/* Metrics: each repository's duty, 1 where this scheduler holds it. */
void scheduler_publish_duties_text(struct scheduler *s, struct kiln_buf *o)
{
	struct scheduler_publisher *p = s->publisher;
	size_t i;

	if (!p)
		return;
	pthread_mutex_lock(&p->lock);
	for (i = 0; i < p->n; i++)
		kiln_buf_addf(o, "kiln_duties_held{duty=\"publish:%s\"} %d\n", p->repos[i].name,
		              p->repos[i].owned ? 1 : 0);
	pthread_mutex_unlock(&p->lock);
}

/* Another scheduler asked for a publish of repository name ("": of every one). */
void scheduler_publish_heard(struct scheduler *s, const char *name)
{
	struct scheduler_publisher *p = s->publisher;
	size_t i;

	if (!p)
		return;
	pthread_mutex_lock(&p->lock);
	for (i = 0; i < p->n; i++)
		if (!*name || !strcmp(p->repos[i].name, name))
			p->repos[i].dirty = true;
	pthread_cond_broadcast(&p->cond);
	pthread_mutex_unlock(&p->lock);
}

/* ---------------------------------------------------------------------------------------- */
/* Laying a repository out */

static const char *host_arch(void)
{
	static __thread struct utsname u;

	return uname(&u) == 0 ? u.machine : "x86_64";
}

static bool arch_listed(const char *const *v, size_t n, const char *a)
{
	size_t i;

	for (i = 0; i < n; i++)
		if (!strcmp(v[i], a))
			return true;
	return false;
}

/* Where a package goes below the repository directory. */
static void pkg_rel(const struct scheduler_repo_pkg *p, const char *arch, struct kiln_buf *out)
{
	char c = p->file[0];

	kiln_buf_reset(out);
	if (!strcmp(p->arch, "src"))
		kiln_buf_addf(out, "SRPMS/%s", p->file);
	else
		kiln_buf_addf(out, "%s/Packages/%c/%s", arch,
		              c >= 'A' && c <= 'Z' ? (char)(c - 'A' + 'a') : c, p->file);
}

/* Make dir/rel the blob sha256 (a hard link, else a copy), its mtime the build time. */
static kiln_rc place(struct scheduler *s, const char *dir, const char *rel,
                     const struct scheduler_repo_pkg *p, struct kiln_err *err)
{
	struct kiln_buf dst = KILN_BUF_INIT(KILN_LIMIT_PATH), tmp = KILN_BUF_INIT(KILN_LIMIT_PATH);
	struct kiln_buf blob = KILN_BUF_INIT(KILN_LIMIT_PATH),
	                parent = KILN_BUF_INIT(KILN_LIMIT_PATH);
	struct timespec ts[2];
	struct stat a, b;
	kiln_rc rc;

	scheduler_blob_path(s, p->sha256, &blob);
	kiln_buf_addf(&dst, "%s/%s", dir, rel);
	kiln_buf_addf(&tmp, "%s/%s.tmp", dir, rel);
	if ((rc = kiln_buf_finish(&blob, err)) || (rc = kiln_buf_finish(&dst, err)) ||
	    (rc = kiln_buf_finish(&tmp, err)))
		goto out;
	if (stat(blob.ptr, &b) < 0) {
		rc = kiln_err_sys(err, KILN_ENOTFOUND, "package %s: blob %s", p->file, p->sha256);
		goto out;
	}
	/* Already there: the same inode as the blob, or a copy of its size and time. */
	if (lstat(dst.ptr, &a) == 0 && S_ISREG(a.st_mode) &&
	    ((a.st_ino == b.st_ino && a.st_dev == b.st_dev) ||
	     (a.st_size == b.st_size && a.st_mtime == p->buildtime)))
		goto out;
	util_path_dirname(dst.ptr, &parent);
	if ((rc = kiln_buf_finish(&parent, err)) || (rc = util_mkdir_p(parent.ptr, 0755, err)))
		goto out;
	(void)unlink(tmp.ptr);
	if (link(blob.ptr, tmp.ptr) < 0 && (rc = util_copy_file(blob.ptr, tmp.ptr, 0644, err)))
		goto out;
	ts[0].tv_sec = ts[1].tv_sec = (time_t)p->buildtime;
	ts[0].tv_nsec = ts[1].tv_nsec = 0;
	(void)utimensat(AT_FDCWD, tmp.ptr, ts, 0);
	if (rename(tmp.ptr, dst.ptr) < 0) {
		rc = kiln_err_sys(err, KILN_EIO, "cannot place %s", dst.ptr);
		(void)unlink(tmp.ptr);
	}
out:
	kiln_buf_release(&parent);
	kiln_buf_release(&blob);
	kiln_buf_release(&tmp);
	kiln_buf_release(&dst);
	return rc;
}

/* Files no longer published are retired, not removed at once: a client may hold metadata
 * from before the swap (dnf caches it for hours) and still download what it names. This
 * file in the repository directory (a dot file: never served, never indexed) records since
 * when each was retired, as "SINCE_MS REL" lines; past [publish] retire_after it goes. */
#define RETIRED_FILE ".kiln-retired"
#define RETIRED_MAX (16 * KILN_MIB)

struct unwanted {
	const char **rel; /* arena strings, below the repository directory */
	size_t n, cap;
};

static int strp_cmp(const void *a, const void *b)
{
	return strcmp(*(const char *const *)a, *(const char *const *)b);
}

/* Every *.rpm below dir/sub that want (sorted) does not list, into u. */
static void find_unwanted(const char *dir, const char *sub, const char *const *want, size_t nwant,
                          int depth, struct kiln_arena *a, struct unwanted *u)
{
	struct kiln_buf p = KILN_BUF_INIT(KILN_LIMIT_PATH), rel = KILN_BUF_INIT(KILN_LIMIT_PATH);
	struct dirent *de;
	DIR *d;

	kiln_buf_addf(&p, "%s/%s", dir, sub);
	d = p.err || depth > 4 ? NULL : opendir(p.ptr);
	while (d && (de = readdir(d))) {
		const char *r;
		struct stat st;

		if (de->d_name[0] == '.' || !strcmp(de->d_name, "repodata") ||
		    fstatat(dirfd(d), de->d_name, &st, AT_SYMLINK_NOFOLLOW) < 0)
			continue;
		kiln_buf_reset(&rel);
		kiln_buf_addf(&rel, "%s/%s", sub, de->d_name);
		r = rel.ptr;
		if (rel.err)
			continue;
		if (S_ISDIR(st.st_mode)) {
			find_unwanted(dir, rel.ptr, want, nwant, depth + 1, a, u);
		} else if (kiln_str_ends(kiln_str_from(de->d_name), ".rpm") &&
		           !bsearch(&r, want, nwant, sizeof(*want), strp_cmp)) {
			const char *keep = kiln_arena_strdup(a, rel.ptr);

			/* Out of memory: the arena's sticky error ends the publish. */
			if (!keep || !kiln_arena_strv_add(a, &u->rel, &u->n, &u->cap, keep))
				break;
		}
	}
	if (d)
		closedir(d);
	kiln_buf_release(&rel);
	kiln_buf_release(&p);
}

/* Since when rel has been retired according to the record text (-1: not recorded). */
static int64_t retired_since(const struct kiln_buf *rec, const char *rel)
{
	size_t rl = strlen(rel);
	const char *line = rec->ptr, *end = rec->ptr + rec->len;

	while (line < end) {
		const char *nl = memchr(line, '\n', (size_t)(end - line));
		const char *sp = memchr(line, ' ', (size_t)((nl ? nl : end) - line));
		int64_t since;

		if (sp && (size_t)((nl ? nl : end) - sp - 1) == rl && !memcmp(sp + 1, rel, rl) &&
		    !util_parse_i64(line, (size_t)(sp - line), 10, 0, INT64_MAX, &since, NULL))
			return since;
		line = nl ? nl + 1 : end;
	}
	return -1;
}

/* Retire the files of u: record the new ones, remove those retired for longer than
 * retire_after, rewrite the record (kept only for files still waiting). */
static kiln_rc retire_files(struct scheduler *s, const char *dir, const struct unwanted *u,
                            struct kiln_err *err)
{
	struct kiln_buf path = KILN_BUF_INIT(KILN_LIMIT_PATH), rec = KILN_BUF_INIT(RETIRED_MAX);
	struct kiln_buf out = KILN_BUF_INIT(RETIRED_MAX), f = KILN_BUF_INIT(KILN_LIMIT_PATH);
	int64_t now = util_clock_wall_ms(), after = s->cfg->publish_retire_ms;
	kiln_rc rc;
	size_t i;

	kiln_buf_addf(&path, "%s/" RETIRED_FILE, dir);
	if ((rc = kiln_buf_finish(&path, err)))
		goto out;
	if (util_read_file(path.ptr, RETIRED_MAX, &rec, NULL))
		kiln_buf_reset(&rec); /* none yet, or unreadable: every file starts waiting now */
	for (i = 0; i < u->n; i++) {
		int64_t since = retired_since(&rec, u->rel[i]);

		if (since < 0 || since > now)
			since = now;
		if (now - since >= after) {
			kiln_buf_reset(&f);
			kiln_buf_addf(&f, "%s/%s", dir, u->rel[i]);
			if (!f.err && unlink(f.ptr) < 0 && errno != ENOENT)
				kiln_log(KILN_LOG_WARN, "cannot remove retired %s: %s", f.ptr,
				         strerror(errno));
		} else {
			kiln_buf_addf(&out, "%" PRId64 " %s\n", since, u->rel[i]);
		}
	}
	if ((rc = kiln_buf_finish(&out, err)))
		goto out;
	if (out.len)
		rc = util_write_atomic(path.ptr, out.ptr, out.len, 0644, err);
	else if (unlink(path.ptr) < 0 && errno != ENOENT)
		rc = kiln_err_sys(err, KILN_EIO, "cannot remove %s", path.ptr);
out:
	kiln_buf_release(&f);
	kiln_buf_release(&out);
	kiln_buf_release(&rec);
	kiln_buf_release(&path);
	return rc;
}

/* The wanted packages below dir/sub/ as paths below dir/sub (want is sorted, so they are
 * one run of it, and stay sorted without the prefix). */
static const char **want_below(const char *const *want, size_t nwant, const char *sub,
                               struct kiln_arena *a, size_t *n)
{
	size_t sl = strlen(sub), i;
	const char **v = kiln_arena_array(a, nwant + 1, sizeof(*v));

	*n = 0;
	for (i = 0; v && i < nwant; i++) {
		if (!strncmp(want[i], sub, sl) && want[i][sl] == '/')
			v[(*n)++] = want[i] + sl + 1;
	}
	return v;
}

/* The armored public keys: the repository key first, then the farm's other keys (packages
 * may be signed by any of them). */
static kiln_rc keys_text(struct scheduler *s, const struct sign_key *repo_key, struct kiln_buf *out,
                         struct kiln_err *err)
{
	kiln_rc rc = KILN_OK;
	size_t i;

	if (repo_key)
		rc = sign_key_export(repo_key, SIGN_EXPORT_ARMOR, out, err);
	for (i = 0; !rc && i < s->cfg->nkeys; i++)
		if (s->keys[i] && s->keys[i] != repo_key)
			rc = sign_key_export(s->keys[i], SIGN_EXPORT_ARMOR, out, err);
	return rc;
}

static kiln_rc write_text(const char *dir, const char *name, const struct kiln_buf *b,
                          struct kiln_err *err)
{
	struct kiln_buf p = KILN_BUF_INIT(KILN_LIMIT_PATH);
	kiln_rc rc;

	kiln_buf_addf(&p, "%s/%s", dir, name);
	rc = kiln_buf_finish(&p, err);
	if (!rc)
		rc = util_write_atomic(p.ptr, b->ptr, b->len, 0644, err);
	kiln_buf_release(&p);
	return rc;
}

/* [projects] The signing key of the project owning repository name, when it is not default,
 * appended to out: its packages are signed with it. */
static kiln_rc project_key_text(struct scheduler *s, const char *name, struct kiln_buf *out,
                                struct kiln_err *err)
{
	struct kiln_arena a = KILN_ARENA_INIT(KILN_MIB);
	struct scheduler_project p = {0};
	struct sign_key *key = NULL;
	int64_t id = scheduler_repo_project(s, &a, name, err);
	kiln_rc rc = id < 0 ? err->code : KILN_OK;

	if (!rc && id != SCHED_PROJECT_DEFAULT)
		rc = s->store->ops->project_get(s->store, id, NULL, &a, &p, err);
	if (!rc && id != SCHED_PROJECT_DEFAULT)
		rc = scheduler_project_key_load(s, p.name, &key, err);
	if (!rc && key)
		rc = sign_key_export(key, SIGN_EXPORT_ARMOR, out, err);
	if (rc == KILN_ENOTFOUND) {
		kiln_err_clear(err);
		rc = KILN_OK;
	}
	sign_key_free(key);
	kiln_arena_release(&a);
	return rc;
}

/* RPM-GPG-KEY-NAME and NAME.repo. */
static kiln_rc write_client_files(struct scheduler *s, const struct pub_repo *r, const char *dir,
                                  const struct sign_key *key, struct kiln_err *err)
{
	struct kiln_buf keys = KILN_BUF_INIT(KILN_LIMIT_PGP_FILE), repo = KILN_BUF_INIT(KILN_MIB);
	struct kiln_buf name = KILN_BUF_INIT(256);
	const char *base = s->cfg->publish_base_url;
	kiln_rc rc;

	if ((rc = keys_text(s, key, &keys, err)) || (rc = project_key_text(s, r->name, &keys, err)))
		goto out;
	kiln_buf_addf(&name, "RPM-GPG-KEY-%s", r->name);
	if (base && *base)
		kiln_buf_addf(&repo, "[kiln-%s]\nname=%s (kiln)\nbaseurl=%s/repos/%s/%s\n", r->name,
		              r->name, base, r->name, "$basearch/");
	else
		kiln_buf_addf(&repo,
		              "[kiln-%s]\nname=%s (kiln)\nbaseurl=http://%s:%u/repos/%s/%s\n",
		              r->name, r->name, s->public_host, s->port, r->name, "$basearch/");
	kiln_buf_addf(&repo, "enabled=1\ngpgcheck=%d\nrepo_gpgcheck=%d\n", key ? 1 : 0,
	              key ? 1 : 0);
	if (key && base && *base)
		kiln_buf_addf(&repo, "gpgkey=%s/repos/%s/%s\n", base, r->name, name.ptr);
	else if (key)
		kiln_buf_addf(&repo, "gpgkey=http://%s:%u/repos/%s/%s\n", s->public_host, s->port,
		              r->name, name.ptr);
	if ((rc = kiln_buf_finish(&name, err)) || (rc = kiln_buf_finish(&repo, err)) ||
	    (rc = kiln_buf_finish(&keys, err)))
		goto out;
	if (key && (rc = write_text(dir, name.ptr, &keys, err)))
		goto out;
	kiln_buf_reset(&name);
	kiln_buf_addf(&name, "%s.repo", r->name);
	rc = kiln_buf_finish(&name, err);
	if (!rc)
		rc = write_text(dir, name.ptr, &repo, err);
out:
	kiln_buf_release(&name);
	kiln_buf_release(&repo);
	kiln_buf_release(&keys);
	return rc;
}

/* The arch directories present in dir (a Packages or repodata entry inside). */
static size_t arch_dirs(const char *dir, struct kiln_arena *a, const char **v, size_t max)
{
	struct kiln_buf p = KILN_BUF_INIT(KILN_LIMIT_PATH);
	struct dirent *de;
	size_t n = 0;
	DIR *d = opendir(dir);

	while (d && n < max && (de = readdir(d))) {
		if (de->d_name[0] == '.' || !strcmp(de->d_name, "SRPMS"))
			continue;
		kiln_buf_reset(&p);
		kiln_buf_addf(&p, "%s/%s/Packages", dir, de->d_name);
		if (!p.err && util_is_dir(p.ptr))
			v[n++] = kiln_arena_strdup(a, de->d_name);
	}
	if (d)
		closedir(d);
	kiln_buf_release(&p);
	return n;
}

#define PUB_MAX_ARCHES 32

/* The key that signs repository metadata: [publish] key, else the default key. */
static const char *repo_key_name(const struct scheduler *s)
{
	const char *k = s->cfg->publish_key;

	return k && *k ? k : s->cfg->default_key;
}

/* Lay out and index one repository from the store. */
static kiln_rc publish_repo(struct scheduler *s, const struct pub_repo *r, struct kiln_err *err)
{
	struct kiln_arena a = KILN_ARENA_INIT(KILN_LIMIT_ARENA);
	struct kiln_buf dir = KILN_BUF_INIT(KILN_LIMIT_PATH), rel = KILN_BUF_INIT(KILN_LIMIT_PATH);
	struct kiln_buf sub = KILN_BUF_INIT(KILN_LIMIT_PATH);
	struct scheduler_repo_pkg *v = NULL;
	struct repo_metadata_opts o;
	struct repo_metadata_result res;
	const struct sign_key *key = NULL;
	const char *arches[PUB_MAX_ARCHES + 1], **want;
	struct unwanted unw = {NULL, 0, 0};
	size_t n = 0, narch = 0, nwant = 0, i, k;
	int64_t rev = 0, now;
	bool noarch = false;
	kiln_rc rc;

	repo_dir(s, r, &dir);
	if ((rc = kiln_buf_finish(&dir, err)) || (rc = util_mkdir_p(dir.ptr, 0755, err)) ||
	    (rc = s->store->ops->repo_pkgs(s->store, r->name, &a, &v, &n, err)) ||
	    (rc = scheduler_key_find(s, repo_key_name(s), &key, err)))
		goto out;
	narch = arch_dirs(dir.ptr, &a, arches, PUB_MAX_ARCHES);
	for (i = 0; i < n; i++) {
		if (!strcmp(v[i].arch, "noarch"))
			noarch = true;
		else if (strcmp(v[i].arch, "src") && !arch_listed(arches, narch, v[i].arch) &&
		         narch < PUB_MAX_ARCHES)
			arches[narch++] = v[i].arch;
	}
	/* noarch packages go into every arch directory; with none yet, into the host's. */
	if (noarch && !narch)
		arches[narch++] = host_arch();
	want = kiln_arena_array(&a, n * narch + 1, sizeof(*want));
	if (!want) {
		rc = kiln_err_set(err, KILN_ENOMEM, "out of memory");
		goto out;
	}
	for (i = 0; !rc && i < n; i++) {
		for (k = 0; !rc && k < narch; k++) {
			bool src = !strcmp(v[i].arch, "src");

			if (!src && strcmp(v[i].arch, "noarch") && strcmp(v[i].arch, arches[k]))
				continue;
			pkg_rel(&v[i], arches[k], &rel);
			if (!(rc = kiln_buf_finish(&rel, err)))
				rc = place(s, dir.ptr, rel.ptr, &v[i], err);
			if (!rc)
				want[nwant++] = kiln_arena_strdup(&a, rel.ptr);
			if (src)
				break;
		}
		if (!narch && !strcmp(v[i].arch, "src")) {
			pkg_rel(&v[i], "", &rel);
			if (!(rc = kiln_buf_finish(&rel, err)) &&
			    !(rc = place(s, dir.ptr, rel.ptr, &v[i], err)))
				want[nwant++] = kiln_arena_strdup(&a, rel.ptr);
		}
	}
	if (rc || (rc = kiln_arena_finish(&a, err)))
		goto out;
	qsort(want, nwant, sizeof(*want), strp_cmp);
	repo_metadata_opts_init(&o);
	o.zstd = s->cfg->publish_zstd;
	o.keep = (unsigned)s->cfg->publish_generations;
	o.workers = 2;
	o.key = key;
	for (k = 0; !rc && k <= narch; k++) {
		const char *d = k < narch ? arches[k] : "SRPMS";

		kiln_buf_reset(&sub);
		kiln_buf_addf(&sub, "%s/%s", dir.ptr, d);
		if ((rc = kiln_buf_finish(&sub, err)))
			break;
		if (k == narch && !util_is_dir(sub.ptr))
			break;
		/* Only what is published now: files on their way out stay on disk a while
		 * (retire_files) but leave the metadata at once. */
		o.only = want_below(want, nwant, d, &a, &o.nonly);
		if (!o.only)
			rc = kiln_err_set(err, KILN_ENOMEM, "out of memory");
		if (!rc)
			rc = util_mkdir_p(sub.ptr, 0755, err);
		if (!rc)
			rc = repo_metadata_write(sub.ptr, &o, &res, err);
		if (!rc && res.revision > rev)
			rev = res.revision;
	}
	/* Only once every arch's new metadata is in: nothing it names is ever missing. */
	for (k = 0; !rc && k <= narch; k++) {
		const char *d = k < narch ? arches[k] : "SRPMS";

		kiln_buf_reset(&sub);
		kiln_buf_addf(&sub, "%s%s", d, k < narch ? "/Packages" : "");
		if (!sub.err)
			find_unwanted(dir.ptr, sub.ptr, want, nwant, 0, &a, &unw);
	}
	if (!rc)
		rc = kiln_arena_finish(&a, err);
	if (!rc)
		rc = retire_files(s, dir.ptr, &unw, err);
	if (!rc)
		rc = write_client_files(s, r, dir.ptr, key, err);
	now = util_clock_wall_ms();
	if (!rc)
		rc = s->store->ops->repo_state_put(s->store, r->name, rev, now, err);
	if (!rc)
		scheduler_webhook_publish(s, r->name, rev, now);
out:
	if (rc)
		kiln_err_wrap(err, "repository %s", r->name);
	kiln_buf_release(&sub);
	kiln_buf_release(&rel);
	kiln_buf_release(&dir);
	kiln_arena_release(&a);
	return rc;
}

static void *publisher_thread(void *arg)
{
	struct scheduler *s = arg;
	struct scheduler_publisher *p = s->publisher;

	pthread_mutex_lock(&p->lock);
	while (!p->stop) {
		struct pub_repo *r = NULL;
		struct kiln_err err = KILN_ERR_INIT;
		int64_t t0;
		size_t i;

		for (i = 0; !r && i < p->n; i++)
			if (p->repos[i].dirty && p->repos[i].owned && !p->repos[i].busy)
				r = &p->repos[i];
		if (!r) {
			pthread_cond_wait(&p->cond, &p->lock);
			continue;
		}
		/* Whatever changes from here on makes it dirty again: one more run. */
		r->dirty = false;
		r->busy = true;
		pthread_mutex_unlock(&p->lock);
		t0 = util_clock_mono_ns();
		if (publish_repo(s, r, &err)) {
			kiln_log_err(KILN_LOG_WARN, &err);
			pthread_mutex_lock(&s->stats_lock);
			s->publish_failures++;
			pthread_mutex_unlock(&s->stats_lock);
		} else {
			kiln_log(KILN_LOG_INFO, "published repository %s", r->name);
			scheduler_hist_add(s, &s->publish_hist,
			                   (double)(util_clock_mono_ns() - t0) / 1e9);
		}
		pthread_mutex_lock(&p->lock);
		r->busy = false;
		p->publishes++;
		pthread_cond_broadcast(&p->cond);
	}
	pthread_mutex_unlock(&p->lock);
	return NULL;
}

kiln_rc scheduler_publish_start(struct scheduler *s, struct kiln_err *err)
{
	struct scheduler_publisher *p;
	size_t i;

	if (!s->cfg->nrepos)
		return KILN_OK;
	p = kiln_calloc(1, sizeof(*p));
	if (!p || !(p->repos = kiln_calloc(s->cfg->nrepos * 2, sizeof(*p->repos)))) {
		free(p);
		return kiln_err_set(err, KILN_ENOMEM, "out of memory");
	}
	pthread_mutex_init(&p->lock, NULL);
	pthread_cond_init(&p->cond, NULL);
	for (i = 0; i < s->cfg->nrepos; i++) {
		struct pub_repo *r = &p->repos[p->n];

		snprintf(r->name, sizeof(r->name), "%s", s->cfg->repos[i].name);
		r->path = s->cfg->repos[i].path;
		r[1] = r[0];
		snprintf(r[1].name, sizeof(r[1].name), "%s-v6", s->cfg->repos[i].name);
		r[1].v6 = true;
		/* Made again at start: the store may hold what a crash left unpublished. */
		r[0].dirty = r[1].dirty = true;
		p->n += 2;
	}
	s->publisher = p;
	scheduler_publish_duties(s);
	for (i = 0; i < PUB_THREADS; i++)
		if (!pthread_create(&p->th[p->nth], NULL, publisher_thread, s))
			p->nth++;
	if (!p->nth) {
		scheduler_publish_stop(s);
		return kiln_err_set(err, KILN_EIO, "cannot start the publisher");
	}
	return KILN_OK;
}

void scheduler_publish_stop(struct scheduler *s)
{
	struct scheduler_publisher *p = s->publisher;
	size_t i;

	if (!p)
		return;
	pthread_mutex_lock(&p->lock);
	p->stop = true;
	pthread_cond_broadcast(&p->cond);
	pthread_mutex_unlock(&p->lock);
	for (i = 0; i < p->nth; i++)
		pthread_join(p->th[i], NULL);
	pthread_cond_destroy(&p->cond);
	pthread_mutex_destroy(&p->lock);
	free(p->repos);
	free(p);
	s->publisher = NULL;
}

/* ---------------------------------------------------------------------------------------- */
/* Policy: what a job publishes, and when */

struct req_repo {
	const char *repository;
};

static const struct api_field req_repo_fields[] = {
    {"repository", API_F_STR, false, offsetof(struct req_repo, repository), 0, 128, NULL, 0, 0},
    API_FIELD_END,
};

/* A package of the job as the repository lists it. */
static kiln_rc pkg_describe(struct scheduler *s, const struct scheduler_job *j,
                            const struct scheduler_artifact *art, const char *repo,
                            struct kiln_arena *a, struct scheduler_repo_pkg *out, bool *v6,
                            struct kiln_err *err)
{
	struct kiln_buf path = KILN_BUF_INIT(KILN_LIMIT_PATH);
	struct pack_package p = {0};
	const char *sha = *art->signed_sha256 ? art->signed_sha256 : art->sha256;
	uint64_t epoch = 0, bt = 0;
	kiln_rc rc;

	scheduler_blob_path(s, sha, &path);
	if ((rc = kiln_buf_finish(&path, err)) || (rc = pack_package_open(&p, path.ptr, NULL, err)))
		goto out;
	memset(out, 0, sizeof(*out));
	*v6 = p.format >= 6;
	out->repo = kiln_arena_printf(a, "%s%s", repo, *v6 ? "-v6" : "");
	out->file = kiln_arena_strdup(a, art->name);
	out->name = kiln_arena_strdup(a, pack_header_get_string(&p.hdr, RPMTAG_NAME));
	out->version = kiln_arena_strdup(a, pack_header_get_string(&p.hdr, RPMTAG_VERSION));
	out->release = kiln_arena_strdup(a, pack_header_get_string(&p.hdr, RPMTAG_RELEASE));
	out->arch =
	    p.source ? "src" : kiln_arena_strdup(a, pack_header_get_string(&p.hdr, RPMTAG_ARCH));
	out->epoch = pack_header_get_number(&p.hdr, RPMTAG_EPOCH, &epoch) ? (int64_t)epoch : -1;
	(void)pack_header_get_number(&p.hdr, RPMTAG_BUILDTIME, &bt);
	out->buildtime = (int64_t)bt;
	memcpy(out->sha256, sha, 65);
	out->size = *art->signed_sha256 ? art->signed_size : art->size;
	out->job_id = j->id;
	out->published_ms = util_clock_wall_ms();
	if (!out->repo || !out->file || !out->name || !out->version || !out->release || !out->arch)
		rc = kiln_err_set(err, KILN_EFORMAT, "%s: no name, version, release or arch",
		                  art->name);
out:
	if (rc)
		kiln_err_wrap(err, "package %s", art->name);
	pack_package_release(&p);
	kiln_buf_release(&path);
	return rc;
}

/* rpm's ordering of two versions of a package: epoch, version, release. */
static int evr_cmp(const struct scheduler_repo_pkg *x, const struct scheduler_repo_pkg *y)
{
	int64_t ex = x->epoch < 0 ? 0 : x->epoch, ey = y->epoch < 0 ? 0 : y->epoch;
	int c;

	if (ex != ey)
		return ex < ey ? -1 : 1;
	if ((c = macro_vercmp(x->version, y->version)))
		return c;
	if ((c = macro_vercmp(x->release, y->release)))
		return c;
	return x->published_ms < y->published_ms ? -1 : x->published_ms > y->published_ms;
}

/* Keep the newest keep versions of each name and arch in repo. */
static kiln_rc retain(struct scheduler *s, const char *repo, struct kiln_err *err)
{
	struct kiln_arena a = KILN_ARENA_INIT(KILN_LIMIT_ARENA);
	struct scheduler_repo_pkg *v = NULL;
	int64_t keep = s->cfg->publish_keep_versions;
	size_t n = 0, i, j;
	kiln_rc rc;

	if (keep <= 0 || (rc = s->store->ops->repo_pkgs(s->store, repo, &a, &v, &n, err)))
		goto out;
	for (i = 0; !rc && i < n; i++) {
		int64_t newer = 0;

		for (j = 0; j < n; j++)
			if (j != i && !strcmp(v[j].name, v[i].name) &&
			    !strcmp(v[j].arch, v[i].arch) && evr_cmp(&v[j], &v[i]) > 0)
				newer++;
		if (newer >= keep) {
			kiln_log(KILN_LOG_INFO, "repository %s: %s retired (%lld newer kept)", repo,
			         v[i].file, (long long)keep);
			rc = s->store->ops->repo_pkg_delete(s->store, repo, v[i].file, err);
		}
	}
out:
	kiln_arena_release(&a);
	return keep <= 0 ? KILN_OK : rc;
}

/* The job's packages into repo's records (not yet its directory): touched[1] for v6. */
static kiln_rc publish_put(struct scheduler *s, const struct scheduler_job *j, const char *repo,
                           struct kiln_arena *a, bool touched[2], size_t *count,
                           struct kiln_err *err)
{
	struct scheduler_artifact *arts = NULL;
	size_t n = 0, i;
	kiln_rc rc;

	rc = s->store->ops->artifacts_list(s->store, j->id, j->attempts, a, &arts, &n, err);
	for (i = 0; !rc && i < n; i++) {
		struct scheduler_repo_pkg p;
		bool v6 = false;

		if ((strcmp(arts[i].kind, "binary") && strcmp(arts[i].kind, "source")) ||
		    !kiln_str_ends(kiln_str_from(arts[i].name), ".rpm"))
			continue;
		rc = pkg_describe(s, j, &arts[i], repo, a, &p, &v6, err);
		if (!rc)
			rc = s->store->ops->repo_pkg_put(s->store, &p, err);
		touched[v6] = true;
		(*count)++;
	}
	return rc;
}

/* Retention, then one publish of each repository touched. */
static kiln_rc publish_finish(struct scheduler *s, const char *repo, const bool touched[2],
                              struct kiln_err *err)
{
	char v6name[140];
	kiln_rc rc = KILN_OK;
	size_t i;

	snprintf(v6name, sizeof(v6name), "%s-v6", repo);
	for (i = 0; !rc && i < 2; i++)
		if (touched[i])
			rc = retain(s, i ? v6name : repo, err);
	for (i = 0; !rc && i < 2; i++)
		if (touched[i])
			mark_dirty(s, i ? v6name : repo);
	return rc;
}

static kiln_rc publish_job(struct scheduler *s, const struct scheduler_job *j, const char *repo,
                           struct kiln_arena *a, struct kiln_err *err)
{
	bool touched[2] = {false, false};
	size_t count = 0;
	kiln_rc rc;

	rc = publish_put(s, j, repo, a, touched, &count, err);
	if (!rc)
		rc = publish_finish(s, repo, touched, err);
	if (rc)
		return rc;
	kiln_log(KILN_LOG_INFO, "job %lld: %zu packages published to %s", (long long)j->id, count,
	         repo);
	return s->store->ops->repo_publish_mark(s->store, j->id, repo, "published", "",
	                                        util_clock_wall_ms(), err);
}

/* Keep the publishers off repository r[0] and its v6 sibling r[1] (either may be NULL)
 * while their records change (hold), or let them go: a held repository is busy, which a
 * publisher passes over, and one being published is waited for first. */
static void repos_hold(struct scheduler_publisher *p, struct pub_repo *r[2], bool hold)
{
	size_t i;

	pthread_mutex_lock(&p->lock);
	while (hold && ((r[0] && r[0]->busy) || (r[1] && r[1]->busy)))
		pthread_cond_wait(&p->cond, &p->lock);
	for (i = 0; i < 2; i++)
		if (r[i])
			r[i]->busy = hold;
	if (!hold)
		pthread_cond_broadcast(&p->cond);
	pthread_mutex_unlock(&p->lock);
}

kiln_rc scheduler_publish_jobs(struct scheduler *s, const int64_t *ids, size_t n, const char *repo,
                               struct kiln_err *err)
{
	struct kiln_arena a = KILN_ARENA_INIT(KILN_LIMIT_ARENA);
	bool touched[2] = {false, false};
	struct scheduler_job j = {0};
	struct pub_repo *held[2];
	char v6name[140];
	size_t i, count = 0;
	kiln_rc rc = KILN_OK;

	if (!repo_find(s->publisher, repo))
		return kiln_err_set(err, KILN_ENOTFOUND, "no repository '%s'", repo);
	snprintf(v6name, sizeof(v6name), "%s-v6", repo);
	held[0] = repo_find(s->publisher, repo);
	held[1] = repo_find(s->publisher, v6name);
	/* every package recorded while no publisher reads the records, then one publish: the
	 * repository's metadata goes from none of the batch to all of it in one swap */
	repos_hold(s->publisher, held, true);
	for (i = 0; !rc && i < n; i++) {
		rc = s->store->ops->job_get(s->store, ids[i], &a, &j, err);
		if (!rc)
			rc = publish_put(s, &j, repo, &a, touched, &count, err);
	}
	for (i = 0; !rc && i < n; i++)
		rc = s->store->ops->repo_publish_mark(s->store, ids[i], repo, "published", "",
		                                      util_clock_wall_ms(), err);
	if (!rc) /* retention too, and the mark: the publisher runs once they are let go */
		rc = publish_finish(s, repo, touched, err);
	repos_hold(s->publisher, held, false);
	if (!rc)
		kiln_log(KILN_LOG_INFO, "%zu jobs: %zu packages published to %s together", n, count,
		         repo);
	kiln_arena_release(&a);
	return rc;
}

/* publish_ended for job j (read by the caller), an original that ended. */
static kiln_rc publish_ended(struct scheduler *s, const struct scheduler_job *j,
                             struct kiln_arena *a, struct kiln_err *err)
{
	struct req_repo rr = {0};
	const char *why = NULL, *state, *msg;
	kiln_rc rc;

	if (j->state != SCHED_SUCCEEDED || j->rerun_of)
		return KILN_OK;
	rc = api_json_decode(j->request, strlen(j->request), req_repo_fields, 0, &rr, a, err);
	if (rc || !rr.repository || !*rr.repository)
		return rc;
	/* Decided once: a later rerun must not bring back what retention or a removal took. */
	rc = s->store->ops->repo_publish_get(s->store, j->id, a, &state, &msg, err);
	if (rc != KILN_ENOTFOUND)
		return rc;
	kiln_err_clear(err);
	if (!repo_find(s->publisher, rr.repository)) {
		why = "the repository is not configured any more";
	} else if (j->reruns > 0 && !strcmp(j->repro_verdict, "pending")) {
		return KILN_OK; /* published (or not) when the verdict is in */
	} else if (j->reruns > 0 && strcmp(j->repro_verdict, "reproducible")) {
		why = kiln_arena_printf(a, "reproducibility verdict: %s",
		                        *j->repro_verdict ? j->repro_verdict : "none");
	}
	if (why) {
		kiln_log(KILN_LOG_INFO, "job %lld: not published to %s (%s)", (long long)j->id,
		         rr.repository, why);
		return s->store->ops->repo_publish_mark(s->store, j->id, rr.repository, "skipped",
		                                        why, util_clock_wall_ms(), err);
	}
	return publish_job(s, j, rr.repository, a, err);
}

static void publish_ended_log(const struct scheduler_job *j, kiln_rc rc, struct kiln_err *err)
{
	if (rc) {
		kiln_err_wrap(err, "job %lld: publishing", (long long)j->id);
		kiln_log_err(KILN_LOG_WARN, err);
	}
}

void scheduler_publish_job_ended(struct scheduler *s, int64_t id)
{
	struct kiln_arena a = KILN_ARENA_INIT(KILN_LIMIT_ARENA);
	struct kiln_err err = KILN_ERR_INIT;
	struct scheduler_job j = {0};

	if (!s->store->ops->job_get(s->store, id, &a, &j, &err))
		publish_ended_log(&j, publish_ended(s, &j, &a, &err), &err);
	kiln_arena_release(&a);
}

void scheduler_publish_original_ended(struct scheduler *s, const struct scheduler_job *j)
{
	struct kiln_arena a = KILN_ARENA_INIT(KILN_LIMIT_ARENA);
	struct kiln_err err = KILN_ERR_INIT;

	publish_ended_log(j, publish_ended(s, j, &a, &err), &err);
	kiln_arena_release(&a);
}

/* ---------------------------------------------------------------------------------------- */
/* Operations (the API's) */

kiln_rc scheduler_publish_regenerate(struct scheduler *s, const char *name, struct kiln_err *err)
{
	if (!repo_find(s->publisher, name))
		return kiln_err_set(err, KILN_ENOTFOUND, "no repository '%s'", name);
	mark_dirty(s, name);
	return KILN_OK;
}

/* Wait until no repository is dirty or busy (tests, regenerate with wait). */
void scheduler_publish_wait(struct scheduler *s, int64_t timeout_ms)
{
	struct scheduler_publisher *p = s->publisher;
	int64_t end = util_clock_mono_ns() + timeout_ms * 1000000;

	while (p && util_clock_mono_ns() < end) {
		bool idle = true;
		size_t i;

		pthread_mutex_lock(&p->lock);
		/* another scheduler publishes the repositories whose duty it holds */
		for (i = 0; i < p->n; i++)
			idle =
			    idle && !(p->repos[i].dirty && p->repos[i].owned) && !p->repos[i].busy;
		pthread_mutex_unlock(&p->lock);
		if (idle)
			break;
		(void)poll(NULL, 0, 20);
	}
}

/* "NAME-[EPOCH:]VERSION-RELEASE.ARCH" of a package. */
static const char *pkg_nevra(const struct scheduler_repo_pkg *p, struct kiln_arena *a)
{
	if (p->epoch >= 0)
		return kiln_arena_printf(a, "%s-%lld:%s-%s.%s", p->name, (long long)p->epoch,
		                         p->version, p->release, p->arch);
	return kiln_arena_printf(a, "%s-%s-%s.%s", p->name, p->version, p->release, p->arch);
}

kiln_rc scheduler_publish_remove(struct scheduler *s, const char *repo, const char *what,
                                 int64_t *removed, struct kiln_err *err)
{
	struct kiln_arena a = KILN_ARENA_INIT(KILN_LIMIT_ARENA);
	struct scheduler_repo_pkg *v = NULL;
	size_t n = 0, i;
	kiln_rc rc;

	*removed = 0;
	if (!repo_find(s->publisher, repo))
		return kiln_err_set(err, KILN_ENOTFOUND, "no repository '%s'", repo);
	rc = s->store->ops->repo_pkgs(s->store, repo, &a, &v, &n, err);
	for (i = 0; !rc && i < n; i++) {
		const char *nevra = pkg_nevra(&v[i], &a);
		size_t fl = strlen(v[i].file);

		if (strcmp(v[i].file, what) && (!nevra || strcmp(nevra, what)) &&
		    !(fl > 4 && strlen(what) == fl - 4 && !strncmp(v[i].file, what, fl - 4)))
			continue;
		rc = s->store->ops->repo_pkg_delete(s->store, repo, v[i].file, err);
		(*removed)++;
	}
	if (!rc && !*removed)
		rc = kiln_err_set(err, KILN_ENOTFOUND, "repository %s has no package '%s'", repo,
		                  what);
	if (!rc)
		mark_dirty(s, repo);
	kiln_arena_release(&a);
	return rc;
}

/* ---------------------------------------------------------------------------------------- */
/* HTTP: /api/v1/repos */

/* [projects] The name of the project owning repository name ("" when unknown). */
static const char *repo_project_name(struct scheduler *s, const char *name, struct kiln_arena *a)
{
	struct kiln_err err = KILN_ERR_INIT;
	struct scheduler_project p = {0};
	int64_t id = scheduler_repo_project(s, a, name, &err);

	if (id < 0 || s->store->ops->project_get(s->store, id, NULL, a, &p, &err))
		return "";
	return p.name;
}

static void repo_json(struct scheduler *s, struct api_jw *w, const char *name,
                      const struct scheduler_repo_pkg *v, size_t n,
                      const struct scheduler_repo_state *st, bool packages, struct kiln_arena *a)
{
	const char *arches[PUB_MAX_ARCHES];
	size_t narch = 0, count = 0, i;

	for (i = 0; i < n; i++) {
		if (strcmp(v[i].repo, name))
			continue;
		count++;
		if (!arch_listed(arches, narch, v[i].arch) && narch < PUB_MAX_ARCHES)
			arches[narch++] = v[i].arch;
	}
	api_jw_obj(w);
	api_jw_kstr(w, "name", name);
	api_jw_kstr(w, "project", repo_project_name(s, name, a));
	api_jw_key(w, "arches");
	api_jw_arr(w);
	for (i = 0; i < narch; i++)
		api_jw_str(w, arches[i]);
	api_jw_end(w);
	api_jw_kint(w, "package_count", (int64_t)count);
	api_jw_key(w, "last_publish_ms");
	if (st && st->published_ms)
		api_jw_int(w, st->published_ms);
	else
		api_jw_null(w);
	api_jw_key(w, "revision");
	if (st && st->published_ms)
		api_jw_int(w, st->revision);
	else
		api_jw_null(w);
	api_jw_kstr(w, "url", kiln_arena_printf(a, "/repos/%s/", name));
	if (packages) {
		api_jw_kstr(w, "repo_file", kiln_arena_printf(a, "/repos/%s/%s.repo", name, name));
		api_jw_key(w, "packages");
		api_jw_arr(w);
		for (i = 0; i < n; i++) {
			if (strcmp(v[i].repo, name))
				continue;
			api_jw_obj(w);
			api_jw_kstr(w, "nevra", pkg_nevra(&v[i], a));
			api_jw_kstr(w, "name", v[i].name);
			api_jw_kstr(w, "arch", v[i].arch);
			api_jw_kstr(w, "file", v[i].file);
			api_jw_kstr(w, "sha256", v[i].sha256);
			api_jw_kint(w, "size", v[i].size);
			api_jw_kint(w, "job_id", v[i].job_id);
			api_jw_kint(w, "buildtime", v[i].buildtime);
			api_jw_kint(w, "published_ms", v[i].published_ms);
			api_jw_end(w);
		}
		api_jw_end(w);
	}
	api_jw_end(w);
}

static const struct scheduler_repo_state *state_of(const struct scheduler_repo_state *v, size_t n,
                                                   const char *name)
{
	size_t i;

	for (i = 0; i < n; i++)
		if (!strcmp(v[i].name, name))
			return &v[i];
	return NULL;
}

static void repos_reply(struct scheduler *s, struct api_req *req, struct api_resp *resp,
                        const char *one)
{
	struct kiln_arena *a = api_req_arena(req);
	struct kiln_err err = KILN_ERR_INIT;
	struct scheduler_repo_pkg *v = NULL;
	struct scheduler_repo_state *st = NULL;
	size_t n = 0, nst = 0, i;
	struct api_jw w;

	if (one && (!repo_find(s->publisher, one) || !scheduler_repo_visible(s, req, one))) {
		api_resp_error(resp, 404, "not_found", "no repository '%s'", one);
		return;
	}
	if (s->store->ops->repo_pkgs(s->store, one, a, &v, &n, &err) ||
	    s->store->ops->repo_states(s->store, a, &st, &nst, &err)) {
		api_resp_from_err(resp, &err);
		return;
	}
	api_jw_init(&w, &resp->body);
	if (one) {
		repo_json(s, &w, one, v, n, state_of(st, nst, one), true, a);
	} else {
		api_jw_obj(&w);
		api_jw_key(&w, "repositories");
		api_jw_arr(&w);
		for (i = 0; s->publisher && i < s->publisher->n; i++) {
			const char *name = s->publisher->repos[i].name;

			/* [projects] another project's repositories are left out */
			if (scheduler_repo_visible(s, req, name))
				repo_json(s, &w, name, v, n, state_of(st, nst, name), false, a);
		}
		api_jw_end(&w);
		api_jw_end(&w);
	}
	scheduler_reply_json(resp, 200);
}

void scheduler_h_repos(void *ctx, struct api_req *req, struct api_resp *resp)
{
	repos_reply(ctx, req, resp, NULL);
}

void scheduler_h_repo(void *ctx, struct api_req *req, struct api_resp *resp)
{
	repos_reply(ctx, req, resp, api_req_param(req, 0));
}

void scheduler_h_repo_regenerate(void *ctx, struct api_req *req, struct api_resp *resp)
{
	struct scheduler *s = ctx;
	struct kiln_err err = KILN_ERR_INIT;
	const char *name = api_req_param(req, 0);

	if (scheduler_publish_regenerate(s, name, &err)) {
		api_resp_from_err(resp, &err);
		return;
	}
	if (api_req_query(req, "wait"))
		scheduler_publish_wait(s, 120000);
	repos_reply(s, req, resp, name);
	resp->status = api_req_query(req, "wait") ? 200 : 202;
}

void scheduler_h_repo_remove(void *ctx, struct api_req *req, struct api_resp *resp)
{
	struct scheduler *s = ctx;
	struct kiln_err err = KILN_ERR_INIT;
	struct api_jw w;
	int64_t removed = 0;

	if (scheduler_publish_remove(s, api_req_param(req, 0), api_req_param(req, 1), &removed,
	                             &err)) {
		api_resp_from_err(resp, &err);
		return;
	}
	if (api_req_query(req, "wait"))
		scheduler_publish_wait(s, 120000);
	api_jw_init(&w, &resp->body);
	api_jw_obj(&w);
	api_jw_kstr(&w, "repository", api_req_param(req, 0));
	api_jw_kint(&w, "removed", removed);
	api_jw_end(&w);
	scheduler_reply_json(resp, 200);
}

/* ---------------------------------------------------------------------------------------- */
/* HTTP: /repos/NAME/... served read-only */

/* A path below a repository: no empty, "." or ".." or dot-file components. */
static bool serve_path_ok(const char *p)
{
	const char *c = p;

	if (!*p || strlen(p) > 1024)
		return false;
	while (*c) {
		const char *e = strchr(c, '/');
		size_t l = e ? (size_t)(e - c) : strlen(c);

		if (!l || c[0] == '.')
			return e == NULL && l == 0 && c != p; /* a trailing '/' is fine */
		if (memchr(c, '\0', l))
			return false;
		c += l + (e ? 1 : 0);
	}
	return true;
}

/* Open rel in dir beneath it; for a repodata file a client may still want from the
 * generation before the last swap, look in the kept generations. */
static int open_repo_file(const char *dir, const char *rel, struct stat *st)
{
	struct kiln_err err = KILN_ERR_INIT;
	struct kiln_buf alt = KILN_BUF_INIT(KILN_LIMIT_PATH);
	const char *slash = strrchr(rel, '/');
	int root = open(dir, O_RDONLY | O_DIRECTORY | O_CLOEXEC), fd = -1;
	DIR *d = NULL;
	struct dirent *de;

	if (root < 0)
		return -1;
	if (util_path_open_beneath(root, rel, O_RDONLY, 0, 0, &fd, &err))
		fd = -1;
	if (fd < 0 && slash && slash - rel >= 8 && !strncmp(slash - 8, "repodata", 8) &&
	    (slash - 8 == rel || slash[-9] == '/')) {
		int gfd = -1;

		kiln_buf_addf(&alt, "%.*s.repodata-gens", (int)(slash - 8 - rel), rel);
		if (!alt.err && !util_path_open_beneath(root, alt.ptr, O_RDONLY | O_DIRECTORY, 0, 0,
		                                        &gfd, &err))
			d = fdopendir(gfd);
		if (!d)
			util_close(gfd);
		while (d && fd < 0 && (de = readdir(d))) {
			if (de->d_name[0] == '.' || !strncmp(de->d_name, "tmp-", 4))
				continue;
			kiln_buf_reset(&alt);
			kiln_buf_addf(&alt, "%s/%s", de->d_name, slash + 1);
			if (alt.err || util_path_open_beneath(dirfd(d), alt.ptr, O_RDONLY, 0,
			                                      UTIL_OPEN_NOFOLLOW, &fd, &err))
				fd = -1;
			kiln_err_clear(&err);
		}
		if (d)
			closedir(d);
	}
	util_close(root);
	kiln_buf_release(&alt);
	if (fd >= 0 && (fstat(fd, st) < 0 || !S_ISREG(st->st_mode))) {
		util_close(fd);
		fd = -1;
	}
	return fd;
}

static const char *content_type(const char *rel)
{
	struct kiln_str r = kiln_str_from(rel);

	if (kiln_str_ends(r, ".rpm"))
		return "application/x-rpm";
	if (kiln_str_ends(r, ".xml"))
		return "application/xml";
	if (kiln_str_ends(r, ".gz"))
		return "application/gzip";
	if (kiln_str_ends(r, ".zst"))
		return "application/zstd";
	if (kiln_str_ends(r, ".asc") || kiln_str_ends(r, ".repo") ||
	    kiln_str_starts(kiln_str_from(util_path_basename(rel)), "RPM-GPG-KEY-"))
		return "text/plain";
	return "application/octet-stream";
}

/* Shared with the batch repositories (batch.c). */
void scheduler_repo_serve(const char *dir, const char *rel, struct api_req *req,
                          struct api_resp *resp)
{
	const char *range;
	char etag[96], cr[96];
	uint64_t off = 0, len = 0;
	struct stat st;
	int fd, kind;

	fd = dir && serve_path_ok(rel) ? open_repo_file(dir, rel, &st) : -1;
	if (fd < 0) {
		api_resp_error(resp, 404, "not_found", "no such file in the repositories");
		return;
	}
	snprintf(etag, sizeof(etag), "\"%llx-%llx-%llx\"", (unsigned long long)st.st_ino,
	         (unsigned long long)st.st_size,
	         (unsigned long long)st.st_mtim.tv_sec * 1000000000ULL +
	             (unsigned long long)st.st_mtim.tv_nsec);
	api_resp_header(resp, "ETag", etag);
	api_resp_header(resp, "Accept-Ranges", "bytes");
	resp->content_type = content_type(rel);
	if (api_req_header(req, "If-None-Match") &&
	    api_etag_match(api_req_header(req, "If-None-Match"), etag)) {
		util_close(fd);
		resp->status = 304;
		return;
	}
	range = api_req_header(req, "Range");
	kind = range ? api_range_parse(range, (uint64_t)st.st_size, &off, &len) : API_RANGE_NONE;
	if (kind == API_RANGE_UNSATISFIABLE) {
		util_close(fd);
		snprintf(cr, sizeof(cr), "bytes */%llu", (unsigned long long)st.st_size);
		api_resp_error(resp, 416, "range_not_satisfiable", "the file has %llu bytes",
		               (unsigned long long)st.st_size);
		api_resp_header(resp, "Content-Range", cr);
		return;
	}
	resp->file_fd = fd;
	resp->file_off = 0;
	resp->file_size = (uint64_t)st.st_size;
	if (kind == API_RANGE_PARTIAL) {
		snprintf(cr, sizeof(cr), "bytes %llu-%llu/%llu", (unsigned long long)off,
		         (unsigned long long)(off + len - 1), (unsigned long long)st.st_size);
		api_resp_header(resp, "Content-Range", cr);
		resp->file_off = off;
		resp->file_size = len;
		resp->status = 206;
	}
}

void scheduler_h_repo_file(void *ctx, struct api_req *req, struct api_resp *resp)
{
	struct scheduler *s = ctx;
	const char *path = api_req_param(req, 0), *slash;
	struct kiln_buf dir = KILN_BUF_INIT(KILN_LIMIT_PATH);
	const struct pub_repo *r = NULL;
	char name[140];

	slash = path ? strchr(path, '/') : NULL;
	if (slash && (size_t)(slash - path) < sizeof(name)) {
		memcpy(name, path, (size_t)(slash - path));
		name[slash - path] = '\0';
		r = repo_find(s->publisher, name);
	}
	if (r && !scheduler_repo_visible(s, req, name))
		r = NULL; /* [projects] a private project's: as if there were none */
	if (r)
		repo_dir(s, r, &dir);
	scheduler_repo_serve(r && !dir.err ? dir.ptr : NULL, slash ? slash + 1 : "", req, resp);
	kiln_buf_release(&dir);
}
