/*
 * package.c - from a built tree to packages: the header rpmbuild writes for each binary
 * package (the spec's tags, build time and host, automatic dependencies, config()
 * dependencies, the source package's name) and for the source package (spec, sources and
 * patches but NoSource ones), written with pack_write() and signed when asked.
 *
 * File names come from %{_rpmfilename} rendered as a query format over the package's own
 * tags, as rpmbuild does. Every list is collected and checked before the first package is
 * written, so a %files error never leaves some packages of a build behind.
 */
#include "util/util.h"

#include <errno.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/stat.h>
#include <unistd.h>

#include "worker/build_int.h"

/* rpm's file digest algorithm numbers (%_binary_filedigest_algorithm). */
static kiln_rc pkg_fdigest(struct build *b, const char *macro, enum util_digest_algo *out,
                           struct kiln_err *err)
{
	const char *v = worker_build_expand(b, macro, err);
	int n;

	if (!v)
		return KILN_ENOMEM;
	if (!*v) {
		*out = UTIL_DIGEST_SHA256;
		return KILN_OK;
	}
	if (util_parse_int(v, 0, 255, &n, err))
		return kiln_err_set(err, KILN_EINVAL, "%s: not a digest algorithm number: %s",
		                    macro, v);
	switch (n) {
	case 1:
		*out = UTIL_DIGEST_MD5;
		return KILN_OK;
	case 2:
		*out = UTIL_DIGEST_SHA1;
		return KILN_OK;
	case 8:
		*out = UTIL_DIGEST_SHA256;
		return KILN_OK;
	case 10:
		*out = UTIL_DIGEST_SHA512;
		return KILN_OK;
	default:
		return kiln_err_set(err, KILN_EUNSUPP, "%s: unsupported digest algorithm %d", macro,
		                    n);
	}
}

static kiln_rc pkg_write_opts(struct build *b, bool source, struct pack_write_opts *wo,
                              struct kiln_err *err)
{
	const char *fmt = worker_build_expand(b, "%{?_rpmformat}", err);
	const char *comp =
	    worker_build_expand(b, source ? "%{?_source_payload}" : "%{?_binary_payload}", err);
	kiln_rc rc;

	if (!fmt || !comp)
		return KILN_ENOMEM;
	pack_write_opts_init(wo);
	wo->source = source;
	/* Build outputs are made again by building again; like rpmbuild, no fsync per
	 * package (on this machine's disk each one cost ~45 ms of a build's wall time). */
	wo->nosync = true;
	if (*fmt) {
		if (strcmp(fmt, "4") && strcmp(fmt, "6"))
			return kiln_err_set(err, KILN_EINVAL, "%%_rpmformat: 4 or 6, not %s", fmt);
		wo->format = fmt[0] - '0';
	}
	if (*comp) {
		rc = pack_compress_parse(comp, &wo->comp, err);
		if (rc) {
			kiln_err_wrap(err, "%s", source ? "%_source_payload" : "%_binary_payload");
			return rc;
		}
	}
	rc = pkg_fdigest(
	    b, source ? "%{?_source_filedigest_algorithm}" : "%{?_binary_filedigest_algorithm}",
	    &wo->fdigest, err);
	return rc;
}

/* Copy a tag set into a pack header. */
static kiln_rc pkg_tags_copy(struct pack_header *h, const struct rpmtag_set *ts,
                             struct kiln_err *err)
{
	size_t i, n = rpmtag_set_count(ts);
	kiln_rc rc = KILN_OK;

	for (i = 0; i < n && !rc; i++) {
		uint32_t tag = rpmtag_set_tag_at(ts, i);
		struct rpmtag_qf_value v;

		if (tag == RPMTAG_HEADERI18NTABLE || !rpmtag_set_get(ts, tag, &v))
			continue;
		rc = pack_header_put(h, tag, v.type, v.data, v.count, err);
	}
	return rc;
}

