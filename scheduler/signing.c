/*
 * signing.c - the scheduler signs the packages a job built with the job's key: each
 * package's blob is copied, the copy signed and kept as a blob of its own.
 */
#include "util/util.h"

#include <sys/stat.h>
#include <unistd.h>

#include "scheduler/scheduler_int.h"

static bool is_package(const struct scheduler_artifact *a)
{
	return (!strcmp(a->kind, "binary") || !strcmp(a->kind, "source")) &&
	       kiln_str_ends(kiln_str_from(a->name), ".rpm");
}

/* Copy the artifact's blob, sign the copy, store it as a new blob. */
static kiln_rc sign_one(struct scheduler *s, const struct sign_key *key,
                        struct scheduler_artifact *a, struct kiln_err *err)
{
	struct kiln_buf src = KILN_BUF_INIT(KILN_LIMIT_PATH), tmp = KILN_BUF_INIT(KILN_LIMIT_PATH);
	struct sign_opts opts = {0};
	char hex[2 * UTIL_DIGEST_MAX + 1];
	struct stat st;
	int fd = -1;
	kiln_rc rc;

	scheduler_blob_path(s, a->sha256, &src);
	rc = scheduler_tmp_file(s, "sign", &tmp, &fd, err);
	if (rc)
		goto out;
	rc = util_copy_file(src.ptr, tmp.ptr, 0644, err);
	if (!rc)
		rc = sign_time_pick(key, -1, &opts.time, err);
	if (!rc)
		rc = sign_package(key, tmp.ptr, &opts, 0, NULL, err);
	if (!rc)
		rc = util_digest_file_hex(UTIL_DIGEST_SHA256, tmp.ptr, hex, err);
	if (!rc && stat(tmp.ptr, &st) < 0)
		rc = kiln_err_sys(err, KILN_EIO, "stat %s", tmp.ptr);
	if (!rc) {
		memcpy(a->signed_sha256, hex, 65);
		a->signed_size = (int64_t)st.st_size;
		rc = scheduler_blob_adopt(s, tmp.ptr, hex, err);
	}
	if (rc)
		kiln_err_wrap(err, "signing %s", a->name);
out:
	if (rc && tmp.len)
		(void)unlink(tmp.ptr);
	util_close(fd);
	kiln_buf_release(&src);
	kiln_buf_release(&tmp);
	return rc;
}

/* The key for job's packages: [projects] its project's own, which a project other than
 * default has (loaded from its file: only once there is a package to sign), else the farm's
 * key the job names (NULL: none). *own gets a loaded key, the caller's. */
static kiln_rc job_key(struct scheduler *s, const struct scheduler_job *job,
                       const struct sign_key **key, struct sign_key **own, struct kiln_err *err)
{
	kiln_rc rc = job->project_id != SCHED_PROJECT_DEFAULT && job->project && *job->project
	                 ? scheduler_project_key_load(s, job->project, own, err)
	                 : KILN_ENOTFOUND;

	if (!rc) {
		*key = *own;
		return KILN_OK;
	}
	if (rc != KILN_ENOTFOUND)
		return rc;
	kiln_err_clear(err);
	return scheduler_key_find(s, job->sign_key, key, err);
}

kiln_rc scheduler_sign_artifacts(struct scheduler *s, const struct scheduler_job *job,
                                 struct scheduler_artifact *arts, size_t n, struct kiln_err *err)
{
	const struct sign_key *key = NULL;
	struct sign_key *own = NULL;
	bool looked = false;
	kiln_rc rc = KILN_OK;
	size_t i;

	/* a job naming no key and of the default project signs nothing */
	if (job->project_id == SCHED_PROJECT_DEFAULT && (!job->sign_key || !*job->sign_key))
		return KILN_OK;
	for (i = 0; !rc && i < n; i++) {
		if (!is_package(&arts[i]))
			continue;
		if (!looked) {
			looked = true;
			rc = job_key(s, job, &key, &own, err);
		}
		if (rc || !key)
			break;
		rc = sign_one(s, key, &arts[i], err);
		if (!rc)
			rc = s->store->ops->artifact_put(s->store, &arts[i], NULL, err);
		if (!rc) {
			pthread_mutex_lock(&s->stats_lock);
			s->signed_packages++;
			pthread_mutex_unlock(&s->stats_lock);
		}
	}
	sign_key_free(own);
	return rc;
}
