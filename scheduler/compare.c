/*
 * compare.c - one package against another as the farm judges them: the bytes of two blobs
 * compared with pack_diff_files() (the signature header set aside), each difference
 * classed as payload or metadata, some set aside by the caller's rule with a reason, and
 * the differences rendered as pack_diff_format() JSON and text. Reproducibility reruns
 * (reproduce.c) and rebuilds of published packages (rebuild.c) both judge through it.
 */
#include "util/util.h"

#include "pack/pack.h"
#include "scheduler/scheduler_int.h"

void scheduler_compare_opts_init(struct scheduler_compare_opts *o)
{
	*o = (struct scheduler_compare_opts){
	    .old_label = "old",
	    .new_label = "new",
	    .json_max = 4 * KILN_MIB,
	    .text_max = KILN_MIB,
	};
}

/* A difference in the payload (files, their attributes and contents, the payload's own
 * bytes and digests) rather than in the header's other metadata. */
static bool item_is_payload(const struct pack_diff_item *it)
{
	return it->kind == PACK_DIFF_FILE_ADDED || it->kind == PACK_DIFF_FILE_REMOVED ||
	       it->kind == PACK_DIFF_FILE_ATTR || it->kind == PACK_DIFF_FILE_CONTENT ||
	       (it->kind == PACK_DIFF_BYTES && it->name && !strcmp(it->name, "payload")) ||
	       (it->kind == PACK_DIFF_TAG && it->name && !strncmp(it->name, "PAYLOAD", 7));
}

static void classify(const struct pack_diff *d, const struct scheduler_compare_opts *o,
                     struct kiln_arena *a, struct scheduler_compare *out)
{
	char why[512];
	size_t i;

	out->ignored = d->n ? kiln_arena_alloc(a, d->n * sizeof(*out->ignored)) : NULL;
	for (i = 0; i < d->n; i++) {
		const struct pack_diff_item *it = &d->items[i];

		why[0] = 0;
		if (o->ignore && o->ignore(o->ignore_arg, it, why, sizeof(why))) {
			if (out->ignored)
				out->ignored[out->nignored++] = kiln_arena_strdup(a, why);
			continue;
		}
		out->ndiffs++;
		if (item_is_payload(it))
			out->payload_match = false;
		else
			out->metadata_match = false;
	}
}

void scheduler_compare_blobs(const struct scheduler *s, const char *old_sha256,
                             const char *new_sha256, const struct scheduler_compare_opts *o,
                             struct kiln_arena *a, struct scheduler_compare *out)
{
	struct kiln_buf po = KILN_BUF_INIT(KILN_LIMIT_PATH), pr = KILN_BUF_INIT(KILN_LIMIT_PATH);
	struct kiln_buf json = KILN_BUF_INIT(o->json_max), text = KILN_BUF_INIT(o->text_max);
	struct kiln_err err = KILN_ERR_INIT;
	char msg[KILN_ERR_MSG_MAX];
	struct pack_diff d = {0};

	*out = (struct scheduler_compare){.payload_match = true, .metadata_match = true};
	scheduler_blob_path(s, old_sha256, &po);
	scheduler_blob_path(s, new_sha256, &pr);
	if (po.err || pr.err || pack_diff_files(po.ptr, pr.ptr, NULL, &d, &err)) {
		out->error = kiln_arena_strdup(a, kiln_err_format(&err, msg, sizeof(msg)));
		out->payload_match = out->metadata_match = false;
		goto out;
	}
	out->compared = true;
	out->nitems = d.n;
	classify(&d, o, a, out);
	if (!d.n)
		goto out;
	if (!pack_diff_format(&d, o->old_label, o->new_label, PACK_DIFF_F_JSON, &json, &err))
		out->json = kiln_arena_strdup(a, json.ptr);
	kiln_err_clear(&err);
	if (!pack_diff_format(&d, o->old_label, o->new_label, 0, &text, &err))
		out->text = kiln_arena_strdup(a, text.ptr);
out:
	pack_diff_release(&d);
	kiln_buf_release(&po);
	kiln_buf_release(&pr);
	kiln_buf_release(&json);
	kiln_buf_release(&text);
}
