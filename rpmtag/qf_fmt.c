/*
 * qf_fmt.c - the :FORMAT modifiers of rpm query formats and rpm's popt query aliases.
 *
 * Each formatter restricts the class of its input the way rpm's formats do; a value of the
 * wrong class prints rpm's marker ("(not a number)", "(not a string)", "(not a blob)",
 * "(invalid type)") instead of failing the query (shared/rpm-reference.md section 9.2).
 */
#include "util/util.h"

#include <sys/stat.h>
#include <time.h>

#include "rpmtag/rpmtag.h"
#include "rpmtag/rpmtag_int.h"

static const struct {
	const char *name;
	enum rpmtag_qf_fmt fmt;
} fmt_names[] = {
    {"string", RPMTAG_QF_FMT_STRING},
    {"armor", RPMTAG_QF_FMT_ARMOR},
    {"arraysize", RPMTAG_QF_FMT_ARRAYSIZE},
    {"base64", RPMTAG_QF_FMT_BASE64},
    {"date", RPMTAG_QF_FMT_DATE},
    {"day", RPMTAG_QF_FMT_DAY},
    {"depflags", RPMTAG_QF_FMT_DEPFLAGS},
    {"deptype", RPMTAG_QF_FMT_DEPTYPE},
    {"expand", RPMTAG_QF_FMT_EXPAND},
    {"fflags", RPMTAG_QF_FMT_FFLAGS},
    {"fstate", RPMTAG_QF_FMT_FSTATE},
    {"fstatus", RPMTAG_QF_FMT_FSTATUS},
    {"hashalgo", RPMTAG_QF_FMT_HASHALGO},
    {"hex", RPMTAG_QF_FMT_HEX},
    {"humaniec", RPMTAG_QF_FMT_HUMANIEC},
    {"humansi", RPMTAG_QF_FMT_HUMANSI},
    {"json", RPMTAG_QF_FMT_JSON},
    {"octal", RPMTAG_QF_FMT_OCTAL},
    {"perms", RPMTAG_QF_FMT_PERMS},
    {"permissions", RPMTAG_QF_FMT_PERMS},
    {"pgpsig", RPMTAG_QF_FMT_PGPSIG},
    {"shescape", RPMTAG_QF_FMT_SHESCAPE},
    {"tagname", RPMTAG_QF_FMT_TAGNAME},
    {"tagnum", RPMTAG_QF_FMT_TAGNUM},
    {"triggertype", RPMTAG_QF_FMT_TRIGGERTYPE},
    {"vflags", RPMTAG_QF_FMT_VFLAGS},
    {"xml", RPMTAG_QF_FMT_XML},
};

bool rpmtag_qf_fmt_lookup(const char *name, size_t len, enum rpmtag_qf_fmt *out)
{
	size_t i;

	for (i = 0; i < KILN_ARRAY_SIZE(fmt_names); i++) {
		if (strlen(fmt_names[i].name) == len && !memcmp(fmt_names[i].name, name, len)) {
			*out = fmt_names[i].fmt;
			return true;
		}
	}
	return false;
}

uint64_t rpmtag_qf_value_num(const struct rpmtag_qf_value *v, uint32_t i)
{
	switch (v->type) {
	case RPMTAG_TYPE_CHAR:
	case RPMTAG_TYPE_INT8:
		return ((const uint8_t *)v->data)[i];
	case RPMTAG_TYPE_INT16:
		return ((const uint16_t *)v->data)[i];
	case RPMTAG_TYPE_INT32:
		return ((const uint32_t *)v->data)[i];
	case RPMTAG_TYPE_INT64:
		return ((const uint64_t *)v->data)[i];
	case RPMTAG_TYPE_NULL:
	case RPMTAG_TYPE_STRING:
	case RPMTAG_TYPE_BIN:
	case RPMTAG_TYPE_STRING_ARRAY:
	case RPMTAG_TYPE_I18NSTRING:
		break;
	}
	return 0;
}

const char *rpmtag_qf_value_str(const struct rpmtag_qf_value *v, uint32_t i)
{
	return ((const char *const *)v->data)[i];
}

void rpmtag_qf_base64(const void *data, size_t len, bool wrap, struct kiln_buf *out)
{
	struct kiln_buf tmp = KILN_BUF_INIT(out->max);
	size_t i;

	util_base64_encode(data, len, &tmp);
	if (!wrap) {
		kiln_buf_add(out, tmp.ptr, tmp.len);
	} else {
		for (i = 0; i < tmp.len; i += 64) {
			kiln_buf_add(out, tmp.ptr + i, tmp.len - i < 64 ? tmp.len - i : 64);
			kiln_buf_addch(out, '\n');
		}
	}
	if (tmp.err)
		out->err = tmp.err;
	kiln_buf_release(&tmp);
}

