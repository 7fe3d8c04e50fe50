/*
 * armor.c - OpenPGP ASCII armor (RFC 4880 6.2, RFC 9580 6.2) with the CRC-24 checksum line.
 *
 * The writer emits exactly what rpm 4.18's parser insists on: the BEGIN line, a blank line,
 * base64 in lines of 64 characters, "=" and the CRC-24, the END line. The reader is lenient
 * where other writers differ (CR LF line ends, armor headers, a missing blank line or CRC
 * line) but checks the CRC whenever it is present.
 */
#include "util/util.h"

#include "sign/sign_int.h"

static const struct {
	enum sign_armor_type type;
	const char *label;
} armor_labels[] = {
    {SIGN_ARMOR_PUBLIC_KEY, "PGP PUBLIC KEY BLOCK"},
    {SIGN_ARMOR_PRIVATE_KEY, "PGP PRIVATE KEY BLOCK"},
    {SIGN_ARMOR_SIGNATURE, "PGP SIGNATURE"},
    {SIGN_ARMOR_MESSAGE, "PGP MESSAGE"},
};

static const char *armor_label(enum sign_armor_type type)
{
	size_t i;

	for (i = 0; i < KILN_ARRAY_SIZE(armor_labels); i++) {
		if (armor_labels[i].type == type)
			return armor_labels[i].label;
	}
	return "PGP MESSAGE";
}

uint32_t sign_crc24(const void *data, size_t len)
{
	const uint8_t *p = data;
	uint32_t crc = 0xb704ce;
	size_t i;
	int bit;

	for (i = 0; i < len; i++) {
		crc ^= (uint32_t)p[i] << 16;
		for (bit = 0; bit < 8; bit++) {
			crc <<= 1;
			if (crc & 0x1000000)
				crc ^= 0x1864cfb;
		}
	}
	return crc & 0xffffff;
}

void sign_armor_encode(enum sign_armor_type type, const void *data, size_t len,
                       struct kiln_buf *out)
{
	const uint8_t *p = data;
	const char *label = armor_label(type);
	uint32_t crc = sign_crc24(data, len);
	uint8_t c[3] = {(uint8_t)(crc >> 16), (uint8_t)(crc >> 8), (uint8_t)crc};
	size_t off;

	/* Grow once: a secret key's base64 must not be left behind by a realloc. */
	(void)kiln_buf_grow(out, len / 48 * 65 + 160);
	kiln_buf_addf(out, "-----BEGIN %s-----\n\n", label);
	for (off = 0; off < len; off += 48) {
		util_base64_encode(p + off, len - off < 48 ? len - off : 48, out);
		kiln_buf_addch(out, '\n');
	}
	kiln_buf_addch(out, '=');
	util_base64_encode(c, 3, out);
	kiln_buf_addf(out, "\n-----END %s-----\n", label);
}

/* One line of text: [start, end) without the line terminator, next = after it. */
struct line {
	const char *start;
	size_t len;
	size_t next;
};

static bool line_at(const char *data, size_t len, size_t off, struct line *l)
{
	const char *nl;

	if (off >= len)
		return false;
	l->start = data + off;
	nl = memchr(l->start, '\n', len - off);
	l->len = nl ? (size_t)(nl - l->start) : len - off;
	l->next = off + l->len + (nl ? 1 : 0);
	while (l->len && (l->start[l->len - 1] == '\r' || l->start[l->len - 1] == ' ' ||
	                  l->start[l->len - 1] == '\t'))
		l->len--;
	return true;
}

static bool line_is(const struct line *l, const char *prefix, const char *label, const char *suffix)
{
	size_t a = strlen(prefix);
	size_t b = strlen(label);
	size_t c = strlen(suffix);

	return l->len == a + b + c && !memcmp(l->start, prefix, a) &&
	       !memcmp(l->start + a, label, b) && !memcmp(l->start + a + b, suffix, c);
}

