/*
 * fuzz_api.c - the API's parsers of outside input: job request and batch bodies (field tables,
 * validation), the other JSON bodies' decoder in lenient mode, canonical JSON, bearer
 * headers, file names from URLs and scopes, and DSSE provenance envelopes (what
 * kiln provenance verify reads).
 *
 * Checks beyond "no crash": a decoded request has exactly one origin and names that pass
 * the name check; canonical JSON is a fixed point; a lease the worker accepts (the
 * scheduler's answer is outside input to a worker) has one origin and safe file names.
 */
#include "util/util.h"

#include "api/api.h"
#include "scheduler/scheduler_int.h"
#include "worker/daemon_int.h"

int LLVMFuzzerTestOneInput(const uint8_t *data, size_t size);

static void check_request(const uint8_t *data, size_t size)
{
	struct kiln_arena a = KILN_ARENA_INIT(64 * KILN_MIB);
	struct kiln_err err = KILN_ERR_INIT;
	struct scheduler_request r;
	const struct scheduler_source_ref *src;
	size_t i;

	if (!scheduler_request_parse(data, size, &a, &r, &err)) {
		if (!!r.spec + r.has_srpm + r.has_git != 1)
			KILN_BUG("a request with %d origins was accepted",
			         !!r.spec + r.has_srpm + r.has_git);
		src = r.sources.v;
		for (i = 0; i < r.sources.n; i++)
			if (api_name_check(src[i].name, strlen(src[i].name), NULL) ||
			    !api_sha256_valid(src[i].sha256))
				KILN_BUG("a bad source reference was accepted");
	} else if (!err.msg[0]) {
		KILN_BUG("an error without a message");
	}
	kiln_arena_release(&a);
}

/* [batches] A batch accepted has members, each of one origin (no git), on its root. */
static void check_batch(const uint8_t *data, size_t size)
{
	struct kiln_arena a = KILN_ARENA_INIT(64 * KILN_MIB);
	struct kiln_err err = KILN_ERR_INIT;
	struct scheduler_batch_body b;
	const struct scheduler_request *r;
	size_t i;

	if (!scheduler_batch_parse(data, size, &a, &b, &err)) {
		r = b.members.v;
		if (!*b.root || !b.members.n || b.members.n > SCHED_BATCH_MAX)
			KILN_BUG("a batch without a root or members was accepted");
		for (i = 0; i < b.members.n; i++)
			if (!!r[i].spec + r[i].has_srpm != 1 || r[i].has_git ||
			    strcmp(r[i].root, b.root) || r[i].root_lock)
				KILN_BUG("a bad batch member was accepted");
	} else if (!err.msg[0]) {
		KILN_BUG("an error without a message");
	}
	kiln_arena_release(&a);
}

static void check_canonical(const uint8_t *data, size_t size)
{
	struct kiln_buf a = KILN_BUF_INIT(KILN_LIMIT_HTTP_BODY * 2);
	struct kiln_buf b = KILN_BUF_INIT(KILN_LIMIT_HTTP_BODY * 2);

	if (!api_json_canonical(data, size, &a, NULL) &&
	    !api_json_canonical(a.ptr, a.len, &b, NULL) &&
	    (a.len != b.len || memcmp(a.ptr, b.ptr, a.len)))
		KILN_BUG("canonical JSON is not a fixed point");
	kiln_buf_release(&a);
	kiln_buf_release(&b);
}

static void check_strings(const uint8_t *data, size_t size)
{
	char *s = kiln_strndup((const char *)data, size < 4096 ? size : 4096);
	struct kiln_str tok;
	unsigned scopes;

	if (!s)
		return;
	if (!api_bearer_parse(s, &tok, NULL) && (!tok.len || memchr(tok.ptr, ' ', tok.len)))
		KILN_BUG("a bearer token with blanks");
	if (!api_name_check((const char *)data, size, NULL) &&
	    (memchr(data, '/', size) || memchr(data, '\0', size)))
		KILN_BUG("a name with '/' or NUL passed");
	if (!api_scopes_parse(s, &scopes, NULL) && (!scopes || scopes & ~API_SCOPE_ALL))
		KILN_BUG("bad scopes accepted");
	free(s);
}

static void check_lease(const uint8_t *data, size_t size)
{
	struct kiln_arena a = KILN_ARENA_INIT(64 * KILN_MIB);
	struct worker_lease l;
	const struct worker_ref *src;
	size_t i;

	if (!worker_lease_parse((const char *)data, size, &a, &l, NULL)) {
		if (l.job.has_spec + l.job.has_srpm + l.job.has_git != 1)
			KILN_BUG("a lease with several origins was accepted");
		if (l.batch_repo &&
		    (strncmp(l.batch_repo, "/batches/", 9) || strstr(l.batch_repo, "..")))
			KILN_BUG("a lease with an unsafe batch repository was accepted");
		src = l.job.sources.v;
		for (i = 0; i < l.job.sources.n; i++)
			if (strchr(src[i].name, '/') || !strcmp(src[i].name, ".."))
				KILN_BUG("a lease with an unsafe source name was accepted");
	}
	kiln_arena_release(&a);
}

/* With no key at all, no envelope may verify. */
static void check_provenance(const uint8_t *data, size_t size)
{
	struct sign_keyring *kr = NULL;
	struct scheduler_provenance_check chk;

	if (sign_keyring_new(&kr, NULL))
		return;
	if (!scheduler_provenance_check(data, size, kr, "00", &chk, NULL))
		KILN_BUG("an envelope verified without a key");
	sign_keyring_free(kr);
}

int LLVMFuzzerTestOneInput(const uint8_t *data, size_t size)
{
	check_provenance(data, size);
	check_request(data, size);
	check_batch(data, size);
	check_lease(data, size);
	check_canonical(data, size);
	check_strings(data, size);
	return 0;
}