static void add_escaped_xml(struct kiln_buf *out, const char *s)
{
	for (; *s; s++) {
		if (*s == '&')
			kiln_buf_addstr(out, "&amp;");
		else if (*s == '<')
			kiln_buf_addstr(out, "&lt;");
		else if (*s == '>')
			kiln_buf_addstr(out, "&gt;");
		else
			kiln_buf_addch(out, *s);
	}
}

static void add_escaped_json(struct kiln_buf *out, const char *s)
{
	kiln_buf_addch(out, '"');
	for (; *s; s++) {
		unsigned char c = (unsigned char)*s;

		switch (c) {
		case '\b':
			kiln_buf_addstr(out, "\\b");
			break;
		case '\f':
			kiln_buf_addstr(out, "\\f");
			break;
		case '\n':
			kiln_buf_addstr(out, "\\n");
			break;
		case '\r':
			kiln_buf_addstr(out, "\\r");
			break;
		case '\t':
			kiln_buf_addstr(out, "\\t");
			break;
		case '"':
			kiln_buf_addstr(out, "\\\"");
			break;
		case '\\':
			kiln_buf_addstr(out, "\\\\");
			break;
		default:
			if (c < 0x20)
				kiln_buf_addf(out, "\\u%04x", c);
			else
				kiln_buf_addch(out, (char)c);
		}
	}
	kiln_buf_addch(out, '"');
}

static void fmt_string(const struct rpmtag_qf_value *v, uint32_t elem, struct kiln_buf *out)
{
	char hex[3];
	uint32_t i;

	if (rpmtag_type_is_number(v->type)) {
		kiln_buf_addf(out, "%" PRIu64, rpmtag_qf_value_num(v, elem));
	} else if (v->type == RPMTAG_TYPE_BIN) {
		for (i = 0; i < v->count; i++) {
			util_hex_encode((const unsigned char *)v->data + i, 1, hex);
			kiln_buf_add(out, hex, 2);
		}
	} else {
		kiln_buf_addstr(out, rpmtag_qf_value_str(v, elem));
	}
}

static void fmt_xml(const struct rpmtag_qf_value *v, uint32_t elem, struct kiln_buf *out)
{
	if (rpmtag_type_is_number(v->type)) {
		kiln_buf_addf(out, "\t<integer>%" PRIu64 "</integer>",
		              rpmtag_qf_value_num(v, elem));
	} else if (v->type == RPMTAG_TYPE_BIN) {
		if (!v->count) {
			kiln_buf_addstr(out, "\t<base64/>");
			return;
		}
		kiln_buf_addstr(out, "\t<base64>");
		rpmtag_qf_base64(v->data, v->count, true, out);
		kiln_buf_addstr(out, "</base64>");
	} else if (!*rpmtag_qf_value_str(v, elem)) {
		kiln_buf_addstr(out, "\t<string/>");
	} else {
		kiln_buf_addstr(out, "\t<string>");
		add_escaped_xml(out, rpmtag_qf_value_str(v, elem));
		kiln_buf_addstr(out, "</string>");
	}
}

/* rpm 4.20's :json (not in 4.18): numbers bare, strings and base64 of blobs as JSON
 * strings. The TAB before each value in --json output is %{*:json}'s layout, not the
 * formatter's: rpm's jsonFormat returns the bare value (rpm-reference.md section 9.3). */
static void fmt_json(const struct rpmtag_qf_value *v, uint32_t elem, struct kiln_buf *out)
{
	struct kiln_buf b64 = KILN_BUF_INIT(out->max);

	if (rpmtag_type_is_number(v->type)) {
		kiln_buf_addf(out, "%" PRIu64, rpmtag_qf_value_num(v, elem));
	} else if (v->type == RPMTAG_TYPE_BIN) {
		rpmtag_qf_base64(v->data, v->count, false, &b64);
		add_escaped_json(out, b64.ptr);
		kiln_buf_release(&b64);
	} else {
		add_escaped_json(out, rpmtag_qf_value_str(v, elem));
	}
}

/* day: "%a %b %d %Y" (the :day format); else "%c" (:date). */
static void fmt_time(uint64_t t, bool day, struct kiln_buf *out)
{
	/* "%c" is rpm's choice (kiln runs in the C locale, where it has a 4-digit year). */
	static const char *const fmts[] = {"%c", "%a %b %d %Y"};
	time_t tt = (time_t)t;
	struct tm tm;
	char buf[128];

#pragma GCC diagnostic push
#pragma GCC diagnostic ignored "-Wformat-nonliteral"
	/* rpm prints dates in local time; the caller's TZ decides. */
	if (!localtime_r(&tt, &tm) || !strftime(buf, sizeof(buf), fmts[day], &tm))
		buf[0] = '\0';
#pragma GCC diagnostic pop
	kiln_buf_addstr(out, buf);
}

