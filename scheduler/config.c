/*
 * config.c - the scheduler's INI configuration: [server], [storage] ([store] url is
 * [storage] database), [limits], [auth], [keys] (name = secret key file) and [repositories]
 * (name = path).
 *
 * The parser is small and strict: "key = value" lines inside a "[section]", '#' or ';'
 * comments on their own line, every unknown section or key an error naming file:line, so a
 * typo never silently falls back to a default.
 */
#include "util/util.h"

#include "api/api.h"
#include "scheduler/scheduler.h"

#define CONFIG_MAX_BYTES KILN_MIB
#define CONFIG_MAX_LINE 4096
#define CONFIG_MAX_NAMED 256

void scheduler_config_init(struct scheduler_config *cfg)
{
	memset(cfg, 0, sizeof(*cfg));
	kiln_arena_init(&cfg->arena, 16 * KILN_MIB);
	cfg->listen = "127.0.0.1:8470";
	cfg->data_dir = "./kiln-data";
	cfg->threads = 4;
	cfg->store_pool = SCHED_STORE_POOL_DEFAULT;
	cfg->max_conns = 1000;
	cfg->max_conns_per_address = 64;
	cfg->idle_timeout_ms = 30000;
	cfg->max_body = KILN_MIB;
	cfg->max_upload = KILN_GIB;
	cfg->lease_ttl_ms = 60000;
	cfg->poll_max_ms = 25000;
	cfg->backoff_ms = 5000;
	cfg->backoff_max_ms = 600000;
	cfg->max_attempts = 3;
	cfg->tick_ms = 250;
	cfg->history_ms = 30000;
	cfg->min_free = 512 * KILN_MIB;
	cfg->log_max = 256 * KILN_MIB;
	cfg->default_key = "default";
	cfg->publish_keep_versions = 3;
	cfg->publish_generations = 3;
	cfg->publish_retire_ms = 86400000; /* a day: clients cache metadata for hours */
}

void scheduler_config_release(struct scheduler_config *cfg)
{
	kiln_arena_release(&cfg->arena);
}

/* "10", "512K", "16M", "1G" */
static kiln_rc parse_size(const char *v, uint64_t *out, struct kiln_err *err)
{
	size_t len = strlen(v);
	uint64_t mul = 1, n;

	if (len && (v[len - 1] == 'K' || v[len - 1] == 'k'))
		mul = KILN_KIB, len--;
	else if (len && (v[len - 1] == 'M' || v[len - 1] == 'm'))
		mul = KILN_MIB, len--;
	else if (len && (v[len - 1] == 'G' || v[len - 1] == 'g'))
		mul = KILN_GIB, len--;
	if (util_parse_u64(v, len, 10, UINT64_MAX / KILN_GIB, &n, NULL) || !n)
		return kiln_err_set(err, KILN_EINVAL, "'%s' is not a size (like 512K, 16M, 1G)", v);
	*out = n * mul;
	return KILN_OK;
}

/* "30" seconds, "1500ms", "2m" */
static kiln_rc parse_duration(const char *v, int64_t *out_ms, struct kiln_err *err)
{
	size_t len = strlen(v);
	int64_t mul = 1000, n;

	if (len > 2 && !strcmp(v + len - 2, "ms"))
		mul = 1, len -= 2;
	else if (len > 1 && v[len - 1] == 's')
		len--;
	else if (len > 1 && v[len - 1] == 'm')
		mul = 60000, len--;
	else if (len > 1 && v[len - 1] == 'h')
		mul = 3600000, len--;
	else if (len > 1 && v[len - 1] == 'd')
		mul = 86400000, len--;
	if (util_parse_i64(v, len, 10, 1, INT64_MAX / 86400000, &n, NULL))
		return kiln_err_set(err, KILN_EINVAL,
		                    "'%s' is not a duration (like 30, 1500ms, 2m, 6h, 1d)", v);
	*out_ms = n * mul;
	return KILN_OK;
}