/* The tags rpmbuild adds to every package it writes. */
static kiln_rc pkg_build_tags(struct build *b, struct pack_header *h, struct kiln_err *err)
{
	const char *host = worker_build_expand(b, "%{?_buildhost}", err);
	const char *ver = host ? worker_build_expand(b, "%{rpmversion}", err) : NULL;
	char hostname[256];
	const char *cookie;
	kiln_rc rc;

	if (!ver)
		return KILN_ENOMEM;
	if (!*host) {
		if (gethostname(hostname, sizeof(hostname)))
			snprintf(hostname, sizeof(hostname), "localhost");
		hostname[sizeof(hostname) - 1] = '\0';
		host = hostname;
	}
	cookie = kiln_arena_printf(&b->arena, "%s %lld", host, (long long)b->res->buildtime);
	rc = pack_header_put_u32(h, RPMTAG_BUILDTIME, (uint32_t)b->res->buildtime, err);
	if (!rc)
		rc = pack_header_put_string(h, RPMTAG_BUILDHOST, host, err);
	if (!rc)
		rc = pack_header_put_string(h, RPMTAG_RPMVERSION, ver, err);
	if (!rc)
		rc = pack_header_put_string(h, RPMTAG_COOKIE, cookie ? cookie : "", err);
	if (!rc && !pack_header_get(h, RPMTAG_ENCODING))
		rc = pack_header_put_string(h, RPMTAG_ENCODING, "utf-8", err);
	return rc;
}

/* "E:V-R" of a package's tags. */
static const char *pkg_evr(struct build *b, const struct rpmtag_set *ts)
{
	struct rpmtag_qf_value ev;
	const char *v = rpmtag_set_get_str(ts, RPMTAG_VERSION);
	const char *r = rpmtag_set_get_str(ts, RPMTAG_RELEASE);

	if (rpmtag_set_get(ts, RPMTAG_EPOCH, &ev) && ev.count)
		return kiln_arena_printf(&b->arena, "%u:%s-%s", *(const uint32_t *)ev.data, v, r);
	return kiln_arena_printf(&b->arena, "%s-%s", v, r);
}

static bool pkg_has_nosource(const struct spec *spec)
{
	size_t i;

	for (i = 0; i < spec->nsources; i++) {
		if (spec->sources[i].nosource)
			return true;
	}
	return false;
}

static const char *pkg_srpm_name(struct build *b)
{
	const struct rpmtag_set *ts = b->spec->packages[0]->tags;

	return kiln_arena_printf(&b->arena, "%s-%s-%s.%s.rpm", rpmtag_set_get_str(ts, RPMTAG_NAME),
	                         rpmtag_set_get_str(ts, RPMTAG_VERSION),
	                         rpmtag_set_get_str(ts, RPMTAG_RELEASE),
	                         pkg_has_nosource(b->spec) ? "nosrc" : "src");
}

/* %{_rpmfilename} rendered over the package's tags. */
static const char *pkg_filename(struct build *b, const struct rpmtag_set *ts, struct kiln_err *err)
{
	const char *fmt = worker_build_expand(b, "%{_rpmfilename}", err);
	struct kiln_buf out = KILN_BUF_INIT(4096);
	struct rpmtag_qf_source src;
	const char *name = NULL;
	kiln_rc rc;

	if (!fmt)
		return NULL;
	rc = spec_qf_source_make(b->spec, ts, &src, err);
	if (!rc)
		rc = rpmtag_qf_format(fmt, &src, &out, err);
	if (!rc)
		rc = kiln_buf_finish(&out, err);
	if (!rc) {
		if (!out.len || out.ptr[0] == '/' || strstr(out.ptr, "../") ||
		    !strcmp(out.ptr, ".."))
			kiln_err_set(err, KILN_EINVAL, "%%_rpmfilename gives a bad file name: %s",
			             out.ptr);
		else
			name = kiln_arena_printf(&b->arena, "%s/%s", b->rpmdir, out.ptr);
	}
	kiln_buf_release(&out);
	return name;
}

