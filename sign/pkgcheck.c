/*
 * pkgcheck.c - kiln verify: every digest and signature of a package, as rpm -K -v reports
 * them.
 *
 * rpm orders the items by the range they cover (header, payload, header+payload) and, in
 * each range, signatures before digests. The digests come from pack_check_file(); this file
 * adds the signatures: OPENPGP (278, rpm 6's words), RSAHEADER/DSAHEADER (267/268) over the
 * main header bytes, and the legacy PGP/GPG (1002/1005) signatures over header and payload,
 * which are hashed by streaming the file.
 */
#include "util/util.h"

#include <fcntl.h>
#include <unistd.h>

#include "pack/pack.h"
#include "sign/sign_int.h"

const char *sign_item_status_name(enum sign_item_status st)
{
	switch (st) {
	case SIGN_ITEM_OK:
		return "OK";
	case SIGN_ITEM_NOKEY:
		return "NOKEY";
	case SIGN_ITEM_NOTFOUND:
		return "NOTFOUND";
	case SIGN_ITEM_BAD:
		break;
	}
	return "BAD";
}

struct pkgcheck {
	const struct sign_keyring *kr;
	const struct pack_package *pkg;
	int fd; /* the package, for header+payload signatures */
	struct sign_check *out;
};

static struct sign_check_item *item_add(struct sign_check *out, struct kiln_err *err)
{
	struct sign_check_item *it;

	if (out->n >= SIGN_CHECK_ITEMS_MAX) {
		kiln_err_set(err, KILN_ELIMIT, "more than %d signatures and digests",
		             SIGN_CHECK_ITEMS_MAX);
		return NULL;
	}
	it = &out->items[out->n++];
	memset(it, 0, sizeof(*it));
	return it;
}

/* Feed the header bytes, then the payload read from the file. */
static kiln_rc feed_file(void *ctx, struct util_digest *d, struct kiln_err *err)
{
	const struct pkgcheck *pc = ctx;
	uint8_t buf[64 * 1024];
	off_t off = (off_t)pc->pkg->payload_off;
	ssize_t n;

	util_digest_update(d, pc->pkg->hdr_raw.ptr, pc->pkg->hdr_raw.len);
	for (;;) {
		n = pread(pc->fd, buf, sizeof(buf), off);
		if (n < 0 && errno == EINTR)
			continue;
		if (n < 0)
			return kiln_err_sys(err, KILN_EIO, "cannot read the payload");
		if (!n)
			return KILN_OK;
		util_digest_update(d, buf, (size_t)n);
		off += n;
	}
}

static kiln_rc check_one_sig(struct pkgcheck *pc, const void *sig, size_t len, const char *prefix,
                             bool whole, struct kiln_err *err)
{
	struct sign_check_item *it = item_add(pc->out, err);
	struct sign_feed feed = {feed_file, pc};
	struct kiln_err e = KILN_ERR_INIT;
	struct sign_result res;
	char desc[96];
	kiln_rc rc;

	if (!it)
		return KILN_ELIMIT;
	if (whole)
		rc = sign_verify_feed(pc->kr, sig, len, &feed, &res, &e);
	else
		rc = sign_verify(pc->kr, sig, len, pc->pkg->hdr_raw.ptr, pc->pkg->hdr_raw.len, &res,
		                 &e);
	if (rc == KILN_ENOMEM || rc == KILN_EIO) {
		kiln_err_merge(err, &e);
		return rc;
	}
	it->signature = true;
	sign_result_describe(&res, desc, sizeof(desc));
	snprintf(it->what, sizeof(it->what), "%s%s", prefix, desc);
	it->status = res.status == SIGN_STATUS_OK      ? SIGN_ITEM_OK
	             : res.status == SIGN_STATUS_NOKEY ? SIGN_ITEM_NOKEY
	                                               : SIGN_ITEM_BAD;
	if (it->status == SIGN_ITEM_BAD)
		sign_strlcpy(it->detail, res.reason, sizeof(it->detail));
	pc->out->signatures_ok += it->status == SIGN_ITEM_OK;
	return KILN_OK;
}

/* OPENPGP (278): one base64 signature per element. */
static kiln_rc check_openpgp(struct pkgcheck *pc, struct kiln_err *err)
{
	const struct pack_entry *e = pack_header_get(&pc->pkg->sig, PACK_SIGTAG_OPENPGP);
	struct kiln_buf bin = KILN_BUF_INIT(2 * KILN_LIMIT_PGP_PACKET);
	uint32_t i;
	kiln_rc rc = KILN_OK;

	if (!e)
		return KILN_OK;
	if (e->type != RPMTAG_TYPE_STRING_ARRAY)
		return kiln_err_set(err, KILN_EFORMAT, "OPENPGP (278) is not a string array");
	for (i = 0; !rc && i < e->count; i++) {
		const char *b64 = ((char *const *)e->data)[i];

		kiln_buf_reset(&bin);
		if (util_base64_decode(b64, strlen(b64), &bin, NULL))
			kiln_buf_reset(&bin); /* reported as a malformed (empty) signature */
		rc = check_one_sig(pc, bin.ptr, bin.len, "Header OpenPGP ", false, err);
	}
	kiln_buf_release(&bin);
	return rc;
}

static kiln_rc check_bin_sig(struct pkgcheck *pc, uint32_t tag, const char *prefix, bool whole,
                             struct kiln_err *err)
{
	const struct pack_entry *e = pack_header_get(&pc->pkg->sig, tag);

