/*
 * solve.c - the only file that sees libsolv: a pool per root, repositories loaded from
 * rpm-md metadata, install requests turned into a libsolv job, and the solution turned
 * into a lock.
 *
 * The pool is set up the way dnf sets its own up for an empty --installroot: rpm's
 * dependency semantics (Debian's libsolv is built for several and may default to Debian's),
 * the root's architecture and those it can run, dnf's repository priorities (libsolv's are
 * the opposite sign), yum-style obsoletes, and weak dependencies ignored unless the root
 * asks for them (mock's install_weak_deps=0). A request that names a package is installed by
 * name, anything else (a provide, a file, "NAME >= EVR", a rich dependency) by what
 * provides it, as `dnf install ARG` does; @groups expand to their mandatory and default
 * members.
 */
#include "util/util.h"

#include "macro/macro.h"
#include "rpmtag/rpmtag.h"
#include "spec/spec.h"
#include "roots/roots.h"
#include "roots/roots_int.h"

#include <solv/pool.h>
#include <solv/poolarch.h>
#include <solv/pool_parserpmrichdep.h>
#include <solv/problems.h>
#include <solv/repo.h>
#include <solv/repo_comps.h>
#include <solv/repo_rpmmd.h>
#include <solv/rules.h>
#include <solv/solver.h>

#include "roots/libsolv_int.h"

/* Filled on first use (see roots/libsolv_int.h). */
static struct roots_libsolv_fns roots_libsolv;
static struct util_dl roots_libsolv_dl =
    UTIL_DL_INIT(ROOTS_LIBSOLVEXT_SONAME, roots_libsolv_syms, roots_libsolv);

#define PROBLEMS_MAX (256 * KILN_KIB)

struct roots_pool {
	Pool *pool;     /* owned: pool_free() */
	Repo *requests; /* the "@kiln-requests" repository of the last resolve, or NULL */
	Repo *repos[ROOTS_CONFIG_MAX_REPOS]; /* the packages of each repository */
	size_t nrepos;
	Repo *comps[ROOTS_CONFIG_MAX_REPOS]; /* the groups of each repository that has them */
	size_t ncomps;
	bool weak_deps;
	char arch[64];
	struct kiln_buf problems; /* libsolv's text of the last failed resolve */
};

kiln_rc roots_pool_new(const char *arch, bool weak_deps, struct roots_pool **out,
                       struct kiln_err *err)
{
	struct roots_pool *p = NULL;
	kiln_rc rc;

	*out = NULL;
	rc = util_dl_ready(&roots_libsolv_dl, err);
	if (rc) {
		kiln_err_wrap(err, "resolving a root needs libsolv (Debian: libsolvext1)");
		return rc;
	}
	p = kiln_calloc(1, sizeof(*p));
	if (!p)
		return kiln_err_set(err, KILN_ENOMEM, "out of memory");
	kiln_buf_init(&p->problems, PROBLEMS_MAX);
	p->pool = pool_create();
	if (!p->pool) {
		free(p);
		return kiln_err_set(err, KILN_ENOMEM, "out of memory");
	}
	if (pool_setdisttype(p->pool, DISTTYPE_RPM) < 0) {
		roots_pool_free(p);
		return kiln_err_set(err, KILN_EUNSUPP, "this libsolv has no rpm semantics");
	}
	pool_setarch(p->pool, arch);
	snprintf(p->arch, sizeof(p->arch), "%s", arch);
	p->weak_deps = weak_deps;
	*out = p;
	return KILN_OK;
}

void roots_pool_free(struct roots_pool *p)
{
	if (!p)
		return;
	if (p->pool)
		pool_free(p->pool);
	kiln_buf_release(&p->problems);
	free(p);
}

const char *roots_pool_problems(const struct roots_pool *p)
{
	return p->problems.ptr;
}

/* ---- loading metadata ------------------------------------------------------------------ */

