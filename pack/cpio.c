/*
 * cpio.c - writing cpio newc pieces (rpm-reference.md section 3.1): headers with rpm's
 * field values (uid/gid 0, dev 0:0) and the 4-byte padding counted from the archive start.
 */
#include "util/util.h"

#include "pack/pack.h"
#include "pack/pack_int.h"

void pack_cpio_newc_header(struct kiln_buf *out, uint32_t ino, uint32_t mode, uint32_t nlink,
                           uint32_t mtime, uint32_t size, uint32_t rdev, uint32_t namesize)
{
	kiln_buf_addf(out,
	              "070701%08" PRIx32 "%08" PRIx32 "%08x%08x%08" PRIx32 "%08" PRIx32 "%08" PRIx32
	              "%08x%08x%08" PRIx32 "%08" PRIx32 "%08" PRIx32 "%08x",
	              ino, mode, 0u, 0u, nlink, mtime, size, 0u, 0u, (rdev >> 8) & 0xff,
	              rdev & 0xff, namesize, 0u);
}

void pack_cpio_pad(struct kiln_buf *out, uint64_t *off)
{
	static const char zeros[4];
	size_t pad = (size_t)((4 - *off % 4) % 4);

	kiln_buf_add(out, zeros, pad);
	*off += pad;
}
