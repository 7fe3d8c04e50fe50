/*
 * ended.c - what follows the end of a job, whoever saw it end (a worker's completion, the
 * reaper, a cancel, the recovery at start): a rebuild is compared with the published
 * packages (rebuild.c), an original gets its provenance and reruns and a rerun is compared
 * with its original (reproduce.c), then the job, or the original a rerun settled, may be
 * published (publish.c). Each step logs its own problems: the job's outcome stands.
 */
#include "util/util.h"

#include "scheduler/scheduler_int.h"

void scheduler_job_ended(struct scheduler *s, int64_t id)
{
	struct kiln_arena a = KILN_ARENA_INIT(KILN_LIMIT_ARENA);
	struct kiln_err err = KILN_ERR_INIT;
	struct scheduler_job j = {0};

	if (s->store->ops->job_get(s->store, id, &a, &j, &err)) {
		kiln_err_wrap(&err, "job %lld: after its end", (long long)id);
		kiln_log_err(KILN_LOG_WARN, &err);
	} else {
		scheduler_job_ended_as(s, &(struct scheduler_ended){.job = &j});
	}
	kiln_arena_release(&a);
}

void scheduler_job_ended_as(struct scheduler *s, const struct scheduler_ended *e)
{
	const struct scheduler_job *j = e->job;

	if (scheduler_state_final(j->state)) {
		scheduler_rebuild_job_ended(s, j);
		scheduler_repro_job_ended(s, e);
	}
	/* after the reproducibility work: a rerun's end may have settled a verdict */
	scheduler_hook_job_ended(s, j);
	if (scheduler_state_final(j->state))
		scheduler_webhook_job_state(s, j);
	scheduler_batch_job_ended(s, j); /* [batches] */
	if (j->rerun_of)
		scheduler_publish_job_ended(s, j->rerun_of);
	else /* what the steps above write of an original publishing does not read */
		scheduler_publish_original_ended(s, j);
}

/* The jobs of the last week a store read names (repro_undone, repo_unpublished), each
 * through each; what (may be NULL) names them in a log line. */
static void recover(struct scheduler *s,
                    kiln_rc (*ids)(struct scheduler_store *st, int64_t since_ms,
                                   struct kiln_arena *a, int64_t **out, size_t *n,
                                   struct kiln_err *err),
                    const char *what, void (*each)(struct scheduler *s, int64_t id))
{
	struct kiln_arena a = KILN_ARENA_INIT(KILN_MIB);
	struct kiln_err err = KILN_ERR_INIT;
	int64_t *v = NULL;
	size_t n = 0, i;

	if (ids(s->store, util_clock_wall_ms() - 7 * 86400 * 1000LL, &a, &v, &n, &err)) {
		kiln_log_err(KILN_LOG_WARN, &err);
		goto out;
	}
	if (n && what)
		kiln_log(KILN_LOG_INFO, "finishing %s of %zu jobs", what, n);
	for (i = 0; i < n; i++)
		each(s, v[i]);
out:
	kiln_arena_release(&a);
}

void scheduler_job_ended_recover(struct scheduler *s)
{
	recover(s, s->store->ops->repro_undone, "the reproducibility work", scheduler_job_ended);
	scheduler_batch_recover(s); /* [batches] hand-overs a stop cut off */
	/* succeeded jobs whose publishing decision the stop cut off */
	if (s->publisher)
		recover(s, s->store->ops->repo_unpublished, NULL, scheduler_publish_job_ended);
}
