/*
 * pkgrebuild.c - test helper: write with pack_write() the package another tool wrote.
 *
 *   pkgrebuild PKG TREE OUT
 *
 * PKG is a package (normally from rpmbuild), TREE its payload extracted (rpm2cpio | cpio -idm
 * or pkgtool extract). The description handed to pack_write() is what the build pipeline
 * would hand it: every tag of PKG's main header except the ones the writer computes itself
 * (file arrays, payload tags, sizes, digests, rpmlib() requirements), and one struct
 * pack_file per header file with its metadata from the header and its contents from TREE.
 * The integration tests then compare OUT with PKG, which checks that kiln writes what
 * rpmbuild writes.
 */
#include "util/util.h"

#include <sys/stat.h>

#include "pack/pack.h"

/* Tags pack_write() owns: they are recomputed, never copied from PKG. */
static const uint32_t writer_tags[] = {
    RPMTAG_SIZE,
    RPMTAG_FILESIZES,
    RPMTAG_FILEMODES,
    RPMTAG_FILERDEVS,
    RPMTAG_FILEMTIMES,
    RPMTAG_FILEDIGESTS,
    RPMTAG_FILELINKTOS,
    RPMTAG_FILEFLAGS,
    RPMTAG_FILEUSERNAME,
    RPMTAG_FILEGROUPNAME,
    RPMTAG_FILEVERIFYFLAGS,
    RPMTAG_FILEDEVICES,
    RPMTAG_FILEINODES,
    RPMTAG_FILELANGS,
    RPMTAG_DIRINDEXES,
    RPMTAG_BASENAMES,
    RPMTAG_DIRNAMES,
    RPMTAG_PAYLOADFORMAT,
    RPMTAG_PAYLOADCOMPRESSOR,
    RPMTAG_PAYLOADFLAGS,
    RPMTAG_FILECOLORS,
    RPMTAG_FILECLASS,
    RPMTAG_CLASSDICT,
    RPMTAG_LONGFILESIZES,
    RPMTAG_LONGSIZE,
    RPMTAG_FILECAPS,
    RPMTAG_FILEDIGESTALGO,
    RPMTAG_PAYLOADSHA256,
    RPMTAG_PAYLOADSHA256ALGO,
    RPMTAG_PAYLOADSHA256ALT,
    RPMTAG_PAYLOADSIZE,
    RPMTAG_PAYLOADSIZEALT,
    RPMTAG_FILEMIMEINDEX,
    RPMTAG_MIMEDICT,
    RPMTAG_PAYLOADSHA512,
    RPMTAG_PAYLOADSHA512ALT,
    RPMTAG_PAYLOADSHA3_256,
    RPMTAG_PAYLOADSHA3_256ALT,
    RPMTAG_RPMFORMAT,
    RPMTAG_REQUIRENAME,
    RPMTAG_REQUIREVERSION,
    RPMTAG_REQUIREFLAGS,
};

static int fail(const struct kiln_err *err)
{
	char msg[1024];

	fprintf(stderr, "pkgrebuild: %s\n", kiln_err_format(err, msg, sizeof(msg)));
	return 1;
}

static bool writer_owned(uint32_t tag)
{
	size_t i;

	for (i = 0; i < KILN_ARRAY_SIZE(writer_tags); i++) {
		if (writer_tags[i] == tag)
			return true;
	}
	return false;
}

static uint64_t num(const struct pack_header *h, uint32_t tag, uint32_t i)
{
	const struct pack_entry *e = pack_header_get(h, tag);
	struct rpmtag_qf_value v;

	if (!e || i >= e->count || !rpmtag_type_is_number(e->type))
		return 0;
	v.type = e->type;
	v.count = e->count;
	v.data = e->data;
	switch (e->type) {
	case RPMTAG_TYPE_INT16:
		return ((const uint16_t *)v.data)[i];
	case RPMTAG_TYPE_INT32:
		return ((const uint32_t *)v.data)[i];
	case RPMTAG_TYPE_INT64:
		return ((const uint64_t *)v.data)[i];
	default:
		return ((const uint8_t *)v.data)[i];
	}
}

