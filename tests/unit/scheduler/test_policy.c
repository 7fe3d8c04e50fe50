/* The scheduler's decisions (scheduler/policy.c), without a database. */
#include "util/util.h"

#include "tests/unit/harness.h"
#include "scheduler/scheduler_int.h"

/* ---------------------------------------------------------------------------------------- */
/* Retries and backoff */

KILN_TEST(policy_backoff_doubles_up_to_the_maximum)
{
	struct scheduler_config cfg = {0};
	struct scheduler s = {.cfg = &cfg};

	cfg.backoff_ms = 1000;
	cfg.backoff_max_ms = 5000;
	assert_int_equal(scheduler_backoff_ms(&s, 0), 1000);
	assert_int_equal(scheduler_backoff_ms(&s, 1), 1000);
	assert_int_equal(scheduler_backoff_ms(&s, 2), 2000);
	assert_int_equal(scheduler_backoff_ms(&s, 3), 4000);
	assert_int_equal(scheduler_backoff_ms(&s, 4), 5000);
	assert_int_equal(scheduler_backoff_ms(&s, 60), 5000);
	/* a maximum below the base wins */
	cfg.backoff_max_ms = 500;
	assert_int_equal(scheduler_backoff_ms(&s, 1), 500);
}

/* One lease end: the job's attempts and cancel flag, the outcome, and what must follow. */
struct end_case {
	int64_t attempts, max_attempts;
	bool cancel_requested;
	enum scheduler_outcome outcome;
	const char *attempt_state;
	bool requeue;
	enum scheduler_state state;
	const char *failure_class; /* the job's */
	int64_t not_before_ms, attempts_back;
};

static const struct end_case end_cases[] = {
    /* success ends the job whatever the budget; no class, no message */
    {1, 3, false, SCHED_OUT_SUCCEEDED, "succeeded", false, SCHED_SUCCEEDED, "", 0, 0},
    {3, 3, false, SCHED_OUT_SUCCEEDED, "succeeded", false, SCHED_SUCCEEDED, "", 0, 0},
    /* a build failure is never retried */
    {1, 3, false, SCHED_OUT_FAILED, "failed", false, SCHED_FAILED, "c", 0, 0},
    /* infra and lost: retried after the backoff while attempts remain */
    {1, 3, false, SCHED_OUT_INFRA, "failed", true, SCHED_QUEUED, "c", 1500, 0},
    {2, 3, false, SCHED_OUT_LOST, "lost", true, SCHED_QUEUED, "c", 1500, 0},
    {3, 3, false, SCHED_OUT_INFRA, "failed", false, SCHED_FAILED, "c", 0, 0},
    {3, 3, false, SCHED_OUT_LOST, "lost", false, SCHED_FAILED, "c", 0, 0},
    /* a hand-back is requeued and gives its attempt back, even the last one */
    {3, 3, false, SCHED_OUT_RELEASED, "released", true, SCHED_QUEUED, "c", 1500, 1},
    /* the worker stopped it on request */
    {1, 3, false, SCHED_OUT_CANCELLED, "cancelled", false, SCHED_CANCELLED, "c", 0, 0},
    /* a cancel asked of a running job: nothing is requeued, the job ends cancelled */
    {1, 3, true, SCHED_OUT_INFRA, "failed", false, SCHED_CANCELLED, "cancel", 0, 0},
    {1, 3, true, SCHED_OUT_LOST, "lost", false, SCHED_CANCELLED, "cancel", 0, 0},
    {1, 3, true, SCHED_OUT_RELEASED, "released", false, SCHED_CANCELLED, "cancel", 0, 0},
    {1, 3, true, SCHED_OUT_FAILED, "failed", false, SCHED_CANCELLED, "cancel", 0, 0},
    /* it finished first: the success stands */
    {1, 3, true, SCHED_OUT_SUCCEEDED, "succeeded", false, SCHED_SUCCEEDED, "", 0, 0},
};

