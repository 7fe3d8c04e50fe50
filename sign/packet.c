/*
 * packet.c - OpenPGP packet framing, multiprecision integers and signature subpackets
 * (RFC 4880 4.2, 3.2 and 5.2.3.1; RFC 9580 4.2, 3.2, 5.2.3.7).
 *
 * Everything here reads untrusted bytes: each length is compared with what is left before
 * anything is borrowed, and packet bodies are capped at KILN_LIMIT_PGP_PACKET.
 */
#include "util/util.h"

#include "sign/sign_int.h"

void sign_strlcpy(char *dst, const char *src, size_t size)
{
	size_t n = strnlen(src, size ? size - 1 : 0);

	if (!size)
		return;
	memcpy(dst, src, n);
	dst[n] = '\0';
}

void sign_cur_init(struct sign_cur *c, const void *p, size_t len)
{
	c->p = p;
	c->len = len;
	c->off = 0;
}

size_t sign_cur_left(const struct sign_cur *c)
{
	return c->len - c->off;
}

bool sign_cur_take(struct sign_cur *c, size_t n, const uint8_t **p)
{
	if (n > sign_cur_left(c))
		return false;
	*p = c->p + c->off;
	c->off += n;
	return true;
}

uint16_t sign_get_u16(const uint8_t *p)
{
	return (uint16_t)(p[0] << 8 | p[1]);
}

uint32_t sign_get_u32(const uint8_t *p)
{
	return (uint32_t)p[0] << 24 | (uint32_t)p[1] << 16 | (uint32_t)p[2] << 8 | p[3];
}

bool sign_cur_u8(struct sign_cur *c, uint8_t *v)
{
	const uint8_t *p;

	if (!sign_cur_take(c, 1, &p))
		return false;
	*v = p[0];
	return true;
}

bool sign_cur_u16(struct sign_cur *c, uint16_t *v)
{
	const uint8_t *p;

	if (!sign_cur_take(c, 2, &p))
		return false;
	*v = sign_get_u16(p);
	return true;
}

bool sign_cur_u32(struct sign_cur *c, uint32_t *v)
{
	const uint8_t *p;

	if (!sign_cur_take(c, 4, &p))
		return false;
	*v = sign_get_u32(p);
	return true;
}

bool sign_cur_mpi(struct sign_cur *c, const uint8_t **p, size_t *n)
{
	size_t save = c->off;
	uint16_t bits;

	if (!sign_cur_u16(c, &bits))
		return false;
	*n = ((size_t)bits + 7) / 8;
	if (!sign_cur_take(c, *n, p)) {
		c->off = save;
		return false;
	}
	/* The bit count starts at the most significant set bit (RFC 4880 3.2), so an MPI has
	 * exactly one encoding and no bit of a signature can change without notice. */
	if (*n && (bits % 8 ? (*p)[0] >> (bits % 8) || !((*p)[0] >> (bits % 8 - 1))
	                    : !((*p)[0] & 0x80))) {
		c->off = save;
		return false;
	}
	return true;
}

void sign_put_u16(struct kiln_buf *out, uint16_t v)
{
	uint8_t b[2] = {(uint8_t)(v >> 8), (uint8_t)v};

	kiln_buf_add(out, b, 2);
}

void sign_put_u32(struct kiln_buf *out, uint32_t v)
{
	uint8_t b[4] = {(uint8_t)(v >> 24), (uint8_t)(v >> 16), (uint8_t)(v >> 8), (uint8_t)v};

	kiln_buf_add(out, b, 4);
}

void sign_mpi_write(struct kiln_buf *out, const uint8_t *p, size_t n)
{
	unsigned top;
	size_t bits;

	while (n && !p[0]) {
		p++;
		n--;
	}
	bits = n ? (n - 1) * 8 : 0;
	for (top = n ? p[0] : 0; top; top >>= 1)
		bits++;
	if (bits > 0xffff) {
		out->err = out->err ? out->err : KILN_ELIMIT;
		return;
	}
	sign_put_u16(out, (uint16_t)bits);
	kiln_buf_add(out, p, n);
}

