#include "util/util.h"

#include "tests/unit/harness.h"
#include "api/api.h"
#include "scheduler/scheduler.h"

static kiln_rc load(struct scheduler_config *c, const char *text, struct kiln_err *err)
{
	scheduler_config_init(c);
	kiln_err_clear(err);
	return scheduler_config_from_mem(c, text, strlen(text), "k.ini", err);
}

KILN_TEST(config_defaults_are_the_embedded_setup)
{
	struct scheduler_config c;

	scheduler_config_init(&c);
	assert_string_equal(c.listen, "127.0.0.1:8470");
	assert_string_equal(c.data_dir, "./kiln-data");
	assert_null(c.database);
	assert_int_equal(c.lease_ttl_ms, 60000);
	assert_string_equal(c.default_key, "default");
	scheduler_config_release(&c);
}

KILN_TEST(config_reads_every_section)
{
	struct scheduler_config c;
	struct kiln_err err = KILN_ERR_INIT;

	assert_ok(load(&c,
	               "# comment\n[server]\nlisten = [::1]:0\nthreads = 8\n\n[storage]\n"
	               "data_dir = /srv/kiln\ndatabase = postgresql://kiln@db/kiln\n; other "
	               "comment\n[limits]\nmax_body = 512K\n"
	               "max_upload = 2G\nlease_ttl = 1500ms\npoll_max = 2m\nmax_attempts = 5\n"
	               "[auth]\nanonymous_read = yes\n[keys]\nrelease = /k/r.key\n"
	               "default_key = release\n[repositories]\nf40 = /repo/f40\n",
	               &err),
	          &err);
	assert_string_equal(c.listen, "[::1]:0");
	assert_int_equal(c.threads, 8);
	assert_string_equal(c.data_dir, "/srv/kiln");
	assert_string_equal(c.database, "postgresql://kiln@db/kiln");
	assert_int_equal(c.max_body, 512 * 1024);
	assert_int_equal(c.max_upload, 2ULL << 30);
	assert_int_equal(c.lease_ttl_ms, 1500);
	assert_int_equal(c.poll_max_ms, 120000);
	assert_int_equal(c.max_attempts, 5);
	assert_true(c.anonymous_read);
	assert_int_equal(c.nkeys, 1);
	assert_string_equal(c.keys[0].name, "release");
	assert_string_equal(c.keys[0].path, "/k/r.key");
	assert_string_equal(c.default_key, "release");
	assert_int_equal(c.nrepos, 1);
	assert_string_equal(c.repos[0].path, "/repo/f40");
	scheduler_config_release(&c);
}

/* Issue 25 spells it [store] url (and --set store.url=...); [storage] database stays. */
KILN_TEST(config_store_url_is_the_database)
{
	struct scheduler_config c;
	struct kiln_err err = KILN_ERR_INIT;

	assert_ok(load(&c, "[store]\nurl = postgresql://kiln@db/farm\n", &err), &err);
	assert_string_equal(c.database, "postgresql://kiln@db/farm");
	assert_ok(scheduler_config_set(&c, "store", "url", "postgres:///other", &err), &err);
	assert_string_equal(c.database, "postgres:///other");
	assert_ok(scheduler_config_set(&c, "store", "url", "", &err), &err);
	assert_null(c.database);
	assert_int_equal(scheduler_config_set(&c, "store", "url", "sqlite:///x", &err),
	                 KILN_EINVAL);
	assert_non_null(strstr(err.msg, "store.url: expected a postgresql://"));
	kiln_err_clear(&err);
	assert_int_equal(scheduler_config_set(&c, "store", "path", "/x", &err), KILN_EINVAL);
	assert_non_null(strstr(err.msg, "unknown key 'path' in [store]"));
	kiln_err_clear(&err);
	/* the PostgreSQL store's pool */
	assert_int_equal(c.store_pool, SCHED_STORE_POOL_DEFAULT);
	assert_ok(scheduler_config_set(&c, "store", "pool", "2", &err), &err);
	assert_int_equal(c.store_pool, 2);
	assert_int_equal(scheduler_config_set(&c, "store", "pool", "0", &err), KILN_EINVAL);
	assert_non_null(strstr(err.msg, "store.pool: '0' is not a number from 1 to 8"));
	kiln_err_clear(&err);
	assert_int_equal(scheduler_config_set(&c, "store", "pool", "9", &err), KILN_EINVAL);
	kiln_err_clear(&err);
	scheduler_config_release(&c);
}