static const char *str(const struct pack_header *h, uint32_t tag, uint32_t i)
{
	const struct pack_entry *e = pack_header_get(h, tag);

	if (!e || i >= e->count || !rpmtag_type_is_string(e->type))
		return NULL;
	return ((const char *const *)e->data)[i];
}

/* The rpmlib() requirements pack_write() adds itself (those that follow from the file list
 * and the payload); the others (scriptlets, versions, rich dependencies) come from the
 * spec and stay. */
static bool writer_rpmlib(const char *name)
{
	static const char *const own[] = {
	    "rpmlib(CompressedFileNames)",
	    "rpmlib(FileDigests)",
	    "rpmlib(PayloadFilesHavePrefix)",
	    "rpmlib(LargeFiles)",
	    "rpmlib(PartialHardlinkSets)",
	    "rpmlib(FileCaps)",
	    "rpmlib(PayloadIsXz)",
	    "rpmlib(PayloadIsZstd)",
	};
	size_t i;

	for (i = 0; i < KILN_ARRAY_SIZE(own); i++) {
		if (!strcmp(own[i], name))
			return true;
	}
	return false;
}

/* The header minus the writer's tags and rpmlib() requirements. */
static kiln_rc copy_tags(struct pack_header *dst, const struct pack_header *src,
                         struct kiln_err *err)
{
	const struct pack_entry *rn = pack_header_get(src, RPMTAG_REQUIRENAME);
	size_t i;
	kiln_rc rc = KILN_OK;

	for (i = 0; !rc && i < src->n; i++) {
		const struct pack_entry *e = &src->entries[i];

		if (!writer_owned(e->tag))
			rc = pack_header_put(dst, e->tag, e->type, e->data, e->count, err);
	}
	for (i = 0; !rc && rn && i < rn->count; i++) {
		const char *name = str(src, RPMTAG_REQUIRENAME, (uint32_t)i);

		if (!writer_rpmlib(name))
			rc = pack_deps_add(dst, PACK_DEP_REQUIRE, name,
			                   str(src, RPMTAG_REQUIREVERSION, (uint32_t)i),
			                   (uint32_t)num(src, RPMTAG_REQUIREFLAGS, (uint32_t)i),
			                   err);
	}
	return rc;
}

/* Regular files sharing an inode number are one hard-link set. */
static uint32_t hardlink_id(const struct pack_header *h, uint32_t i, uint32_t n)
{
	uint64_t ino = num(h, RPMTAG_FILEINODES, i);
	uint32_t j;

	if (!S_ISREG(num(h, RPMTAG_FILEMODES, i)))
		return 0;
	for (j = 0; j < n; j++) {
		if (j != i && num(h, RPMTAG_FILEINODES, j) == ino &&
		    S_ISREG(num(h, RPMTAG_FILEMODES, j)))
			return (uint32_t)ino;
	}
	return 0;
}

static kiln_rc file_at(const struct pack_header *h, const char *tree, uint32_t i, uint32_t n,
                       struct pack_file *f, struct kiln_arena *a, struct kiln_err *err)
{
	const char *dir = str(h, RPMTAG_DIRNAMES, (uint32_t)num(h, RPMTAG_DIRINDEXES, i));
	const char *base = str(h, RPMTAG_BASENAMES, i), *cls;