/* Write one package and record it; the directory of path is made when missing. */
static kiln_rc pkg_write(struct build *b, const char *path, const struct pack_header *h,
                         const struct pack_file *files, size_t n, const struct pack_write_opts *wo,
                         const char *kind, const char *name, const char *arch, struct kiln_err *err)
{
	struct kiln_buf dir = KILN_BUF_INIT(KILN_LIMIT_TEXT_FILE);
	kiln_rc rc;

	util_path_dirname(path, &dir);
	rc = kiln_buf_finish(&dir, err);
	if (!rc)
		rc = util_mkdir_p(dir.ptr, 0755, err);
	kiln_buf_release(&dir);
	if (!rc)
		rc = pack_write(path, h, files, n, wo, err);
	if (!rc && b->o->sign_key) {
		struct sign_opts so = {0};

		rc = sign_time_pick(b->o->sign_key, -1, &so.time, err);
		if (!rc)
			rc = sign_package(b->o->sign_key, path, &so, 0, NULL, err);
		if (rc)
			(void)unlink(path);
	}
	if (!rc)
		rc = worker_build_output_add(b, path, kind, name, arch, err);
	else if (!err->input[0])
		kiln_err_locate(err, path, 0, 0);
	return rc;
}

/* ---------------------------------------------------------------------------------------- */
/* Binary packages. */

/* Automatic dependencies (with config() ones) of one package, added to its header. */
static kiln_rc pkg_deps(struct build *b, struct spec_package *pkg, struct pack_header *h,
                        struct worker_filelist *fl, struct worker_filedeps *fd,
                        struct kiln_err *err)
{
	struct worker_deps prov, req, rec;
	struct worker_autodeps_opts ao = {0};
	const struct {
		struct worker_deps *set;
		enum pack_dep_kind kind;
	} out[] = {{&prov, PACK_DEP_PROVIDE}, {&req, PACK_DEP_REQUIRE}, {&rec, PACK_DEP_RECOMMEND}};
	kiln_rc rc;
	size_t i, k;

	ao.macros = b->mc;
	ao.autoreq = pkg->autoreq;
	ao.autoprov = pkg->autoprov;
	ao.name = rpmtag_set_get_str(pkg->tags, RPMTAG_NAME);
	ao.evr = pkg_evr(b, pkg->tags);
	ao.filedeps = fd;
	if (!ao.evr)
		return kiln_err_set(err, KILN_ENOMEM, "out of memory");
	worker_deps_init(&prov);
	worker_deps_init(&req);
	worker_deps_init(&rec);
	rc = worker_autodeps_collect(fl->files, fl->n, &ao, &prov, &req, &rec, err);
	for (k = 0; !rc && k < KILN_ARRAY_SIZE(out); k++) {
		for (i = 0; !rc && i < out[k].set->n; i++) {
			const struct worker_dep *d = &out[k].set->v[i];

			rc = pack_deps_add(h, out[k].kind, d->name, d->version, d->flags, err);
		}
	}
	/* The writer indexes them into the header's sets (FILEDEPENDSX/N, DEPENDSDICT). */
	for (i = 0; !rc && i < fl->n && i < fd->nfiles; i++) {
		fl->files[i].deps = fd->deps + fd->start[i];
		fl->files[i].ndeps = fd->count[i];
	}
	worker_deps_release(&prov);
	worker_deps_release(&req);
	worker_deps_release(&rec);
	return rc;
}

/* What a binary package's header still needs once its payload is under way. */
struct pkg_late {
	struct build *b;
	struct spec_package *pkg;
	struct worker_filelist *fl;
	struct pack_header *h;
	int format;
	struct worker_filedeps fd; /* the files' deps point here until the package is written */
};

/* Runs while pack_write compresses the payload on another thread: libmagic and the
 * dependency generators read the buildroot alongside it. */
static kiln_rc pkg_late_run(void *arg, struct kiln_err *err)
{
	struct pkg_late *l = arg;
	kiln_rc rc = worker_filelist_classify(l->fl, l->format, err);

	return rc ? rc : pkg_deps(l->b, l->pkg, l->h, l->fl, &l->fd, err);
}

