/*
 * archive.c - a payload as a plain cpio stream (rpm2cpio) or as a tar archive
 * (rpm2archive): names and metadata come from the header, data from the payload.
 */
#include "util/util.h"

#include <sys/stat.h>

#include "pack/pack.h"
#include "pack/pack_int.h"
#include "pack/payload_int.h"

/* The name an entry gets in cpio/tar output: "./usr/bin/x", or "x" in a source package
 * whose files have no directory (rpm-reference.md section 2.9). */
static void entry_name(const struct pack_file_info *fi, struct kiln_buf *out)
{
	if (fi->path[0] == '/')
		kiln_buf_addch(out, '.');
	kiln_buf_addstr(out, fi->path);
}

static kiln_rc copy_data(struct pack_payload *pl, int fd, struct pack_comp *comp,
                         struct kiln_err *err)
{
	char buf[64 * 1024];
	size_t got = 0;
	kiln_rc rc;

	do {
		rc = pack_payload_read(pl, buf, sizeof(buf), &got, err);
		if (!rc && got)
			rc = comp ? pack_comp_write(comp, buf, got, err)
			          : util_write_all(fd, buf, got, err);
	} while (!rc && got);
	return rc;
}

static kiln_rc emit(int fd, struct kiln_buf *b, struct kiln_err *err)
{
	kiln_rc rc = kiln_buf_finish(b, err);

	if (!rc)
		rc = util_write_all(fd, b->ptr, b->len, err);
	kiln_buf_reset(b);
	return rc;
}

/* Stripped payloads become newc with the header's metadata, as rpm2cpio does. */
static kiln_rc stripped_to_newc(struct pack_payload *pl, int fd, struct kiln_err *err)
{
	struct kiln_buf b = KILN_BUF_INIT(2 * KILN_LIMIT_CPIO_NAME + 256);
	struct kiln_buf name = KILN_BUF_INIT(KILN_LIMIT_CPIO_NAME + 4);
	struct pack_file_info fi;
	uint64_t off = 0;
	kiln_rc rc;

	while (!(rc = pack_payload_next(pl, &fi, err))) {
		kiln_buf_reset(&name);
		entry_name(&fi, &name);
		if (fi.data_size > UINT32_MAX) {
			rc = kiln_err_set(err, KILN_EUNSUPP,
			                  "%s: %" PRIu64 " bytes do not fit in cpio", fi.path,
			                  fi.data_size);
			break;
		}
		pack_cpio_newc_header(&b, fi.inode, fi.mode, fi.nlink, fi.mtime,
		                      (uint32_t)fi.data_size, fi.rdev, (uint32_t)name.len + 1);
		kiln_buf_add(&b, name.ptr, name.len + 1);
		off += 110 + name.len + 1;
		pack_cpio_pad(&b, &off);
		if (!rc)
			rc = emit(fd, &b, err);
		if (!rc && S_ISLNK(fi.mode))
			rc = util_write_all(fd, fi.link, strlen(fi.link), err);
		else if (!rc)
			rc = copy_data(pl, fd, NULL, err);
		off += fi.data_size;
		pack_cpio_pad(&b, &off);
		if (rc)
			break;
	}
	if (rc == KILN_ENOTFOUND) {
		pack_cpio_newc_header(&b, 0, 0, 1, 0, 0, 0, 11);
		kiln_buf_add(&b, "TRAILER!!!", 11);
		off += 121;
		pack_cpio_pad(&b, &off);
		rc = emit(fd, &b, err);
	}
	kiln_buf_release(&b);
	kiln_buf_release(&name);
	return rc;
}

kiln_rc pack_payload_to_cpio(struct pack_payload *pl, int fd, struct kiln_err *err)
{
	if (!pl->stripped)
		return pack_payload_copy_raw(pl, fd, err);
	return stripped_to_newc(pl, fd, err);
}

/* ---------------------------------------------------------------------------------------- */
/* tar (ustar with pax extended headers for what ustar cannot hold) */