	if (!e)
		return KILN_OK;
	if (e->type != RPMTAG_TYPE_BIN)
		return kiln_err_set(err, KILN_EFORMAT, "signature tag %u is not binary", tag);
	return check_one_sig(pc, e->data, e->count, prefix, whole, err);
}

/* Copy pack's digest results whose name starts with range ("Header", "Payload", or NULL for
 * the rest) into out. */
static kiln_rc add_digests(struct sign_check *out, const struct pack_check *c, const char *range,
                           struct kiln_err *err)
{
	size_t i;

	for (i = 0; i < c->n; i++) {
		const struct pack_check_item *d = &c->items[i];
		bool header = !strncmp(d->what, "Header ", 7);
		bool payload = !strncmp(d->what, "Payload ", 8);
		struct sign_check_item *it;

		if (range ? strncmp(d->what, range, strlen(range)) != 0 : header || payload)
			continue;
		it = item_add(out, err);
		if (!it)
			return KILN_ELIMIT;
		sign_strlcpy(it->what, d->what, sizeof(it->what));
		it->status = d->res == PACK_CHECK_OK ? SIGN_ITEM_OK : SIGN_ITEM_BAD;
		if (it->status == SIGN_ITEM_BAD)
			snprintf(it->detail, sizeof(it->detail), "Expected %s != %s", d->expected,
			         d->actual);
	}
	return KILN_OK;
}

/* Is the payload covered by signature strength? rpm counts payload digests inside a signed
 * header as that, and a good header+payload signature directly. */
static bool payload_signed(const struct sign_check *out, bool header_signed)
{
	bool digests = false;
	bool bad = false;
	size_t i;

	for (i = 0; i < out->n; i++) {
		const struct sign_check_item *it = &out->items[i];

		if (it->signature && it->status == SIGN_ITEM_OK && strncmp(it->what, "Header ", 7))
			return true; /* a header+payload signature */
		if (!strncmp(it->what, "Payload ", 8)) {
			digests = true;
			bad = bad || it->status != SIGN_ITEM_OK;
		}
	}
	return header_signed && digests && !bad;
}

/* rpm 4.x: when a signature was good but does not reach the payload, the header+payload
 * signature tags that are absent are reported as NOTFOUND, RSA then DSA. */
static kiln_rc add_notfound(struct pkgcheck *pc, bool header_signed, struct kiln_err *err)
{
	static const struct {
		uint32_t tag;
		const char *what;
	} legacy[] = {{PACK_SIGTAG_PGP, "RSA signature"}, {PACK_SIGTAG_GPG, "DSA signature"}};
	struct sign_check_item *it;
	size_t i;

	if (!pc->out->signatures_ok || payload_signed(pc->out, header_signed))
		return KILN_OK;
	for (i = 0; i < KILN_ARRAY_SIZE(legacy); i++) {
		if (pack_header_get(&pc->pkg->sig, legacy[i].tag))
			continue;
		it = item_add(pc->out, err);
		if (!it)
			return KILN_ELIMIT;
		sign_strlcpy(it->what, legacy[i].what, sizeof(it->what));
		it->status = SIGN_ITEM_NOTFOUND;
		it->signature = true;
	}
	return KILN_OK;
}

static kiln_rc check_all(struct pkgcheck *pc, const struct pack_check *dig, unsigned flags,
                         struct kiln_err *err)
{
	bool header_signed;
	struct sign_check *out = pc->out;
	struct sign_check_item *it;
	kiln_rc rc;

	rc = check_openpgp(pc, err);
	if (!rc)
		rc = check_bin_sig(pc, PACK_SIGTAG_RSA, "Header ", false, err);
	if (!rc)
		rc = check_bin_sig(pc, PACK_SIGTAG_DSA, "Header ", false, err);
	if (!rc && !out->n && (flags & SIGN_CHECK_REQUIRE_SIGNATURE) && (it = item_add(out, err))) {
		sign_strlcpy(it->what, "Header OpenPGP signature", sizeof(it->what));
		it->status = SIGN_ITEM_NOTFOUND;
		it->signature = true;
	}
	header_signed = out->signatures_ok > 0;
	if (!rc)
		rc = add_digests(out, dig, "Header ", err);
	if (!rc)
		rc = add_digests(out, dig, "Payload ", err);
	if (!rc && pc->pkg->format != 6) {
		/* rpm 6 ignores the legacy tags >= 1000 in v6 packages; so does kiln */
		rc = check_bin_sig(pc, PACK_SIGTAG_PGP, "", true, err);
		if (!rc)
			rc = check_bin_sig(pc, PACK_SIGTAG_GPG, "", true, err);
		if (!rc)
			rc = add_notfound(pc, header_signed, err);
	}
	if (!rc)
		rc = add_digests(out, dig, NULL, err);
	return rc;
}

kiln_rc sign_package_check(const struct sign_keyring *kr, const char *path, unsigned flags,
                           struct sign_check *out, struct kiln_err *err)
{
	struct pack_package pkg = {0};
	struct pack_check dig;
	struct pkgcheck pc = {kr, &pkg, -1, out};
	size_t i;
	kiln_rc rc;

	memset(out, 0, sizeof(*out));
	rc = pack_check_file(path, &dig, err);
	if (!rc)
		rc = pack_package_open(&pkg, path, &pc.fd, err);
	if (!rc)
		rc = check_all(&pc, &dig, flags, err);
	if (!rc) {
		out->ok = dig.ok;
		for (i = 0; i < out->n; i++)
			out->ok = out->ok && out->items[i].status == SIGN_ITEM_OK;
	}
	util_close(pc.fd);
	pack_package_release(&pkg);
	return rc;
}
