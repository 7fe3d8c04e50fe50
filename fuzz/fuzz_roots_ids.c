/*
 * fuzz_roots_ids.c - the installer's reader of an image's /etc/passwd and /etc/group
 * (roots_ids_parse): any bytes parse or fail with KILN_ELIMIT, and every name read back
 * is found again with the id of its first entry.
 */
#include "util/util.h"

#include "roots/install_int.h"

int LLVMFuzzerTestOneInput(const uint8_t *data, size_t size);

int LLVMFuzzerTestOneInput(const uint8_t *data, size_t size)
{
	struct kiln_err err = KILN_ERR_INIT;
	struct roots_ids ids;
	size_t i, j;

	if (roots_ids_parse(&ids, (const char *)data, size, &err)) {
		if (err.code != KILN_ELIMIT && err.code != KILN_ENOMEM)
			KILN_BUG("unexpected error %d: %s", (int)err.code, err.msg);
		roots_ids_release(&ids);
		return 0;
	}
	for (i = 0; i < ids.n; i++) {
		uint32_t id = 0;

		if (!roots_ids_find(&ids, ids.names[i], &id))
			KILN_BUG("name %zu not found", i);
		for (j = 0; j < i && strcmp(ids.names[j], ids.names[i]); j++)
			;
		if (id != ids.ids[j])
			KILN_BUG("name %zu: not its first entry's id", i);
	}
	roots_ids_release(&ids);
	return 0;
}
