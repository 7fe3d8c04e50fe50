/*
 * fuzz_repomd.c - repomd.xml (roots/repomd.c).
 */
#include "util/util.h"

#include "roots/roots.h"

int LLVMFuzzerTestOneInput(const uint8_t *data, size_t size);

int LLVMFuzzerTestOneInput(const uint8_t *data, size_t size)
{
	struct roots_repomd md;
	struct kiln_err err = KILN_ERR_INIT;
	size_t i;

	roots_repomd_init(&md);
	if (roots_repomd_parse(&md, "repomd.xml", (const char *)data, size, &err)) {
		if (!err.msg[0])
			KILN_BUG("an error without a message");
	} else {
		for (i = 0; i < md.ndata; i++)
			if (!md.data[i].href || !md.data[i].sum || md.data[i].href[0] == '/' ||
			    strstr(md.data[i].href, ".."))
				KILN_BUG("an accepted entry with a bad location or no checksum");
	}
	roots_repomd_release(&md);
	return 0;
}