/* rpmbuild's summary of a package's dependencies once its files are processed: one line
 * per kind, each dependency as "NAME OP EVR". The plain "Requires:" line lists only the
 * generated ones and trigger conditions, as rpmbuild's does. Read back from the package
 * written, so the writer's rpmlib() requirements are in it. */
static void pkg_deps_print(struct build *b, const char *path)
{
	static const struct {
		const char *label;
		uint32_t name, flags, version;
		uint32_t mask; /* 0: every entry */
	} kinds[] = {
	    {"Provides", RPMTAG_PROVIDENAME, RPMTAG_PROVIDEFLAGS, RPMTAG_PROVIDEVERSION, 0},
#define REQ(label, mask)                                                                           \
	{label, RPMTAG_REQUIRENAME, RPMTAG_REQUIREFLAGS, RPMTAG_REQUIREVERSION, mask}
	    REQ("Requires(interp)", RPMTAG_DEP_INTERP),
	    REQ("Requires(rpmlib)", RPMTAG_DEP_RPMLIB),
	    REQ("Requires(verify)", RPMTAG_DEP_SCRIPT_VERIFY),
	    REQ("Requires(pre)", RPMTAG_DEP_SCRIPT_PRE),
	    REQ("Requires(post)", RPMTAG_DEP_SCRIPT_POST),
	    REQ("Requires(preun)", RPMTAG_DEP_SCRIPT_PREUN),
	    REQ("Requires(postun)", RPMTAG_DEP_SCRIPT_POSTUN),
	    REQ("Requires(pretrans)", RPMTAG_DEP_PRETRANS),
	    REQ("Requires(posttrans)", RPMTAG_DEP_POSTTRANS),
	    REQ("Requires(preuntrans)", RPMTAG_DEP_PREUNTRANS),
	    REQ("Requires(postuntrans)", RPMTAG_DEP_POSTUNTRANS),
	    REQ("Requires", RPMTAG_DEP_FIND_REQUIRES | RPMTAG_DEP_TRIGGERIN | RPMTAG_DEP_TRIGGERUN |
	                        RPMTAG_DEP_TRIGGERPOSTUN | RPMTAG_DEP_TRIGGERPREIN),
#undef REQ
	    {"Conflicts", RPMTAG_CONFLICTNAME, RPMTAG_CONFLICTFLAGS, RPMTAG_CONFLICTVERSION, 0},
	    {"Obsoletes", RPMTAG_OBSOLETENAME, RPMTAG_OBSOLETEFLAGS, RPMTAG_OBSOLETEVERSION, 0},
	    {"Recommends", RPMTAG_RECOMMENDNAME, RPMTAG_RECOMMENDFLAGS, RPMTAG_RECOMMENDVERSION, 0},
	    {"Suggests", RPMTAG_SUGGESTNAME, RPMTAG_SUGGESTFLAGS, RPMTAG_SUGGESTVERSION, 0},
	    {"Supplements", RPMTAG_SUPPLEMENTNAME, RPMTAG_SUPPLEMENTFLAGS, RPMTAG_SUPPLEMENTVERSION,
	     0},
	    {"Enhances", RPMTAG_ENHANCENAME, RPMTAG_ENHANCEFLAGS, RPMTAG_ENHANCEVERSION, 0},
	};
	struct pack_package p = {0};
	struct kiln_err err = KILN_ERR_INIT;
	struct kiln_buf line = KILN_BUF_INIT(KILN_LIMIT_TEXT_FILE);
	size_t k;
	uint32_t i;

	if (pack_package_open(&p, path, NULL, &err))
		goto out;
	for (k = 0; k < KILN_ARRAY_SIZE(kinds); k++) {
		const struct pack_entry *n = pack_header_get(&p.hdr, kinds[k].name);
		const struct pack_entry *f = pack_header_get(&p.hdr, kinds[k].flags);
		const struct pack_entry *v = pack_header_get(&p.hdr, kinds[k].version);
		bool any = false;

		if (!n || !f || !v || f->count != n->count || v->count != n->count ||
		    f->type != RPMTAG_TYPE_INT32 || !rpmtag_type_is_string(n->type) ||
		    !rpmtag_type_is_string(v->type))
			continue;
		kiln_buf_reset(&line);
		for (i = 0; i < n->count; i++) {
			uint32_t fl = ((const uint32_t *)f->data)[i];
			const char *ver = ((const char *const *)v->data)[i];
			static const char *const ops[] = {"", "<", ">", "<>", "=", "<=", ">=", "="};

			if (kinds[k].mask && !(fl & kinds[k].mask))
				continue;
			kiln_buf_addf(&line, "%s%s", any ? " " : "",
			              ((const char *const *)n->data)[i]);
			if (*ver && (fl & 0xe))
				kiln_buf_addf(&line, " %s %s", ops[(fl >> 1) & 7], ver);
			any = true;
		}
		if (any && !kiln_buf_finish(&line, NULL))
			worker_build_log(b, "%s: %s\n", kinds[k].label, line.ptr);
	}
out:
	kiln_buf_release(&line);
	pack_package_release(&p);
}