static kiln_rc parse_bool(const char *v, bool *out, struct kiln_err *err)
{
	if (!strcmp(v, "true") || !strcmp(v, "yes") || !strcmp(v, "1"))
		*out = true;
	else if (!strcmp(v, "false") || !strcmp(v, "no") || !strcmp(v, "0"))
		*out = false;
	else
		return kiln_err_set(err, KILN_EINVAL, "'%s' is not true or false", v);
	return KILN_OK;
}

static kiln_rc parse_count(const char *v, int64_t min, int64_t max, int64_t *out,
                           struct kiln_err *err)
{
	if (util_parse_i64(v, strlen(v), 10, min, max, out, NULL))
		return kiln_err_set(err, KILN_EINVAL, "'%s' is not a number from %lld to %lld", v,
		                    (long long)min, (long long)max);
	return KILN_OK;
}

static kiln_rc set_server(struct scheduler_config *c, const char *k, const char *v,
                          struct kiln_err *err)
{
	int64_t n;
	kiln_rc rc;

	if (!strcmp(k, "listen"))
		c->listen = v;
	else if (!strcmp(k, "worker_listen"))
		c->worker_listen = *v ? v : NULL;
	else if (!strcmp(k, "tls_cert"))
		c->tls_cert = v;
	else if (!strcmp(k, "tls_key"))
		c->tls_key = v;
	else if (!strcmp(k, "threads")) {
		rc = parse_count(v, 1, 256, &n, err);
		c->threads = (unsigned)n;
		return rc;
	} else if (!strcmp(k, "max_connections"))
		return parse_count(v, 16, 100000, &c->max_conns, err);
	else if (!strcmp(k, "max_connections_per_address"))
		return parse_count(v, 1, 100000, &c->max_conns_per_address, err);
	else if (!strcmp(k, "idle_timeout"))
		return parse_duration(v, &c->idle_timeout_ms, err);
	else
		return KILN_ENOTFOUND;
	return KILN_OK;
}

static kiln_rc set_limits(struct scheduler_config *c, const char *k, const char *v,
                          struct kiln_err *err)
{
	if (!strcmp(k, "max_body"))
		return parse_size(v, &c->max_body, err);
	if (!strcmp(k, "max_upload"))
		return parse_size(v, &c->max_upload, err);
	if (!strcmp(k, "lease_ttl"))
		return parse_duration(v, &c->lease_ttl_ms, err);
	if (!strcmp(k, "poll_max"))
		return parse_duration(v, &c->poll_max_ms, err);
	if (!strcmp(k, "retry_backoff"))
		return parse_duration(v, &c->backoff_ms, err);
	if (!strcmp(k, "retry_backoff_max"))
		return parse_duration(v, &c->backoff_max_ms, err);
	if (!strcmp(k, "tick"))
		return parse_duration(v, &c->tick_ms, err);
	if (!strcmp(k, "history_interval"))
		return parse_duration(v, &c->history_ms, err);
	if (!strcmp(k, "max_attempts"))
		return parse_count(v, 1, 100, &c->max_attempts, err);
	if (!strcmp(k, "log_max"))
		return parse_size(v, &c->log_max, err);
	if (!strcmp(k, "min_free"))
		return parse_size(v, &c->min_free, err);
	return KILN_ENOTFOUND;
}

static kiln_rc set_publish(struct scheduler_config *c, const char *k, const char *v,
                           struct kiln_err *err)
{
	if (!strcmp(k, "compress")) {
		if (strcmp(v, "gzip") && strcmp(v, "zstd"))
			return kiln_err_set(err, KILN_EINVAL, "'%s': gzip or zstd", v);
		c->publish_zstd = !strcmp(v, "zstd");
		return KILN_OK;
	}
	if (!strcmp(k, "keep_versions"))
		return parse_count(v, 0, 1000, &c->publish_keep_versions, err);
	if (!strcmp(k, "generations"))
		return parse_count(v, 1, 100, &c->publish_generations, err);
	if (!strcmp(k, "retire_after")) {
		if (!strcmp(v, "0")) {
			c->publish_retire_ms = 0;
			return KILN_OK;
		}
		return parse_duration(v, &c->publish_retire_ms, err);
	}
	if (!strcmp(k, "key"))
		c->publish_key = v;
	else if (!strcmp(k, "base_url"))
		c->publish_base_url = v;
	else
		return KILN_ENOTFOUND;
	return KILN_OK;
}

