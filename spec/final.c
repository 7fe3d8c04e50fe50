/*
 * final.c - what happens after the text: package checks and inherited tags, BuildSystem
 * synthesis and -a/-p fragments, scriptlets and dependencies into header tags, the source
 * package's header.
 */
#include "util/util.h"

#include "macro/macro.h"
#include "spec/spec.h"
#include "spec/spec_int.h"

/* ---------------------------------------------------------------------------------------- */
/* Per package, at the end of its preamble. */

static const uint32_t inherited[] = {
    RPMTAG_EPOCH,
    RPMTAG_VERSION,
    RPMTAG_RELEASE,
    RPMTAG_LICENSE,
    RPMTAG_PACKAGER,
    RPMTAG_DISTRIBUTION,
    1123 /* DISTURL */,
    RPMTAG_VENDOR,
    RPMTAG_URL,
    5034 /* VCS */,
    RPMTAG_PREFIXES,
    RPMTAG_DISTTAG,
    RPMTAG_BUGURL,
    5100,
    5101,
    RPMTAG_GROUP,
    5096 /* MODULARITYLABEL */,
};

static kiln_rc copy_tag(struct rpmtag_set *to, const struct rpmtag_set *from, uint32_t tag,
                        struct kiln_err *err)
{
	struct rpmtag_qf_value v;

	if (!rpmtag_set_get(from, tag, &v))
		return KILN_OK;
	return rpmtag_set_put(to, tag, v.type, v.data, v.count, err);
}

/* Tags rpm fills in the main package from macros when the spec does not set them. */
static kiln_rc fill_main(struct spec_parse_priv *p, struct spec_package *pkg)
{
	static const struct {
		uint32_t tag;
		const char *expr;
	} defaults[] = {
	    {RPMTAG_VENDOR, "%{?vendor}"},
	    {RPMTAG_PACKAGER, "%{?packager}"},
	    {RPMTAG_DISTRIBUTION, "%{?distribution}"},
	    {1123, "%{?disturl}"},
	    {RPMTAG_DISTTAG, "%{?disttag}"},
	    {RPMTAG_BUGURL, "%{?bugurl}"},
	    {5100, "%{?translationurl}"},
	    {5101, "%{?upstreamreleases}"},
	    {5096, "%{?modularitylabel}"},
	};
	struct rpmtag_qf_value v;
	kiln_rc rc = KILN_OK;
	size_t i;

	for (i = 0; !rc && i < KILN_ARRAY_SIZE(defaults); i++) {
		char *val = NULL;

		if (rpmtag_set_get(pkg->tags, defaults[i].tag, &v))
			continue;
		rc = macro_expand_str(p->ctx, defaults[i].expr, &val, p->err);
		if (!rc && *val)
			rc = rpmtag_set_put_str(pkg->tags, defaults[i].tag, val, p->err);
		free(val);
	}
	/* GROUP is translatable (an i18n string, type 9), the default too, as rpm puts it. */
	if (!rc && !rpmtag_set_get(pkg->tags, RPMTAG_GROUP, &v))
		rc = spec_put_i18n(p, pkg->tags, RPMTAG_GROUP, "C", "Unspecified");
	return rc;
}

kiln_rc spec_preamble_done(struct spec_parse_priv *p, struct spec_package *pkg)
{
	static const uint32_t required[] = {RPMTAG_NAME, RPMTAG_VERSION, RPMTAG_RELEASE,
	                                    RPMTAG_SUMMARY, RPMTAG_LICENSE};
	const char *nvr = pkg->is_main ? "(main package)" : pkg->name;
	struct rpmtag_qf_value v;
	char tn[64];
	kiln_rc rc = KILN_OK;
	size_t i;

	if (pkg->is_main)
		rc = fill_main(p, pkg);
	if (!rc && p->dup_tag)
		rc = spec_error(p, KILN_ESYNTAX, "Duplicate %s entries in package: %s",
		                rpmtag_shortname(p->dup_tag, tn, sizeof(tn)), nvr);
	p->dup_tag = 0;
	for (i = 0; !rc && !pkg->is_main && i < KILN_ARRAY_SIZE(inherited); i++) {
		if (!rpmtag_set_get(pkg->tags, inherited[i], &v))
			rc = copy_tag(pkg->tags, p->spec->packages[0]->tags, inherited[i], p->err);
	}
	for (i = 0; !rc && i < KILN_ARRAY_SIZE(required); i++) {
		if (!rpmtag_set_get(pkg->tags, required[i], &v))
			rc = spec_error(p, KILN_ESYNTAX, "%s field must be present in package: %s",
			                rpmtag_shortname(required[i], tn, sizeof(tn)), nvr);
	}
	return rc;
}

/* ---------------------------------------------------------------------------------------- */
/* BuildSystem. */

static const char *const bs_sections[] = {
    "prep", "conf", "generate_buildrequires", "build", "install", "check", "clean"};

