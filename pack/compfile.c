/*
 * compfile.c - a compressed stream written to a file descriptor, for callers outside pack/
 * that compress something other than a payload (worker/'s source tarballs), so that zlib,
 * liblzma and libzstd stay inside pack/'s compressor files.
 */
#include "util/util.h"

#include "pack/pack.h"
#include "pack/pack_int.h"

struct pack_compfile {
	struct pack_sink sink; /* first: the compressor calls back with it */
	struct pack_comp *comp;
	int fd;
};

static kiln_rc fd_write(struct pack_sink *s, const void *data, size_t len, struct kiln_err *err)
{
	struct pack_compfile *f = (struct pack_compfile *)s;

	return util_write_all(f->fd, data, len, err);
}

kiln_rc pack_compfile_open(const struct pack_compress *c, int fd, struct pack_compfile **out,
                           struct kiln_err *err)
{
	struct pack_compfile *f = kiln_calloc(1, sizeof(*f));
	kiln_rc rc;

	*out = NULL;
	if (!f)
		return kiln_err_set(err, KILN_ENOMEM, "out of memory");
	f->sink.write = fd_write;
	f->fd = fd;
	rc = pack_comp_new(c, &f->sink, &f->comp, err);
	if (rc) {
		free(f);
		return rc;
	}
	*out = f;
	return KILN_OK;
}

kiln_rc pack_compfile_write(struct pack_compfile *f, const void *data, size_t len,
                            struct kiln_err *err)
{
	return pack_comp_write(f->comp, data, len, err);
}

kiln_rc pack_compfile_finish(struct pack_compfile *f, struct kiln_err *err)
{
	return pack_comp_finish(f->comp, err);
}

void pack_compfile_free(struct pack_compfile *f)
{
	if (!f)
		return;
	pack_comp_free(f->comp);
	free(f);
}