/* [keys] and [repositories]: any name, appended. */
static kiln_rc add_named(struct scheduler_config *c, bool key, const char *k, const char *v,
                         struct kiln_err *err)
{
	size_t *n = key ? &c->nkeys : &c->nrepos;
	void **arr = key ? (void **)&c->keys : (void **)&c->repos;
	size_t es = key ? sizeof(*c->keys) : sizeof(*c->repos);
	void *grown;

	if (*n >= CONFIG_MAX_NAMED)
		return kiln_err_set(err, KILN_ELIMIT, "more than %d entries", CONFIG_MAX_NAMED);
	grown = kiln_arena_array(&c->arena, *n + 1, es);
	if (!grown)
		return kiln_err_set(err, KILN_ENOMEM, "out of memory");
	if (*n)
		memcpy(grown, *arr, *n * es);
	*arr = grown;
	if (key)
		c->keys[*n] = (struct scheduler_key_cfg){k, v};
	else
		c->repos[*n] = (struct scheduler_repo_cfg){k, v};
	(*n)++;
	return KILN_OK;
}

/* [tokens] NAME = SCOPES sha256:HEX */
static kiln_rc add_token(struct scheduler_config *c, const char *k, const char *v,
                         struct kiln_err *err)
{
	const char *d = strrchr(v, ' ');
	struct scheduler_token_cfg *grown;
	char scopes[256];
	unsigned bits;
	size_t i;
	kiln_rc rc;

	d = d ? d + 1 : v;
	if (strncmp(d, "sha256:", 7) || strlen(d + 7) != 64 ||
	    strspn(d + 7, "0123456789abcdef") != 64 || d == v || (size_t)(d - v) >= sizeof(scopes))
		return kiln_err_set(err, KILN_EINVAL,
		                    "expected 'SCOPES sha256:DIGEST' (the token's sha256 in "
		                    "64 lowercase hex digits)");
	memcpy(scopes, v, (size_t)(d - v));
	scopes[d - v] = '\0';
	rc = api_scopes_parse(scopes, &bits, err);
	if (rc)
		return rc;
	for (i = 0; i < c->ntokens; i++)
		if (!strcmp(c->tokens[i].name, k) || !strcmp(c->tokens[i].sha256, d + 7))
			return kiln_err_set(err, KILN_EINVAL,
			                    "token '%s' or its digest given twice", k);
	if (c->ntokens >= CONFIG_MAX_NAMED)
		return kiln_err_set(err, KILN_ELIMIT, "more than %d entries", CONFIG_MAX_NAMED);
	grown = kiln_arena_array(&c->arena, c->ntokens + 1, sizeof(*grown));
	if (!grown)
		return kiln_err_set(err, KILN_ENOMEM, "out of memory");
	if (c->ntokens)
		memcpy(grown, c->tokens, c->ntokens * sizeof(*grown));
	c->tokens = grown;
	grown[c->ntokens].name = k;
	grown[c->ntokens].scopes = bits;
	memcpy(grown[c->ntokens].sha256, d + 7, 65);
	c->ntokens++;
	return KILN_OK;
}

