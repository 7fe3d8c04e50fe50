/*
 * model.c - the job model's words: the states a job goes through, by name.
 */
#include "util/util.h"

#include "scheduler/scheduler_int.h"

static const char *const state_names[SCHED_NSTATES] = {
    "queued", "leased", "building", "succeeded", "failed", "cancelled", "dep_failed"};

const char *scheduler_state_name(enum scheduler_state s)
{
	return (unsigned)s < SCHED_NSTATES ? state_names[s] : "unknown";
}

kiln_rc scheduler_state_parse(const char *s, enum scheduler_state *out, struct kiln_err *err)
{
	int i;

	for (i = 0; i < SCHED_NSTATES; i++) {
		if (!strcmp(s, state_names[i])) {
			*out = (enum scheduler_state)i;
			return KILN_OK;
		}
	}
	return kiln_err_set(err, KILN_EINVAL,
	                    "'%.32s' is not a job state (queued, leased, "
	                    "building, succeeded, failed, cancelled, dep_failed)",
	                    s);
}