static kiln_rc pkg_binary_write(struct build *b, struct spec_package *pkg,
                                struct worker_filelist *fl, struct kiln_err *err)
{
	struct pack_header h;
	struct pack_write_opts wo;
	struct pkg_late late;
	const char *path, *srpm, *arch;
	kiln_rc rc;

	pack_header_init(&h);
	rc = pkg_write_opts(b, false, &wo, err);
	if (!rc)
		rc = pkg_tags_copy(&h, pkg->tags, err);
	if (!rc)
		rc = pkg_build_tags(b, &h, err);
	srpm = pkg_srpm_name(b);
	if (!rc)
		rc = srpm ? pack_header_put_string(&h, RPMTAG_SOURCERPM, srpm, err) : KILN_ENOMEM;
	if (!rc && b->has_srcpkgid)
		rc = pack_header_put(&h, RPMTAG_SOURCESIGMD5, RPMTAG_TYPE_BIN, b->srcpkgid,
		                     sizeof(b->srcpkgid), err);
	path = rc ? NULL : pkg_filename(b, pkg->tags, err);
	if (!rc && !path)
		rc = err->code ? err->code : KILN_ENOMEM;
	arch = rpmtag_set_get_str(pkg->tags, RPMTAG_ARCH);
	late = (struct pkg_late){b, pkg, fl, &h, wo.format, {0}};
	worker_filedeps_init(&late.fd);
	wo.overlap = pkg_late_run;
	wo.overlap_arg = &late;
	if (!rc)
		rc = pkg_write(b, path, &h, fl->files, fl->n, &wo, "binary",
		               rpmtag_set_get_str(pkg->tags, RPMTAG_NAME), arch ? arch : "", err);
	for (size_t i = 0; i < fl->n; i++) {
		fl->files[i].deps = NULL;
		fl->files[i].ndeps = 0;
	}
	if (!rc)
		pkg_deps_print(b, path);
	worker_filedeps_release(&late.fd);
	pack_header_release(&h);
	return rc;
}