static void fmt_depflags(uint64_t n, struct kiln_buf *out)
{
	if (n & RPMTAG_DEP_LESS)
		kiln_buf_addch(out, '<');
	if (n & RPMTAG_DEP_GREATER)
		kiln_buf_addch(out, '>');
	if (n & RPMTAG_DEP_EQUAL)
		kiln_buf_addch(out, '=');
}

static void fmt_deptype(uint64_t n, struct kiln_buf *out)
{
	static const struct {
		uint64_t bits;
		const char *word;
	} words[] = {
	    {RPMTAG_DEP_SCRIPT_PRE, "pre"},
	    {RPMTAG_DEP_SCRIPT_POST, "post"},
	    {RPMTAG_DEP_SCRIPT_PREUN, "preun"},
	    {RPMTAG_DEP_SCRIPT_POSTUN, "postun"},
	    {RPMTAG_DEP_SCRIPT_VERIFY, "verify"},
	    {RPMTAG_DEP_INTERP, "interp"},
	    {RPMTAG_DEP_RPMLIB, "rpmlib"},
	    {RPMTAG_DEP_FIND_REQUIRES | RPMTAG_DEP_FIND_PROVIDES, "auto"},
	    {RPMTAG_DEP_PREREQ, "prereq"},
	    {RPMTAG_DEP_PRETRANS, "pretrans"},
	    {RPMTAG_DEP_POSTTRANS, "posttrans"},
	    {RPMTAG_DEP_PREUNTRANS, "preuntrans"},
	    {RPMTAG_DEP_POSTUNTRANS, "postuntrans"},
	    {RPMTAG_DEP_CONFIG, "config"},
	    {RPMTAG_DEP_MISSINGOK, "missingok"},
	    {RPMTAG_DEP_META, "meta"},
	};
	size_t start = out->len, i;

	for (i = 0; i < KILN_ARRAY_SIZE(words); i++) {
		if (!(n & words[i].bits))
			continue;
		if (out->len > start)
			kiln_buf_addch(out, ',');
		kiln_buf_addstr(out, words[i].word);
	}
	if (out->len == start)
		kiln_buf_addstr(out, "manual");
}

static void fmt_fflags(uint64_t n, struct kiln_buf *out)
{
	static const struct {
		uint64_t bit;
		char c;
	} letters[] = {
	    {RPMTAG_FILE_DOC, 'd'},       {RPMTAG_FILE_CONFIG, 'c'},    {RPMTAG_FILE_SPECFILE, 's'},
	    {RPMTAG_FILE_MISSINGOK, 'm'}, {RPMTAG_FILE_NOREPLACE, 'n'}, {RPMTAG_FILE_GHOST, 'g'},
	    {RPMTAG_FILE_LICENSE, 'l'},   {RPMTAG_FILE_README, 'r'},    {RPMTAG_FILE_ARTIFACT, 'a'},
	};
	size_t i;

	for (i = 0; i < KILN_ARRAY_SIZE(letters); i++) {
		if (n & letters[i].bit)
			kiln_buf_addch(out, letters[i].c);
	}
}

static void fmt_fstate(uint64_t n, struct kiln_buf *out)
{
	static const char *const states[] = {"normal",     "replaced",    "not installed",
	                                     "net shared", "wrong color", "missing"};

	kiln_buf_addstr(out, n < KILN_ARRAY_SIZE(states) ? states[n] : "(unknown)");
}

/* rpm's verify string: S M 5 D L U G T P; a read failure bit shows "?" for 5 and L. */
static void fmt_vflags(uint64_t n, const char *pad, struct kiln_buf *out)
{
	const uint64_t readlinkfail = 1u << 29, readfail = 1u << 30;

	kiln_buf_addstr(out, n & RPMTAG_VERIFY_FILESIZE ? "S" : pad);
	kiln_buf_addstr(out, n & RPMTAG_VERIFY_MODE ? "M" : pad);
	kiln_buf_addstr(out, n & readfail ? "?" : n & RPMTAG_VERIFY_FILEDIGEST ? "5" : pad);
	kiln_buf_addstr(out, n & RPMTAG_VERIFY_RDEV ? "D" : pad);
	kiln_buf_addstr(out, n & readlinkfail ? "?" : n & RPMTAG_VERIFY_LINKTO ? "L" : pad);
	kiln_buf_addstr(out, n & RPMTAG_VERIFY_USER ? "U" : pad);
	kiln_buf_addstr(out, n & RPMTAG_VERIFY_GROUP ? "G" : pad);
	kiln_buf_addstr(out, n & RPMTAG_VERIFY_MTIME ? "T" : pad);
	kiln_buf_addstr(out, n & RPMTAG_VERIFY_CAPS ? "P" : pad);
}