/* libsolv reads from a FILE: the caller's bytes through fmemopen (no copy). */
static kiln_rc add_xml(Repo *repo, const char *what, const char *xml, size_t len, bool comps,
                       int flags, struct kiln_err *err)
{
	FILE *fp;
	int r;

	if (!len)
		return kiln_err_set(err, KILN_EFORMAT, "repository %s: %s is empty", repo->name,
		                    what);
	fp = fmemopen((void *)xml, len, "r");
	if (!fp)
		return kiln_err_sys(err, KILN_EIO, "repository %s: %s", repo->name, what);
	r = comps ? repo_add_comps(repo, fp, flags) : repo_add_rpmmd(repo, fp, NULL, flags);
	fclose(fp);
	if (r)
		return kiln_err_set(err, KILN_EFORMAT, "repository %s: %s: %s", repo->name, what,
		                    pool_errstr(repo->pool));
	return KILN_OK;
}

/* A lock names every package by its file's sha256 and its place in the repository. */
static kiln_rc check_packages(Repo *repo, struct kiln_err *err)
{
	Pool *pool = repo->pool;
	Solvable *s;
	Id p, type;

	FOR_REPO_SOLVABLES(repo, p, s)
	{
		const char *sum = solvable_lookup_checksum(s, SOLVABLE_CHECKSUM, &type);
		const char *loc = solvable_lookup_location(s, NULL);
		struct kiln_buf clean = KILN_BUF_INIT(KILN_LIMIT_PATH);
		struct kiln_err e = KILN_ERR_INIT;
		bool bad_loc;

		if (!sum || type != REPOKEY_TYPE_SHA256)
			return kiln_err_set(
			    err, KILN_EFORMAT,
			    "repository %s: package %s has no sha256 checksum (a lock "
			    "needs one)",
			    repo->name, pool_solvable2str(pool, s));
		bad_loc = !loc || strstr(loc, "://") || loc[0] == '/' ||
		          util_path_check_relative(loc, strlen(loc), &clean, &e) ||
		          solvable_lookup_str(s, SOLVABLE_MEDIABASE);
		kiln_buf_release(&clean);
		if (bad_loc)
			return kiln_err_set(err, KILN_EPRIV,
			                    "repository %s: package %s is located outside the "
			                    "repository ('%s')",
			                    repo->name, pool_solvable2str(pool, s), loc ? loc : "");
	}
	return KILN_OK;
}

kiln_rc roots_pool_add_repo(struct roots_pool *p, const char *name, int priority,
                            const char *primary, size_t primary_len, const char *comps,
                            size_t comps_len, struct kiln_err *err)
{
	Repo *repo, *crepo;
	kiln_rc rc;

	if (p->nrepos == ROOTS_CONFIG_MAX_REPOS)
		return kiln_err_set(err, KILN_ELIMIT, "over %d repositories",
		                    ROOTS_CONFIG_MAX_REPOS);
	repo = repo_create(p->pool, name);
	repo->priority = -priority;
	p->repos[p->nrepos++] = repo;
	rc = add_xml(repo, "primary", primary, primary_len, false, 0, err);
	if (!rc)
		rc = check_packages(repo, err);
	if (!rc && comps) {
		crepo = repo_create(p->pool, name);
		crepo->priority = -priority;
		p->comps[p->ncomps++] = crepo;
		rc = add_xml(crepo, "comps", comps, comps_len, true, 0, err);
	}
	return rc;
}

kiln_rc roots_pool_add_filelists(struct roots_pool *p, const char *name, const char *xml,
                                 size_t len, struct kiln_err *err)
{
	size_t i;

	for (i = 0; i < p->nrepos; i++)
		if (!strcmp(p->repos[i]->name, name))
			return add_xml(p->repos[i], "filelists", xml, len, false,
			               REPO_EXTEND_SOLVABLES, err);
	return kiln_err_set(err, KILN_ENOTFOUND, "no repository '%s' to extend", name);
}

/* ---- requests -------------------------------------------------------------------------- */

/* pool_whatprovides() of solv/pool.h, through the table. */
static Id whatprovides(Pool *pool, Id d)
{
	if (!ISRELDEP(d)) {
		if (pool->whatprovides[d])
			return pool->whatprovides[d];
	} else if (pool->whatprovides_rel[GETRELID(d)]) {
		return pool->whatprovides_rel[GETRELID(d)];
	}
	return pool_addrelproviders(pool, d);
}

static bool has_providers(Pool *pool, Id d)
{
	return pool->whatprovidesdata[whatprovides(pool, d)] != 0;
}