kiln_rc worker_build_binaries(struct build *b, bool write, struct kiln_err *err)
{
	struct spec *spec = b->spec;
	struct worker_filelist *lists;
	const struct worker_filelist **lp;
	size_t nlp = 0;
	struct worker_filelist_opts fo;
	struct pack_write_opts wo;
	size_t i, n = spec->npackages;
	kiln_rc rc = KILN_OK;

	lists = kiln_calloc(n, sizeof(*lists));
	lp = kiln_calloc(n, sizeof(*lp));
	if (!lists || !lp) {
		free(lists);
		free(lp);
		return kiln_err_set(err, KILN_ENOMEM, "out of memory");
	}
	memset(&fo, 0, sizeof(fo));
	fo.buildroot = b->buildroot;
	fo.builddir =
	    b->subdir ? kiln_arena_printf(&b->arena, "%s/%s", b->builddir, b->subdir) : b->builddir;
	fo.macros = b->mc;
	fo.sandbox_top = b->in_top;
	fo.topdir = b->topdir;
	fo.now = (uint32_t)b->res->buildtime; /* %ghost mtimes: reproducible */
	rc = pkg_write_opts(b, false, &wo, err);
	fo.rpmformat = wo.format;
	fo.defer_classify = true; /* done by pkg_late_run, alongside the payload */
	if (!rc)
		rc = worker_build_mtime_clamp(b, &fo.clamp_mtime, &fo.clamp_to, err);
	/* A spec without %install still has a (then empty) buildroot. */
	if (!rc && !util_is_dir(b->buildroot) && (b->o->steps & WORKER_STEP_INSTALL))
		rc = util_mkdir_p(b->buildroot, 0755, err);
	if (!rc && !util_is_dir(b->buildroot))
		rc = kiln_err_set(err, KILN_ENOTFOUND,
		                  "the buildroot %s does not exist (run %%install first)",
		                  b->buildroot);
	for (i = 0; i < n && !rc; i++) {
		struct spec_package *pkg = spec->packages[i];

		if (!pkg->has_files)
			continue;
		rc = spec_package_build_tags(spec, pkg, err);
		if (!rc)
			worker_build_log(b, "Processing files: %s-%s.%s\n",
			                 rpmtag_set_get_str(pkg->tags, RPMTAG_NAME),
			                 pkg_evr(b, pkg->tags),
			                 rpmtag_set_get_str(pkg->tags, RPMTAG_ARCH));
		if (!rc)
			rc = worker_filelist_collect(&lists[i], spec, pkg, &fo, err);
		lp[nlp++] = &lists[i];
	}
	if (!rc)
		worker_build_log(b, "Checking for unpackaged file(s): %s\n",
		                 worker_build_expand(b, "%{buildroot}", err));
	if (!rc)
		rc = worker_filelist_check_unpackaged(fo.buildroot, lp, nlp, b->mc, NULL, err);
	for (i = 0; i < n && !rc && write; i++) {
		if (spec->packages[i]->has_files)
			rc = pkg_binary_write(b, spec->packages[i], &lists[i], err);
	}
	for (i = 0; i < n; i++)
		worker_filelist_release(&lists[i]);
	free(lists);
	free(lp);
	return rc;
}

/* ---------------------------------------------------------------------------------------- */
/* The source package. */

static kiln_rc pkg_source_file(struct build *b, struct pack_file *f, const char *src,
                               const char *name, uint32_t flags, bool clamp, uint32_t to,
                               struct kiln_err *err)
{
	struct stat st;

	if (stat(src, &st))
		return kiln_err_set(err, KILN_ENOTFOUND, "Bad file: %s: No such file or directory",
		                    src);
	if (!S_ISREG(st.st_mode))
		return kiln_err_set(err, KILN_EINVAL, "Bad file: %s: not a regular file", src);
	memset(f, 0, sizeof(*f));
	f->path = name;
	f->src = src;
	f->mode = S_IFREG | (st.st_mode & 07777);
	f->mtime = (uint32_t)st.st_mtime;
	if (clamp && f->mtime > to)
		f->mtime = to;
	f->flags = flags;
	f->verify = (uint32_t)RPMTAG_VERIFY_ALL;
	(void)b;
	return KILN_OK;
}

/* The SPEC tag: the parsed spec with the build's top directory written as "%{_topdir}",
 * so that a source package does not depend on where it was built (rpm stores the absolute
 * paths, which makes its source packages differ between top directories). */
