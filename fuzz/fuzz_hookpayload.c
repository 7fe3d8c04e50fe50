/*
 * fuzz_hookpayload.c - forge webhook payloads (scheduler/hookparse.c): the first byte picks
 * the forge and the event header, the rest is the body.
 *
 * Checks beyond "no crash": a payload that builds names a project, a clone URL, a ref and
 * (but for a GitHub or Forgejo retrigger comment) a full commit id; one that does not
 * build says why; an error has a message.
 */
#include "util/util.h"

#include "api/api.h"
#include "scheduler/scheduler_int.h"
#include "scheduler/http_int.h"

int LLVMFuzzerTestOneInput(const uint8_t *data, size_t size);

static const char *const events[] = {
    "push", "pull_request", "issue_comment", "pull_request_comment", "ping", ""};

static void check(const struct scheduler_hook_payload *ev)
{
	if (!ev->kind) {
		if (!ev->ignored || !*ev->ignored)
			KILN_BUG("nothing built and no reason");
		return;
	}
	if (!ev->project || !*ev->project || !ev->url || !*ev->url || !ev->ref || !*ev->ref)
		KILN_BUG("a build without project, URL or ref");
	if (ev->kind != SCHED_HOOK_COMMENT && !scheduler_git_commit_valid(ev->sha))
		KILN_BUG("a build without a full commit id");
	if (ev->kind == SCHED_HOOK_PUSH && !*ev->branch)
		KILN_BUG("a push without its branch");
}

int LLVMFuzzerTestOneInput(const uint8_t *data, size_t size)
{
	struct kiln_arena a = KILN_ARENA_INIT(64 * KILN_MIB);
	struct kiln_err err = KILN_ERR_INIT;
	struct scheduler_hook_payload ev;
	enum scheduler_forge_kind kind;
	const char *event;

	if (!size)
		return 0;
	kind = (enum scheduler_forge_kind)(data[0] % 3);
	event = events[(data[0] / 3) % KILN_ARRAY_SIZE(events)];
	if (scheduler_hook_parse(kind, event, data + 1, size - 1, &a, &ev, &err)) {
		if (!err.msg[0])
			KILN_BUG("an error without a message");
	} else {
		check(&ev);
	}
	kiln_arena_release(&a);
	return 0;
}