/* Some available package is named exactly d (a plain name). */
static bool is_package_name(Pool *pool, Id d)
{
	Id *pp;

	if (ISRELDEP(d))
		return false;
	for (pp = pool->whatprovidesdata + whatprovides(pool, d); *pp; pp++)
		if (pool->solvables[*pp].name == d)
			return true;
	return false;
}

static int rel_flags(struct kiln_str op)
{
	if (kiln_str_eq_cstr(op, "<"))
		return REL_LT;
	if (kiln_str_eq_cstr(op, "<="))
		return REL_LT | REL_EQ;
	if (kiln_str_eq_cstr(op, "=") || kiln_str_eq_cstr(op, "=="))
		return REL_EQ;
	if (kiln_str_eq_cstr(op, ">="))
		return REL_GT | REL_EQ;
	if (kiln_str_eq_cstr(op, ">"))
		return REL_GT;
	return 0;
}

/* One install string: "(rich)", "NAME OP EVR" or a plain name, provide or path. 0 with err
 * set when it does not parse. */
static Id request_dep(Pool *pool, const char *req, struct kiln_err *err)
{
	struct kiln_str rest = kiln_str_trim(kiln_str_from(req)), name, op, evr;
	bool found;
	Id d;
	int flags;

	if (rest.len && rest.ptr[0] == '(') {
		d = pool_parserpmrichdep(pool, req);
		if (!d)
			kiln_err_set(err, KILN_ESYNTAX, "malformed rich dependency '%s'", req);
		return d;
	}
	rest = kiln_str_ltrim(kiln_str_split(rest, ' ', &name, &found));
	if (!found)
		return pool_strn2id(pool, name.ptr, (unsigned)name.len, 1);
	rest = kiln_str_trim(kiln_str_split(rest, ' ', &op, &found));
	evr = rest;
	flags = rel_flags(op);
	if (!found || !flags || !evr.len || kiln_str_chr(evr, ' ') >= 0) {
		kiln_err_set(err, KILN_ESYNTAX, "malformed request '%s' (NAME [OP VERSION])", req);
		return 0;
	}
	return pool_rel2id(pool, pool_strn2id(pool, name.ptr, (unsigned)name.len, 1),
	                   pool_strn2id(pool, evr.ptr, (unsigned)evr.len, 1), flags, 1);
}

/* A spec's dependency (BuildRequires: NAME [OP EVR] or a rich dependency). */
static Id spec_dep_id(Pool *pool, const struct spec_dep *dep, struct kiln_err *err)
{
	int flags = 0;
	Id d;

	if (dep->name[0] == '(') {
		d = pool_parserpmrichdep(pool, dep->name);
		if (!d)
			kiln_err_set(err, KILN_ESYNTAX, "malformed rich dependency '%s'",
			             dep->name);
		return d;
	}
	d = pool_str2id(pool, dep->name, 1);
	if (dep->flags & RPMTAG_DEP_LESS)
		flags |= REL_LT;
	if (dep->flags & RPMTAG_DEP_GREATER)
		flags |= REL_GT;
	if (dep->flags & RPMTAG_DEP_EQUAL)
		flags |= REL_EQ;
	if (flags && dep->evr[0])
		d = pool_rel2id(pool, d, pool_str2id(pool, dep->evr, 1), flags, 1);
	return d;
}

/* ---- file dependencies and filelists ---------------------------------------------------- */

/* What createrepo_c (and kiln's repo writer) put in primary.xml's file lists. */
static bool in_primary_files(const char *path)
{
	return !strncmp(path, "/etc/", 5) || strstr(path, "bin/") ||
	       !strcmp(path, "/usr/lib/sendmail");
}

/* A file dependency in d (rich dependencies walked, to a bounded depth) outside primary's
 * file subset. */
static bool dep_needs_filelists(Pool *pool, Id d, int depth)
{
	const char *s;

	if (depth > ROOTS_RICH_MAX_DEPTH)
		return false;
	if (ISRELDEP(d)) {
		Reldep *rd = GETRELDEP(pool, d);

		if (rd->flags >= 8 && rd->flags != REL_ARCH)
			return dep_needs_filelists(pool, rd->name, depth + 1) ||
			       dep_needs_filelists(pool, rd->evr, depth + 1);
		return dep_needs_filelists(pool, rd->name, depth + 1);
	}
	s = pool_id2str(pool, d);
	return s[0] == '/' && !in_primary_files(s);
}

