/*
 * payload_int.h - private to pack/: the payload reader's state, shared by payload.c and the
 * files that convert or extract payloads (archive.c, extract.c).
 */
#ifndef KILN_PACK_PAYLOAD_INT_H
#define KILN_PACK_PAYLOAD_INT_H

#include "util/util.h"

#include "pack/pack.h"
#include "pack/pack_int.h"

#define PACK_PDIG_N 3 /* SHA256, SHA512, SHA3-256 */

struct pack_pdig {
	bool on;
	const char *want; /* borrowed from the header: expected hex */
	struct util_digest d;
};

struct pack_payload {
	const struct pack_package *pkg; /* borrowed */
	int fd;                         /* borrowed; -1 for memory */
	const unsigned char *mem;       /* borrowed */
	size_t memlen, mempos;
	struct pack_src csrc;    /* compressed bytes, digested as read */
	uint64_t csize;          /* compressed bytes read */
	struct pack_decomp *dec; /* owned */
	unsigned char ubuf[PACK_IOBUF];
	const unsigned char *ucur; /* the bytes upos/ulen index: ubuf, or a read-ahead slot */
	struct pack_readahead *ra; /* owned; NULL: decompressed on the caller's thread */
	size_t upos, ulen;
	bool ueof;
	uint64_t off;   /* offset in the uncompressed archive */
	uint64_t usize; /* uncompressed bytes decompressed */
	uint64_t umax;  /* the archive size the headers declare (when has_umax): no byte past
	                 * it is decompressed, so a bomb stops there, not at the digest check */
	bool has_umax;
	struct pack_pdig cdig[PACK_PDIG_N], udig[PACK_PDIG_N];
	struct pack_file_list fl; /* owned */
	const struct pack_entry *modes, *flags, *links, *users, *groups, *mtimes, *digests, *rdevs,
	    *inodes, *devices; /* borrowed from the header; NULL when absent */
	uint32_t *sorted;      /* owned: file indexes sorted by name */
	unsigned char *seen;   /* owned: per file */
	uint32_t *nlink;       /* owned: hard-link set size per file */
	unsigned char *last;   /* owned: carries the set's data */
	bool stripped;         /* LONGFILESIZES: 07070X entries */
	uint64_t data_left;    /* of the current entry */
	struct pack_file_info cur;
	size_t nentries;
	bool done;
};

kiln_rc pack_payload_uread(struct pack_payload *pl, void *buf, size_t len, const char *what,
                           struct kiln_err *err);
kiln_rc pack_payload_linksets(struct pack_payload *pl, struct kiln_err *err);
uint32_t pack_payload_mode(const struct pack_payload *pl, uint32_t i);
bool pack_payload_is_ghost(const struct pack_payload *pl, uint32_t i);
kiln_rc pack_payload_copy_raw(struct pack_payload *pl, int fd, struct kiln_err *err);
uint64_t pack_payload_data_size(const struct pack_payload *pl, uint32_t i);

#endif
