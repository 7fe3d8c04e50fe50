/*
 * sigheader.c - rewriting a package's signature header in place: the reservation tag
 * (RESERVEDSPACE 1008 in v4, RESERVED 999 in v6) grows or shrinks by what other tags take,
 * so the main header and the payload never move (rpm-reference.md section 5.1).
 */
#include "util/util.h"

#include <fcntl.h>
#include <sys/stat.h>
#include <unistd.h>

#include "pack/pack.h"
#include "pack/pack_int.h"

static uint32_t reserve_tag(const struct pack_header *sig)
{
	if (pack_header_get(sig, PACK_SIGTAG_RESERVEDSPACE))
		return PACK_SIGTAG_RESERVEDSPACE;
	if (pack_header_get(sig, PACK_SIGTAG_RESERVED))
		return PACK_SIGTAG_RESERVED;
	return 0;
}

static size_t padded(size_t n)
{
	return n + (8 - n % 8) % 8;
}

static kiln_rc set_reserve(struct pack_header *sig, uint32_t tag, size_t n, struct kiln_err *err)
{
	unsigned char *zeros = kiln_calloc(n, 1);
	kiln_rc rc;

	if (!zeros)
		return kiln_err_set(err, KILN_ENOMEM, "out of memory");
	rc = pack_header_put_bin(sig, tag, zeros, n, err);
	free(zeros);
	return rc;
}

kiln_rc pack_sigheader_fit(struct pack_header *sig, size_t size, struct kiln_buf *out,
                           struct kiln_err *err)
{
	uint32_t tag = reserve_tag(sig);
	size_t base, want = padded(size), n;
	kiln_rc rc;

	if (!tag)
		return kiln_err_set(err, KILN_EINVAL,
		                    "signature header has no reserved space (tag 1008 or 999)");
	rc = set_reserve(sig, tag, 1, err);
	if (rc)
		return rc;
	base = pack_header_size(sig, PACK_SIGTAG_HEADERSIGNATURES);
	if (base > size)
		return kiln_err_set(err, KILN_ELIMIT,
		                    "signature header needs %zu bytes, only %zu are reserved", base,
		                    size);
	/* Prefer the exact old size (rpm keeps it, so removing a signature restores the file
	 * bit for bit); tags after the reservation may shift by their alignment, so fall back
	 * to any size with the same padded length. */
	for (n = 1 + size - base; n >= 1; n--) {
		rc = set_reserve(sig, tag, n, err);
		if (rc)
			return rc;
		if (padded(pack_header_size(sig, PACK_SIGTAG_HEADERSIGNATURES)) == want)
			break;
	}
	if (!n)
		return kiln_err_set(err, KILN_ELIMIT,
		                    "signature header cannot be fitted to %zu bytes", size);
	rc = pack_header_write(sig, PACK_SIGTAG_HEADERSIGNATURES, out, err);
	while (!rc && out->len % 8)
		kiln_buf_addch(out, '\0');
	return rc ? rc : kiln_buf_finish(out, err);
}

static kiln_rc copy_range(int in, int out, uint64_t off, struct kiln_err *err)
{
	char buf[64 * 1024];
	ssize_t n;

	if (lseek(in, (off_t)off, SEEK_SET) < 0)
		return kiln_err_sys(err, KILN_EIO, "seek");
	for (;;) {
		n = read(in, buf, sizeof(buf));
		if (n < 0 && errno == EINTR)
			continue;
		if (n < 0)
			return kiln_err_sys(err, KILN_EIO, "read");
		if (!n)
			return KILN_OK;
		if (util_write_all(out, buf, (size_t)n, err))
			return err->code;
	}
}

kiln_rc pack_sigheader_replace(const char *path, struct pack_header *sig, struct kiln_err *err)
{
	struct kiln_buf blob = KILN_BUF_INIT(KILN_LIMIT_SIG_DATA + 16 * KILN_LIMIT_SIG_TAGS + 32);
	struct util_atomic_file f = {.fd = -1};
	unsigned char lead[PACK_LEAD_SIZE];
	struct pack_package p;
	struct stat st;
	int fd = -1;
	kiln_rc rc = pack_package_open(&p, path, &fd, err);

	if (rc)
		goto out;
	rc = pack_sigheader_fit(sig, p.sig_size, &blob, err);
	if (!rc && blob.len != p.sig_size + p.sig_pad)
		rc = kiln_err_set(err, KILN_ELIMIT, "%s: new signature header does not fit", path);
	if (!rc && fstat(fd, &st))
		rc = kiln_err_sys(err, KILN_EIO, "stat %s", path);
	if (!rc && pread(fd, lead, sizeof(lead), 0) != (ssize_t)sizeof(lead))
		rc = kiln_err_sys(err, KILN_EIO, "read %s", path);
	if (!rc)
		rc = util_atomic_open(&f, path, st.st_mode & 07777, err);
	if (!rc)
		rc = util_write_all(f.fd, lead, sizeof(lead), err);
	if (!rc)
		rc = util_write_all(f.fd, blob.ptr, blob.len, err);
	if (!rc)
		rc = copy_range(fd, f.fd, p.hdr_off, err);
	if (!rc)
		rc = util_atomic_commit(&f, err);
out:
	util_atomic_abort(&f);
	util_close(fd);
	pack_package_release(&p);
	kiln_buf_release(&blob);
	if (rc)
		kiln_err_wrap(err, "replace the signature header of %s", path);
	return rc;
}
