/*
 * encode.c - hex and base64 encoders and decoders.
 */
#include "util/util.h"

static const char hex_digits[] = "0123456789abcdef";
static const char b64_alphabet[] =
    "ABCDEFGHIJKLMNOPQRSTUVWXYZabcdefghijklmnopqrstuvwxyz0123456789+/";

void util_hex_encode(const void *in, size_t len, char *out)
{
	const unsigned char *p = in;
	size_t i;

	for (i = 0; i < len; i++) {
		out[2 * i] = hex_digits[p[i] >> 4];
		out[2 * i + 1] = hex_digits[p[i] & 15];
	}
	out[2 * len] = '\0';
}

static int hex_value(char c)
{
	if (c >= '0' && c <= '9')
		return c - '0';
	if (c >= 'a' && c <= 'f')
		return c - 'a' + 10;
	if (c >= 'A' && c <= 'F')
		return c - 'A' + 10;
	return -1;
}

kiln_rc util_hex_decode(const char *hex, size_t hexlen, void *out, size_t outlen,
                        struct kiln_err *err)
{
	unsigned char *p = out;
	size_t i;

	if (hexlen != 2 * outlen)
		return kiln_err_set(err, KILN_ESYNTAX, "expected %zu hex digits, got %zu",
		                    2 * outlen, hexlen);
	for (i = 0; i < outlen; i++) {
		int hi = hex_value(hex[2 * i]);
		int lo = hex_value(hex[2 * i + 1]);

		if (hi < 0 || lo < 0)
			return kiln_err_set(err, KILN_ESYNTAX, "invalid hex digit at offset %zu",
			                    2 * i + (hi < 0 ? 0 : 1));
		p[i] = (unsigned char)(hi << 4 | lo);
	}
	return KILN_OK;
}

void util_base64_encode(const void *in, size_t len, struct kiln_buf *out)
{
	const unsigned char *p = in;
	char quad[4];
	size_t i;

	for (i = 0; i + 2 < len; i += 3) {
		quad[0] = b64_alphabet[p[i] >> 2];
		quad[1] = b64_alphabet[(p[i] & 3) << 4 | p[i + 1] >> 4];
		quad[2] = b64_alphabet[(p[i + 1] & 15) << 2 | p[i + 2] >> 6];
		quad[3] = b64_alphabet[p[i + 2] & 63];
		kiln_buf_add(out, quad, 4);
	}
	if (len - i == 1) {
		quad[0] = b64_alphabet[p[i] >> 2];
		quad[1] = b64_alphabet[(p[i] & 3) << 4];
		quad[2] = quad[3] = '=';
		kiln_buf_add(out, quad, 4);
	} else if (len - i == 2) {
		quad[0] = b64_alphabet[p[i] >> 2];
		quad[1] = b64_alphabet[(p[i] & 3) << 4 | p[i + 1] >> 4];
		quad[2] = b64_alphabet[(p[i + 1] & 15) << 2];
		quad[3] = '=';
		kiln_buf_add(out, quad, 4);
	}
}

static int b64_value(char c)
{
	const char *p = c ? strchr(b64_alphabet, c) : NULL;

	return p ? (int)(p - b64_alphabet) : -1;
}

kiln_rc util_base64_decode(const char *in, size_t len, struct kiln_buf *out, struct kiln_err *err)
{
	uint32_t acc = 0;
	int bits = 0;
	bool pad = false;
	size_t i;

	for (i = 0; i < len; i++) {
		char c = in[i];
		int v;

		if (c == ' ' || c == '\t' || c == '\r' || c == '\n')
			continue;
		if (c == '=') {
			pad = true;
			continue;
		}
		v = b64_value(c);
		if (v < 0 || pad)
			return kiln_err_set(err, KILN_ESYNTAX, "invalid base64 at offset %zu", i);
		acc = acc << 6 | (uint32_t)v;
		bits += 6;
		if (bits >= 8) {
			bits -= 8;
			kiln_buf_addch(out, (char)(acc >> bits & 0xff));
		}
	}
	if (bits >= 6)
		return kiln_err_set(err, KILN_ESYNTAX, "truncated base64");
	return kiln_buf_finish(out, err);
}