#define D64 "0123456789abcdef0123456789abcdef0123456789abcdef0123456789abcdef"

KILN_TEST(config_tokens_by_digest)
{
	struct scheduler_config c;
	struct kiln_err err = KILN_ERR_INIT;

	assert_ok(load(&c,
	               "[tokens]\nci = submit, read sha256:" D64 "\nbuilders = worker sha256:"
	               "1111111111111111111111111111111111111111111111111111111111111111\n",
	               &err),
	          &err);
	assert_int_equal(c.ntokens, 2);
	assert_string_equal(c.tokens[0].name, "ci");
	assert_int_equal(c.tokens[0].scopes, API_SCOPE_SUBMIT | API_SCOPE_READ);
	assert_string_equal(c.tokens[0].sha256, D64);
	assert_int_equal(c.tokens[1].scopes, API_SCOPE_WORKER);
	scheduler_config_release(&c);
}

KILN_TEST(config_errors_name_file_line_and_key)
{
	static const struct {
		const char *in, *msg;
		int line;
	} cases[] = {
	    {"[server]\nlisten\n", "expected 'key = value'", 2},
	    {"listen = x\n", "outside a [section]", 1},
	    {"[server\n", "closing ']'", 1},
	    {"[nope]\nx = 1\n", "unknown section [nope]", 2},
	    {"[limits]\n\nlease_tll = 5\n", "unknown key 'lease_tll' in [limits]", 3},
	    {"[limits]\nmax_body = 0\n", "limits.max_body: '0' is not a size", 2},
	    {"[limits]\nlease_ttl = soon\n", "is not a duration", 2},
	    {"[limits]\nmax_attempts = 1000\n", "is not a number from 1 to 100", 2},
	    {"[auth]\nanonymous_read = maybe\n", "is not true or false", 2},
	    {"[storage]\ndatabase = mysql://h/db\n", "storage.database: expected a postgresql://",
	     2},
	    {"[tokens]\nci = submit\n", "expected 'SCOPES sha256:DIGEST'", 2},
	    {"[tokens]\nci = submit sha256:abc\n", "expected 'SCOPES sha256:DIGEST'", 2},
	    {"[tokens]\nci = fly sha256:" D64 "\n", "fly", 2},
	    {"[tokens]\nci = read sha256:" D64 "\nci2 = read sha256:" D64 "\n", "twice", 3},
	};
	struct scheduler_config c;
	struct kiln_err err = KILN_ERR_INIT;
	size_t i;

	for (i = 0; i < KILN_ARRAY_SIZE(cases); i++) {
		kiln_rc rc = load(&c, cases[i].in, &err);

		if (!rc || !strstr(err.msg, cases[i].msg) || err.line != cases[i].line)
			print_error("case %zu: %d %s at %d\n", i, rc, err.msg, err.line);
		assert_int_not_equal(rc, KILN_OK);
		assert_non_null(strstr(err.msg, cases[i].msg));
		assert_string_equal(err.input, "k.ini");
		assert_int_equal(err.line, cases[i].line);
		scheduler_config_release(&c);
	}
}

KILN_TEST(config_limits_size_and_lines)
{
	struct scheduler_config c;
	struct kiln_err err = KILN_ERR_INIT;
	struct kiln_buf b = KILN_BUF_INIT(2 * KILN_MIB);
	size_t i;

	kiln_buf_addstr(&b, "[server]\nlisten = ");
	for (i = 0; i < 5000; i++)
		kiln_buf_addch(&b, 'x');
	scheduler_config_init(&c);
	assert_int_equal(scheduler_config_from_mem(&c, b.ptr, b.len, "k.ini", &err), KILN_ELIMIT);
	assert_int_equal(err.line, 2);
	scheduler_config_release(&c);
	kiln_err_clear(&err);
	scheduler_config_init(&c);
	assert_int_equal(scheduler_config_from_mem(&c, b.ptr, KILN_MIB + 1, "k.ini", &err),
	                 KILN_ELIMIT);
	scheduler_config_release(&c);
	kiln_buf_release(&b);
}

KILN_TEST(config_history_interval_for_the_dashboard)
{
	struct scheduler_config c;
	struct kiln_err err = KILN_ERR_INIT;

	scheduler_config_init(&c);
	assert_int_equal(c.history_ms, 30000);
	scheduler_config_release(&c);
	assert_ok(load(&c, "[limits]\nhistory_interval = 1500ms\n", &err), &err);
	assert_int_equal(c.history_ms, 1500);
	scheduler_config_release(&c);
	assert_int_equal(load(&c, "[limits]\nhistory_interval = soon\n", &err), KILN_EINVAL);
	assert_non_null(strstr(err.msg, "history_interval"));
	scheduler_config_release(&c);
}