static const char *hash_name(uint64_t n)
{
	static const char *const names[] = {
	    NULL,     "MD5",    "SHA1",   "RIPEMD160", NULL,       "MD2", "TIGER192", "HAVAL-5-160",
	    "SHA256", "SHA384", "SHA512", "SHA224",    "SHA3-256", NULL,  "SHA3-512",
	};

	return n < KILN_ARRAY_SIZE(names) && names[n] ? names[n] : NULL;
}

static const char *pubkey_name(unsigned n)
{
	switch (n) {
	case 1:
		return "RSA";
	case 2:
		return "RSA(Encrypt-Only)";
	case 3:
		return "RSA(Sign-Only)";
	case 16:
		return "Elgamal(Encrypt-Only)";
	case 17:
		return "DSA";
	case 18:
		return "Elliptic Curve";
	case 19:
		return "ECDSA";
	case 20:
		return "Elgamal";
	case 21:
		return "Diffie-Hellman";
	case 22:
		return "EdDSA";
	default:
		return "Unknown public key algorithm";
	}
}

static void fmt_human(uint64_t n, unsigned kilo, struct kiln_buf *out)
{
	static const char *const units[] = {"", "K", "M", "G", "T", "P", "E", "Z", "Y"};
	/* rpm computes in single precision; keep it so rounding matches. */
	float f = (float)n;
	size_t i = 0;

	while (f >= (float)kilo && i + 1 < KILN_ARRAY_SIZE(units)) {
		f /= (float)kilo;
		i++;
	}
	kiln_buf_addf(out, "%.*f%s", f > 0.05f && f < 9.95f ? 1 : 0, (double)f, units[i]);
}

static void fmt_perms(uint64_t m, struct kiln_buf *out)
{
	char s[11];

	s[0] = S_ISDIR(m)    ? 'd'
	       : S_ISLNK(m)  ? 'l'
	       : S_ISFIFO(m) ? 'p'
	       : S_ISSOCK(m) ? 's'
	       : S_ISCHR(m)  ? 'c'
	       : S_ISBLK(m)  ? 'b'
	       : S_ISREG(m)  ? '-'
	                     : '?';
	s[1] = m & S_IRUSR ? 'r' : '-';
	s[2] = m & S_IWUSR ? 'w' : '-';
	s[3] = m & S_ISUID ? (m & S_IXUSR ? 's' : 'S') : (m & S_IXUSR ? 'x' : '-');
	s[4] = m & S_IRGRP ? 'r' : '-';
	s[5] = m & S_IWGRP ? 'w' : '-';
	s[6] = m & S_ISGID ? (m & S_IXGRP ? 's' : 'S') : (m & S_IXGRP ? 'x' : '-');
	s[7] = m & S_IROTH ? 'r' : '-';
	s[8] = m & S_IWOTH ? 'w' : '-';
	s[9] = m & S_ISVTX ? (m & S_IXOTH ? 't' : 'T') : (m & S_IXOTH ? 'x' : '-');
	s[10] = '\0';
	kiln_buf_addstr(out, s);
}

static void fmt_triggertype(uint64_t n, struct kiln_buf *out)
{
	if (n & RPMTAG_DEP_TRIGGERPREIN)
		kiln_buf_addstr(out, "prein");
	else if (n & RPMTAG_DEP_TRIGGERIN)
		kiln_buf_addstr(out, "in");
	else if (n & RPMTAG_DEP_TRIGGERUN)
		kiln_buf_addstr(out, "un");
	else if (n & RPMTAG_DEP_TRIGGERPOSTUN)
		kiln_buf_addstr(out, "postun");
}

/* ---------------------------------------------------------------------------------------- */
/* OpenPGP signatures for :pgpsig and :armor. A minimal, bounded reader of one signature
 * packet: version 3 or 4 (and 6, which has the v4 layout with 4-byte subpacket lengths). */

struct sig_info {
	unsigned pubkey, hash;
	uint32_t created;
	unsigned char keyid[8];
	bool has_keyid;
};

static bool subpkt_len(const unsigned char *p, size_t n, size_t *hdr, size_t *len)
{
	if (n < 1)
		return false;
	if (p[0] < 192) {
		*hdr = 1;
		*len = p[0];
	} else if (p[0] < 255) {
		if (n < 2)
			return false;
		*hdr = 2;
		*len = ((size_t)(p[0] - 192) << 8) + p[1] + 192;
	} else {
		if (n < 5)
			return false;
		*hdr = 5;
		*len = ((size_t)p[1] << 24) | ((size_t)p[2] << 16) | ((size_t)p[3] << 8) | p[4];
	}
	return *len >= 1 && *len <= n - *hdr;
}