static bool parametric(struct spec_parse_priv *p, const char *name)
{
	char *body = NULL;
	struct kiln_err ignored = KILN_ERR_INIT;
	bool yes;
	struct kiln_buf e = KILN_BUF_INIT(256);

	/* %{lua:} knows whether a macro is parametric; avoid it: a parametric macro's
	 * %{?NAME:1} is 1, and rpm.isdefined gives the second flag. */
	kiln_buf_addf(&e, "%%{lua:local d, p = rpm.isdefined(\"%s\") print(p and 1 or 0)}", name);
	yes = !e.err && !macro_expand_str(p->ctx, e.ptr, &body, &ignored) && !strcmp(body, "1");
	free(body);
	kiln_buf_release(&e);
	return yes;
}

kiln_rc spec_buildsystem_check(struct spec_parse_priv *p, const char *name)
{
	char m[256];
	bool any = false;
	size_t i;

	for (i = 0; i < KILN_ARRAY_SIZE(bs_sections); i++) {
		snprintf(m, sizeof(m), "buildsystem_%s_%s", name, bs_sections[i]);
		any = any || parametric(p, m);
	}
	if (!any)
		return spec_error(p, KILN_ENOTFOUND, "line %d: Unknown buildsystem: %s", p->lineno,
		                  name);
	for (i = 3; i <= 4; i++) {
		snprintf(m, sizeof(m), "buildsystem_%s_%s", name, bs_sections[i]);
		if (!parametric(p, m))
			return spec_error(p, KILN_ENOTFOUND,
			                  "line %d: Required parametric macro %%%s not defined for "
			                  "buildsystem %s",
			                  p->lineno, m, name);
	}
	return KILN_OK;
}

/* The section order of bs_sections mapped to enum spec_section. */
static const enum spec_section bs_order[] = {
    SPEC_SEC_PREP,    SPEC_SEC_CONF,  SPEC_SEC_BUILDREQUIRES, SPEC_SEC_BUILD,
    SPEC_SEC_INSTALL, SPEC_SEC_CHECK, SPEC_SEC_CLEAN};

/* Parse generated text as more spec (rpm's PARSE_BUILDSYS stage). */
static kiln_rc parse_fragment_text(struct spec_parse_priv *p, const char *name,
                                   const struct kiln_buf *text)
{
	enum spec_part part;
	int r;
	kiln_rc rc = spec_read_push(p, name, text->ptr, text->len);

	if (rc)
		return rc;
	r = spec_read_line(p, SPEC_STRIP_NOTHING);
	if (r < 0)
		return p->err->code;
	part = r > 0 ? SPEC_PART_NONE : spec_is_part(p, p->line.ptr);
	while (part != SPEC_PART_NONE && part != SPEC_PART_ERROR)
		part = spec_dispatch_part(p, part);
	return part == SPEC_PART_ERROR ? (p->err->code ? p->err->code : KILN_ESYNTAX) : KILN_OK;
}

static kiln_rc synthesize_buildsystem(struct spec_parse_priv *p)
{
	struct kiln_buf text = KILN_BUF_INIT(KILN_LIMIT_MACRO_EXPANSION);
	kiln_rc rc = KILN_OK;
	size_t i, j;

	for (i = 0; !rc && i < KILN_ARRAY_SIZE(bs_sections); i++) {
		const struct spec_buildopts *o = &p->spec->buildopts[bs_order[i]];
		char m[256];

		if (p->have_section[bs_order[i]])
			continue;
		snprintf(m, sizeof(m), "buildsystem_%s_%s", p->spec->buildsystem, bs_sections[i]);
		if (!parametric(p, m)) {
			snprintf(m, sizeof(m), "buildsystem_default_%s", bs_sections[i]);
			if (!parametric(p, m))
				continue;
		}
		kiln_buf_reset(&text);
		kiln_buf_addf(&text, "%%%s\n%%%s", bs_sections[i], m);
		if (o->n)
			kiln_buf_addstr(&text, " --");
		for (j = 0; j < o->n; j++)
			kiln_buf_addf(&text, " %s", o->v[j]);
		kiln_buf_addch(&text, '\n');
		rc = kiln_buf_finish(&text, p->err);
		if (!rc)
			rc = parse_fragment_text(p, p->spec->path, &text);
	}
	kiln_buf_release(&text);
	return rc;
}

/* Main text, then each fragment in spec order: -a appends, -p prepends. */
static kiln_rc combine_sections(struct spec_parse_priv *p)
{
	struct kiln_buf text = KILN_BUF_INIT(KILN_LIMIT_MACRO_EXPANSION);
	kiln_rc rc = KILN_OK;
	size_t s, i;

	for (s = 0; !rc && s < SPEC_SEC_COUNT; s++) {
		bool present = p->have_section[s];

		kiln_buf_reset(&text);
		kiln_buf_add(&text, p->secbuf[s].ptr, p->secbuf[s].len);
		for (i = 0; i < p->nfrags; i++) {
			if (p->frags[i].sec != (enum spec_section)s)
				continue;
			present = true;
			if (p->frags[i].prepend)
				kiln_buf_insert(&text, 0, p->frags[i].text,
				                strlen(p->frags[i].text));
			else
				kiln_buf_addstr(&text, p->frags[i].text);
		}
		rc = kiln_buf_finish(&text, p->err);
		if (!rc && present) {
			p->spec->sections[s] = spec_strdup(p, text.ptr, text.len);
			if (!p->spec->sections[s])
				rc = KILN_ENOMEM;
		}
	}
	kiln_buf_release(&text);
	return rc;
}

