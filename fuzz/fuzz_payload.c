/*
 * fuzz_payload.c - the payload reader: decompression (gzip, xz, zstd, none), cpio newc and
 * stripped entries, name checks, hard links, digests. Input: a whole package.
 */
#include "util/util.h"

#include "pack/pack.h"

int LLVMFuzzerTestOneInput(const uint8_t *data, size_t size);

static void walk(struct pack_payload *pl)
{
	struct kiln_err err = KILN_ERR_INIT;
	struct pack_file_info fi;
	char buf[4096];
	size_t got = 0, n = 0;

	while (!pack_payload_next(pl, &fi, &err)) {
		if (fi.path[0] == '/' ? strstr(fi.path, "/../") != NULL : fi.path[0] == '.')
			KILN_BUG("escaping name accepted: %s", fi.path);
		/* Read only some entries fully, so skipping is exercised too. */
		while (n++ % 2 == 0 && !pack_payload_read(pl, buf, sizeof(buf), &got, &err) && got)
			;
	}
}

int LLVMFuzzerTestOneInput(const uint8_t *data, size_t size)
{
	struct kiln_err err = KILN_ERR_INIT;
	struct pack_payload *pl = NULL;
	struct pack_package p;

	if (!pack_package_from_mem(&p, data, size, &err) &&
	    !pack_payload_from_mem(&p, data + p.payload_off, size - p.payload_off, &pl, &err))
		walk(pl);
	pack_payload_free(pl);
	pack_package_release(&p);
	return 0;
}