KILN_TEST(config_publish_section)
{
	struct scheduler_config c;
	struct kiln_err err = KILN_ERR_INIT;

	assert_ok(
	    load(&c,
	         "[repositories]\nmain = /srv/main\n[publish]\ncompress = zstd\n"
	         "keep_versions = 0\ngenerations = 5\nkey = rel\nbase_url = https://r.example\n",
	         &err),
	    &err);
	assert_true(c.publish_zstd);
	assert_int_equal(c.publish_keep_versions, 0);
	assert_int_equal(c.publish_generations, 5);
	assert_string_equal(c.publish_key, "rel");
	assert_string_equal(c.publish_base_url, "https://r.example");
	assert_int_equal(c.nrepos, 1);
	scheduler_config_release(&c);
	assert_int_equal(load(&c, "[publish]\ncompress = bzip2\n", &err), KILN_EINVAL);
	assert_non_null(strstr(err.msg, "gzip or zstd"));
	scheduler_config_release(&c);
	assert_int_equal(load(&c, "[publish]\ngenerations = 0\n", &err), KILN_EINVAL);
	scheduler_config_release(&c);
}

/* How long a package file no longer published stays for clients with older metadata. */
KILN_TEST(config_publish_retire_after)
{
	static const struct {
		const char *text;
		int64_t ms;
	} ok[] = {{"0", 0}, {"90s", 90000}, {"6h", 21600000}, {"2d", 172800000}, {"500ms", 500}};
	struct scheduler_config c;
	struct kiln_err err = KILN_ERR_INIT;
	char text[128];
	size_t i;

	scheduler_config_init(&c);
	assert_int_equal(c.publish_retire_ms, 86400000);
	scheduler_config_release(&c);
	for (i = 0; i < KILN_ARRAY_SIZE(ok); i++) {
		snprintf(text, sizeof(text), "[publish]\nretire_after = %s\n", ok[i].text);
		assert_ok(load(&c, text, &err), &err);
		assert_int_equal(c.publish_retire_ms, ok[i].ms);
		scheduler_config_release(&c);
	}
	assert_int_equal(load(&c, "[publish]\nretire_after = later\n", &err), KILN_EINVAL);
	assert_non_null(strstr(err.msg, "retire_after"));
	scheduler_config_release(&c);
}

/* Issue 26's minimal form, as written, and the added keys. */
KILN_TEST(config_forge_and_hook_sections)
{
	static const char ini[] = "[forge github]\n"
	                          "kind = github\n"
	                          "api_url = https://api.github.com\n"
	                          "secret_file = /etc/kiln/github.secret\n"
	                          "token_file = /etc/kiln/github.token\n"
	                          "\n"
	                          "[hook owner/project]\n"
	                          "forge = github\n"
	                          "spec = project.spec\n"
	                          "events = push pull_request\n"
	                          "[hook group/sub/p]\n"
	                          "forge = github\n"
	                          "spec = a.spec pkg/b.spec\n"
	                          "branches = main release\n"
	                          "root = fedora-40\n"
	                          "reruns = 2\n";
	struct scheduler_config c;
	struct kiln_err err = KILN_ERR_INIT;
	const struct scheduler_hook_cfg *h;
	const struct scheduler_forge_cfg *f;

	assert_ok(load(&c, ini, &err), &err);
	f = scheduler_config_forge(&c, "github");
	assert_non_null(f);
	assert_int_equal(f->kind, SCHED_FORGE_GITHUB);
	assert_string_equal(f->api_url, "https://api.github.com");
	assert_string_equal(f->secret_file, "/etc/kiln/github.secret");
	assert_string_equal(f->token_file, "/etc/kiln/github.token");
	h = scheduler_config_hook(&c, "owner/project");
	assert_non_null(h);
	assert_string_equal(h->forge, "github");
	assert_string_equal(h->spec, "project.spec");
	assert_int_equal(h->events, SCHED_HOOK_PUSH | SCHED_HOOK_PULL_REQUEST);
	assert_string_equal(h->branches, "");
	h = scheduler_config_hook(&c, "group/sub/p");
	assert_non_null(h);
	assert_true(scheduler_config_word_in(h->branches, "release"));
	assert_false(scheduler_config_word_in(h->branches, "rel"));
	assert_string_equal(h->root, "fedora-40");
	assert_int_equal(h->reruns, 2);
	assert_null(scheduler_config_hook(&c, "owner/other"));
	scheduler_config_release(&c);
}

