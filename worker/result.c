/*
 * result.c - a build's result as JSON, for CI (kiln build --json) and for the worker daemon.
 */
#include "util/util.h"

#include <jansson.h>

#include "worker/worker.h"

static json_t *result_str(const char *s)
{
	return s ? json_string(s) : json_null();
}

static json_t *result_outputs(const struct worker_build_result *res)
{
	json_t *a = json_array();
	size_t i;

	for (i = 0; a && i < res->noutputs; i++) {
		const struct worker_build_output *o = &res->outputs[i];

		json_array_append_new(a, json_pack("{s:o,s:s,s:o,s:o,s:s}", "path",
		                                   result_str(o->path), "kind", o->kind, "name",
		                                   result_str(o->name), "arch", result_str(o->arch),
		                                   "sha256", o->sha256));
	}
	return a;
}

static json_t *result_stages(const struct worker_build_result *res)
{
	json_t *a = json_array();
	size_t i;

	for (i = 0; a && i < res->nstages; i++) {
		const struct worker_build_stage *s = &res->stages[i];

		json_array_append_new(a, json_pack("{s:s,s:I,s:i}", "name", s->name, "ms",
		                                   (json_int_t)s->ms, "exit_code", s->exit_code));
	}
	return a;
}

static json_t *result_object(const struct worker_build_result *res, bool ok,
                             const struct kiln_err *err)
{
	json_t *root = json_object(), *warn = json_array();
	char msg[KILN_ERR_MSG_MAX + KILN_ERR_INPUT_MAX + 64];
	size_t i;

	for (i = 0; warn && i < res->nwarnings; i++)
		json_array_append_new(warn, json_string(res->warnings[i]));
	json_object_set_new(root, "ok", json_boolean(ok));
	json_object_set_new(root, "outputs", result_outputs(res));
	json_object_set_new(root, "stages", result_stages(res));
	json_object_set_new(root, "warnings", warn);
	json_object_set_new(root, "log", result_str(res->log_path));
	json_object_set_new(root, "source_date_epoch",
	                    res->source_date_epoch >= 0 ? json_integer(res->source_date_epoch)
	                                                : json_null());
	json_object_set_new(root, "buildtime", json_integer(res->buildtime));
	json_object_set_new(root, "sandbox", json_boolean(res->sandboxed));
	json_object_set_new(root, "network", json_boolean(!res->sandboxed || res->network));
	json_object_set_new(root, "error",
	                    ok || !err ? json_null()
	                               : json_string(kiln_err_format(err, msg, sizeof(msg))));
	return root;
}

static void result_dump(json_t *root, struct kiln_buf *out)
{
	char *text = root ? json_dumps(root, JSON_INDENT(2) | JSON_PRESERVE_ORDER) : NULL;

	if (text)
		kiln_buf_addstr(out, text);
	else
		kiln_buf_addstr(out, "{\"ok\":false,\"error\":\"out of memory\"}");
	free(text);
	json_decref(root);
}

void worker_build_result_json(const struct worker_build_result *res, bool ok,
                              const struct kiln_err *err, struct kiln_buf *out)
{
	result_dump(result_object(res, ok, err), out);
}

void worker_verify_result_json(const struct worker_verify_result *vr, bool ok,
                               const struct kiln_err *err, struct kiln_buf *out)
{
	json_t *root = result_object(&vr->first, ok, err);
	json_t *rep = json_object(), *diffs = json_array(), *kept;
	size_t i;

	for (i = 0; diffs && i < vr->ndiffs; i++)
		json_array_append_new(
		    diffs, json_pack("{s:i,s:s,s:s}", "run", (int)vr->diffs[i].run, "package",
		                     vr->diffs[i].package, "what", vr->diffs[i].what));
	json_object_set_new(rep, "runs", json_integer(vr->runs));
	json_object_set_new(rep, "identical", json_boolean(ok && !vr->ndiffs));
	json_object_set_new(rep, "differences", diffs);
	json_object_set_new(rep, "varied", json_string(vr->varied ? vr->varied : ""));
	kept = json_array();
	for (i = 0; kept && vr->kept && i + 2 <= vr->runs; i++) {
		if (vr->kept[i])
			json_array_append_new(kept, json_string(vr->kept[i]));
	}
	json_object_set_new(rep, "kept", kept);
	json_object_set_new(root, "reproducible", rep);
	result_dump(root, out);
}
