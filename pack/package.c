/*
 * package.c - reading a package's lead, signature header and main header
 * (rpm-reference.md sections 2.1-2.3), from a file descriptor or from memory.
 */
#include "util/util.h"

#include <fcntl.h>
#include <sys/stat.h>
#include <unistd.h>

#include "pack/pack.h"
#include "pack/pack_int.h"

static const unsigned char lead_magic[4] = {0xed, 0xab, 0xee, 0xdb};

/* Where the bytes come from: an fd or a memory block. */
struct input {
	int fd;
	const unsigned char *mem;
	size_t memlen;
	uint64_t pos;
};

kiln_rc pack_read_exact(int fd, void *buf, size_t len, const char *what, uint64_t off,
                        struct kiln_err *err)
{
	size_t got = 0;
	kiln_rc rc = util_read_full(fd, buf, len, &got, err);

	if (rc)
		return rc;
	if (got < len)
		return kiln_err_set(err, KILN_EFORMAT,
		                    "%s: truncated at offset %" PRIu64 " (%zu of %zu bytes)", what,
		                    off, got, len);
	return KILN_OK;
}

/* Append len bytes of input to b. */
static kiln_rc input_take(struct input *in, size_t len, struct kiln_buf *b, const char *what,
                          struct kiln_err *err)
{
	kiln_rc rc;

	if (in->mem) {
		if (in->pos > in->memlen || in->memlen - in->pos < len)
			return kiln_err_set(
			    err, KILN_EFORMAT,
			    "%s: truncated at offset %" PRIu64 " (%zu of %zu bytes)", what, in->pos,
			    (size_t)(in->pos < in->memlen ? in->memlen - in->pos : 0), len);
		kiln_buf_add(b, in->mem + in->pos, len);
	} else {
		if (!kiln_buf_grow(b, len))
			return kiln_buf_finish(b, err);
		rc = pack_read_exact(in->fd, b->ptr + b->len, len, what, in->pos, err);
		if (rc)
			return rc;
		b->len += len;
		b->ptr[b->len] = '\0';
	}
	in->pos += len;
	return kiln_buf_finish(b, err);
}

static kiln_rc read_lead(struct input *in, struct pack_lead *l, struct kiln_err *err)
{
	struct kiln_buf b = KILN_BUF_INIT(PACK_LEAD_SIZE);
	const unsigned char *p;
	kiln_rc rc = input_take(in, PACK_LEAD_SIZE, &b, "lead", err);

	if (rc)
		goto out;
	p = (const unsigned char *)b.ptr;
	if (memcmp(p, lead_magic, sizeof(lead_magic))) {
		rc = kiln_err_set(err, KILN_EFORMAT,
		                  "lead: bad magic at offset 0: not an rpm package");
		goto out;
	}
	l->major = p[4];
	l->minor = p[5];
	l->type = (uint16_t)(p[6] << 8 | p[7]);
	l->archnum = (uint16_t)(p[8] << 8 | p[9]);
	memcpy(l->name, p + 10, 66);
	l->name[65] = '\0';
	l->osnum = (uint16_t)(p[76] << 8 | p[77]);
	l->sigtype = (uint16_t)(p[78] << 8 | p[79]);
out:
	kiln_buf_release(&b);
	return rc;
}

/* Read one header: its 16-byte intro decides how much more to read. */
static kiln_rc read_header(struct input *in, struct pack_header *h, uint32_t region, unsigned flags,
                           struct kiln_buf *raw, struct kiln_err *err)
{
	const char *what = (flags & PACK_HDR_F_SIG) ? "signature header" : "header";
	uint64_t start = in->pos;
	size_t need = 0, used;
	kiln_rc rc;

	kiln_buf_reset(raw);
	rc = input_take(in, 16, raw, what, err);
	if (rc)
		return rc;
	/* Check magic and limits before reading (and allocating) the rest. */
	rc = pack_header_intro(raw->ptr, flags, start, &need, err);
	if (rc)
		return rc;
	rc = input_take(in, need - 16, raw, what, err);
	if (rc)
		return rc;
	return pack_header_from_mem(h, raw->ptr, raw->len, region, flags, start, &used, err);
}