/* [forge NAME] and [hook OWNER/PROJECT] keys (forgecfg.c), with config.c's messages. */
static kiln_rc forge_set(struct scheduler_config *c, const char *section, const char *key,
                         const char *value, int lineno, struct kiln_err *err)
{
	kiln_rc rc;

	key = kiln_arena_strdup(&c->arena, key);
	value = kiln_arena_strdup(&c->arena, value);
	if (!key || !value)
		return kiln_err_set(err, KILN_ENOMEM, "out of memory");
	rc = scheduler_config_forge_set(c, section, key, value, lineno, err);
	if (rc == KILN_ENOTFOUND)
		return kiln_err_set(err, KILN_EINVAL, "unknown key '%s' in [%s]", key, section);
	if (rc)
		kiln_err_wrap(err, "[%s] %s", section, key);
	return rc;
}

/* A postgresql:// URL (the store checks the rest as it opens); "" for the sqlite3 store. */
static kiln_rc set_database(struct scheduler_config *c, const char *value, struct kiln_err *err)
{
	if (!*value) {
		c->database = NULL;
		return KILN_OK;
	}
	if (strncmp(value, "postgresql://", 13) && strncmp(value, "postgres://", 11))
		return kiln_err_set(
		    err, KILN_EINVAL,
		    "expected a postgresql:// URL (or nothing for sqlite3 in data_dir)");
	c->database = value;
	return KILN_OK;
}

kiln_rc scheduler_config_set(struct scheduler_config *c, const char *section, const char *key,
                             const char *value, struct kiln_err *err)
{
	kiln_rc rc = KILN_ENOTFOUND;

	if (scheduler_config_forge_section(section, strlen(section)))
		return forge_set(c, section, key, value, 0, err);

	key = kiln_arena_strdup(&c->arena, key);
	value = kiln_arena_strdup(&c->arena, value);
	if (!key || !value)
		return kiln_err_set(err, KILN_ENOMEM, "out of memory");
	if (!strcmp(section, "server"))
		rc = set_server(c, key, value, err);
	else if (!strcmp(section, "storage") && !strcmp(key, "data_dir"))
		c->data_dir = value, rc = KILN_OK;
	else if (!strcmp(section, "storage") && !strcmp(key, "database"))
		rc = set_database(c, value, err);
	else if (!strcmp(section, "store") && !strcmp(key, "url"))
		rc = set_database(c, value, err); /* issue 25's spelling of [storage] database */
	else if (!strcmp(section, "store") && !strcmp(key, "pool"))
		rc = parse_count(value, 1, SCHED_STORE_POOL_MAX, &c->store_pool, err);
	else if (!strcmp(section, "limits"))
		rc = set_limits(c, key, value, err);
	else if (!strcmp(section, "auth") && !strcmp(key, "anonymous_read"))
		rc = parse_bool(value, &c->anonymous_read, err);
	else if (!strcmp(section, "keys") && !strcmp(key, "default_key"))
		c->default_key = value, rc = KILN_OK;
	else if (!strcmp(section, "keys"))
		rc = add_named(c, true, key, value, err);
	else if (!strcmp(section, "repositories"))
		rc = add_named(c, false, key, value, err);
	else if (!strcmp(section, "publish"))
		rc = set_publish(c, key, value, err);
	else if (!strcmp(section, "tokens"))
		rc = add_token(c, key, value, err);
	else if (strcmp(section, "server") && strcmp(section, "storage") &&
	         strcmp(section, "store") && strcmp(section, "limits") && strcmp(section, "auth"))
		return kiln_err_set(err, KILN_EINVAL, "unknown section [%s]", section);
	if (rc == KILN_ENOTFOUND)
		return kiln_err_set(err, KILN_EINVAL, "unknown key '%s' in [%s]", key, section);
	if (rc)
		kiln_err_wrap(err, "%s.%s", section, key);
	return rc;
}

static bool name_ok(struct kiln_str s)
{
	size_t i;

	if (!s.len || s.len > 128)
		return false;
	for (i = 0; i < s.len; i++) {
		char c = s.ptr[i];

		if (!((c >= 'a' && c <= 'z') || (c >= 'A' && c <= 'Z') || (c >= '0' && c <= '9') ||
		      c == '_' || c == '-' || c == '.'))
			return false;
	}
	return true;
}

