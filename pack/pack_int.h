/*
 * pack_int.h - private to pack/: helpers its files share.
 */
#ifndef KILN_PACK_INT_H
#define KILN_PACK_INT_H

#include "util/util.h"

#include "pack/pack.h"

/* Bytes per element of a fixed-size type (1 for BIN), 0 for string types. */
size_t pack_type_size(enum spec_tag_type t);
/* Element i of a numeric value. */
uint64_t pack_value_num(const struct spec_qf_value *v, uint32_t i);

/* Element i of a header entry, by class. */
static inline uint64_t pack_entry_num(const struct pack_entry *e, uint32_t i)
{
	struct spec_qf_value v = {e->type, e->count, e->data};

	return pack_value_num(&v, i);
}

static inline const char *pack_entry_str(const struct pack_entry *e, uint32_t i)
{
	return ((const char *const *)e->data)[i];
}

/* Check a header's 16-byte intro (magic, counts, limits); *need = the blob's size. */
kiln_rc pack_header_intro(const void *data, unsigned flags, uint64_t base_off, size_t *need,
                          struct kiln_err *err);

/* The files of a header: full paths and sizes, checked for consistency (equal array
 * lengths, dirindexes in range). */
struct pack_file_list {
	uint32_t n;
	const char **names;      /* borrowed from arena */
	uint64_t *sizes;         /* borrowed from arena */
	struct kiln_arena arena; /* owned */
};
kiln_rc pack_file_list_init(struct pack_file_list *fl, const struct pack_header *h,
                            struct kiln_err *err);
void pack_file_list_release(struct pack_file_list *fl);

/* Main-header number of a signature tag as rpm merges it for queries, 0 if not merged. */
uint32_t pack_sigtag_merged(uint32_t sigtag);

/* Read exactly len bytes (EOF early: KILN_EFORMAT "what: truncated at offset"). */
kiln_rc pack_read_exact(int fd, void *buf, size_t len, const char *what, uint64_t off,
                        struct kiln_err *err);

#endif