/* ---------------------------------------------------------------------------------------- */

void sign_pkt_reader_init(struct sign_pkt_reader *r, const void *data, size_t len)
{
	sign_cur_init(&r->cur, data, len);
	r->count = 0;
}

/* New-format length (RFC 9580 4.2.1). Partial lengths (224..254) are refused. */
static kiln_rc new_length(struct sign_cur *c, size_t *len, struct kiln_err *err)
{
	uint8_t o1;
	uint8_t o2;
	uint32_t l4;

	if (!sign_cur_u8(c, &o1))
		return kiln_err_set(err, KILN_EFORMAT, "truncated packet header");
	if (o1 < 192) {
		*len = o1;
	} else if (o1 < 224) {
		if (!sign_cur_u8(c, &o2))
			return kiln_err_set(err, KILN_EFORMAT, "truncated packet header");
		*len = ((size_t)(o1 - 192) << 8) + o2 + 192;
	} else if (o1 == 255) {
		if (!sign_cur_u32(c, &l4))
			return kiln_err_set(err, KILN_EFORMAT, "truncated packet header");
		*len = l4;
	} else {
		return kiln_err_set(err, KILN_EFORMAT, "partial body lengths are not allowed here");
	}
	return KILN_OK;
}

/* Old-format length (RFC 9580 4.2.2); the indeterminate length type is refused. */
static kiln_rc old_length(struct sign_cur *c, unsigned ltype, size_t *len, struct kiln_err *err)
{
	uint8_t o1;
	uint16_t l2;
	uint32_t l4;

	switch (ltype) {
	case 0:
		if (!sign_cur_u8(c, &o1))
			break;
		*len = o1;
		return KILN_OK;
	case 1:
		if (!sign_cur_u16(c, &l2))
			break;
		*len = l2;
		return KILN_OK;
	case 2:
		if (!sign_cur_u32(c, &l4))
			break;
		*len = l4;
		return KILN_OK;
	default:
		return kiln_err_set(err, KILN_EFORMAT,
		                    "indeterminate packet lengths are not allowed");
	}
	return kiln_err_set(err, KILN_EFORMAT, "truncated packet header");
}

kiln_rc sign_pkt_next(struct sign_pkt_reader *r, struct sign_pkt *pkt, struct kiln_err *err)
{
	struct sign_cur *c = &r->cur;
	size_t start = c->off;
	uint8_t ctb;
	kiln_rc rc;

	if (!sign_cur_left(c))
		return KILN_ENOTFOUND;
	if (r->count >= KILN_LIMIT_PGP_PACKETS)
		return kiln_err_set(err, KILN_ELIMIT, "more than %d OpenPGP packets",
		                    KILN_LIMIT_PGP_PACKETS);
	(void)sign_cur_u8(c, &ctb);
	if (!(ctb & 0x80)) {
		rc = kiln_err_set(err, KILN_EFORMAT, "not an OpenPGP packet (octet 0x%02x)", ctb);
	} else if (ctb & 0x40) {
		pkt->tag = ctb & 0x3f;
		rc = new_length(c, &pkt->len, err);
	} else {
		pkt->tag = (ctb >> 2) & 0x0f;
		rc = old_length(c, ctb & 3, &pkt->len, err);
	}
	if (!rc && pkt->len > KILN_LIMIT_PGP_PACKET)
		rc = kiln_err_set(err, KILN_ELIMIT, "OpenPGP packet of %zu bytes exceeds the limit",
		                  pkt->len);
	if (!rc && !sign_cur_take(c, pkt->len, &pkt->body))
		rc = kiln_err_set(err, KILN_EFORMAT,
		                  "OpenPGP packet body of %zu bytes runs past the end of the input",
		                  pkt->len);
	if (rc) {
		kiln_err_wrap(err, "at offset %zu", start);
		c->off = start;
		return rc;
	}
	pkt->off = start;
	pkt->raw = c->p + start;
	pkt->raw_len = c->off - start;
	r->count++;
	return KILN_OK;
}

