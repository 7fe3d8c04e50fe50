/*
 * deps.c - dependency triples (NAME/VERSION/FLAGS string and int arrays) kept sorted the way
 * rpmbuild's sorted dependency sets store them (rpm-reference.md section 2.7).
 */
#include "util/util.h"

#include "pack/pack.h"
#include "pack/pack_int.h"

static const uint32_t dep_tags[][3] = {
    [PACK_DEP_REQUIRE] = {RPMTAG_REQUIRENAME, RPMTAG_REQUIREVERSION, RPMTAG_REQUIREFLAGS},
    [PACK_DEP_PROVIDE] = {RPMTAG_PROVIDENAME, RPMTAG_PROVIDEVERSION, RPMTAG_PROVIDEFLAGS},
    [PACK_DEP_CONFLICT] = {RPMTAG_CONFLICTNAME, RPMTAG_CONFLICTVERSION, RPMTAG_CONFLICTFLAGS},
    [PACK_DEP_OBSOLETE] = {RPMTAG_OBSOLETENAME, RPMTAG_OBSOLETEVERSION, RPMTAG_OBSOLETEFLAGS},
    [PACK_DEP_RECOMMEND] = {RPMTAG_RECOMMENDNAME, RPMTAG_RECOMMENDVERSION, RPMTAG_RECOMMENDFLAGS},
    [PACK_DEP_SUGGEST] = {RPMTAG_SUGGESTNAME, RPMTAG_SUGGESTVERSION, RPMTAG_SUGGESTFLAGS},
    [PACK_DEP_SUPPLEMENT] = {RPMTAG_SUPPLEMENTNAME, RPMTAG_SUPPLEMENTVERSION,
                             RPMTAG_SUPPLEMENTFLAGS},
    [PACK_DEP_ENHANCE] = {RPMTAG_ENHANCENAME, RPMTAG_ENHANCEVERSION, RPMTAG_ENHANCEFLAGS},
    [PACK_DEP_ORDER] = {5035, 5036, 5037},
};

static int dep_cmp(const char *n1, const char *v1, uint32_t f1, const char *n2, const char *v2,
                   uint32_t f2)
{
	int c = strcmp(n1, n2);

	if (c)
		return c;
	c = strcmp(v1, v2);
	if (c)
		return c;
	return f1 < f2 ? -1 : f1 > f2;
}

kiln_rc pack_deps_add(struct pack_header *h, enum pack_dep_kind kind, const char *name,
                      const char *version, uint32_t flags, struct kiln_err *err)
{
	const struct pack_entry *en, *ev, *ef;
	const char **names = NULL, **vers = NULL;
	uint32_t *fl = NULL, n = 0, i, at;
	kiln_rc rc = KILN_OK;

	if ((unsigned)kind >= KILN_ARRAY_SIZE(dep_tags) || !name || !*name)
		return kiln_err_set(err, KILN_EINVAL, "bad dependency");
	version = version ? version : "";
	en = pack_header_get(h, dep_tags[kind][0]);
	ev = pack_header_get(h, dep_tags[kind][1]);
	ef = pack_header_get(h, dep_tags[kind][2]);
	if (en && (!ev || !ef || ev->count != en->count || ef->count != en->count ||
	           !rpmtag_type_is_string(en->type) || !rpmtag_type_is_string(ev->type) ||
	           ef->type != RPMTAG_TYPE_INT32))
		return kiln_err_set(err, KILN_EINVAL,
		                    "dependency tags %" PRIu32 " are inconsistent",
		                    dep_tags[kind][0]);
	n = en ? en->count : 0;
	for (at = 0; at < n; at++) {
		int c = dep_cmp(pack_entry_str(en, at), pack_entry_str(ev, at),
		                (uint32_t)pack_entry_num(ef, at), name, version, flags);

		if (!c)
			return KILN_OK;
		if (c > 0)
			break;
	}
	names = kiln_calloc(n + 1, sizeof(*names));
	vers = kiln_calloc(n + 1, sizeof(*vers));
	fl = kiln_calloc(n + 1, sizeof(*fl));
	if (!names || !vers || !fl) {
		rc = kiln_err_set(err, KILN_ENOMEM, "out of memory");
		goto out;
	}
	for (i = 0; i <= n; i++) {
		uint32_t src = i < at ? i : i - 1;

		names[i] = i == at ? name : pack_entry_str(en, src);
		vers[i] = i == at ? version : pack_entry_str(ev, src);
		fl[i] = i == at ? flags : (uint32_t)pack_entry_num(ef, src);
	}
	rc = pack_header_put_strings(h, dep_tags[kind][0], names, n + 1, err);
	if (!rc)
		rc = pack_header_put_strings(h, dep_tags[kind][1], vers, n + 1, err);
	if (!rc)
		rc = pack_header_put(h, dep_tags[kind][2], RPMTAG_TYPE_INT32, fl, n + 1, err);
out:
	free(names);
	free(vers);
	free(fl);
	return rc;
}