static void parse_subpackets(const unsigned char *p, size_t n, struct sig_info *si)
{
	size_t hdr, len;

	while (n > 0 && subpkt_len(p, n, &hdr, &len)) {
		const unsigned char *body = p + hdr + 1;
		unsigned type = p[hdr] & 0x7f;

		if (type == 2 && len == 5)
			si->created = ((uint32_t)body[0] << 24) | ((uint32_t)body[1] << 16) |
			              ((uint32_t)body[2] << 8) | body[3];
		if (type == 16 && len == 9 && !si->has_keyid) {
			memcpy(si->keyid, body, 8);
			si->has_keyid = true;
		}
		if (type == 33 && len == 22 && body[0] == 4 && !si->has_keyid) {
			memcpy(si->keyid, body + 13, 8);
			si->has_keyid = true;
		}
		p += hdr + len;
		n -= hdr + len;
	}
}

/* Skip the packet header of a signature packet (tag 2); body and its length out. */
static bool packet_body(const unsigned char *p, size_t n, const unsigned char **body, size_t *blen)
{
	size_t hl, len;

	if (n < 2 || !(p[0] & 0x80))
		return false;
	if (p[0] & 0x40) { /* new format */
		if ((p[0] & 0x3f) != 2 || !subpkt_len(p + 1, n - 1, &hl, &len))
			return false;
		*body = p + 1 + hl;
		*blen = len;
		return true;
	}
	if (((p[0] >> 2) & 0x0f) != 2)
		return false;
	hl = (size_t)1 << (p[0] & 3);
	if ((p[0] & 3) == 3 || n < 1 + hl)
		return false;
	for (len = 0, n -= 1 + hl, p++; hl--; p++)
		len = (len << 8) | *p;
	if (len > n)
		return false;
	*body = p;
	*blen = len;
	return true;
}

static bool parse_sig(const unsigned char *p, size_t n, struct sig_info *si)
{
	const unsigned char *b;
	size_t bl, hashed, unhashed, lw;

	memset(si, 0, sizeof(*si));
	if (!packet_body(p, n, &b, &bl) || bl < 1)
		return false;
	if (b[0] == 3) {
		if (bl < 19 || b[1] != 5)
			return false;
		si->created =
		    ((uint32_t)b[3] << 24) | ((uint32_t)b[4] << 16) | ((uint32_t)b[5] << 8) | b[6];
		memcpy(si->keyid, b + 7, 8);
		si->has_keyid = true;
		si->pubkey = b[15];
		si->hash = b[16];
		return true;
	}
	if (b[0] != 4 && b[0] != 6)
		return false;
	lw = b[0] == 6 ? 4 : 2;
	if (bl < 4 + lw)
		return false;
	si->pubkey = b[2];
	si->hash = b[3];
	hashed = lw == 4 ? ((size_t)b[4] << 24 | (size_t)b[5] << 16 | (size_t)b[6] << 8 | b[7])
	                 : ((size_t)b[4] << 8 | b[5]);
	if (hashed > bl - 4 - lw)
		return false;
	parse_subpackets(b + 4 + lw, hashed, si);
	b += 4 + lw + hashed;
	bl -= 4 + lw + hashed;
	if (bl < lw)
		return true;
	unhashed = lw == 4 ? ((size_t)b[0] << 24 | (size_t)b[1] << 16 | (size_t)b[2] << 8 | b[3])
	                   : ((size_t)b[0] << 8 | b[1]);
	if (unhashed <= bl - lw)
		parse_subpackets(b + lw, unhashed, si);
	return true;
}

/* rpm's base64 decoder wants whole 4-character groups (whitespace aside). */
static bool base64_complete(const char *s)
{
	size_t n = 0;

	for (; *s; s++) {
		if (!strchr(" \t\r\n", *s))
			n++;
	}
	return n > 0 && n % 4 == 0;
}

/* The bytes of a signature-ish value: a blob as is, a string decoded from base64 into tmp. */
static bool blob_of(const struct rpmtag_qf_value *v, uint32_t elem, struct kiln_buf *tmp,
                    const unsigned char **p, size_t *n)
{
	const char *s;

	if (v->type == RPMTAG_TYPE_BIN) {
		*p = v->data;
		*n = v->count;
		return true;
	}
	if (!rpmtag_type_is_string(v->type))
		return false;
	s = rpmtag_qf_value_str(v, elem);
	if (!base64_complete(s) || util_base64_decode(s, strlen(s), tmp, NULL))
		return false;
	*p = (const unsigned char *)tmp->ptr;
	*n = tmp->len;
	return true;
}