/* ---------------------------------------------------------------------------------------- */
/* Header tags from the model. */

static const struct {
	uint32_t name, flags, version;
} dep_tags[SPEC_DEPS_COUNT] = {
    [SPEC_DEPS_REQUIRES] = {RPMTAG_REQUIRENAME, RPMTAG_REQUIREFLAGS, RPMTAG_REQUIREVERSION},
    [SPEC_DEPS_PROVIDES] = {RPMTAG_PROVIDENAME, RPMTAG_PROVIDEFLAGS, RPMTAG_PROVIDEVERSION},
    [SPEC_DEPS_CONFLICTS] = {RPMTAG_CONFLICTNAME, RPMTAG_CONFLICTFLAGS, RPMTAG_CONFLICTVERSION},
    [SPEC_DEPS_OBSOLETES] = {RPMTAG_OBSOLETENAME, RPMTAG_OBSOLETEFLAGS, RPMTAG_OBSOLETEVERSION},
    [SPEC_DEPS_RECOMMENDS] = {RPMTAG_RECOMMENDNAME, RPMTAG_RECOMMENDFLAGS, RPMTAG_RECOMMENDVERSION},
    [SPEC_DEPS_SUGGESTS] = {RPMTAG_SUGGESTNAME, RPMTAG_SUGGESTFLAGS, RPMTAG_SUGGESTVERSION},
    [SPEC_DEPS_SUPPLEMENTS] = {RPMTAG_SUPPLEMENTNAME, RPMTAG_SUPPLEMENTFLAGS,
                               RPMTAG_SUPPLEMENTVERSION},
    [SPEC_DEPS_ENHANCES] = {RPMTAG_ENHANCENAME, RPMTAG_ENHANCEFLAGS, RPMTAG_ENHANCEVERSION},
    [SPEC_DEPS_ORDER] = {5035, 5037, 5036},
};

static kiln_rc put_deps(struct rpmtag_set *ts, const struct spec_deps *d, uint32_t name_tag,
                        uint32_t flags_tag, uint32_t version_tag, struct kiln_err *err)
{
	kiln_rc rc = KILN_OK;
	size_t i;

	for (i = 0; !rc && i < d->n; i++) {
		rc = rpmtag_set_append(ts, name_tag, RPMTAG_TYPE_STRING_ARRAY, &d->v[i].name, 1,
		                       err);
		if (!rc)
			rc = rpmtag_set_append(ts, flags_tag, RPMTAG_TYPE_INT32, &d->v[i].flags, 1,
			                       err);
		if (!rc)
			rc = rpmtag_set_append(ts, version_tag, RPMTAG_TYPE_STRING_ARRAY,
			                       &d->v[i].evr, 1, err);
	}
	return rc;
}

void spec_script_tags(enum spec_script_kind kind, uint32_t *body, uint32_t *prog, uint32_t *flags)
{
	static const uint32_t t[][3] = {
	    [SPEC_SCRIPT_PRE] = {1023, 1085, 5020},
	    [SPEC_SCRIPT_POST] = {1024, 1086, 5021},
	    [SPEC_SCRIPT_PREUN] = {1025, 1087, 5022},
	    [SPEC_SCRIPT_POSTUN] = {1026, 1088, 5023},
	    [SPEC_SCRIPT_PRETRANS] = {1151, 1153, 5024},
	    [SPEC_SCRIPT_POSTTRANS] = {1152, 1154, 5025},
	    [SPEC_SCRIPT_PREUNTRANS] = {5103, 5105, 5107},
	    [SPEC_SCRIPT_POSTUNTRANS] = {5104, 5106, 5108},
	    [SPEC_SCRIPT_VERIFY] = {1079, 1091, 5026},
	};

	if ((size_t)kind < KILN_ARRAY_SIZE(t) && t[kind][0]) {
		*body = t[kind][0];
		*prog = t[kind][1];
		*flags = t[kind][2];
	} else {
		*body = *prog = *flags = 0;
	}
}

