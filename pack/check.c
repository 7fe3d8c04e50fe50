/*
 * check.c - `rpm -K --nosignature`: every digest of a package (rpm-reference.md sections 2.3
 * and 2.4). The header digests cover the main header's bytes; the payload digests the
 * compressed bytes after it; MD5 both. Like rpm 4.18, the ALT digest (meant for the
 * uncompressed payload) is compared with the stored bytes as well.
 */
#include "util/util.h"

#include <unistd.h>

#include "pack/pack.h"
#include "pack/pack_int.h"

static struct pack_check_item *item(struct pack_check *c, const char *what)
{
	struct pack_check_item *it = &c->items[c->n++];

	memset(it, 0, sizeof(*it));
	it->what = what;
	return it;
}

static void verdict(struct pack_check_item *it, const char *want, const unsigned char *md,
                    size_t len)
{
	util_hex_encode(md, len, it->actual);
	snprintf(it->expected, sizeof(it->expected), "%s", want);
	it->res = strcasecmp(it->actual, want) ? PACK_CHECK_BAD : PACK_CHECK_OK;
}

static kiln_rc header_digest(struct pack_check *c, const struct pack_package *p, uint32_t tag,
                             enum util_digest_algo algo, const char *what, struct kiln_err *err)
{
	const char *want = pack_header_get_string(&p->sig, tag);
	unsigned char md[UTIL_DIGEST_MAX];

	if (!want)
		return KILN_OK;
	if (util_digest_mem(algo, p->hdr_raw.ptr, p->hdr_raw.len, md, err))
		return err->code;
	verdict(item(c, what), want, md, util_digest_size(algo));
	return KILN_OK;
}

struct pdig {
	const char *want;
	struct util_digest d;
};

/* Digest the compressed payload (SHA256, SHA512, SHA3-256 as the header has them) and
 * MD5 over header + payload, in one pass over the file. */
static kiln_rc payload_pass(int fd, const struct pack_package *p, struct pdig *pd, size_t npd,
                            struct util_digest *md5, struct kiln_err *err)
{
	unsigned char *buf = kiln_malloc(PACK_IOBUF);
	ssize_t n;
	size_t i;
	kiln_rc rc = KILN_OK;

	if (!buf)
		return kiln_err_set(err, KILN_ENOMEM, "out of memory");
	if (md5->ctx)
		util_digest_update(md5, p->hdr_raw.ptr, p->hdr_raw.len);
	for (;;) {
		n = read(fd, buf, PACK_IOBUF);
		if (n < 0 && errno == EINTR)
			continue;
		if (n < 0) {
			rc = kiln_err_sys(err, KILN_EIO, "read payload");
			break;
		}
		if (!n)
			break;
		for (i = 0; i < npd; i++) {
			if (pd[i].want)
				util_digest_update(&pd[i].d, buf, (size_t)n);
		}
		if (md5->ctx)
			util_digest_update(md5, buf, (size_t)n);
	}
	free(buf);
	return rc;
}

static const struct {
	uint32_t tag;
	enum util_digest_algo algo;
	const char *what;
} payload_tags[] = {
    {RPMTAG_PAYLOADSHA256, UTIL_DIGEST_SHA256, "Payload SHA256 digest"},
    {RPMTAG_PAYLOADSHA512, UTIL_DIGEST_SHA512, "Payload SHA512 digest"},
    {RPMTAG_PAYLOADSHA3_256, UTIL_DIGEST_SHA3_256, "Payload SHA3-256 digest"},
};

static kiln_rc payload_digests(struct pack_check *c, int fd, const struct pack_package *p,
                               struct kiln_err *err)
{
	struct pdig pd[KILN_ARRAY_SIZE(payload_tags)];
	struct util_digest md5 = {NULL, UTIL_DIGEST_MD5};
	const struct pack_entry *sigmd5 = pack_header_get(&p->sig, PACK_SIGTAG_MD5);
	const char *alt = pack_header_get_string(&p->hdr, RPMTAG_PAYLOADSHA256ALT);
	unsigned char md[UTIL_DIGEST_MAX];
	char want[33];
	size_t i;
	kiln_rc rc = KILN_OK;