KILN_TEST(policy_lease_end_requeues_or_ends_the_job)
{
	size_t i;

	for (i = 0; i < KILN_ARRAY_SIZE(end_cases); i++) {
		const struct end_case *c = &end_cases[i];
		struct scheduler_job j = {.attempts = c->attempts,
		                          .max_attempts = c->max_attempts,
		                          .cancel_requested = c->cancel_requested};
		struct scheduler_finish f = {.outcome = c->outcome,
		                             .failure_class = "c",
		                             .message = "m",
		                             .now_ms = 1000,
		                             .backoff_ms = 500};
		struct scheduler_job_end e;

		print_message("case %zu\n", i);
		scheduler_lease_decide(&j, &f, &e);
		assert_string_equal(e.attempt_state, c->attempt_state);
		assert_int_equal(e.requeue, c->requeue);
		assert_int_equal(e.state, c->state);
		assert_string_equal(e.failure_class, c->failure_class);
		assert_string_equal(e.message, c->state == SCHED_SUCCEEDED ? "" : "m");
		assert_int_equal(e.not_before_ms, c->not_before_ms);
		assert_int_equal(e.attempts_back, c->attempts_back);
	}
}

KILN_TEST(policy_cancel_by_state)
{
	struct kiln_err err = KILN_ERR_INIT;
	struct scheduler_job j = {.id = 7};
	enum scheduler_state to;
	int s;

	j.state = SCHED_QUEUED;
	assert_ok(scheduler_cancel_decide(&j, &to, &err), &err);
	assert_int_equal(to, SCHED_CANCELLED);
	/* a running job is asked to stop: it stays as it is until its worker ends it */
	for (s = SCHED_LEASED; s <= SCHED_BUILDING; s++) {
		j.state = (enum scheduler_state)s;
		assert_ok(scheduler_cancel_decide(&j, &to, &err), &err);
		assert_int_equal(to, s);
	}
	for (s = SCHED_SUCCEEDED; s <= SCHED_CANCELLED; s++) {
		j.state = (enum scheduler_state)s;
		kiln_err_clear(&err);
		assert_int_equal(scheduler_cancel_decide(&j, &to, &err), KILN_ECONFLICT);
		assert_non_null(strstr(err.msg, "job 7 has already ended"));
		assert_non_null(strstr(err.msg, scheduler_state_name(j.state)));
	}
}

KILN_TEST(policy_retry_by_state_with_the_first_budget)
{
	struct kiln_err err = KILN_ERR_INIT;
	struct scheduler_job j = {.id = 7, .attempts = 1, .max_attempts = 3};
	int64_t budget = 0;
	int s;

	for (s = SCHED_QUEUED; s < SCHED_NSTATES; s++) {
		j.state = (enum scheduler_state)s;
		kiln_err_clear(&err);
		if (s == SCHED_FAILED || s == SCHED_CANCELLED) {
			assert_ok(scheduler_retry_decide(&j, &budget, &err), &err);
			assert_int_equal(budget, 2);
			continue;
		}
		assert_int_equal(scheduler_retry_decide(&j, &budget, &err), KILN_ECONFLICT);
		assert_non_null(strstr(err.msg, "only failed or cancelled jobs can be retried"));
	}
	/* a job that used up its attempts gets one more */
	j.state = SCHED_FAILED;
	j.attempts = 3;
	assert_ok(scheduler_retry_decide(&j, &budget, &err), &err);
	assert_int_equal(budget, 1);
}

/* ---------------------------------------------------------------------------------------- */
/* Matching jobs to workers */

KILN_TEST(policy_job_fits_says_what_did_not_fit)
{
	struct scheduler_misfit m;

	assert_true(scheduler_job_fits("", "", ",x86_64,", ",", &m));
	assert_int_equal(m.what, SCHED_MISFIT_NONE);
	/* a job's tags with or without the outer commas, empty words ignored */
	assert_true(scheduler_job_fits("x86_64", "gpu,,big", ",x86_64,", ",big,gpu,", &m));
	assert_false(scheduler_job_fits("x86", "", ",x86_64,", ",", &m));
	assert_int_equal(m.what, SCHED_MISFIT_ARCH);
	assert_false(scheduler_job_fits("", ",gpu,ssd,", ",x86_64,", ",gpu,ss,", &m));
	assert_int_equal(m.what, SCHED_MISFIT_TAG);
	assert_int_equal(m.len, 3);
	assert_memory_equal(m.tag, "ssd", 3);
	/* no worker lists at all: only a job asking for nothing fits */
	assert_true(scheduler_job_fits("", "", NULL, NULL, NULL));
	assert_false(scheduler_job_fits("noarch", "", NULL, NULL, NULL));
}