static uint32_t script_sense(enum spec_script_kind k)
{
	switch (k) {
	case SPEC_SCRIPT_PRE:
		return RPMTAG_DEP_SCRIPT_PRE;
	case SPEC_SCRIPT_POST:
		return RPMTAG_DEP_SCRIPT_POST;
	case SPEC_SCRIPT_PREUN:
		return RPMTAG_DEP_SCRIPT_PREUN;
	case SPEC_SCRIPT_POSTUN:
		return RPMTAG_DEP_SCRIPT_POSTUN;
	case SPEC_SCRIPT_PRETRANS:
		return RPMTAG_DEP_PRETRANS;
	case SPEC_SCRIPT_POSTTRANS:
		return RPMTAG_DEP_POSTTRANS;
	case SPEC_SCRIPT_PREUNTRANS:
		return RPMTAG_DEP_PREUNTRANS;
	case SPEC_SCRIPT_POSTUNTRANS:
		return RPMTAG_DEP_POSTUNTRANS;
	case SPEC_SCRIPT_VERIFY:
		return RPMTAG_DEP_SCRIPT_VERIFY;
	default:
		return 0;
	}
}

static kiln_rc put_prog(struct rpmtag_set *ts, uint32_t tag, const struct spec_script *s,
                        struct kiln_err *err)
{
	static const char *const sh[] = {"/bin/sh"};

	if (!s->nprog)
		return rpmtag_set_put(ts, tag, RPMTAG_TYPE_STRING, sh, 1, err);
	return rpmtag_set_put(ts, tag, s->nprog > 1 ? RPMTAG_TYPE_STRING_ARRAY : RPMTAG_TYPE_STRING,
	                      s->prog, (uint32_t)s->nprog, err);
}

/* The rpmlib() features a scriptlet needs from the installing rpm. */
static kiln_rc script_rpmlib(struct spec *spec, struct spec_package *pkg,
                             const struct spec_script *s, struct kiln_err *err)
{
	struct spec_deps *req = &pkg->deps[SPEC_DEPS_REQUIRES];
	const uint32_t f = RPMTAG_DEP_RPMLIB | RPMTAG_DEP_LESS | RPMTAG_DEP_EQUAL;
	kiln_rc rc = KILN_OK;

	if (s->nprog && !strcmp(s->prog[0], "<lua>"))
		rc = spec_deps_add(spec, req, "rpmlib(BuiltinLuaScripts)", "4.2.2-1", f, err);
	if (!rc && s->nprog > 1)
		rc =
		    spec_deps_add(spec, req, "rpmlib(ScriptletInterpreterArgs)", "4.0.3-1", f, err);
	if (!rc && (s->flags & (SPEC_SCRIPT_F_EXPAND | SPEC_SCRIPT_F_QFORMAT)))
		rc = spec_deps_add(spec, req, "rpmlib(ScriptletExpansion)", "4.9.0-1", f, err);
	return rc;
}

/* Ordinary scriptlets: body, program, flags; and the interpreter as a requirement. */
static kiln_rc script_tags(struct spec *spec, struct spec_package *pkg, const struct spec_script *s,
                           struct kiln_err *err)
{
	uint32_t body, prog, flags;
	const char *interp = s->nprog ? s->prog[0] : "/bin/sh";
	kiln_rc rc = KILN_OK;

	spec_script_tags(s->kind, &body, &prog, &flags);
	if (*s->body)
		rc = rpmtag_set_put_str(pkg->tags, body, s->body, err);
	if (!rc)
		rc = put_prog(pkg->tags, prog, s, err);
	if (!rc && s->flags)
		rc = rpmtag_set_put_u32(pkg->tags, flags, s->flags, err);
	if (!rc && strcmp(interp, "<lua>"))
		rc = spec_deps_add(spec, &pkg->deps[SPEC_DEPS_REQUIRES], interp, "",
		                   RPMTAG_DEP_INTERP | script_sense(s->kind), err);
	if (!rc)
		rc = script_rpmlib(spec, pkg, s, err);
	return rc;
}

struct trig_cond {
	const struct spec_dep *d;
	uint32_t index;
};

static int trig_cmp(const void *a, const void *b)
{
	const struct trig_cond *x = a;
	const struct trig_cond *y = b;
	int c = strcmp(x->d->name, y->d->name);

	if (!c)
		c = strcmp(x->d->evr, y->d->evr);
	if (!c)
		c = (x->d->flags > y->d->flags) - (x->d->flags < y->d->flags);
	if (!c)
		c = (x->index > y->index) - (x->index < y->index);
	return c;
}

/* Triggers of one family (plain, file, transaction file): scripts in order, conditions
 * sorted like rpm's dependency sets, each pointing at its script. */
static kiln_rc trigger_family(struct spec *spec, struct spec_package *pkg, enum spec_script_kind lo,
                              enum spec_script_kind hi, uint32_t base, struct kiln_err *err)
{
	struct trig_cond *conds = NULL;
	size_t nconds = 0;
	uint32_t index = 0;
	kiln_rc rc = KILN_OK;
	size_t i, j;
	/* tag layout: scripts, prog, flags, name, index, version, condflags */
	uint32_t t_name = base == 0 ? 1066 : base + 3;
	uint32_t t_index = base == 0 ? 1069 : base + 4, t_ver = base == 0 ? 1067 : base + 5;
	uint32_t t_cflags = base == 0 ? 1068 : base + 6;