static bool repo_deps_need_filelists(Pool *pool)
{
	Id p;

	for (p = 2; p < pool->nsolvables; p++) {
		Solvable *s = pool->solvables + p;
		Id *dp;

		if (!s->repo || !s->requires)
			continue;
		for (dp = s->repo->idarraydata + s->requires; *dp; dp++)
			if (*dp != SOLVABLE_PREREQMARKER && dep_needs_filelists(pool, *dp, 0))
				return true;
	}
	return false;
}

bool roots_pool_needs_filelists(struct roots_pool *p, const char *const *requests, size_t n,
                                const struct spec_deps *deps)
{
	struct kiln_err ignored = KILN_ERR_INIT;
	size_t i;

	for (i = 0; i < n; i++) {
		Id d;

		if (requests[i][0] == '@')
			continue;
		d = request_dep(p->pool, requests[i], &ignored);
		if (d && dep_needs_filelists(p->pool, d, 0))
			return true;
	}
	for (i = 0; deps && i < deps->n; i++) {
		Id d = spec_dep_id(p->pool, &deps->v[i], &ignored);

		if (d && dep_needs_filelists(p->pool, d, 0))
			return true;
	}
	return repo_deps_need_filelists(p->pool);
}

/* ---- the job ---------------------------------------------------------------------------- */

static void job_add(Queue *job, Id how, Id what)
{
	queue_insert(job, job->count, how);
	queue_insert(job, job->count, what);
}

/* Install d as `dnf install ARG` does: the packages named d when there are any, else
 * what provides d; then also every package that obsoletes one of those (dnf's obsoletes=1:
 * asking for a package that was replaced installs its replacement), one of them chosen by
 * libsolv's policy. */
static void job_install(Pool *pool, Queue *job, Id d)
{
	bool by_name = is_package_name(pool, d);
	Queue cand, obs;
	Id *pp;
	int i, j;

	/* A rich dependency is satisfied by a set, not by one of its providers. */
	if (ISRELDEP(d) && GETRELDEP(pool, d)->flags >= 8 &&
	    GETRELDEP(pool, d)->flags != REL_ARCH) {
		job_add(job, SOLVER_INSTALL | SOLVER_SOLVABLE_PROVIDES, d);
		return;
	}
	queue_init(&cand);
	queue_init(&obs);
	for (pp = pool->whatprovidesdata + whatprovides(pool, d); *pp; pp++)
		if (!by_name || pool->solvables[*pp].name == d)
			queue_insert(&cand, cand.count, *pp);
	for (i = 0, j = cand.count; i < j; i++) {
		int k;

		queue_empty(&obs);
		pool_whatmatchessolvable(pool, SOLVABLE_OBSOLETES, cand.elements[i], &obs, 0);
		for (k = 0; k < obs.count; k++)
			queue_insert(&cand, cand.count, obs.elements[k]);
	}
	if (cand.count)
		job_add(job, SOLVER_INSTALL | SOLVER_SOLVABLE_ONE_OF,
		        pool_queuetowhatprovides(pool, &cand));
	else /* libsolv reports "nothing provides requested d" */
		job_add(job, SOLVER_INSTALL | SOLVER_SOLVABLE_PROVIDES, d);
	queue_free(&obs);
	queue_free(&cand);
}

static Solvable *find_group(struct roots_pool *p, const char *group)
{
	char name[256];
	Id id;
	size_t i;
	Id s;

	if (snprintf(name, sizeof(name), "group:%s", group) >= (int)sizeof(name))
		return NULL;
	id = pool_str2id(p->pool, name, 0);
	if (!id)
		return NULL;
	for (i = 0; i < p->ncomps; i++) {
		Solvable *sv;

		FOR_REPO_SOLVABLES(p->comps[i], s, sv)
		if (sv->name == id)
			return sv;
	}
	return NULL;
}

/* A comps group: its mandatory (requires) and default (recommends) packages, as dnf group
 * install takes them; a member no repository has is skipped with a warning, as dnf does. */