static void detect_kind(struct pack_package *p)
{
	uint64_t fmt = 0;

	if (pack_header_get_number(&p->hdr, RPMTAG_RPMFORMAT, &fmt) && fmt >= 6)
		p->format = 6;
	else
		p->format = p->hdr.region ? 4 : 3;
	p->source = pack_header_get(&p->hdr, RPMTAG_SOURCEPACKAGE) ||
	            !pack_header_get(&p->hdr, RPMTAG_SOURCERPM);
}

static kiln_rc read_package(struct pack_package *p, struct input *in, struct kiln_err *err)
{
	struct kiln_buf sigraw = KILN_BUF_INIT(KILN_LIMIT_SIG_DATA + 16 * KILN_LIMIT_SIG_TAGS + 16);
	kiln_rc rc;

	memset(p, 0, sizeof(*p));
	pack_header_init(&p->sig);
	pack_header_init(&p->hdr);
	kiln_buf_init(&p->hdr_raw, KILN_LIMIT_HEADER_DATA + 16 * KILN_LIMIT_HEADER_TAGS + 16);
	rc = read_lead(in, &p->lead, err);
	if (rc)
		goto out;
	if (p->lead.sigtype != 5) {
		rc = kiln_err_set(err, KILN_EFORMAT,
		                  "lead: signature type %u at offset 78 is not 5 (header-style)",
		                  p->lead.sigtype);
		goto out;
	}
	p->sig_off = in->pos;
	rc = read_header(in, &p->sig, PACK_SIGTAG_HEADERSIGNATURES, PACK_HDR_F_SIG, &sigraw, err);
	if (rc)
		goto out;
	p->sig_size = sigraw.len;
	p->sig_pad = (8 - p->sig_size % 8) % 8;
	kiln_buf_reset(&sigraw);
	rc = input_take(in, p->sig_pad, &sigraw, "signature header padding", err);
	if (rc)
		goto out;
	p->hdr_off = in->pos;
	rc = read_header(in, &p->hdr, RPMTAG_HEADERIMMUTABLE, PACK_HDR_F_TYPECHECK, &p->hdr_raw,
	                 err);
	if (rc)
		goto out;
	p->payload_off = in->pos;
	detect_kind(p);
out:
	kiln_buf_release(&sigraw);
	return rc;
}

kiln_rc pack_package_read_fd(struct pack_package *p, int fd, const char *name, struct kiln_err *err)
{
	struct input in = {fd, NULL, 0, 0};
	struct stat st;
	kiln_rc rc = read_package(p, &in, err);

	if (rc) {
		kiln_err_wrap(err, "%s", name);
		return rc;
	}
	if (!fstat(fd, &st) && S_ISREG(st.st_mode))
		p->file_size = (uint64_t)st.st_size;
	return KILN_OK;
}

kiln_rc pack_package_open(struct pack_package *p, const char *path, int *fdp, struct kiln_err *err)
{
	int fd = open(path, O_RDONLY | O_CLOEXEC);
	kiln_rc rc;

	if (fdp)
		*fdp = -1;
	if (fd < 0) {
		memset(p, 0, sizeof(*p));
		return kiln_err_sys(err, KILN_EIO, "open %s", path);
	}
	rc = pack_package_read_fd(p, fd, path, err);
	if (!rc && fdp) {
		*fdp = fd;
		fd = -1;
	}
	util_close(fd);
	return rc;
}

kiln_rc pack_package_from_mem(struct pack_package *p, const void *data, size_t len,
                              struct kiln_err *err)
{
	struct input in = {-1, data, len, 0};
	kiln_rc rc;

	if (!data) {
		static const unsigned char none[1];

		in.mem = none;
	}
	rc = read_package(p, &in, err);
	if (!rc)
		p->file_size = len;
	return rc;
}

void pack_package_release(struct pack_package *p)
{
	if (!p)
		return;
	pack_header_release(&p->sig);
	pack_header_release(&p->hdr);
	kiln_buf_release(&p->hdr_raw);
	memset(p, 0, sizeof(*p));
}