	for (i = 0; i < pkg->nscripts; i++) {
		const struct spec_script *s = &pkg->scripts[i];
		struct trig_cond *v;
		const char *prog = s->nprog ? s->prog[0] : "/bin/sh";

		if (s->kind < lo || s->kind > hi)
			continue;
		if (strcmp(prog, "<lua>"))
			rc = spec_deps_add(spec, &pkg->deps[SPEC_DEPS_REQUIRES], prog, "",
			                   RPMTAG_DEP_INTERP, err);
		if (!rc)
			rc = script_rpmlib(spec, pkg, s, err);
		v = kiln_reallocarray(conds, nconds + s->conds.n + 1, sizeof(*v));
		if (!v) {
			rc = kiln_err_set(err, KILN_ENOMEM, "out of memory");
			break;
		}
		conds = v;
		for (j = 0; j < s->conds.n; j++) {
			conds[nconds].d = &s->conds.v[j];
			conds[nconds++].index = index;
		}
		index++;
		if (rc)
			break;
	}
	if (nconds)
		qsort(conds, nconds, sizeof(*conds), trig_cmp);
	for (i = 0; !rc && i < nconds; i++) {
		rc = rpmtag_set_append(pkg->tags, t_name, RPMTAG_TYPE_STRING_ARRAY,
		                       &conds[i].d->name, 1, err);
		if (!rc)
			rc = rpmtag_set_append(pkg->tags, t_ver, RPMTAG_TYPE_STRING_ARRAY,
			                       &conds[i].d->evr, 1, err);
		if (!rc)
			rc = rpmtag_set_append(pkg->tags, t_cflags, RPMTAG_TYPE_INT32,
			                       &conds[i].d->flags, 1, err);
		if (!rc)
			rc = rpmtag_set_append(pkg->tags, t_index, RPMTAG_TYPE_INT32,
			                       &conds[i].index, 1, err);
	}
	free(conds);
	return rc;
}

static kiln_rc package_tags(struct spec_parse_priv *p, struct spec_package *pkg)
{
	struct spec *spec = p->spec;
	struct kiln_err *err = p->err;
	char *arch = NULL, *os = NULL, *platform = NULL, *optflags = NULL;
	kiln_rc rc = KILN_OK;
	size_t i;

	rc = macro_expand_str(p->ctx, "%{_target_cpu}", &arch, err);
	if (!rc)
		rc = macro_expand_str(p->ctx, "%{_target_os}", &os, err);
	if (!rc)
		rc = macro_expand_str(p->ctx, "%{_target_platform}", &platform, err);
	if (!rc)
		rc = rpmtag_set_put_str(pkg->tags, RPMTAG_OS, os, err);
	if (!rc && !rpmtag_set_get_str(pkg->tags, RPMTAG_ARCH))
		rc = rpmtag_set_put_str(pkg->tags, RPMTAG_ARCH, arch, err);
	if (!rc)
		rc = rpmtag_set_put_str(pkg->tags, RPMTAG_PLATFORM, platform, err);
	if (!rc)
		rc = macro_expand_str(p->ctx, "%{optflags}", &optflags, err);
	if (!rc)
		rc = rpmtag_set_put_str(pkg->tags, RPMTAG_OPTFLAGS, optflags, err);
	for (i = 0; !rc && i < pkg->nscripts; i++) {
		if (pkg->scripts[i].kind < SPEC_SCRIPT_TRIGGERPREIN)
			rc = script_tags(spec, pkg, &pkg->scripts[i], err);
	}
	if (!rc)
		rc = trigger_family(spec, pkg, SPEC_SCRIPT_TRIGGERPREIN, SPEC_SCRIPT_TRIGGERPOSTUN,
		                    0, err);
	if (!rc)
		rc = trigger_family(spec, pkg, SPEC_SCRIPT_FILETRIGGERIN,
		                    SPEC_SCRIPT_FILETRIGGERPOSTUN, 5066, err);
	if (!rc)
		rc = trigger_family(spec, pkg, SPEC_SCRIPT_TRANSFILETRIGGERIN,
		                    SPEC_SCRIPT_TRANSFILETRIGGERPOSTUN, 5076, err);
	free(arch);
	free(os);
	free(platform);
	free(optflags);
	return rc;
}