static kiln_rc pkg_spec_tag(struct build *b, struct pack_header *h, struct kiln_err *err)
{
	const char *text = b->spec->parsed.ptr;
	const char *top = b->in_top ? b->in_top : b->topdir;
	size_t tlen = strlen(top);
	struct kiln_buf out = KILN_BUF_INIT(KILN_LIMIT_SPEC_BYTES);
	const char *p = text, *hit;
	kiln_rc rc;

	while (tlen > 1 && (hit = strstr(p, top)) != NULL) {
		char next = hit[tlen];

		kiln_buf_add(&out, p, (size_t)(hit - p));
		if (next == '/' || next == '\0' || next == '\'' || next == '"' || next == ' ' ||
		    next == '\n')
			kiln_buf_addstr(&out, "%{_topdir}");
		else
			kiln_buf_add(&out, hit, tlen);
		p = hit + tlen;
	}
	kiln_buf_addstr(&out, p);
	rc = kiln_buf_finish(&out, err);
	if (!rc)
		rc = pack_header_put_string(h, RPMTAG_SPEC, out.ptr, err);
	kiln_buf_release(&out);
	return rc;
}

/* rpmbuild marks the source package of a spec with %generate_buildrequires, so that farms
 * know to run it before installing the build dependencies; the requirement is
 * "missing ok" (flags as rpmbuild 4.18 writes them). */
static kiln_rc pkg_dynamic_buildrequires(const struct spec *spec, struct pack_header *h,
                                         struct kiln_err *err)
{
	const uint32_t flags =
	    RPMTAG_DEP_RPMLIB | RPMTAG_DEP_MISSINGOK | RPMTAG_DEP_LESS | RPMTAG_DEP_EQUAL;

	if (!spec->sections[SPEC_SEC_BUILDREQUIRES])
		return KILN_OK;
	return pack_deps_add(h, PACK_DEP_REQUIRE, "rpmlib(DynamicBuildRequires)", "4.15.0-1", flags,
	                     err);
}

kiln_rc worker_build_source(struct build *b, struct kiln_err *err)
{
	struct spec *spec = b->spec;
	struct pack_file *files;
	struct pack_header h;
	struct pack_write_opts wo;
	size_t i, n = 0;
	bool clamp;
	uint32_t to;
	const char *name, *path;
	kiln_rc rc;

	files = kiln_calloc(spec->nsources + 1, sizeof(*files));
	if (!files)
		return kiln_err_set(err, KILN_ENOMEM, "out of memory");
	pack_header_init(&h);
	rc = worker_build_mtime_clamp(b, &clamp, &to, err);
	if (!rc)
		rc = pkg_source_file(b, &files[n++], b->o->spec_path,
		                     util_path_basename(b->o->spec_path), RPMTAG_FILE_SPECFILE,
		                     clamp, to, err);
	for (i = 0; i < spec->nsources && !rc; i++) {
		const struct spec_source *s = &spec->sources[i];
		size_t j;
		bool dup = false;

		if (s->nosource)
			continue;
		for (j = 0; j < n; j++)
			dup |= !strcmp(files[j].path, s->file);
		if (!dup)
			rc = pkg_source_file(b, &files[n++], worker_build_host_path(b, s->path),
			                     s->file, 0, clamp, to, err);
	}
	if (!rc)
		rc = pkg_write_opts(b, true, &wo, err);
	if (!rc)
		rc = pkg_tags_copy(&h, spec->srctags, err);
	if (!rc)
		rc = pkg_build_tags(b, &h, err);
	if (!rc)
		rc = pkg_dynamic_buildrequires(spec, &h, err);
	if (!rc)
		rc = pack_header_put_u32(&h, RPMTAG_SOURCEPACKAGE, 1, err);
	/* rpm stores the parsed spec (what rpmspec -P prints) in the source package. */
	if (!rc)
		rc = pkg_spec_tag(b, &h, err);
	name = pkg_srpm_name(b);
	path = name ? kiln_arena_printf(&b->arena, "%s/%s", b->srcrpmdir, name) : NULL;
	if (!rc && !path)
		rc = kiln_err_set(err, KILN_ENOMEM, "out of memory");
	wo.pkgid_out = b->srcpkgid;
	if (!rc)
		rc = pkg_write(b, path, &h, files, n, &wo, "source",
		               rpmtag_set_get_str(spec->srctags, RPMTAG_NAME), "src", err);
	b->has_srcpkgid = !rc && wo.format == 4;
	pack_header_release(&h);
	free(files);
	return rc;
}