KILN_TEST(policy_lease_pick_takes_the_first_that_fits)
{
	struct scheduler_candidate c[] = {
	    {.id = 1, .arch = "aarch64", .tags = "", .avoid_worker = ""}, /* wrong arch */
	    {.id = 2, .arch = "", .tags = ",gpu,", .avoid_worker = ""}, /* a tag the worker lacks */
	    {.id = 3, .arch = "", .tags = "", .avoid_worker = "w1"}, /* a rerun of w1's own build */
	    {.id = 4, .arch = "x86_64", .tags = ",big,", .avoid_worker = ""},
	    {.id = 5, .arch = "", .tags = "", .avoid_worker = ""},
	};
	struct scheduler_lease_query q = {.worker = "w1", .arches = ",x86_64,", .tags = ",big,"};
	size_t avoided;

	assert_int_equal(scheduler_lease_pick(c, 5, &q, NULL, 0, &avoided), 3);
	assert_int_equal(avoided, 2);
	/* passed over (taken by another grant): the next */
	c[3].id = 0;
	assert_int_equal(scheduler_lease_pick(c, 5, &q, NULL, 0, &avoided), 4);
	/* only the rerun fits: none picked, the rerun offered */
	assert_int_equal(scheduler_lease_pick(c, 3, &q, NULL, 0, &avoided), 3);
	assert_int_equal(avoided, 2);
	/* another worker's rerun is no rerun of its own build */
	q.worker = "w2";
	assert_int_equal(scheduler_lease_pick(c, 3, &q, NULL, 0, &avoided), 2);
	assert_int_equal(avoided, 3);
	assert_int_equal(scheduler_lease_pick(c, 0, &q, NULL, 0, &avoided), 0);
	assert_int_equal(avoided, 0);
}

/* [projects] A candidate of project p (grant_seq g, caps max and caps) with priority pri. */
#define CAND(id, arch, p, pri, g, max, caps)                                                       \
	(struct scheduler_candidate)                                                               \
	{                                                                                          \
		id, arch, "", "", p, pri, g, max, caps                                             \
	}

KILN_TEST(policy_lease_pick_shares_workers_between_projects)
{
	/* project 2 holds the best priorities, but project 3 was granted longer ago */
	struct scheduler_candidate c[] = {
	    CAND(1, "", 2, 10, 7, 0, ""),
	    CAND(2, "", 2, 10, 7, 0, ""),
	    CAND(3, "", 3, 0, 4, 0, ""),
	    CAND(4, "", 3, 5, 4, 0, ""),
	};
	struct scheduler_lease_query q = {.worker = "w1", .arches = ",x86_64,", .tags = ","};
	size_t avoided;

	/* the project granted longest ago, and the best priority inside it */
	assert_int_equal(scheduler_lease_pick(c, 4, &q, NULL, 0, &avoided), 3);
	/* once granted, it goes to the back: project 2's oldest of its best priority */
	c[2].grant_seq = c[3].grant_seq = 8;
	assert_int_equal(scheduler_lease_pick(c, 4, &q, NULL, 0, &avoided), 0);
	/* equal grant_seq (never granted): by project id */
	c[0].grant_seq = c[1].grant_seq = c[2].grant_seq = c[3].grant_seq = 0;
	assert_int_equal(scheduler_lease_pick(c, 4, &q, NULL, 0, &avoided), 0);
	/* the order the store gave does not matter */
	c[0].project_id = c[1].project_id = 5;
	assert_int_equal(scheduler_lease_pick(c, 4, &q, NULL, 0, &avoided), 3);
}

KILN_TEST(policy_lease_pick_holds_a_project_at_its_caps)
{
	struct scheduler_candidate c[] = {
	    CAND(1, "", 2, 0, 1, 2, ""),
	    CAND(2, "x86_64", 3, 0, 2, 0, "x86_64=1"),
	    CAND(3, "", 3, 0, 2, 0, "x86_64=1"),
	};
	struct scheduler_project_run run[] = {
	    {2, "", 2},       /* project 2: 2 of its 2 running */
	    {3, "x86_64", 1}, /* project 3: its one x86_64 job running */
	};
	struct scheduler_lease_query q = {.worker = "w1", .arches = ",x86_64,", .tags = ","};
	struct scheduler_quota why;
	size_t avoided;

	assert_true(scheduler_candidates_capped(c, 3));
	assert_false(scheduler_candidates_capped(c, 0));
	/* project 2 at its cap; project 3's x86_64 job at its arch cap; its any-arch job goes */
	assert_int_equal(scheduler_lease_pick(c, 3, &q, run, 2, &avoided), 2);
	assert_int_equal(scheduler_lease_pick(c, 2, &q, run, 2, &avoided), 2);
	/* one of project 2's ended: it may run one more */
	run[0].n = 1;
	assert_int_equal(scheduler_lease_pick(c, 3, &q, run, 2, &avoided), 0);

	run[0].n = 2;
	assert_true(scheduler_quota_full(2, 2, "", "", run, 2, &why));
	assert_int_equal(why.running, 2);
	assert_int_equal(why.cap, 2);
	assert_string_equal(why.arch, "");
	assert_true(scheduler_quota_full(3, 0, "aarch64=4,x86_64=1", "x86_64", run, 2, &why));
	assert_int_equal(why.running, 1);
	assert_int_equal(why.cap, 1);
	assert_string_equal(why.arch, "x86_64");
	assert_false(scheduler_quota_full(3, 0, "x86_64=2", "x86_64", run, 2, &why));
	assert_false(scheduler_quota_full(3, 0, "x86_64=1", "aarch64", run, 2, &why));
	assert_false(scheduler_quota_full(4, 1, "", "", run, 2, &why));
	assert_int_equal(why.running, 0);
}