/* "name = [E:]V-R" and, for packages with an arch, "name(ISA) = [E:]V-R". */
static kiln_rc self_provides(struct spec_parse_priv *p, struct spec_package *pkg)
{
	struct kiln_buf evr = KILN_BUF_INIT(KILN_LIMIT_LINE);
	struct kiln_buf isa = KILN_BUF_INIT(KILN_LIMIT_LINE);
	struct rpmtag_qf_value v;
	const char *arch = rpmtag_set_get_str(pkg->tags, RPMTAG_ARCH);
	char *isaname = NULL;
	kiln_rc rc;

	if (rpmtag_set_get(pkg->tags, RPMTAG_EPOCH, &v))
		kiln_buf_addf(&evr, "%u:", ((const uint32_t *)v.data)[0]);
	kiln_buf_addf(&evr, "%s-%s", rpmtag_set_get_str(pkg->tags, RPMTAG_VERSION),
	              rpmtag_set_get_str(pkg->tags, RPMTAG_RELEASE));
	rc = kiln_buf_finish(&evr, p->err);
	if (!rc)
		rc = spec_deps_add(p->spec, &pkg->deps[SPEC_DEPS_PROVIDES], pkg->name, evr.ptr,
		                   RPMTAG_DEP_EQUAL, p->err);
	if (!rc && arch && strcmp(arch, "noarch"))
		rc = macro_expand_str(p->ctx, "%{?_isa}", &isaname, p->err);
	if (!rc && isaname && *isaname) {
		kiln_buf_addf(&isa, "%s%s", pkg->name, isaname);
		rc = kiln_buf_finish(&isa, p->err);
		if (!rc)
			rc = spec_deps_add(p->spec, &pkg->deps[SPEC_DEPS_PROVIDES], isa.ptr,
			                   evr.ptr, RPMTAG_DEP_EQUAL, p->err);
	}
	free(isaname);
	kiln_buf_release(&evr);
	kiln_buf_release(&isa);
	return rc;
}

static kiln_rc changelog_tags(struct spec *spec, struct rpmtag_set *ts, struct kiln_err *err)
{
	kiln_rc rc = KILN_OK;
	size_t i;

	for (i = 0; !rc && i < spec->nchangelog; i++) {
		uint32_t t = (uint32_t)spec->changelog[i].time;

		rc = rpmtag_set_append(ts, RPMTAG_CHANGELOGTIME, RPMTAG_TYPE_INT32, &t, 1, err);
		if (!rc)
			rc = rpmtag_set_append(ts, RPMTAG_CHANGELOGNAME, RPMTAG_TYPE_STRING_ARRAY,
			                       &spec->changelog[i].name, 1, err);
		if (!rc)
			rc = rpmtag_set_append(ts, RPMTAG_CHANGELOGTEXT, RPMTAG_TYPE_STRING_ARRAY,
			                       &spec->changelog[i].text, 1, err);
	}
	return rc;
}

static kiln_rc put_list(struct rpmtag_set *ts, uint32_t tag, const char **v, size_t n,
                        struct kiln_err *err)
{
	return n ? rpmtag_set_put(ts, tag, RPMTAG_TYPE_STRING_ARRAY, v, (uint32_t)n, err) : KILN_OK;
}

/* The source package provides "NAME = [E:]V-R" of every package that gets built (has
 * %files), as rpm 4.18 and later put in source rpms. */
static kiln_rc source_provides(struct spec_parse_priv *p)
{
	struct spec *spec = p->spec;
	const uint32_t eq = RPMTAG_DEP_EQUAL;
	kiln_rc rc = KILN_OK;
	size_t i, k;

	/* In package order, not sorted like a dependency set. */
	for (i = 0; !rc && i < spec->npackages; i++) {
		const struct spec_package *pkg = spec->packages[i];
		const struct spec_deps *prov = &pkg->deps[SPEC_DEPS_PROVIDES];

		if (!pkg->has_files)
			continue;
		for (k = 0; !rc && k < prov->n; k++) {
			const struct spec_dep *d = &prov->v[k];

			if (strcmp(d->name, pkg->name) || d->flags != RPMTAG_DEP_EQUAL)
				continue;
			rc = rpmtag_set_append(spec->srctags, RPMTAG_PROVIDENAME,
			                       RPMTAG_TYPE_STRING_ARRAY, &d->name, 1, p->err);
			if (!rc)
				rc = rpmtag_set_append(spec->srctags, RPMTAG_PROVIDEFLAGS,
				                       RPMTAG_TYPE_INT32, &eq, 1, p->err);
			if (!rc)
				rc =
				    rpmtag_set_append(spec->srctags, RPMTAG_PROVIDEVERSION,
				                      RPMTAG_TYPE_STRING_ARRAY, &d->evr, 1, p->err);
			break;
		}
	}
	return rc;
}

/* The scripts of one trigger family, in spec order (the order TRIGGERINDEX counts). */
static kiln_rc trigger_scripts(struct spec_package *pkg, enum spec_script_kind lo,
                               enum spec_script_kind hi, uint32_t base, struct kiln_err *err)
{
	uint32_t t_scripts = base == 0 ? 1065 : base, t_prog = base == 0 ? 1092 : base + 1;
	uint32_t t_flags = base == 0 ? 5027 : base + 2;
	uint32_t t_prio = base == 5066 ? 5084 : 5085;
	bool any_flags = false;
	kiln_rc rc = KILN_OK;
	size_t i;

