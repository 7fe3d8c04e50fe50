/*
 * pack_int.h - private to pack/: helpers its files share.
 */
#ifndef KILN_PACK_INT_H
#define KILN_PACK_INT_H

#include "util/util.h"

#include "pack/pack.h"

/* Bytes per element of a fixed-size type (1 for BIN), 0 for string types. */
size_t pack_type_size(enum rpmtag_type t);
/* Element i of a numeric value. */
uint64_t pack_value_num(const struct rpmtag_qf_value *v, uint32_t i);

/* Element i of a header entry, by class. */
static inline uint64_t pack_entry_num(const struct pack_entry *e, uint32_t i)
{
	struct rpmtag_qf_value v = {e->type, e->count, e->data};

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

/* A newc cpio header ("070701" and 13 hex fields, 110 bytes) into out. */
void pack_cpio_newc_header(struct kiln_buf *out, uint32_t ino, uint32_t mode, uint32_t nlink,
                           uint32_t mtime, uint32_t size, uint32_t rdev, uint32_t namesize);
/* Zero bytes to the next multiple of 4 of *off (which advances). */
void pack_cpio_pad(struct kiln_buf *out, uint64_t *off);

/* Main-header number of a signature tag as rpm merges it for queries, 0 if not merged. */
uint32_t pack_sigtag_merged(uint32_t sigtag);

/* Read exactly len bytes (EOF early: KILN_EFORMAT "what: truncated at offset"). */
kiln_rc pack_read_exact(int fd, void *buf, size_t len, const char *what, uint64_t off,
                        struct kiln_err *err);

/* ---------------------------------------------------------------------------------------- */
/* Streams: a decompressor reads compressed bytes from a source and yields plain bytes; a
 * compressor takes plain bytes and writes compressed bytes to a sink. */

struct pack_src {
	/* Read up to len bytes; *got = 0 at the end. */
	kiln_rc (*read)(struct pack_src *s, void *buf, size_t len, size_t *got,
	                struct kiln_err *err);
};

struct pack_sink {
	kiln_rc (*write)(struct pack_sink *s, const void *data, size_t len, struct kiln_err *err);
};

#define PACK_IOBUF (256 * 1024)

/* A decompressor; each codec file embeds this first in its own struct. */
struct pack_decomp {
	kiln_rc (*read)(struct pack_decomp *d, void *buf, size_t len, size_t *got,
	                struct kiln_err *err);
	void (*free)(struct pack_decomp *d);
	struct pack_src *src; /* borrowed */
	unsigned char in[PACK_IOBUF];
	size_t in_pos, in_len;
	bool in_eof;
};

/* Refill d->in when it is empty; d->in_eof at the end of the source. */
kiln_rc pack_decomp_fill(struct pack_decomp *d, struct kiln_err *err);

/* Open a decompressor for the payload compressor named by PAYLOADCOMPRESSOR (NULL when
 * absent: gzip is sniffed by its magic, anything else passes through, as rpm does). */
kiln_rc pack_decomp_new(const char *name, struct pack_src *src, struct pack_decomp **out,
                        struct kiln_err *err);
kiln_rc pack_decomp_read(struct pack_decomp *d, void *buf, size_t len, size_t *got,
                         struct kiln_err *err);
void pack_decomp_free(struct pack_decomp *d);

/* A compressor; each codec file embeds this first. write with end=true flushes and ends
 * the stream (data may be empty then). */
struct pack_comp {
	kiln_rc (*write)(struct pack_comp *c, const void *data, size_t len, bool end,
	                 struct kiln_err *err);
	void (*free)(struct pack_comp *c);
	struct pack_sink *sink; /* borrowed */
	unsigned char out[PACK_IOBUF];
};

kiln_rc pack_comp_new(const struct pack_compress *c, struct pack_sink *sink, struct pack_comp **out,
                      struct kiln_err *err);
kiln_rc pack_comp_write(struct pack_comp *c, const void *data, size_t len, struct kiln_err *err);
kiln_rc pack_comp_finish(struct pack_comp *c, struct kiln_err *err);
void pack_comp_free(struct pack_comp *c);

/* Online CPUs (at least 1): the thread count of "T0" mode strings. */
int pack_compress_cpus(void);

/* zstd payloads of at least this many bytes (the files' total size) are compressed in
 * libzstd's multi-threaded mode even when the mode string asks for none ("w19.zstdio"), with
 * pack_compress_cpus() workers. Those frames are the same bytes for any number of workers
 * (the job size follows from the level alone), so the package does not depend on the
 * machine; below this size a second thread gains little and single-threaded mode keeps
 * rpmbuild's exact bytes. */
#define PACK_ZSTD_MT_MIN (16 * KILN_MIB)

/* Per-library constructors (pack/zstd.c, pack/xz.c, pack/gzip.c). threads: 0 single. */
kiln_rc pack_zstd_comp_new(int level, int threads, struct pack_comp **out, struct kiln_err *err);
kiln_rc pack_zstd_decomp_new(struct pack_decomp **out, struct kiln_err *err);
kiln_rc pack_xz_comp_new(int level, int threads, struct pack_comp **out, struct kiln_err *err);
kiln_rc pack_xz_decomp_new(struct pack_decomp **out, struct kiln_err *err);
kiln_rc pack_gzip_comp_new(int level, struct pack_comp **out, struct kiln_err *err);
kiln_rc pack_gzip_decomp_new(struct pack_decomp **out, struct kiln_err *err);

#endif