static kiln_rc job_group(struct roots_pool *p, Queue *job, const char *group, struct kiln_err *err)
{
	static const Id keys[] = {SOLVABLE_REQUIRES, SOLVABLE_RECOMMENDS};
	Solvable *g = find_group(p, group);
	Queue q;
	size_t k;
	int i;

	if (!g)
		return kiln_err_set(err, KILN_ENOTFOUND, "no repository has the group '@%s'",
		                    group);
	queue_init(&q);
	for (k = 0; k < sizeof(keys) / sizeof(keys[0]); k++) {
		queue_empty(&q);
		solvable_lookup_deparray(g, keys[k], &q, 0);
		for (i = 0; i < q.count; i++) {
			if (has_providers(p->pool, q.elements[i]))
				job_install(p->pool, job, q.elements[i]);
			else
				kiln_warn("group @%s: no package '%s' in the repositories; skipped",
				          group, pool_dep2str(p->pool, q.elements[i]));
		}
	}
	queue_free(&q);
	return KILN_OK;
}

/* A solvable that requires every request, never installed (it provides nothing, not even
 * its name), so that pool_addfileprovides() sees the requests' file dependencies as it
 * sees packages' and whatprovides answers for them. */
static void requests_repo(struct roots_pool *p, const Queue *deps, const Queue *conflicts)
{
	Solvable *s;
	int i;

	if (p->requests)
		repo_free(p->requests, 1);
	p->requests = repo_create(p->pool, "@kiln-requests");
	s = p->pool->solvables + repo_add_solvable(p->requests);
	s->name = pool_str2id(p->pool, "@kiln-requests", 1);
	s->evr = pool_str2id(p->pool, "0", 1);
	s->arch = ARCH_NOARCH;
	for (i = 0; i < deps->count; i++)
	s->requires = repo_addid_dep(p->requests, s->requires, deps->elements[i], 0);
	for (i = 0; i < conflicts->count; i++)
		s->conflicts = repo_addid_dep(p->requests, s->conflicts, conflicts->elements[i], 0);
	repo_internalize(p->requests);
}

struct request_set {
	Queue deps;  /* dependency ids of the non-group requests and BuildRequires */
	Queue names; /* per entry of deps: 1 when it came from an install string */
	Queue conflicts;
};

static kiln_rc collect(struct roots_pool *p, const char *const *requests, size_t n,
                       const struct spec_deps *deps, const struct spec_deps *conflicts,
                       struct request_set *rs, struct kiln_err *err)
{
	size_t i;
	Id d;

	for (i = 0; i < n; i++) {
		if (requests[i][0] == '@')
			continue;
		d = request_dep(p->pool, requests[i], err);
		if (!d)
			return err->code;
		queue_insert(&rs->deps, rs->deps.count, d);
		queue_insert(&rs->names, rs->names.count, 1);
	}
	for (i = 0; deps && i < deps->n; i++) {
		d = spec_dep_id(p->pool, &deps->v[i], err);
		if (!d)
			return err->code;
		queue_insert(&rs->deps, rs->deps.count, d);
		queue_insert(&rs->names, rs->names.count, 0);
	}
	for (i = 0; conflicts && i < conflicts->n; i++) {
		d = spec_dep_id(p->pool, &conflicts->v[i], err);
		if (!d)
			return err->code;
		queue_insert(&rs->conflicts, rs->conflicts.count, d);
	}
	return KILN_OK;
}

static kiln_rc make_job(struct roots_pool *p, const char *const *requests, size_t n,
                        const struct request_set *rs, Queue *job, struct kiln_err *err)
{
	kiln_rc rc = KILN_OK;
	size_t i;
	int k;

	for (i = 0; !rc && i < n; i++)
		if (requests[i][0] == '@')
			rc = job_group(p, job, requests[i] + 1, err);
	for (k = 0; k < rs->deps.count; k++) {
		if (rs->names.elements[k])
			job_install(p->pool, job, rs->deps.elements[k]);
		else /* BuildRequires are provides, as dnf builddep reads them */
			job_add(job, SOLVER_INSTALL | SOLVER_SOLVABLE_PROVIDES,
			        rs->deps.elements[k]);
	}
	/* BuildConflicts: whatever provides them stays out of the root. */
	for (k = 0; k < rs->conflicts.count; k++)
		job_add(job, SOLVER_LOCK | SOLVER_SOLVABLE_PROVIDES, rs->conflicts.elements[k]);
	return rc;
}

/* ---- problems --------------------------------------------------------------------------- */

/* Every problem with the rules behind it, in dnf's shape ("Problem 1: ...\n  - ...").
 * KILN_ENOTFOUND when a request has no provider at all, else KILN_ECONFLICT. */