	f->path = kiln_arena_printf(a, "%s%s", dir ? dir : "", base ? base : "");
	f->mode = (uint32_t)num(h, RPMTAG_FILEMODES, i);
	f->user = str(h, RPMTAG_FILEUSERNAME, i);
	f->group = str(h, RPMTAG_FILEGROUPNAME, i);
	f->mtime = (uint32_t)num(h, RPMTAG_FILEMTIMES, i);
	f->flags = (uint32_t)num(h, RPMTAG_FILEFLAGS, i);
	f->verify = (uint32_t)num(h, RPMTAG_FILEVERIFYFLAGS, i);
	f->lang = str(h, RPMTAG_FILELANGS, i);
	f->caps = str(h, RPMTAG_FILECAPS, i);
	f->link = str(h, RPMTAG_FILELINKTOS, i);
	f->rdev = (uint32_t)num(h, RPMTAG_FILERDEVS, i);
	f->size = pack_header_get(h, RPMTAG_LONGFILESIZES) ? num(h, RPMTAG_LONGFILESIZES, i)
	                                                   : num(h, RPMTAG_FILESIZES, i);
	f->hardlink = hardlink_id(h, i, n);
	f->color = (uint32_t)num(h, RPMTAG_FILECOLORS, i);
	cls = str(h, RPMTAG_CLASSDICT, (uint32_t)num(h, RPMTAG_FILECLASS, i));
	f->fclass = cls;
	f->mime = str(h, RPMTAG_MIMEDICT, (uint32_t)num(h, RPMTAG_FILEMIMEINDEX, i));
	f->absent = pack_header_get(h, RPMTAG_FILEDEVICES) && !num(h, RPMTAG_FILEDEVICES, i);
	if (S_ISREG(f->mode) && !(f->flags & RPMTAG_FILE_GHOST))
		f->src = kiln_arena_printf(a, "%s/%s", tree, f->path);
	return kiln_arena_finish(a, err);
}

static kiln_rc opts_from(const struct pack_package *p, struct pack_write_opts *o,
                         struct kiln_err *err)
{
	const char *comp = pack_header_get_string(&p->hdr, RPMTAG_PAYLOADCOMPRESSOR);
	const char *flags = pack_header_get_string(&p->hdr, RPMTAG_PAYLOADFLAGS);
	const char *io = !comp                   ? "ufdio"
	                 : !strcmp(comp, "gzip") ? "gzdio"
	                 : !strcmp(comp, "xz")   ? "xzdio"
	                 : !strcmp(comp, "zstd") ? "zstdio"
	                                         : "ufdio";
	uint64_t algo = 8;
	char mode[64];

	pack_write_opts_init(o);
	o->format = p->format == 6 ? 6 : 4;
	o->source = p->lead.type == 1;
	o->archnum = p->lead.archnum;
	o->osnum = p->lead.osnum;
	pack_header_get_number(&p->hdr, RPMTAG_FILEDIGESTALGO, &algo);
	o->fdigest = algo == 1    ? UTIL_DIGEST_MD5
	             : algo == 2  ? UTIL_DIGEST_SHA1
	             : algo == 10 ? UTIL_DIGEST_SHA512
	                          : UTIL_DIGEST_SHA256;
	snprintf(mode, sizeof(mode), "w%s.%s", flags ? flags : "", io);
	return pack_compress_parse(mode, &o->comp, err);
}

int main(int argc, char **argv)
{
	struct kiln_err err = KILN_ERR_INIT;
	struct kiln_arena arena;
	struct pack_write_opts o;
	struct pack_package p;
	struct pack_header h;
	struct pack_file *files = NULL;
	const struct pack_entry *bn;
	uint32_t n = 0, i;
	kiln_rc rc;

	if (argc != 4) {
		fprintf(stderr, "usage: pkgrebuild PKG TREE OUT\n");
		return 2;
	}
	memset(&p, 0, sizeof(p));
	kiln_arena_init(&arena, KILN_LIMIT_ARENA);
	pack_header_init(&h);
	rc = pack_package_open(&p, argv[1], NULL, &err);
	if (!rc)
		rc = opts_from(&p, &o, &err);
	if (!rc)
		rc = copy_tags(&h, &p.hdr, &err);
	bn = rc ? NULL : pack_header_get(&p.hdr, RPMTAG_BASENAMES);
	n = bn ? bn->count : 0;
	files = kiln_calloc(n ? n : 1, sizeof(*files));
	if (!rc && !files)
		rc = kiln_err_set(&err, KILN_ENOMEM, "out of memory");
	for (i = 0; !rc && i < n; i++)
		rc = file_at(&p.hdr, argv[2], i, n, &files[i], &arena, &err);
	if (!rc)
		rc = pack_write(argv[3], &h, files, n, &o, &err);
	free(files);
	pack_header_release(&h);
	pack_package_release(&p);
	kiln_arena_release(&arena);
	return rc ? fail(&err) : 0;
}