void sign_pkt_header_write(struct kiln_buf *out, unsigned tag, size_t len)
{
	uint8_t h[6];
	size_t n = 0;

	if (tag < 16) {
		/* Old format with the shortest length type, exactly as gpg writes. */
		unsigned ltype = len < 0x100 ? 0 : len < 0x10000 ? 1 : 2;

		h[n++] = (uint8_t)(0x80 | tag << 2 | ltype);
		if (ltype == 2) {
			h[n++] = (uint8_t)(len >> 24);
			h[n++] = (uint8_t)(len >> 16);
		}
		if (ltype >= 1)
			h[n++] = (uint8_t)(len >> 8);
		h[n++] = (uint8_t)len;
	} else {
		h[n++] = (uint8_t)(0xc0 | tag);
		if (len < 192) {
			h[n++] = (uint8_t)len;
		} else if (len < 8384) {
			h[n++] = (uint8_t)(((len - 192) >> 8) + 192);
			h[n++] = (uint8_t)(len - 192);
		} else {
			h[n++] = 0xff;
			h[n++] = (uint8_t)(len >> 24);
			h[n++] = (uint8_t)(len >> 16);
			h[n++] = (uint8_t)(len >> 8);
			h[n++] = (uint8_t)len;
		}
	}
	kiln_buf_add(out, h, n);
}

void sign_pkt_write(struct kiln_buf *out, unsigned tag, const void *body, size_t len)
{
	sign_pkt_header_write(out, tag, len);
	kiln_buf_add(out, body, len);
}

/* ---------------------------------------------------------------------------------------- */

kiln_rc sign_subpkt_next(struct sign_cur *area, struct sign_subpkt *sp, struct kiln_err *err)
{
	size_t start = area->off;
	size_t len = 0;
	uint8_t o1;
	uint8_t o2;
	uint32_t l4;
	uint8_t type;

	if (!sign_cur_left(area))
		return KILN_ENOTFOUND;
	(void)sign_cur_u8(area, &o1);
	if (o1 < 192) {
		len = o1;
	} else if (o1 < 255) {
		if (!sign_cur_u8(area, &o2))
			goto bad;
		len = ((size_t)(o1 - 192) << 8) + o2 + 192;
	} else {
		if (!sign_cur_u32(area, &l4))
			goto bad;
		len = l4;
	}
	/* The length counts the type octet, so it is at least 1. */
	if (len < 1 || !sign_cur_u8(area, &type) || !sign_cur_take(area, len - 1, &sp->data))
		goto bad;
	sp->type = type & 0x7f;
	sp->critical = (type & 0x80) != 0;
	sp->len = len - 1;
	return KILN_OK;
bad:
	area->off = start;
	return kiln_err_set(err, KILN_EFORMAT, "malformed signature subpacket at offset %zu",
	                    start);
}

void sign_subpkt_write(struct kiln_buf *out, unsigned type, const void *data, size_t len)
{
	size_t total = len + 1;
	uint8_t h[5];
	size_t n = 0;

	if (total < 192) {
		h[n++] = (uint8_t)total;
	} else if (total < 8384) {
		h[n++] = (uint8_t)(((total - 192) >> 8) + 192);
		h[n++] = (uint8_t)(total - 192);
	} else {
		h[n++] = 0xff;
		h[n++] = (uint8_t)(total >> 24);
		h[n++] = (uint8_t)(total >> 16);
		h[n++] = (uint8_t)(total >> 8);
		h[n++] = (uint8_t)total;
	}
	kiln_buf_add(out, h, n);
	kiln_buf_addch(out, (char)type);
	kiln_buf_add(out, data, len);
}