static void fmt_pgpsig(const struct rpmtag_qf_value *v, uint32_t elem, struct kiln_buf *out)
{
	struct kiln_buf tmp = KILN_BUF_INIT(KILN_LIMIT_PGP_PACKET);
	const unsigned char *p;
	struct sig_info si;
	char keyid[17];
	size_t n;

	if (v->type != RPMTAG_TYPE_BIN && !rpmtag_type_is_string(v->type)) {
		kiln_buf_addstr(out, "(not a blob)");
	} else if (!blob_of(v, elem, &tmp, &p, &n)) {
		kiln_buf_addstr(out, v->type == RPMTAG_TYPE_BIN ? "(not an OpenPGP signature)"
		                                                : "(not base64)");
	} else if (!parse_sig(p, n, &si)) {
		kiln_buf_addstr(out, "(not an OpenPGP signature)");
	} else {
		util_hex_encode(si.keyid, 8, keyid);
		kiln_buf_addf(out, "%s/%s, ", pubkey_name(si.pubkey),
		              hash_name(si.hash) ? hash_name(si.hash) : "Unknown hash algorithm");
		fmt_time(si.created, false, out);
		kiln_buf_addf(out, ", Key ID %s", keyid);
	}
	kiln_buf_release(&tmp);
}

static uint32_t crc24(const unsigned char *p, size_t n)
{
	uint32_t crc = 0xb704ce;
	int i;

	while (n--) {
		crc ^= (uint32_t)*p++ << 16;
		for (i = 0; i < 8; i++) {
			crc <<= 1;
			if (crc & 0x1000000)
				crc ^= 0x1864cfb;
		}
	}
	return crc & 0xffffff;
}

/* ASCII armor (RFC 4880 section 6.2) as rpm's :armor writes it, Version line included (the
 * rpm release kiln's query output is checked against). */
#define ARMOR_VERSION "rpm-4.18.0"
static void fmt_armor(const struct rpmtag_qf_value *v, uint32_t elem, struct kiln_buf *out)
{
	struct kiln_buf tmp = KILN_BUF_INIT(KILN_LIMIT_PGP_PACKET);
	const char *what = v->type == RPMTAG_TYPE_BIN ? "SIGNATURE" : "PUBLIC KEY BLOCK";
	const unsigned char *p;
	unsigned char crc[3];
	uint32_t c;
	size_t n;

	if (v->type != RPMTAG_TYPE_BIN && !rpmtag_type_is_string(v->type)) {
		kiln_buf_addstr(out, "(invalid type)");
	} else if (!blob_of(v, elem, &tmp, &p, &n)) {
		kiln_buf_addstr(out, "(not base64)");
	} else {
		c = crc24(p, n);
		crc[0] = (unsigned char)(c >> 16);
		crc[1] = (unsigned char)(c >> 8);
		crc[2] = (unsigned char)c;
		kiln_buf_addf(out, "-----BEGIN PGP %s-----\nVersion: " ARMOR_VERSION "\n\n", what);
		rpmtag_qf_base64(p, n, true, out);
		kiln_buf_addch(out, '=');
		rpmtag_qf_base64(crc, 3, false, out);
		kiln_buf_addf(out, "\n-----END PGP %s-----\n", what);
	}
	kiln_buf_release(&tmp);
}

static kiln_rc fmt_expand(struct rpmtag_qf_render *r, const struct rpmtag_qf_value *v,
                          uint32_t elem, struct kiln_buf *out)
{
	const struct rpmtag_qf_source *src = r->src;

	if (!rpmtag_type_is_string(v->type)) {
		kiln_buf_addstr(out, "(not a string)");
		return KILN_OK;
	}
	if (!src->ops->expand) {
		kiln_buf_addstr(out, rpmtag_qf_value_str(v, elem));
		return KILN_OK;
	}
	return src->ops->expand(src->ctx, rpmtag_qf_value_str(v, elem), out, r->err);
}