/* [webhook NAME]: url, secret_file, events (both by default). */
KILN_TEST(config_webhook_sections)
{
	static const char ini[] = "[webhook chat]\n"
	                          "url = https://chat.example/hooks/T0/B0/x\n"
	                          "secret_file = /etc/kiln/chat.secret\n"
	                          "events = publish\n"
	                          "[webhook ci]\n"
	                          "url = http://127.0.0.1:9/in\n"
	                          "secret_file = /etc/kiln/ci.secret\n";
	struct scheduler_config c;
	struct kiln_err err = KILN_ERR_INIT;
	const struct scheduler_webhook_cfg *w;

	assert_ok(load(&c, ini, &err), &err);
	assert_int_equal(c.nwebhooks, 2);
	w = scheduler_config_webhook(&c, "chat");
	assert_non_null(w);
	assert_string_equal(w->url, "https://chat.example/hooks/T0/B0/x");
	assert_string_equal(w->secret_file, "/etc/kiln/chat.secret");
	assert_int_equal(w->events, SCHED_WEBHOOK_PUBLISH);
	w = scheduler_config_webhook(&c, "ci");
	assert_non_null(w);
	assert_int_equal(w->events, SCHED_WEBHOOK_JOB_STATE | SCHED_WEBHOOK_PUBLISH);
	assert_null(scheduler_config_webhook(&c, "other"));
	scheduler_config_release(&c);
}

KILN_TEST(config_forge_errors_name_the_line)
{
	static const struct {
		const char *in, *msg;
		int line;
	} cases[] = {
	    {"[forge gh]\nkind = svn\n", "github, gitlab or forgejo", 2},
	    {"[forge gh]\nkind = github\ncolour = red\n", "unknown key 'colour' in [forge gh]", 3},
	    {"\n[forge gh]\nkind = github\n", "needs secret_file", 2},
	    {"[forge gh]\nsecret_file = /s\n", "needs kind", 1},
	    {"[hook nope]\nforge = x\n", "malformed section name", 1},
	    {"[hook a/../b]\nforge = x\n", "malformed section name", 1},
	    {"[forge gh]\nkind = github\nsecret_file = /s\n[hook a/b]\nforge = gl\nspec = x.spec\n",
	     "needs forge", 4},
	    {"[forge gh]\nkind = github\nsecret_file = /s\n[hook a/b]\nforge = gh\n", "needs spec",
	     4},
	    {"[hook a/b]\nevents = push fork\n", "'fork' is not an event", 2},
	    {"[hook a/b]\nformat = v5\n", "'v5' is not a format", 2},
	    {"[forge gh]\nkind = github\nsecret_file = /s\n[hook a/b]\nforge = gh\n"
	     "spec = a.spec\npublish = nowhere\n",
	     "no repository 'nowhere'", 4},
	    {"[webhook chat]\nurl = ftp://x\n", "'ftp://x' is not an http(s) URL", 2},
	    {"[webhook chat]\nevents = job.state push\n", "'push' is not an event", 2},
	    {"[webhook chat]\nevents =\n", "no event named", 2},
	    {"\n[webhook chat]\nurl = https://x/y\n", "needs url and secret_file", 2},
	    {"[webhook chat]\nsecret_file = /s\n", "needs url and secret_file", 1},
	    {"[webhook a:b]\nurl = https://x/y\n", "malformed section name", 1},
	    {"[webhook chat]\nurl = https://x\nsecret_file = /s\ncolor = red\n",
	     "unknown key 'color' in [webhook chat]", 4},
	};
	struct scheduler_config c;
	struct kiln_err err = KILN_ERR_INIT;
	size_t i;

	for (i = 0; i < KILN_ARRAY_SIZE(cases); i++) {
		kiln_rc rc;

		kiln_err_clear(&err);
		rc = load(&c, cases[i].in, &err);

		if (!rc || !strstr(err.msg, cases[i].msg) || err.line != cases[i].line)
			print_error("case %zu: %d %s at %d\n", i, rc, err.msg, err.line);
		assert_int_not_equal(rc, KILN_OK);
		assert_non_null(strstr(err.msg, cases[i].msg));
		assert_int_equal(err.line, cases[i].line);
		scheduler_config_release(&c);
	}
}
