/*
 * auth.c - bearer tokens (random, stored only as sha256), scopes, and the checks on names
 * and digests that arrive in URLs.
 */
#include "util/util.h"

#include <sys/random.h>

#include "api/api.h"

#define TOKEN_RAW 24
#define TOKEN_MAX 256

kiln_rc api_token_generate(char out[API_TOKEN_LEN + 1], struct kiln_err *err)
{
	unsigned char raw[TOKEN_RAW];
	ssize_t n;

	do
		n = getrandom(raw, sizeof(raw), 0);
	while (n < 0 && errno == EINTR);
	if (n != (ssize_t)sizeof(raw))
		return kiln_err_sys(err, KILN_EIO, "getrandom");
	memcpy(out, "kiln_", 5);
	util_hex_encode(raw, sizeof(raw), out + 5);
	out[API_TOKEN_LEN] = '\0';
	explicit_bzero(raw, sizeof(raw));
	return KILN_OK;
}

kiln_rc api_token_hash(const char *token, size_t len, char out[65], struct kiln_err *err)
{
	char hex[2 * UTIL_DIGEST_MAX + 1];
	kiln_rc rc;

	rc = util_digest_mem_hex(UTIL_DIGEST_SHA256, token, len, hex, err);
	if (rc)
		return rc;
	memcpy(out, hex, 64);
	out[64] = '\0';
	return KILN_OK;
}

static const struct {
	const char *name;
	unsigned bit;
} scope_names[] = {
    {"submit", API_SCOPE_SUBMIT},
    {"read", API_SCOPE_READ},
    {"worker", API_SCOPE_WORKER},
    {"admin", API_SCOPE_ADMIN},
    {"project-admin", API_SCOPE_GROUP_ADMIN},
};

static kiln_rc scope_word(struct kiln_str w, unsigned *out, struct kiln_err *err)
{
	size_t i;

	for (i = 0; i < KILN_ARRAY_SIZE(scope_names); i++) {
		if (kiln_str_eq_cstr(w, scope_names[i].name)) {
			*out |= scope_names[i].bit;
			return KILN_OK;
		}
	}
	return kiln_err_set(err, KILN_EINVAL,
	                    "unknown scope '" KILN_STR_FMT
	                    "' (use submit, read, worker, admin, project-admin)",
	                    KILN_STR_ARG(w));
}

kiln_rc api_scopes_parse(const char *s, unsigned *out, struct kiln_err *err)
{
	size_t i = 0, start;
	kiln_rc rc;

	*out = 0;
	while (s[i]) {
		while (s[i] == ',' || s[i] == ' ' || s[i] == '\t')
			i++;
		start = i;
		while (s[i] && s[i] != ',' && s[i] != ' ' && s[i] != '\t')
			i++;
		if (i == start)
			continue;
		rc = scope_word(kiln_str_make(s + start, i - start), out, err);
		if (rc)
			return rc;
	}
	if (!*out)
		return kiln_err_set(
		    err, KILN_EINVAL,
		    "no scope given (use submit, read, worker, admin, project-admin)");
	if (*out & API_SCOPE_ADMIN)
		*out = API_SCOPE_ALL;
	if (*out & API_SCOPE_GROUP_ADMIN)
		*out |= API_SCOPE_SUBMIT | API_SCOPE_READ;
	return KILN_OK;
}

void api_scopes_format(unsigned scopes, struct kiln_buf *out)
{
	bool first = true;
	size_t i;

	for (i = 0; i < KILN_ARRAY_SIZE(scope_names); i++) {
		if (!(scopes & scope_names[i].bit))
			continue;
		if (!first)
			kiln_buf_addch(out, ',');
		kiln_buf_addstr(out, scope_names[i].name);
		first = false;
	}
}

kiln_rc api_bearer_parse(const char *value, struct kiln_str *tok, struct kiln_err *err)
{
	size_t len, i;

	if (strncasecmp(value, "Bearer ", 7) != 0)
		return kiln_err_set(err, KILN_EAUTH,
		                    "the Authorization header is not 'Bearer TOKEN'");
	value += 7;
	while (*value == ' ')
		value++;
	len = strlen(value);
	while (len && value[len - 1] == ' ')
		len--;
	if (!len || len > TOKEN_MAX)
		return kiln_err_set(err, KILN_EAUTH, "malformed bearer token");
	for (i = 0; i < len; i++)
		if ((unsigned char)value[i] <= 0x20 || (unsigned char)value[i] >= 0x7f)
			return kiln_err_set(err, KILN_EAUTH, "malformed bearer token");
	*tok = kiln_str_make(value, len);
	return KILN_OK;
}

kiln_rc api_name_check(const char *name, size_t len, struct kiln_err *err)
{
	size_t i;

	if (!len || len > 255)
		return kiln_err_set(err, KILN_EINVAL, "a file name must have 1 to 255 bytes");
	if ((len == 1 && name[0] == '.') || (len == 2 && name[0] == '.' && name[1] == '.'))
		return kiln_err_set(err, KILN_EINVAL, "'%.*s' is not a file name", (int)len, name);
	for (i = 0; i < len; i++) {
		unsigned char c = (unsigned char)name[i];

		if (c == '/')
			return kiln_err_set(err, KILN_EINVAL, "a file name may not contain '/'");
		if (c == '\0')
			return kiln_err_set(err, KILN_EINVAL, "a file name may not contain NUL");
		if (c < 0x20 || c == 0x7f)
			return kiln_err_set(err, KILN_EINVAL,
			                    "a file name may not contain control characters");
	}
	return KILN_OK;
}

static bool name_char(unsigned char c)
{
	return (c >= 'a' && c <= 'z') || (c >= 'A' && c <= 'Z') || (c >= '0' && c <= '9');
}

kiln_rc api_worker_name_check(const char *name, struct kiln_err *err)
{
	size_t len = strnlen(name, 65), i;

	if (!len || len > 64)
		return kiln_err_set(err, KILN_EINVAL, "a worker name must have 1 to 64 bytes");
	if (!name_char((unsigned char)name[0]))
		return kiln_err_set(err, KILN_EINVAL,
		                    "a worker name must start with a letter or a digit");
	for (i = 1; i < len; i++)
		if (!name_char((unsigned char)name[i]) && !strchr("._-", name[i]))
			return kiln_err_set(err, KILN_EINVAL,
			                    "a worker name may hold only letters, digits, '.', '_' "
			                    "and '-' (byte %zu is not one)",
			                    i + 1);
	return KILN_OK;
}

bool api_sha256_valid(const char *s)
{
	size_t i;

	for (i = 0; i < 64; i++)
		if (!((s[i] >= '0' && s[i] <= '9') || (s[i] >= 'a' && s[i] <= 'f')))
			return false;
	return s[64] == '\0';
}
