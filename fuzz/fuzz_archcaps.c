/*
 * fuzz_archcaps.c - a project's arch_caps ("x86_64=2,aarch64=1", from POST/PUT
 * /api/v1/projects; scheduler/policy.c) over arbitrary bytes: the check never reads past
 * the string, and a value it accepts is one the grant's cap lookup (scheduler_quota_full)
 * reads back: at its cap, a project with that many running in the arch is held.
 */
#include "util/util.h"

#include "api/api.h"
#include "scheduler/scheduler_int.h"

int LLVMFuzzerTestOneInput(const uint8_t *data, size_t size);

/* The first ARCH=N of an accepted s: with N running in ARCH the cap is full, with N-1 not. */
static void first_cap_holds(const char *s)
{
	const char *eq = strchr(s, '='), *end = s + strcspn(s, ",");
	struct scheduler_project_run run = {7, "", 0};
	char arch[65];
	int64_t n;

	if (!eq || eq > end || eq - s >= (ptrdiff_t)sizeof(arch))
		KILN_BUG("an accepted arch_caps without ARCH=N first: %s", s);
	memcpy(arch, s, (size_t)(eq - s));
	arch[eq - s] = '\0';
	if (util_parse_i64(eq + 1, (size_t)(end - eq - 1), 10, 1, 1000000, &n, NULL))
		KILN_BUG("an accepted arch_caps with a bad count: %s", s);
	/* a later entry of the same arch does not count: the first one wins */
	run.arch = arch;
	run.n = n;
	if (!scheduler_quota_full(7, 0, s, arch, &run, 1, NULL))
		KILN_BUG("%s: %lld running in %s is not at its cap", s, (long long)n, arch);
	run.n = n - 1;
	if (scheduler_quota_full(7, 0, s, arch, &run, 1, NULL))
		KILN_BUG("%s: %lld running in %s is over its cap", s, (long long)n - 1, arch);
}

int LLVMFuzzerTestOneInput(const uint8_t *data, size_t size)
{
	struct kiln_err err = KILN_ERR_INIT;
	struct scheduler_project_run run = {1, "x86_64", 3};
	char *s;

	if (size > 1024)
		return 0;
	s = kiln_strndup((const char *)data, size);
	if (!s)
		return 0;
	/* whatever the text, the lookup reads it without harm */
	(void)scheduler_quota_full(1, 2, s, "x86_64", &run, 1, NULL);
	if (strlen(s) == size && scheduler_arch_caps_check(s, &err) == KILN_OK && *s)
		first_cap_holds(s);
	free(s);
	return 0;
}