/* Formats that take a number; false when fmt is not one of them. */
static bool fmt_number(enum rpmtag_qf_fmt fmt, uint64_t n, struct kiln_buf *out)
{
	switch (fmt) {
	case RPMTAG_QF_FMT_DATE:
		fmt_time(n, false, out);
		break;
	case RPMTAG_QF_FMT_DAY:
		fmt_time(n, true, out);
		break;
	case RPMTAG_QF_FMT_DEPFLAGS:
		fmt_depflags(n, out);
		break;
	case RPMTAG_QF_FMT_DEPTYPE:
		fmt_deptype(n, out);
		break;
	case RPMTAG_QF_FMT_FFLAGS:
		fmt_fflags(n, out);
		break;
	case RPMTAG_QF_FMT_FSTATE:
		fmt_fstate(n, out);
		break;
	case RPMTAG_QF_FMT_FSTATUS:
		fmt_vflags(n, ".", out);
		break;
	case RPMTAG_QF_FMT_VFLAGS:
		fmt_vflags(n, "", out);
		break;
	case RPMTAG_QF_FMT_HASHALGO:
		kiln_buf_addstr(out, hash_name(n) ? hash_name(n) : "Unknown hash algorithm");
		break;
	case RPMTAG_QF_FMT_HEX:
		kiln_buf_addf(out, "%" PRIx64, n);
		break;
	case RPMTAG_QF_FMT_OCTAL:
		kiln_buf_addf(out, "%" PRIo64, n);
		break;
	case RPMTAG_QF_FMT_HUMANIEC:
		fmt_human(n, 1024, out);
		break;
	case RPMTAG_QF_FMT_HUMANSI:
		fmt_human(n, 1000, out);
		break;
	case RPMTAG_QF_FMT_PERMS:
		fmt_perms(n, out);
		break;
	case RPMTAG_QF_FMT_TRIGGERTYPE:
		fmt_triggertype(n, out);
		break;
	default:
		return false;
	}
	return true;
}

kiln_rc rpmtag_qf_fmt_apply(struct rpmtag_qf_render *r, enum rpmtag_qf_fmt fmt, uint32_t tag,
                            const struct rpmtag_qf_value *v, uint32_t elem, struct kiln_buf *out)
{
	char name[64];

	switch (fmt) {
	case RPMTAG_QF_FMT_STRING:
	case RPMTAG_QF_FMT_ARRAYSIZE:
		fmt_string(v, elem, out);
		return KILN_OK;
	case RPMTAG_QF_FMT_XML:
		fmt_xml(v, elem, out);
		return KILN_OK;
	case RPMTAG_QF_FMT_JSON:
		fmt_json(v, elem, out);
		return KILN_OK;
	case RPMTAG_QF_FMT_TAGNAME:
		kiln_buf_addstr(out, rpmtag_shortname(tag, name, sizeof(name)));
		return KILN_OK;
	case RPMTAG_QF_FMT_TAGNUM:
		kiln_buf_addf(out, "%" PRIu32, tag);
		return KILN_OK;
	case RPMTAG_QF_FMT_BASE64:
		if (v->type != RPMTAG_TYPE_BIN)
			kiln_buf_addstr(out, "(not a blob)");
		else
			rpmtag_qf_base64(v->data, v->count, true, out);
		return KILN_OK;
	case RPMTAG_QF_FMT_PGPSIG:
		fmt_pgpsig(v, elem, out);
		return KILN_OK;
	case RPMTAG_QF_FMT_ARMOR:
		fmt_armor(v, elem, out);
		return KILN_OK;
	case RPMTAG_QF_FMT_EXPAND:
		return fmt_expand(r, v, elem, out);
	case RPMTAG_QF_FMT_SHESCAPE:
		if (rpmtag_type_is_number(v->type))
			fmt_string(v, elem, out);
		else if (rpmtag_type_is_string(v->type))
			kiln_buf_add_shquoted(out, rpmtag_qf_value_str(v, elem));
		else
			kiln_buf_addstr(out, "(invalid type)");
		return KILN_OK;
	default:
		break;
	}
	if (!rpmtag_type_is_number(v->type))
		kiln_buf_addstr(out, "(not a number)");
	else
		fmt_number(fmt, rpmtag_qf_value_num(v, elem), out);
	return KILN_OK;
}

/* ---------------------------------------------------------------------------------------- */
/* rpm 4.18's popt query aliases (/usr/lib/rpm/rpmpopt-4.18.0), plus --json from 4.20. */

#define SCRIPT(TAG, what)                                                                          \
	"%|" TAG "?{" what " scriptlet%|" TAG "PROG?{ (using[ %{" TAG "PROG}])}|:\\n%{" TAG        \
	"}\\n}:{%|" TAG "PROG?{" what " program:[ %{" TAG "PROG}]\\n}|}|"

#define DEPS(T) "[%|VERBOSE?{%{" T "FLAGS:deptype}: }:{}|%{" T "NEVRS}\\n]"

