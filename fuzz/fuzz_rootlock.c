/*
 * fuzz_rootlock.c - the lock reader (roots/lock.c): what is accepted writes back to bytes
 * that read again to the same identity.
 */
#include "util/util.h"

#include "roots/roots.h"

int LLVMFuzzerTestOneInput(const uint8_t *data, size_t size);

int LLVMFuzzerTestOneInput(const uint8_t *data, size_t size)
{
	struct kiln_buf out = KILN_BUF_INIT(2 * ROOTS_LOCK_MAX_BYTES);
	struct kiln_err err = KILN_ERR_INIT;
	struct roots_lock l, again;

	roots_lock_init(&l);
	roots_lock_init(&again);
	if (roots_lock_from_mem(&l, "fuzz.json", (const char *)data, size, &err)) {
		if (!err.msg[0])
			KILN_BUG("an error without a message");
		goto out;
	}
	roots_lock_write(&l, &out);
	if (out.err || roots_lock_from_mem(&again, "again.json", out.ptr, out.len, &err))
		KILN_BUG("a lock read does not read again after writing: %s", err.msg);
	if (strcmp(l.id, again.id))
		KILN_BUG("a lock's identity changed through a write");
out:
	roots_lock_release(&again);
	roots_lock_release(&l);
	kiln_buf_release(&out);
	return 0;
}