static kiln_rc config_line(struct scheduler_config *c, struct kiln_str line, char *section,
                           size_t ssize, int lineno, struct kiln_err *err)
{
	struct kiln_str key, value;
	char k[129], *v;
	bool found;

	line = kiln_str_trim(line);
	if (!line.len || line.ptr[0] == '#' || line.ptr[0] == ';')
		return KILN_OK;
	if (line.ptr[0] == '[') {
		struct kiln_str name = kiln_str_trim(kiln_str_make(line.ptr + 1, line.len - 1));

		if (!kiln_str_ends(name, "]"))
			return kiln_err_set(err, KILN_ESYNTAX,
			                    "a section header needs a closing ']'");
		name = kiln_str_trim(kiln_str_make(name.ptr, name.len - 1));
		if (!(name_ok(name) || scheduler_config_forge_section(name.ptr, name.len)) ||
		    name.len >= ssize)
			return kiln_err_set(err, KILN_ESYNTAX, "malformed section name");
		memcpy(section, name.ptr, name.len);
		section[name.len] = '\0';
		if (scheduler_config_forge_section(name.ptr, name.len))
			return scheduler_config_forge_set(c, section, NULL, NULL, lineno, err);
		return KILN_OK;
	}
	value = kiln_str_split(line, '=', &key, &found);
	key = kiln_str_trim(key);
	value = kiln_str_trim(value);
	if (!found || !name_ok(key))
		return kiln_err_set(err, KILN_ESYNTAX, "expected 'key = value'");
	if (!section[0])
		return kiln_err_set(err, KILN_ESYNTAX, "'" KILN_STR_FMT "' outside a [section]",
		                    KILN_STR_ARG(key));
	if (memchr(value.ptr, '\0', value.len))
		return kiln_err_set(err, KILN_ESYNTAX, "a NUL byte in the value");
	memcpy(k, key.ptr, key.len);
	k[key.len] = '\0';
	v = kiln_arena_strndup(&c->arena, value.ptr, value.len);
	if (!v)
		return kiln_err_set(err, KILN_ENOMEM, "out of memory");
	if (scheduler_config_forge_section(section, strlen(section)))
		return forge_set(c, section, k, v, lineno, err);
	return scheduler_config_set(c, section, k, v, err);
}

kiln_rc scheduler_config_from_mem(struct scheduler_config *cfg, const char *data, size_t len,
                                  const char *name, struct kiln_err *err)
{
	struct kiln_str rest = kiln_str_make(data, len), line;
	char section[129] = "";
	bool found = true;
	int lineno = 0;
	kiln_rc rc;

	if (len > CONFIG_MAX_BYTES)
		return kiln_err_set(err, KILN_ELIMIT, "%s: over %zu bytes", name,
		                    (size_t)CONFIG_MAX_BYTES);
	while (found && rest.len) {
		rest = kiln_str_split(rest, '\n', &line, &found);
		lineno++;
		if (line.len > CONFIG_MAX_LINE) {
			rc = kiln_err_set(err, KILN_ELIMIT, "line over %d bytes", CONFIG_MAX_LINE);
		} else {
			rc = config_line(cfg, line, section, sizeof(section), lineno, err);
		}
		if (rc) {
			kiln_err_locate(err, name, lineno, 0);
			return rc;
		}
	}
	return scheduler_config_forge_check(cfg, name, err);
}

kiln_rc scheduler_config_load(struct scheduler_config *cfg, const char *path, struct kiln_err *err)
{
	struct kiln_buf b = KILN_BUF_INIT(CONFIG_MAX_BYTES);
	kiln_rc rc;

	rc = util_read_file(path, CONFIG_MAX_BYTES, &b, err);
	if (!rc)
		rc = scheduler_config_from_mem(cfg, b.ptr, b.len, path, err);
	kiln_buf_release(&b);
	return rc;
}