static kiln_rc report_problems(struct roots_pool *p, Solver *solv, struct kiln_err *err)
{
	int count = solver_problem_count(solv);
	bool nothing = false;
	char first[400] = "";
	Queue rules;
	int i, j;

	kiln_buf_reset(&p->problems);
	queue_init(&rules);
	for (i = 1; i <= count; i++) {
		kiln_buf_addf(&p->problems, "Problem %d:\n", i);
		solver_findallproblemrules(solv, i, &rules);
		for (j = 0; j < rules.count; j++) {
			Id from, to, dep;
			SolverRuleinfo type =
			    solver_ruleinfo(solv, rules.elements[j], &from, &to, &dep);
			const char *text = solver_problemruleinfo2str(solv, type, from, to, dep);

			if (type == SOLVER_RULE_JOB_NOTHING_PROVIDES_DEP ||
			    type == SOLVER_RULE_JOB_UNKNOWN_PACKAGE)
				nothing = true;
			if (!first[0])
				snprintf(first, sizeof(first), "%s", text);
			kiln_buf_addf(&p->problems, "  - %s\n", text);
		}
	}
	queue_free(&rules);
	return kiln_err_set(err, nothing ? KILN_ENOTFOUND : KILN_ECONFLICT,
	                    "cannot resolve the root (%d problem%s): %s", count,
	                    count == 1 ? "" : "s", first);
}

/* ---- the solution into a lock ------------------------------------------------------------ */

static kiln_rc lock_add_solvable(Pool *pool, Solvable *s, struct roots_lock *l,
                                 struct kiln_err *err)
{
	struct roots_lock_pkg pkg = {0};
	const char *evr = pool_id2str(pool, s->evr);
	const char *colon = strchr(evr, ':'), *dash = strrchr(evr, '-');
	char epoch[16] = "0", *vr = NULL;
	struct kiln_err e = KILN_ERR_INIT;
	Id type;
	kiln_rc rc;
	int64_t ep;

	if (colon && (size_t)(colon - evr) < sizeof(epoch) && (!dash || colon < dash)) {
		memcpy(epoch, evr, (size_t)(colon - evr));
		epoch[colon - evr] = '\0';
		evr = colon + 1;
	}
	if (util_parse_i64(epoch, strlen(epoch), 10, 0, UINT32_MAX, &ep, &e))
		return kiln_err_set(err, KILN_EFORMAT, "package %s: malformed epoch",
		                    pool_solvable2str(pool, s));
	vr = kiln_strdup(evr);
	if (!vr)
		return kiln_err_set(err, KILN_ENOMEM, "out of memory");
	dash = strrchr(vr, '-');
	if (dash)
		vr[dash - vr] = '\0';
	pkg.name = pool_id2str(pool, s->name);
	pkg.epoch = (uint32_t)ep;
	pkg.version = vr;
	pkg.release = dash ? vr + (dash - vr) + 1 : "";
	pkg.arch = pool_id2str(pool, s->arch);
	snprintf(pkg.sha256, sizeof(pkg.sha256), "%s",
	         solvable_lookup_checksum(s, SOLVABLE_CHECKSUM, &type));
	pkg.repo = s->repo->name;
	pkg.location = solvable_lookup_location(s, NULL);
	pkg.size = solvable_lookup_num(s, SOLVABLE_DOWNLOADSIZE, 0);
	rc = roots_lock_add(l, &pkg, err);
	free(vr);
	return rc;
}

static kiln_rc solution_to_lock(struct roots_pool *p, Solver *solv, struct roots_lock *l,
                                struct kiln_err *err)
{
	Pool *pool = p->pool;
	kiln_rc rc = KILN_OK;
	Queue dq;
	int i;

	queue_init(&dq);
	solver_get_decisionqueue(solv, &dq);
	for (i = 0; !rc && i < dq.count; i++) {
		Id id = dq.elements[i];
		Solvable *s;

		if (id <= SYSTEMSOLVABLE)
			continue;
		s = pool->solvables + id;
		if (!s->repo || s->repo == p->requests || s->repo == pool->installed)
			continue;
		rc = lock_add_solvable(pool, s, l, err);
	}
	queue_free(&dq);
	return rc;
}