KILN_TEST(policy_arch_caps_are_checked)
{
	struct kiln_err err = KILN_ERR_INIT;

	assert_ok(scheduler_arch_caps_check("", &err), &err);
	assert_ok(scheduler_arch_caps_check("x86_64=2,aarch64=1", &err), &err);
	assert_int_equal(scheduler_arch_caps_check("x86_64", &err), KILN_EINVAL);
	assert_non_null(strstr(err.msg, "arch_caps"));
	kiln_err_clear(&err);
	assert_int_equal(scheduler_arch_caps_check("x86_64=0", &err), KILN_EINVAL);
	kiln_err_clear(&err);
	assert_int_equal(scheduler_arch_caps_check("x86_64=2,", &err), KILN_EINVAL);
	kiln_err_clear(&err);
	assert_int_equal(scheduler_arch_caps_check("=2", &err), KILN_EINVAL);
	kiln_err_clear(&err);
	assert_int_equal(scheduler_arch_caps_check("x/86=2", &err), KILN_EINVAL);
	kiln_err_clear(&err);
	assert_int_equal(scheduler_arch_caps_check("x86_64=two", &err), KILN_EINVAL);
}

KILN_TEST(policy_rerun_goes_elsewhere_when_another_worker_fits)
{
	struct scheduler_candidate rerun = {
	    .id = 3, .arch = "x86_64", .tags = ",big,", .avoid_worker = "w1"};
	struct scheduler_worker_info w[] = {
	    {.name = "w1", .arches = ",x86_64,", .tags = ",big,"},
	    {.name = "w2", .arches = ",aarch64,", .tags = ",big,"},
	    {.name = "w3", .arches = ",x86_64,", .tags = ",", .draining = false},
	    {.name = "w4", .arches = ",x86_64,", .tags = ",big,", .draining = true},
	};

	/* itself, the wrong arch, a missing tag, a draining one: none of them */
	assert_false(scheduler_rerun_elsewhere(&rerun, "w1", w, 4));
	w[2].tags = ",big,";
	assert_true(scheduler_rerun_elsewhere(&rerun, "w1", w, 4));
	assert_false(scheduler_rerun_elsewhere(&rerun, "w1", w, 0));
}

/* ---------------------------------------------------------------------------------------- */
/* Reproducibility verdicts */

KILN_TEST(policy_verdicts_roll_up)
{
	const char *all[] = {"reproducible", "reproducible"};
	const char *pend[] = {"reproducible", "pending"};
	const char *diff[] = {"pending", "differs", "rerun_failed"};
	const char *fail[] = {"reproducible", "rerun_failed", "unknown"};
	const char *unk[] = {"unknown", "reproducible"};
	const char *odd[] = {"reproducible", "bogus"};

	assert_string_equal(scheduler_verdict_rollup(all, 0), "");
	assert_string_equal(scheduler_verdict_rollup(all, 2), "reproducible");
	assert_string_equal(scheduler_verdict_rollup(pend, 2), "pending");
	assert_string_equal(scheduler_verdict_rollup(diff, 3), "differs");
	assert_string_equal(scheduler_verdict_rollup(fail, 3), "rerun_failed");
	assert_string_equal(scheduler_verdict_rollup(unk, 2), "unknown");
	assert_string_equal(scheduler_verdict_rollup(odd, 2), "unknown");
}