static const struct {
	const char *name;
	const char *fmt;
} aliases[] = {
    {"info", "Name        : %{NAME}\\n"
             "%|EPOCH?{Epoch       : %{EPOCH}\\n}|"
             "Version     : %{VERSION}\\n"
             "Release     : %{RELEASE}\\n"
             "%|DISTTAG?{DistTag     : %{DISTTAG}\\n}|"
             "Architecture: %{ARCH}\\n"
             "Install Date: %|INSTALLTIME?{%{INSTALLTIME:date}}:{(not installed)}|\\n"
             "Group       : %{GROUP}\\n"
             "Size        : %{LONGSIZE}\\n"
             "%|LICENSE?{License     : %{LICENSE}}|\\n"
             "Signature   : %|DSAHEADER?{%{DSAHEADER:pgpsig}}:{%|RSAHEADER?{%{RSAHEADER:pgpsig}}:{"
             "%|SIGGPG?{%{SIGGPG:pgpsig}}:{%|SIGPGP?{%{SIGPGP:pgpsig}}:{(none)}|}|}|}|\\n"
             "Source RPM  : %{SOURCERPM}\\n"
             "Build Date  : %{BUILDTIME:date}\\n"
             "Build Host  : %{BUILDHOST}\\n"
             "%|PREFIXES?{Relocations : [%{PREFIXES} ]\\n}|"
             "%|PACKAGER?{Packager    : %{PACKAGER}\\n}|"
             "%|VENDOR?{Vendor      : %{VENDOR}\\n}|"
             "%|URL?{URL         : %{URL}\\n}|"
             "%|BUGURL?{Bug URL     : %{BUGURL}\\n}|"
             "Summary     : %{SUMMARY}\\n"
             "Description :\\n%{DESCRIPTION}\\n"},
    {"changelog", "[* %{CHANGELOGTIME:day} %{CHANGELOGNAME}\\n%{CHANGELOGTEXT}\\n\\n]"},
    {"changes", "[* %{CHANGELOGTIME:date} %{CHANGELOGNAME}\\n%{CHANGELOGTEXT}\\n\\n]"},
    {"xml", "[%{*:xml}\\n]"},
    {"json", "[%{*:json}]"},
    {"provides", DEPS("PROVIDE")},
    {"requires", DEPS("REQUIRE")},
    {"conflicts", DEPS("CONFLICT")},
    {"obsoletes", DEPS("OBSOLETE")},
    {"recommends", DEPS("RECOMMEND")},
    {"suggests", DEPS("SUGGEST")},
    {"supplements", DEPS("SUPPLEMENT")},
    {"enhances", DEPS("ENHANCE")},
    {"scripts",
     SCRIPT("PRETRANS", "pretrans") SCRIPT("PREIN", "preinstall") SCRIPT("POSTIN", "postinstall")
         SCRIPT("PREUN", "preuninstall") SCRIPT("POSTUN", "postuninstall")
             SCRIPT("POSTTRANS", "posttrans") SCRIPT("VERIFYSCRIPT", "verify")},
    {"triggers", "[trigger%{TRIGGERTYPE} scriptlet (using %{TRIGGERSCRIPTPROG}) -- "
                 "%{TRIGGERCONDS}\\n%{TRIGGERSCRIPTS}\\n]"},
    {"filetriggers", "[filetrigger%{FILETRIGGERTYPE} scriptlet (using %{FILETRIGGERSCRIPTPROG}) -- "
                     "%{FILETRIGGERCONDS}\\n%{FILETRIGGERSCRIPTS}\\n]"
                     "[transfiletrigger%{TRANSFILETRIGGERTYPE} scriptlet (using "
                     "%{TRANSFILETRIGGERSCRIPTPROG}) -- %{TRANSFILETRIGGERCONDS}\\n"
                     "%{TRANSFILETRIGGERSCRIPTS}\\n]"},
    {"filetriggers", "[filetrigger%{FILETRIGGERTYPE} scriptlet (using %{FILETRIGGERSCRIPTPROG}) -- "
                     "%{FILETRIGGERCONDS}\\n%{FILETRIGGERSCRIPTS}\\n]"
                     "[transfiletrigger%{TRANSFILETRIGGERTYPE} scriptlet (using "
                     "%{TRANSFILETRIGGERSCRIPTPROG}) -- %{TRANSFILETRIGGERCONDS}\\n"
                     "%{TRANSFILETRIGGERSCRIPTS}\\n]"},
    {"filesbypkg", "[%-25{=NAME} %{FILENAMES}\\n]"},
    {"filecaps", "[%{FILENAMES}\\t%|FILECAPS?{%{FILECAPS}}|\\n]"},
};

const char *rpmtag_qf_alias(const char *name)
{
	size_t i;

	for (i = 0; i < KILN_ARRAY_SIZE(aliases); i++) {
		if (!strcmp(aliases[i].name, name))
			return aliases[i].fmt;
	}
	return NULL;
}