/* ---- resolving ----------------------------------------------------------------------------- */

static void solver_setup(struct roots_pool *p, Solver *solv)
{
	/* What dnf sets for an install into an empty root. */
	solver_set_flag(solv, SOLVER_FLAG_YUM_OBSOLETES, 1);
	solver_set_flag(solv, SOLVER_FLAG_BEST_OBEY_POLICY, 1);
	solver_set_flag(solv, SOLVER_FLAG_IGNORE_RECOMMENDED, !p->weak_deps);
}

kiln_rc roots_pool_resolve(struct roots_pool *p, const char *const *requests, size_t n,
                           const struct spec_deps *deps, const struct spec_deps *conflicts,
                           struct roots_lock *out, struct kiln_err *err)
{
	struct kiln_err local = KILN_ERR_INIT;
	struct request_set rs;
	Solver *solv = NULL;
	Queue job;
	kiln_rc rc;

	if (!err)
		err = &local; /* the helpers read err->code */
	queue_init(&rs.deps);
	queue_init(&rs.names);
	queue_init(&rs.conflicts);
	queue_init(&job);
	kiln_buf_reset(&p->problems);
	rc = collect(p, requests, n, deps, conflicts, &rs, err);
	if (!rc) {
		requests_repo(p, &rs.deps, &rs.conflicts);
		pool_addfileprovides(p->pool);
		pool_createwhatprovides(p->pool);
		rc = make_job(p, requests, n, &rs, &job, err);
	}
	if (!rc) {
		solv = solver_create(p->pool);
		solver_setup(p, solv);
		if (solver_solve(solv, &job))
			rc = report_problems(p, solv, err);
	}
	if (!rc)
		rc = solution_to_lock(p, solv, out, err);
	if (!rc) {
		out->arch = kiln_arena_strdup(&out->arena, p->arch);
		rc = kiln_arena_finish(&out->arena, err);
	}
	if (!rc)
		rc = roots_lock_finish(out, err);
	if (solv)
		solver_free(solv);
	queue_free(&job);
	queue_free(&rs.conflicts);
	queue_free(&rs.names);
	queue_free(&rs.deps);
	return rc;
}

/* ---- a lock given back ------------------------------------------------------------------- */

static bool same_package(Pool *pool, Solvable *s, const struct roots_lock_pkg *pkg)
{
	char evr[1024];
	const char *loc;
	Id type;
	const char *sum;

	if (pkg->epoch)
		snprintf(evr, sizeof(evr), "%u:%s-%s", pkg->epoch, pkg->version, pkg->release);
	else
		snprintf(evr, sizeof(evr), "%s-%s", pkg->version, pkg->release);
	if (strcmp(pool_id2str(pool, s->evr), evr) ||
	    strcmp(pool_id2str(pool, s->arch), pkg->arch) || strcmp(s->repo->name, pkg->repo))
		return false;
	sum = solvable_lookup_checksum(s, SOLVABLE_CHECKSUM, &type);
	loc = solvable_lookup_location(s, NULL);
	return sum && type == REPOKEY_TYPE_SHA256 && !strcmp(sum, pkg->sha256) && loc &&
	       !strcmp(loc, pkg->location);
}

kiln_rc roots_lock_check(struct roots_pool *p, const struct roots_lock *l, struct kiln_err *err)
{
	Pool *pool = p->pool;
	size_t i;
	Id s;

	if (l->arch && strcmp(l->arch, p->arch))
		return kiln_err_set(err, KILN_EINVAL, "the lock is for %s, the root for %s",
		                    l->arch, p->arch);
	for (i = 0; i < l->n; i++) {
		const struct roots_lock_pkg *pkg = &l->pkgs[i];
		Id name = pool_str2id(pool, pkg->name, 0);
		bool found = false;

		for (s = 2; name && !found && s < pool->nsolvables; s++) {
			Solvable *sv = pool->solvables + s;

			found = sv->repo && sv->name == name && same_package(pool, sv, pkg);
		}
		if (!found)
			return kiln_err_set(
			    err, KILN_ENOTFOUND,
			    "locked package %s-%s-%s.%s (sha256 %.12s...) is not in "
			    "repository %s as locked",
			    pkg->name, pkg->version, pkg->release, pkg->arch, pkg->sha256,
			    pkg->repo);
	}
	return KILN_OK;
}
