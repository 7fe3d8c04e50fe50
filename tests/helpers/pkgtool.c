/*
 * pkgtool.c - a test-only helper that drives pack/ directly, for integration tests that need
 * the library without a user-facing command (never installed).
 *
 *   pkgtool roundtrip PKG...   re-encode both headers of each package and compare with the
 *                              file's bytes; exit 1 on any difference
 *   pkgtool extract PKG DIR    extract the payload below DIR (which must exist)
 */
#include "util/util.h"

#include <fcntl.h>
#include <unistd.h>

#include "pack/pack.h"

static int fail(const struct kiln_err *err)
{
	char msg[1024];

	fprintf(stderr, "pkgtool: %s\n", kiln_err_format(err, msg, sizeof(msg)));
	return 1;
}

static int compare(const char *path, const char *what, const unsigned char *want, size_t wlen,
                   const struct kiln_buf *got)
{
	size_t i;

	if (got->len == wlen && !memcmp(got->ptr, want, wlen))
		return 0;
	for (i = 0; i < wlen && i < got->len && (unsigned char)got->ptr[i] == want[i]; i++)
		;
	fprintf(stderr, "pkgtool: %s: %s differs at byte %zu (sizes %zu and %zu)\n", path, what, i,
	        wlen, got->len);
	return 1;
}

static int roundtrip(const char *path)
{
	struct kiln_buf file = KILN_BUF_INIT(KILN_GIB);
	struct kiln_buf out = KILN_BUF_INIT(KILN_GIB);
	struct kiln_err err = KILN_ERR_INIT;
	struct pack_package p;
	int rc = 1;

	memset(&p, 0, sizeof(p));
	if (util_read_file(path, KILN_GIB, &file, &err) ||
	    pack_package_open(&p, path, NULL, &err)) {
		rc = fail(&err);
		goto out;
	}
	if (pack_header_write(&p.sig, PACK_SIGTAG_HEADERSIGNATURES, &out, &err)) {
		rc = fail(&err);
		goto out;
	}
	rc = compare(path, "signature header", (const unsigned char *)file.ptr + p.sig_off,
	             p.sig_size, &out);
	kiln_buf_reset(&out);
	if (pack_header_write(&p.hdr, SPEC_TAG_HEADERIMMUTABLE, &out, &err)) {
		rc = fail(&err);
		goto out;
	}
	rc |=
	    compare(path, "main header", (const unsigned char *)p.hdr_raw.ptr, p.hdr_raw.len, &out);
	if (!rc)
		printf("%s: roundtrip ok (%zu entries)\n", path, p.hdr.n);
out:
	pack_package_release(&p);
	kiln_buf_release(&file);
	kiln_buf_release(&out);
	return rc;
}

static int extract(const char *pkg, const char *dir)
{
	struct kiln_err err = KILN_ERR_INIT;
	struct pack_payload *pl = NULL;
	struct pack_package p;
	int fd = -1, root = open(dir, O_RDONLY | O_DIRECTORY | O_CLOEXEC);
	kiln_rc rc = root < 0 ? kiln_err_sys(&err, KILN_EIO, "open %s", dir) : KILN_OK;

	memset(&p, 0, sizeof(p));
	if (!rc)
		rc = pack_package_open(&p, pkg, &fd, &err);
	if (!rc)
		rc = pack_payload_open(&p, fd, &pl, &err);
	if (!rc)
		rc = pack_payload_extract(pl, root, 0, &err);
	pack_payload_free(pl);
	pack_package_release(&p);
	util_close(fd);
	util_close(root);
	return rc ? fail(&err) : 0;
}

int main(int argc, char **argv)
{
	int i, rc = 0;

	if (argc == 4 && !strcmp(argv[1], "extract"))
		return extract(argv[2], argv[3]);
	if (argc < 3 || strcmp(argv[1], "roundtrip")) {
		fprintf(stderr, "usage: pkgtool roundtrip PKG... | extract PKG DIR\n");
		return 2;
	}
	for (i = 2; i < argc; i++)
		rc |= roundtrip(argv[i]);
	return rc;
}