struct tar {
	struct pack_payload *pl;
	struct pack_comp *comp; /* owned when gzip, else NULL */
	int fd;
	struct pack_sink sink;
	struct kiln_buf pending; /* hard-link members waiting for their data: "ino\0name\0"... */
};

static kiln_rc tar_sink_write(struct pack_sink *s, const void *data, size_t len,
                              struct kiln_err *err)
{
	struct tar *t = (struct tar *)((char *)s - offsetof(struct tar, sink));

	return util_write_all(t->fd, data, len, err);
}

static kiln_rc tar_out(struct tar *t, const void *data, size_t len, struct kiln_err *err)
{
	return t->comp ? pack_comp_write(t->comp, data, len, err)
	               : util_write_all(t->fd, data, len, err);
}

static void octal(char *dst, size_t size, uint64_t v)
{
	snprintf(dst, size, "%0*" PRIo64, (int)size - 1, v);
}

static void pax_record(struct kiln_buf *b, const char *key, const char *val)
{
	size_t body = strlen(key) + strlen(val) + 3, len = body, digits;

	/* The length field counts itself. */
	for (;;) {
		digits = (size_t)snprintf(NULL, 0, "%zu", len);
		if (body + digits == len)
			break;
		len = body + digits;
	}
	kiln_buf_addf(b, "%zu %s=%s\n", len, key, val);
}

static void ustar_header(char *h, const char *name, uint32_t mode, uint64_t size, uint32_t mtime,
                         char type, const char *link, const char *user, const char *group,
                         uint32_t rdev)
{
	unsigned sum = 0;
	size_t i;

	memset(h, 0, 512);
	snprintf(h, 100, "%s", name);
	octal(h + 100, 8, mode & 07777);
	octal(h + 108, 8, 0);
	octal(h + 116, 8, 0);
	octal(h + 124, 12, size);
	octal(h + 136, 12, mtime);
	memset(h + 148, ' ', 8);
	h[156] = type;
	snprintf(h + 157, 100, "%s", link);
	memcpy(h + 257, "ustar", 6);
	memcpy(h + 263, "00", 2);
	snprintf(h + 265, 32, "%s", user);
	snprintf(h + 297, 32, "%s", group);
	octal(h + 329, 8, (rdev >> 8) & 0xff);
	octal(h + 337, 8, rdev & 0xff);
	for (i = 0; i < 512; i++)
		sum += (unsigned char)h[i];
	snprintf(h + 148, 8, "%06o", sum);
	h[155] = ' ';
}

static kiln_rc tar_entry(struct tar *t, const char *name, const struct pack_file_info *fi,
                         char type, const char *link, uint64_t size, struct kiln_err *err)
{
	struct kiln_buf pax = KILN_BUF_INIT(4 * KILN_LIMIT_CPIO_NAME);
	char h[512], zeros[512];
	kiln_rc rc = KILN_OK;

	memset(zeros, 0, sizeof(zeros));
	if (strlen(name) >= 100)
		pax_record(&pax, "path", name);
	if (strlen(link) >= 100)
		pax_record(&pax, "linkpath", link);
	if (size > 077777777777ull) {
		char n[32];

		snprintf(n, sizeof(n), "%" PRIu64, size);
		pax_record(&pax, "size", n);
	}
	if (pax.len) {
		ustar_header(h, "././@PaxHeader", 0644, pax.len, fi->mtime, 'x', "", "", "", 0);
		rc = tar_out(t, h, 512, err);
		if (!rc)
			rc = tar_out(t, pax.ptr, pax.len, err);
		if (!rc && pax.len % 512)
			rc = tar_out(t, zeros, 512 - pax.len % 512, err);
	}
	ustar_header(h, name, fi->mode, size > 077777777777ull ? 0 : size, fi->mtime, type, link,
	             fi->user, fi->group, fi->rdev);
	if (!rc)
		rc = tar_out(t, h, 512, err);
	kiln_buf_release(&pax);
	return rc;
}