/* Find a BEGIN line at or after off; on success *type and *off (the next line). */
static bool find_begin(const char *data, size_t len, size_t *off, enum sign_armor_type *type,
                       size_t *begin_at)
{
	struct line l;
	size_t i;

	while (line_at(data, len, *off, &l)) {
		for (i = 0; i < KILN_ARRAY_SIZE(armor_labels); i++) {
			if (line_is(&l, "-----BEGIN ", armor_labels[i].label, "-----")) {
				*type = armor_labels[i].type;
				*begin_at = *off;
				*off = l.next;
				return true;
			}
		}
		*off = l.next;
	}
	return false;
}

/* Skip armor headers ("Key: value" lines) and the blank line that ends them. */
static size_t skip_headers(const char *data, size_t len, size_t off)
{
	struct line l;

	while (line_at(data, len, off, &l)) {
		if (!l.len)
			return l.next;
		if (!memchr(l.start, ':', l.len))
			return off; /* no blank line: the base64 starts here */
		off = l.next;
	}
	return off;
}

static kiln_rc check_crc(const struct line *l, const struct kiln_buf *out, size_t start,
                         struct kiln_err *err)
{
	struct kiln_buf raw = KILN_BUF_INIT(16);
	uint32_t want;
	kiln_rc rc;

	if (l->len != 5)
		return kiln_err_set(err, KILN_EFORMAT, "malformed armor checksum line");
	rc = util_base64_decode(l->start + 1, 4, &raw, err);
	if (!rc && raw.len != 3)
		rc = kiln_err_set(err, KILN_EFORMAT, "malformed armor checksum line");
	if (!rc) {
		want = (uint32_t)(uint8_t)raw.ptr[0] << 16 | (uint32_t)(uint8_t)raw.ptr[1] << 8 |
		       (uint8_t)raw.ptr[2];
		if (want != sign_crc24(out->ptr + start, out->len - start))
			rc = kiln_err_set(err, KILN_EFORMAT, "armor checksum mismatch");
	}
	kiln_buf_release(&raw);
	return rc;
}

kiln_rc sign_armor_decode(const char *data, size_t len, enum sign_armor_type *type,
                          size_t *consumed, struct kiln_buf *out, struct kiln_err *err)
{
	size_t start = out->len;
	size_t off = 0;
	size_t b64 = 0;
	size_t begin_at = 0;
	const struct line *crc = NULL;
	struct line l;
	struct line crc_line;
	kiln_rc rc;

	if (!find_begin(data, len, &off, type, &begin_at))
		return KILN_ENOTFOUND;
	off = skip_headers(data, len, off);
	b64 = off;
	while (line_at(data, len, off, &l)) {
		if (l.len && l.start[0] == '=') {
			crc_line = l;
			crc = &crc_line;
		} else if (line_is(&l, "-----END ", armor_label(*type), "-----")) {
			break;
		} else if (crc) {
			return kiln_err_set(err, KILN_EFORMAT,
			                    "text after the armor checksum line");
		}
		off = l.next;
	}
	if (off >= len)
		return kiln_err_set(err, KILN_EFORMAT, "armor block at offset %zu has no END line",
		                    begin_at);
	/* The span [b64, end of base64) excludes the CRC line. */
	if (!kiln_buf_grow(out, (off - b64) / 4 * 3 + 3))
		return kiln_buf_finish(out, err);
	rc = util_base64_decode(data + b64, (crc ? (size_t)(crc->start - data) : off) - b64, out,
	                        err);
	if (!rc && crc)
		rc = check_crc(crc, out, start, err);
	if (!rc && out->len == start)
		rc = kiln_err_set(err, KILN_EFORMAT, "empty armor block");
	if (rc) {
		kiln_err_wrap(err, "armor block at offset %zu", begin_at);
		return rc;
	}
	*consumed = l.next;
	return KILN_OK;
}

bool sign_armor_detect(const void *data, size_t len)
{
	const char *p = data;
	size_t i = 0;

	while (i < len && (p[i] == ' ' || p[i] == '\t' || p[i] == '\r' || p[i] == '\n'))
		i++;
	return len - i >= 15 && !memcmp(p + i, "-----BEGIN PGP ", 15);
}
