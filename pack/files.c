/*
 * files.c - the file list a header describes: DIRNAMES[DIRINDEXES[i]] + BASENAMES[i] (or
 * the old OLDFILENAMES), with sizes from LONGFILESIZES or FILESIZES.
 */
#include "util/util.h"

#include "pack/pack.h"
#include "pack/pack_int.h"

static kiln_rc bad(struct kiln_err *err, const char *why)
{
	return kiln_err_set(err, KILN_EFORMAT, "header: file list: %s", why);
}

static kiln_rc names_from_dirs(struct pack_file_list *fl, const struct pack_entry *bn,
                               const struct pack_header *h, struct kiln_err *err)
{
	const struct pack_entry *dn = pack_header_get(h, RPMTAG_DIRNAMES);
	const struct pack_entry *di = pack_header_get(h, RPMTAG_DIRINDEXES);
	uint32_t i;

	if (!dn || !rpmtag_type_is_string(dn->type))
		return bad(err, "BASENAMES without DIRNAMES");
	if (!di || di->type != RPMTAG_TYPE_INT32 || di->count != bn->count)
		return bad(err, "DIRINDEXES missing or not one per file");
	for (i = 0; i < bn->count; i++) {
		uint64_t d = pack_entry_num(di, i);

		if (d >= dn->count)
			return kiln_err_set(err, KILN_EFORMAT,
			                    "header: file list: file %" PRIu32 ": dirindex %" PRIu64
			                    " out of range (%" PRIu32 " dirnames)",
			                    i, d, dn->count);
		fl->names[i] = kiln_arena_printf(
		    &fl->arena, "%s%s", pack_entry_str(dn, (uint32_t)d), pack_entry_str(bn, i));
	}
	return kiln_arena_finish(&fl->arena, err);
}

kiln_rc pack_file_list_init(struct pack_file_list *fl, const struct pack_header *h,
                            struct kiln_err *err)
{
	const struct pack_entry *bn = pack_header_get(h, RPMTAG_BASENAMES);
	const struct pack_entry *old = pack_header_get(h, RPMTAG_OLDFILENAMES);
	const struct pack_entry *sz = pack_header_get(h, RPMTAG_LONGFILESIZES);
	uint32_t i, n;
	kiln_rc rc = KILN_OK;

	memset(fl, 0, sizeof(*fl));
	kiln_arena_init(&fl->arena, KILN_LIMIT_ARENA);
	if (!sz)
		sz = pack_header_get(h, RPMTAG_FILESIZES);
	n = bn ? bn->count : old ? old->count : 0;
	if (bn && !rpmtag_type_is_string(bn->type))
		rc = bad(err, "BASENAMES is not a string array");
	else if (!bn && old && !rpmtag_type_is_string(old->type))
		rc = bad(err, "OLDFILENAMES is not a string array");
	else if (n > KILN_LIMIT_PACKAGE_FILES)
		rc = kiln_err_set(err, KILN_ELIMIT, "header: %" PRIu32 " files exceed %d", n,
		                  (int)KILN_LIMIT_PACKAGE_FILES);
	if (rc)
		return rc;
	fl->names = kiln_arena_array(&fl->arena, n ? n : 1, sizeof(*fl->names));
	fl->sizes = kiln_arena_array(&fl->arena, n ? n : 1, sizeof(*fl->sizes));
	rc = kiln_arena_finish(&fl->arena, err);
	if (rc) {
		pack_file_list_release(fl);
		return rc;
	}
	fl->n = n;
	if (bn)
		rc = names_from_dirs(fl, bn, h, err);
	for (i = 0; !rc && !bn && i < n; i++)
		fl->names[i] = pack_entry_str(old, i);
	if (!rc && n && sz && (!rpmtag_type_is_number(sz->type) || sz->count != n))
		rc = bad(err, "FILESIZES not one per file");
	for (i = 0; !rc && sz && i < n; i++)
		fl->sizes[i] = pack_entry_num(sz, i);
	if (rc)
		pack_file_list_release(fl);
	return rc;
}

void pack_file_list_release(struct pack_file_list *fl)
{
	if (!fl)
		return;
	kiln_arena_release(&fl->arena);
	memset(fl, 0, sizeof(*fl));
}