static kiln_rc tar_data(struct tar *t, const struct pack_file_info *fi, struct kiln_err *err)
{
	char buf[64 * 1024], zeros[512];
	size_t got = 0;
	kiln_rc rc;

	do {
		rc = pack_payload_read(t->pl, buf, sizeof(buf), &got, err);
		if (!rc && got)
			rc = tar_out(t, buf, got, err);
	} while (!rc && got);
	memset(zeros, 0, sizeof(zeros));
	if (!rc && fi->data_size % 512)
		rc = tar_out(t, zeros, 512 - fi->data_size % 512, err);
	return rc;
}

/* Hard-link members before the last carry no data: they become link entries to it once
 * it has been written. */
static kiln_rc tar_links(struct tar *t, const struct pack_file_info *fi, const char *target,
                         struct kiln_err *err)
{
	size_t pos = 0;
	kiln_rc rc = KILN_OK;

	while (!rc && pos < t->pending.len) {
		uint32_t ino;
		const char *name;

		memcpy(&ino, t->pending.ptr + pos, sizeof(ino));
		name = t->pending.ptr + pos + sizeof(ino);
		pos += sizeof(ino) + strlen(name) + 1;
		if (ino == fi->inode)
			rc = tar_entry(t, name, fi, '1', target, 0, err);
	}
	return rc;
}

static char tar_type(uint32_t mode)
{
	if (S_ISDIR(mode))
		return '5';
	if (S_ISLNK(mode))
		return '2';
	if (S_ISCHR(mode))
		return '3';
	if (S_ISBLK(mode))
		return '4';
	if (S_ISFIFO(mode))
		return '6';
	return '0';
}

static kiln_rc tar_one(struct tar *t, const struct pack_file_info *fi, struct kiln_err *err)
{
	struct kiln_buf name = KILN_BUF_INIT(KILN_LIMIT_CPIO_NAME + 4);
	kiln_rc rc = KILN_OK;

	entry_name(fi, &name);
	if (S_ISDIR(fi->mode))
		kiln_buf_addch(&name, '/');
	if (S_ISREG(fi->mode) && fi->nlink > 1 && !fi->link_data) {
		kiln_buf_add(&t->pending, &fi->inode, sizeof(fi->inode));
		kiln_buf_add(&t->pending, name.ptr, name.len + 1);
		rc = kiln_buf_finish(&t->pending, err);
	} else if (S_ISLNK(fi->mode)) {
		rc = tar_entry(t, name.ptr, fi, '2', fi->link, 0, err);
	} else if (S_ISREG(fi->mode)) {
		rc = tar_entry(t, name.ptr, fi, '0', "", fi->data_size, err);
		if (!rc)
			rc = tar_data(t, fi, err);
		if (!rc && fi->nlink > 1)
			rc = tar_links(t, fi, name.ptr, err);
	} else if (!S_ISSOCK(fi->mode)) {
		rc = tar_entry(t, name.ptr, fi, tar_type(fi->mode), "", 0, err);
	}
	kiln_buf_release(&name);
	return rc;
}

kiln_rc pack_payload_to_tar(struct pack_payload *pl, int fd, bool gzip, struct kiln_err *err)
{
	struct tar t = {pl, NULL, fd, {tar_sink_write}, KILN_BUF_INIT(16 * KILN_MIB)};
	struct pack_compress gz = {PACK_COMP_GZIP, 9, 0, "9", "gzip"};
	struct pack_file_info fi;
	char zeros[1024];
	kiln_rc rc = KILN_OK;

	if (gzip)
		rc = pack_comp_new(&gz, &t.sink, &t.comp, err);
	while (!rc && !(rc = pack_payload_next(pl, &fi, err)))
		rc = tar_one(&t, &fi, err);
	if (rc == KILN_ENOTFOUND) {
		memset(zeros, 0, sizeof(zeros));
		rc = tar_out(&t, zeros, sizeof(zeros), err);
		if (!rc && t.comp)
			rc = pack_comp_finish(t.comp, err);
	}
	pack_comp_free(t.comp);
	kiln_buf_release(&t.pending);
	return rc;
}