	memset(pd, 0, sizeof(pd));
	for (i = 0; !rc && i < KILN_ARRAY_SIZE(pd); i++) {
		pd[i].want = pack_header_get_string(&p->hdr, payload_tags[i].tag);
		if (pd[i].want)
			rc = util_digest_init(&pd[i].d, payload_tags[i].algo, err);
	}
	if (!rc && sigmd5 && sigmd5->type == RPMTAG_TYPE_BIN && sigmd5->count == 16)
		rc = util_digest_init(&md5, UTIL_DIGEST_MD5, err);
	if (!rc)
		rc = payload_pass(fd, p, pd, KILN_ARRAY_SIZE(pd), &md5, err);
	for (i = 0; !rc && i < KILN_ARRAY_SIZE(pd); i++) {
		struct pack_check_item it;

		if (!pd[i].want || util_digest_final(&pd[i].d, md, err))
			continue;
		memset(&it, 0, sizeof(it));
		it.what = payload_tags[i].what;
		verdict(&it, pd[i].want, md, util_digest_size(payload_tags[i].algo));
		if (i == 0 && alt) {
			/* rpm checks the alternative digest against the payload bytes as stored too
			 * (so it passes for an uncompressed payload) and shows it when it passes or
			 * when the main one fails. */
			struct pack_check_item a;

			memset(&a, 0, sizeof(a));
			a.what = "Payload SHA256 ALT digest";
			verdict(&a, alt, md, 32);
			if (a.res == PACK_CHECK_OK || it.res == PACK_CHECK_BAD)
				c->items[c->n++] = a;
		}
		c->items[c->n++] = it;
	}
	if (!rc && md5.ctx && !util_digest_final(&md5, md, err)) {
		util_hex_encode(sigmd5->data, 16, want);
		verdict(item(c, "MD5 digest"), want, md, 16);
	}
	for (i = 0; i < KILN_ARRAY_SIZE(pd); i++)
		util_digest_release(&pd[i].d);
	util_digest_release(&md5);
	return rc;
}

static void conclude(struct pack_check *c)
{
	bool header = false, payload = false, bad = false, alt_ok = false;
	size_t i;

	for (i = 0; i < c->n; i++) {
		const char *w = c->items[i].what;
		bool ok = c->items[i].res == PACK_CHECK_OK;

		if (!strncmp(w, "Header", 6))
			header |= ok;
		if (!strncmp(w, "Payload", 7) || !strncmp(w, "MD5", 3))
			payload |= ok;
		if (!strcmp(w, "Payload SHA256 ALT digest"))
			alt_ok = ok;
		bad |= c->items[i].res == PACK_CHECK_BAD;
	}
	/* A payload digest that fails while its uncompressed alternative passes is fine
	 * (a recompressed payload); everything else BAD is not. */
	for (i = 0; alt_ok && i < c->n; i++) {
		if (!strcmp(c->items[i].what, "Payload SHA256 digest"))
			c->items[i].res = PACK_CHECK_OK;
	}
	bad = false;
	for (i = 0; i < c->n; i++)
		bad |= c->items[i].res == PACK_CHECK_BAD;
	c->ok = !bad && header && payload;
}

static kiln_rc header_digests(struct pack_check *out, const struct pack_package *p,
                              struct kiln_err *err)
{
	kiln_rc rc = header_digest(out, p, PACK_SIGTAG_SHA256, UTIL_DIGEST_SHA256,
	                           "Header SHA256 digest", err);

	if (!rc)
		rc = header_digest(out, p, PACK_SIGTAG_SHA3_256, UTIL_DIGEST_SHA3_256,
		                   "Header SHA3-256 digest", err);
	if (!rc)
		rc = header_digest(out, p, PACK_SIGTAG_SHA1, UTIL_DIGEST_SHA1, "Header SHA1 digest",
		                   err);
	return rc;
}

kiln_rc pack_check_header(const struct pack_package *p, struct pack_check *out,
                          struct kiln_err *err)
{
	size_t i;
	kiln_rc rc;

	memset(out, 0, sizeof(*out));
	rc = header_digests(out, p, err);
	out->ok = !rc;
	for (i = 0; i < out->n; i++)
		out->ok &= out->items[i].res != PACK_CHECK_BAD;
	return rc;
}

kiln_rc pack_check_file(const char *path, struct pack_check *out, struct kiln_err *err)
{
	struct pack_package p;
	int fd = -1;
	kiln_rc rc = pack_package_open(&p, path, &fd, err);

	memset(out, 0, sizeof(*out));
	if (!rc)
		rc = header_digests(out, &p, err);
	if (!rc)
		rc = payload_digests(out, fd, &p, err);
	if (!rc)
		conclude(out);
	util_close(fd);
	pack_package_release(&p);
	return rc;
}