	/* rpm writes the flags array of a family only when some script of it has flags. */
	for (i = 0; i < pkg->nscripts; i++) {
		if (pkg->scripts[i].kind >= lo && pkg->scripts[i].kind <= hi)
			any_flags |= pkg->scripts[i].flags != 0;
	}
	for (i = 0; !rc && i < pkg->nscripts; i++) {
		const struct spec_script *s = &pkg->scripts[i];
		const char *prog = s->nprog ? s->prog[0] : "/bin/sh";

		if (s->kind < lo || s->kind > hi)
			continue;
		rc = rpmtag_set_append(pkg->tags, t_scripts, RPMTAG_TYPE_STRING_ARRAY, &s->body, 1,
		                       err);
		if (!rc)
			rc = rpmtag_set_append(pkg->tags, t_prog, RPMTAG_TYPE_STRING_ARRAY, &prog,
			                       1, err);
		if (!rc && any_flags)
			rc = rpmtag_set_append(pkg->tags, t_flags, RPMTAG_TYPE_INT32, &s->flags, 1,
			                       err);
		if (!rc && base)
			rc = rpmtag_set_append(pkg->tags, t_prio, RPMTAG_TYPE_INT32, &s->priority,
			                       1, err);
	}
	return rc;
}

kiln_rc spec_package_build_tags(struct spec *spec, struct spec_package *pkg, struct kiln_err *err)
{
	kiln_rc rc =
	    trigger_scripts(pkg, SPEC_SCRIPT_TRIGGERPREIN, SPEC_SCRIPT_TRIGGERPOSTUN, 0, err);

	if (!rc)
		rc = trigger_scripts(pkg, SPEC_SCRIPT_FILETRIGGERIN, SPEC_SCRIPT_FILETRIGGERPOSTUN,
		                     5066, err);
	if (!rc)
		rc = trigger_scripts(pkg, SPEC_SCRIPT_TRANSFILETRIGGERIN,
		                     SPEC_SCRIPT_TRANSFILETRIGGERPOSTUN, 5076, err);
	if (!rc && !pkg->is_main)
		rc = changelog_tags(spec, pkg->tags, err);
	if (!rc)
		rpmtag_set_sort(pkg->tags);
	return rc;
}

/* The source package: a subset of the main package's tags plus sources and build deps. */
static kiln_rc source_tags(struct spec_parse_priv *p)
{
	static const uint32_t copied[] = {
	    RPMTAG_HEADERI18NTABLE,
	    RPMTAG_NAME,
	    RPMTAG_VERSION,
	    RPMTAG_RELEASE,
	    RPMTAG_EPOCH,
	    RPMTAG_SUMMARY,
	    RPMTAG_DESCRIPTION,
	    RPMTAG_PACKAGER,
	    RPMTAG_DISTRIBUTION,
	    1123,
	    RPMTAG_VENDOR,
	    RPMTAG_LICENSE,
	    RPMTAG_GROUP,
	    RPMTAG_OS,
	    RPMTAG_ARCH,
	    RPMTAG_CHANGELOGTIME,
	    RPMTAG_CHANGELOGNAME,
	    RPMTAG_CHANGELOGTEXT,
	    RPMTAG_URL,
	    RPMTAG_BUGURL,
	    5034, /* VCS */
	    RPMTAG_DISTTAG,
	    5096, /* MODULARITYLABEL */
	};
	struct spec *spec = p->spec;
	const struct rpmtag_set *main_tags = spec->packages[0]->tags;
	kiln_rc rc = KILN_OK;
	size_t i;

	for (i = 0; !rc && i < KILN_ARRAY_SIZE(copied); i++)
		rc = copy_tag(spec->srctags, main_tags, copied[i], p->err);
	if (!rc && spec->nbuildarchs)
		rc = rpmtag_set_put(spec->srctags, RPMTAG_BUILDARCHS, RPMTAG_TYPE_STRING_ARRAY,
		                    spec->buildarchs, (uint32_t)spec->nbuildarchs, p->err);
	/* rpm lists sources and patches newest first. */
	for (i = spec->nsources; !rc && i-- > 0;) {
		const struct spec_source *s = &spec->sources[i];

		rc = rpmtag_set_append(spec->srctags, s->is_patch ? RPMTAG_PATCH : RPMTAG_SOURCE,
		                       RPMTAG_TYPE_STRING_ARRAY, &s->file, 1, p->err);
		if (!rc && s->nosource)
			rc = rpmtag_set_append(spec->srctags, s->is_patch ? 1052 : 1051,
			                       RPMTAG_TYPE_INT32, &s->num, 1, p->err);
	}
	if (!rc)
		rc = put_deps(spec->srctags, &spec->buildrequires, RPMTAG_REQUIRENAME,
		              RPMTAG_REQUIREFLAGS, RPMTAG_REQUIREVERSION, p->err);
	if (!rc)
		rc = put_deps(spec->srctags, &spec->buildconflicts, RPMTAG_CONFLICTNAME,
		              RPMTAG_CONFLICTFLAGS, RPMTAG_CONFLICTVERSION, p->err);
	if (!rc)
		rc = put_list(spec->srctags, 1059, spec->excludearch, spec->nexcludearch, p->err);
	if (!rc)
		rc = put_list(spec->srctags, 1061, spec->exclusivearch, spec->nexclusivearch,
		              p->err);
	if (!rc)
		rc = put_list(spec->srctags, 1060, spec->excludeos, spec->nexcludeos, p->err);
	if (!rc)
		rc = put_list(spec->srctags, 1062, spec->exclusiveos, spec->nexclusiveos, p->err);
	if (!rc)
		rc = source_provides(p);
	return rc;
}

