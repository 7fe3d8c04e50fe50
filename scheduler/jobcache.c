/*
 * jobcache.c - the JSON of GET /api/v1/jobs/{id} kept by job id and store version.
 *
 * CI pipelines and dashboards poll jobs; building the answer reads three tables and writes
 * a few kilobytes of JSON. The store's version changes whenever a write ends (any write:
 * no write path can forget to invalidate), so a body kept at the current version is what
 * the tables would give now. Direct-mapped by id, small bodies only.
 */
#include "util/util.h"

#include <pthread.h>

#include "scheduler/scheduler_int.h"

#define SLOTS 256
#define BODY_MAX (64 * 1024)

struct slot {
	int64_t id;
	uint64_t version;
	/* who may see it (scheduler_job_visible): checked on every hit without a store read */
	int64_t project_id, token_id;
	char *body; /* owned */
	size_t len;
};

struct scheduler_jobcache {
	pthread_mutex_t lock;
	struct slot slots[SLOTS];
};

struct scheduler_jobcache *scheduler_jobcache_new(void)
{
	struct scheduler_jobcache *c = kiln_calloc(1, sizeof(*c));

	if (c)
		pthread_mutex_init(&c->lock, NULL);
	return c;
}

void scheduler_jobcache_free(struct scheduler_jobcache *c)
{
	size_t i;

	if (!c)
		return;
	for (i = 0; i < SLOTS; i++)
		free(c->slots[i].body);
	pthread_mutex_destroy(&c->lock);
	free(c);
}

bool scheduler_jobcache_get(struct scheduler_jobcache *c, int64_t id, uint64_t version,
                            struct scheduler_job *who, struct kiln_buf *out)
{
	struct slot *e;
	bool hit = false;

	if (!c)
		return false;
	e = &c->slots[(uint64_t)id % SLOTS];
	pthread_mutex_lock(&c->lock);
	if (e->body && e->id == id && e->version == version) {
		who->id = id;
		who->project_id = e->project_id;
		who->token_id = e->token_id;
		kiln_buf_add(out, e->body, e->len);
		hit = !out->err;
	}
	pthread_mutex_unlock(&c->lock);
	return hit;
}

void scheduler_jobcache_put(struct scheduler_jobcache *c, const struct scheduler_job *j,
                            uint64_t version, const char *body, size_t len)
{
	struct slot *e;
	char *copy;

	if (!c || len > BODY_MAX)
		return;
	copy = kiln_malloc(len);
	if (!copy)
		return;
	memcpy(copy, body, len);
	e = &c->slots[(uint64_t)j->id % SLOTS];
	pthread_mutex_lock(&c->lock);
	free(e->body);
	e->id = j->id;
	e->version = version;
	e->project_id = j->project_id;
	e->token_id = j->token_id;
	e->body = copy;
	e->len = len;
	pthread_mutex_unlock(&c->lock);
}
