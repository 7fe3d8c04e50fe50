/*
 * metrics.c - GET /metrics in Prometheus' text format: jobs by state, queue depth per arch,
 * wait, build and publish time histograms, lease grants and expiries, retries by reason,
 * publish failures, the duties held (several schedulers on one store).
 *
 * Counters and histograms are the running process's (they restart at zero with the
 * scheduler, as Prometheus counters may); the gauges come from the store.
 */
#include "util/util.h"

#include "scheduler/scheduler_int.h"

static const char *const bounds[12] = {"0.01", "0.05", "0.1", "0.5", "1",    "5",
                                       "10",   "30",   "60",  "300", "1800", "3600"};

static void hist(struct kiln_buf *o, const char *name, const char *help,
                 const struct scheduler_hist *h)
{
	int64_t cum = 0;
	size_t i;

	kiln_buf_addf(o, "# HELP %s %s\n# TYPE %s histogram\n", name, help, name);
	for (i = 0; i < 12; i++) {
		cum += h->buckets[i];
		kiln_buf_addf(o, "%s_bucket{le=\"%s\"} %lld\n", name, bounds[i], (long long)cum);
	}
	kiln_buf_addf(o, "%s_bucket{le=\"+Inf\"} %lld\n%s_sum %.3f\n%s_count %lld\n", name,
	              (long long)h->count, name, h->sum, name, (long long)h->count);
}

static void counter(struct kiln_buf *o, const char *name, const char *help, const char *labels,
                    int64_t v)
{
	kiln_buf_addf(o, "# HELP %s %s\n# TYPE %s counter\n%s%s %lld\n", name, help, name, name,
	              labels, (long long)v);
}

kiln_rc scheduler_metrics_text(struct scheduler *s, struct kiln_buf *o, struct kiln_err *err)
{
	struct kiln_arena a = KILN_ARENA_INIT(KILN_MIB);
	struct scheduler_counts c;
	kiln_rc rc;
	int i;
	size_t k;

	rc = s->store->ops->counts(s->store, &a, &c, err);
	if (rc)
		goto out;
	kiln_buf_addstr(o,
	                "# HELP kiln_jobs Jobs in the store by state.\n# TYPE kiln_jobs gauge\n");
	for (i = 0; i < SCHED_NSTATES; i++)
		kiln_buf_addf(o, "kiln_jobs{state=\"%s\"} %lld\n",
		              scheduler_state_name((enum scheduler_state)i),
		              (long long)c.by_state[i]);
	kiln_buf_addstr(o, "# HELP kiln_queue_depth Queued jobs per target arch (any = no arch "
	                   "asked).\n# TYPE kiln_queue_depth gauge\n");
	for (k = 0; k < c.nqueued; k++)
		kiln_buf_addf(o, "kiln_queue_depth{arch=\"%s\"} %lld\n",
		              *c.queued_arch[k] ? c.queued_arch[k] : "any",
		              (long long)c.queued_n[k]);
	/* project names are [a-z0-9._-]: nothing to escape */
	kiln_buf_addstr(o, "# HELP kiln_project_queue_depth Queued jobs per project (projects "
	                   "with none left out).\n# TYPE kiln_project_queue_depth gauge\n");
	for (k = 0; k < c.nqueued_project; k++)
		kiln_buf_addf(o, "kiln_project_queue_depth{project=\"%s\"} %lld\n",
		              c.queued_project[k], (long long)c.queued_project_n[k]);
	kiln_buf_addstr(o, "# HELP kiln_reproducibility_jobs Jobs with reruns by their rolled-up "
	                   "reproducibility verdict.\n# TYPE kiln_reproducibility_jobs gauge\n");
	for (k = 0; k < KILN_ARRAY_SIZE(c.verdicts); k++)
		kiln_buf_addf(o, "kiln_reproducibility_jobs{verdict=\"%s\"} %lld\n",
		              scheduler_verdict_names[k], (long long)c.verdicts[k]);
	kiln_buf_addf(o,
	              "# HELP kiln_duties_held Duties among the schedulers sharing the store: 1 "
	              "where this one holds it.\n# TYPE kiln_duties_held gauge\n"
	              "kiln_duties_held{duty=\"reaper\"} %d\n",
	              __atomic_load_n(&s->reaper, __ATOMIC_RELAXED) ? 1 : 0);
	scheduler_publish_duties_text(s, o);
	pthread_mutex_lock(&s->stats_lock);
	hist(o, "kiln_job_wait_seconds", "Time from submission to lease.", &s->wait_hist);
	hist(o, "kiln_job_build_seconds", "Time from the first lease to success.", &s->build_hist);
	counter(o, "kiln_lease_grants_total", "Leases granted.", "", s->lease_grants);
	counter(o, "kiln_lease_grants_next_total",
	        "Leases granted in the reply to the worker's completion of its last.", "",
	        s->lease_grants_next);
	counter(o, "kiln_lease_grants_with_end_total",
	        "Of those, leases taken in the same write as the completion's end.", "",
	        s->lease_grants_with_end);
	counter(o, "kiln_lease_candidate_reads_total",
	        "Reads of the queued jobs grants pick from (kept between grants until a job is "
	        "queued).",
	        "", (int64_t)scheduler_cands_reads(s->cands));
	counter(o, "kiln_lease_expiries_total", "Leases that expired (worker lost).", "",
	        s->lease_expiries);
	kiln_buf_addf(o,
	              "# HELP kiln_retries_total Jobs requeued, by reason.\n"
	              "# TYPE kiln_retries_total counter\n"
	              "kiln_retries_total{reason=\"worker_lost\"} %lld\n"
	              "kiln_retries_total{reason=\"infra\"} %lld\n",
	              (long long)s->retries_lost, (long long)s->retries_infra);
	counter(o, "kiln_packages_signed_total", "Packages signed.", "", s->signed_packages);
	hist(o, "kiln_publish_seconds", "Time to publish a repository (layout and metadata).",
	     &s->publish_hist);
	counter(o, "kiln_publish_failures_total",
	        "Publishes that failed (logged; retried on the "
	        "next change).",
	        "", s->publish_failures);
	pthread_mutex_unlock(&s->stats_lock);
	rc = kiln_buf_finish(o, err);
out:
	kiln_arena_release(&a);
	return rc;
}

void scheduler_hist_add(struct scheduler *s, struct scheduler_hist *h, double seconds)
{
	static const double le[12] = {0.01, 0.05, 0.1, 0.5, 1, 5, 10, 30, 60, 300, 1800, 3600};
	size_t i;

	pthread_mutex_lock(&s->stats_lock);
	for (i = 0; i < 12; i++) {
		if (seconds <= le[i]) {
			h->buckets[i]++;
			break;
		}
	}
	h->count++;
	h->sum += seconds;
	pthread_mutex_unlock(&s->stats_lock);
}