kiln_rc spec_lua_add_source(struct spec_parse_priv *p, const struct spec_source *src)
{
	kiln_rc rc =
	    macro_lua_append_str(p->ctx, src->is_patch ? "patches" : "sources", src->path, p->err);

	if (!rc)
		rc = macro_lua_append_num(p->ctx, src->is_patch ? "patch_nums" : "source_nums",
		                          src->num, p->err);
	return rc;
}

static bool list_has(const char *const *v, size_t n, const char *s)
{
	size_t i;

	for (i = 0; i < n; i++) {
		if (!strcasecmp(v[i], s))
			return true;
	}
	return false;
}

/* rpmbuild refuses a target the spec excludes (rpm's checkForValidArchitectures; rpmspec
 * parses with SPEC_PARSE_ANYARCH). A noarch build is checked with the build machine's cpu. */
static kiln_rc check_architectures(struct spec_parse_priv *p)
{
	struct spec *spec = p->spec;
	char *arch = NULL;
	char *os = NULL;
	kiln_rc rc = macro_expand_str(p->ctx, "%{_target_cpu}", &arch, p->err);

	/* rpm 4.18's build/parseSpec.c checkForValidArchitectures() tests %{_build_cpu} for
	 * a noarch target: the machine's cpu, so "BuildArch: noarch" with "ExclusiveArch:
	 * x86_64" builds on x86_64 (and --target noarch too). */
	if (!rc && !strcmp(arch, "noarch")) {
		char cpu[128];

		macro_build_cpu(p->ctx, cpu, sizeof(cpu));
		free(arch);
		arch = NULL;
		if (!cpu[0]) /* a bare context (no rpmrc): its own %_build_cpu */
			rc = macro_expand_str(p->ctx, "%{_build_cpu}", &arch, p->err);
		else if (!(arch = kiln_strdup(cpu)))
			rc = kiln_err_set(p->err, KILN_ENOMEM, "out of memory");
	}
	if (!rc)
		rc = macro_expand_str(p->ctx, "%{_target_os}", &os, p->err);
	if (rc)
		goto out;
	if (list_has(spec->excludearch, spec->nexcludearch, arch))
		rc = kiln_err_set(p->err, KILN_EUNSUPP, "Architecture is excluded: %s", arch);
	else if (spec->nexclusivearch && !list_has(spec->exclusivearch, spec->nexclusivearch, arch))
		rc = kiln_err_set(p->err, KILN_EUNSUPP, "Architecture is not included: %s", arch);
	else if (list_has(spec->excludeos, spec->nexcludeos, os))
		rc = kiln_err_set(p->err, KILN_EUNSUPP, "OS is excluded: %s", os);
	else if (spec->nexclusiveos && !list_has(spec->exclusiveos, spec->nexclusiveos, os))
		rc = kiln_err_set(p->err, KILN_EUNSUPP, "OS is not included: %s", os);
out:
	free(arch);
	free(os);
	return rc;
}

kiln_rc spec_finish(struct spec_parse_priv *p)
{
	struct spec *spec = p->spec;
	kiln_rc rc = KILN_OK;
	size_t i;

	if (!(p->flags & SPEC_PARSE_ANYARCH))
		rc = check_architectures(p);
	if (!rc && spec->buildsystem)
		rc = synthesize_buildsystem(p);
	if (!rc)
		rc = combine_sections(p);
	for (i = 0; !rc && i < spec->npackages; i++) {
		struct spec_package *pkg = spec->packages[i];

		if (!pkg->has_description)
			rc = spec_error(p, KILN_ESYNTAX, "Package has no %%description: %s",
			                pkg->name);
		if (!rc)
			rc = package_tags(p, pkg);
		if (!rc)
			rc = self_provides(p, pkg);
		/* rpm keeps the changelog in the main package only until packaging, which
		 * copies it into every binary package. */
		if (!rc && pkg->is_main)
			rc = changelog_tags(spec, pkg->tags, p->err);
	}
	for (i = 0; !rc && i < spec->npackages; i++) {
		struct spec_package *pkg = spec->packages[i];
		size_t k;

		for (k = 0; !rc && k < SPEC_DEPS_COUNT; k++)
			rc = put_deps(pkg->tags, &pkg->deps[k], dep_tags[k].name, dep_tags[k].flags,
			              dep_tags[k].version, p->err);
	}
	if (!rc)
		rc = source_tags(p);
	/* rpm iterates a header in tag order (%{*}, --xml, --json). */
	for (i = 0; !rc && i < spec->npackages; i++)
		rpmtag_set_sort(spec->packages[i]->tags);
	if (!rc)
		rpmtag_set_sort(spec->srctags);
	return rc;
}
