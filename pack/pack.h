/*
 * pack.h - RPM packages: the header codec, v4 and v6 readers and writers, cpio payloads,
 * compressors, digest verification, extraction and queries.
 *
 * What pack/ does: turn a header (a set of tags) into rpm's binary header and back, read a
 * package file (lead, signature header, main header, payload) refusing malformed input with
 * the structure and file offset in the message, verify every digest rpm verifies, stream the
 * payload out (cpio, tar, a directory), and write packages deterministically from a header
 * the caller fills plus a list of files. What it does not do: parse specs, decide file
 * metadata (%attr, %config, mtime clamping: the build pipeline does), sign (sign/ does, with
 * pack_sigheader_*), or talk to an rpm database.
 *
 * Byte layouts follow shared/rpm-reference.md sections 2-4. Unless noted, functions are
 * thread-safe on distinct objects; every _release accepts a zeroed object.
 */
#ifndef KILN_PACK_H
#define KILN_PACK_H

#include "util/util.h"
#include "rpmtag/rpmtag.h"

/* ======================================================================================== */
/* Headers */

/* Signature-header tag numbers (their own numbering, rpm-reference.md section 2.3). */
enum pack_sigtag {
	PACK_SIGTAG_HEADERSIGNATURES = 62,
	PACK_SIGTAG_DSA = 267,
	PACK_SIGTAG_RSA = 268,
	PACK_SIGTAG_SHA1 = 269,
	PACK_SIGTAG_LONGSIZE = 270,
	PACK_SIGTAG_LONGARCHIVESIZE = 271,
	PACK_SIGTAG_SHA256 = 273,
	PACK_SIGTAG_FILESIGNATURES = 274,
	PACK_SIGTAG_FILESIGNATURELENGTH = 275,
	PACK_SIGTAG_VERITYSIGNATURES = 276,
	PACK_SIGTAG_VERITYSIGNATUREALGO = 277,
	PACK_SIGTAG_OPENPGP = 278,
	PACK_SIGTAG_SHA3_256 = 279,
	PACK_SIGTAG_RESERVED = 999, /* v6 space reservation */
	PACK_SIGTAG_SIZE = 1000,
	PACK_SIGTAG_PGP = 1002,
	PACK_SIGTAG_MD5 = 1004,
	PACK_SIGTAG_GPG = 1005,
	PACK_SIGTAG_PAYLOADSIZE = 1007,
	PACK_SIGTAG_RESERVEDSPACE = 1008, /* v4 space reservation */
};

/* One tag of an in-memory header. Data layout is rpmtag_qf_value's (host byte order numbers,
 * arrays of NUL-terminated strings, raw bytes for BIN). */
struct pack_entry {
	uint32_t tag;
	enum rpmtag_type type;
	uint32_t count; /* elements; bytes for BIN */
	void *data;     /* borrowed from the header's arena */
};

/* A header: entries kept sorted by tag, at most one per tag. Values live in the header's
 * arena, so entries are never freed one by one (replacing a tag leaves the old bytes in the
 * arena until pack_header_release). */
struct pack_header {
	struct kiln_arena arena;    /* owns every entry's data */
	struct pack_entry *entries; /* owned (heap), sorted by tag */
	size_t n, cap;
	uint32_t region; /* region tag read (62/63), 0 for a legacy header without one */
};

enum pack_header_flags {
	/* Check entry types against rpm's tag table like rpm does for main headers. */
	PACK_HDR_F_TYPECHECK = 1 << 0,
	/* Signature-header limits (32 entries, 64 MiB) instead of main-header limits. */
	PACK_HDR_F_SIG = 1 << 1,
};

void pack_header_init(struct pack_header *h);
void pack_header_release(struct pack_header *h);

/* Parse one header blob (magic, counts, index, data) from data[0..len). region is the
 * region tag expected first (63 main, 62 signature); a header without any region is
 * accepted as legacy (h->region = 0). *used gets the blob's size. Offsets in errors are
 * relative to base_off + the blob start (pass the blob's file offset). Errors:
 * KILN_EFORMAT (which check failed, entry index, tag, offset), KILN_ELIMIT, KILN_ENOMEM.
 * h must be freshly initialised. */
KILN_MUST_CHECK kiln_rc pack_header_from_mem(struct pack_header *h, const void *data, size_t len,
                                             uint32_t region, unsigned flags, uint64_t base_off,
                                             size_t *used, struct kiln_err *err);
/* Encode h as a header blob with an immutable region named region (62 or 63) around all
 * entries, appending to out: entries sorted, data in index order with rpm's alignment, the
 * region trailer last. Re-encoding a header read from rpmbuild's output gives its bytes.
 * A region-tag entry stored in h (none normally) is ignored. KILN_ELIMIT over rpm's limits. */
KILN_MUST_CHECK kiln_rc pack_header_write(const struct pack_header *h, uint32_t region,
                                          struct kiln_buf *out, struct kiln_err *err);
/* The size pack_header_write would produce (without writing). */
size_t pack_header_size(const struct pack_header *h, uint32_t region);

/* Look a tag up; NULL when absent. The pointer is valid until h changes. */
const struct pack_entry *pack_header_get(const struct pack_header *h, uint32_t tag);
/* Convenience readers: the first string of a string-class tag / the first number of a
 * numeric tag; NULL / false when absent or of another class. */
const char *pack_header_get_string(const struct pack_header *h, uint32_t tag);
bool pack_header_get_number(const struct pack_header *h, uint32_t tag, uint64_t *out);
/* Remove a tag (no-op when absent). */
void pack_header_del(struct pack_header *h, uint32_t tag);

/* Set a tag, replacing any previous value; data is copied into the header's arena.
 * KILN_EINVAL for count 0 or a STRING with count != 1; KILN_ENOMEM. */
KILN_MUST_CHECK kiln_rc pack_header_put(struct pack_header *h, uint32_t tag, enum rpmtag_type type,
                                        const void *data, uint32_t count, struct kiln_err *err);
KILN_MUST_CHECK kiln_rc pack_header_put_string(struct pack_header *h, uint32_t tag, const char *s,
                                               struct kiln_err *err);
/* I18NSTRING with one ("C") element, as rpmbuild stores SUMMARY, DESCRIPTION, GROUP. */
KILN_MUST_CHECK kiln_rc pack_header_put_i18n(struct pack_header *h, uint32_t tag, const char *s,
                                             struct kiln_err *err);
KILN_MUST_CHECK kiln_rc pack_header_put_strings(struct pack_header *h, uint32_t tag,
                                                const char *const *s, uint32_t count,
                                                struct kiln_err *err);
KILN_MUST_CHECK kiln_rc pack_header_put_u32(struct pack_header *h, uint32_t tag, uint32_t v,
                                            struct kiln_err *err);
KILN_MUST_CHECK kiln_rc pack_header_put_u64(struct pack_header *h, uint32_t tag, uint64_t v,
                                            struct kiln_err *err);
KILN_MUST_CHECK kiln_rc pack_header_put_bin(struct pack_header *h, uint32_t tag, const void *p,
                                            size_t len, struct kiln_err *err);
/* Deep-copy every entry of src into dst (replacing tags dst already has). */
KILN_MUST_CHECK kiln_rc pack_header_copy(struct pack_header *dst, const struct pack_header *src,
                                         struct kiln_err *err);

/* Dependencies: the NAME/VERSION/FLAGS triples of one kind, kept sorted by name (then
 * flags, then version) the way rpmbuild writes them; an exact duplicate is not added
 * twice. */
enum pack_dep_kind {
	PACK_DEP_REQUIRE,
	PACK_DEP_PROVIDE,
	PACK_DEP_CONFLICT,
	PACK_DEP_OBSOLETE,
	PACK_DEP_RECOMMEND,
	PACK_DEP_SUGGEST,
	PACK_DEP_SUPPLEMENT,
	PACK_DEP_ENHANCE,
	PACK_DEP_ORDER,
};
KILN_MUST_CHECK kiln_rc pack_deps_add(struct pack_header *h, enum pack_dep_kind kind,
                                      const char *name, const char *version, uint32_t flags,
                                      struct kiln_err *err);

/* ======================================================================================== */
/* Reading packages */

#define PACK_LEAD_SIZE 96

struct pack_lead {
	uint8_t major, minor;
	uint16_t type; /* 0 binary, 1 source */
	uint16_t archnum, osnum, sigtype;
	char name[66]; /* NUL-terminated */
};

/* A package's metadata as read from a file: where everything is and both headers. */
struct pack_package {
	struct pack_lead lead;
	struct pack_header sig;  /* signature header (its own tag numbering) */
	struct pack_header hdr;  /* main header */
	struct kiln_buf hdr_raw; /* owned: the main header bytes exactly as on disk (what the
	                          * header digests and header-only signatures cover) */
	uint64_t sig_off;        /* file offset of the signature header (96) */
	size_t sig_size;         /* its blob size, without the padding */
	size_t sig_pad;          /* zero bytes after it (to a multiple of 8) */
	uint64_t hdr_off;        /* file offset of the main header */
	uint64_t payload_off;    /* file offset of the compressed payload */
	uint64_t file_size;      /* size of the whole file when known (0 for a stream) */
	int format;              /* 4 or 6 (RPMFORMAT), 3 for a header without region */
	bool source;             /* a source package (SOURCEPACKAGE / no SOURCERPM) */
};

/* Read lead, signature header and main header from fd (positioned at the start of the
 * package); on success fd is positioned at payload_off. name is used in messages. Errors
 * name the structure and its offset: "lead: bad magic at offset 0", "signature header:
 * entry 3 (tag 1004): data out of bounds at offset 4412", ... (KILN_EFORMAT, KILN_ELIMIT,
 * KILN_EIO). p must be zeroed or released. */
KILN_MUST_CHECK kiln_rc pack_package_read_fd(struct pack_package *p, int fd, const char *name,
                                             struct kiln_err *err);
/* Open path and read as above; *fd (optional, may be NULL) gets the open O_CLOEXEC fd
 * positioned at the payload (caller closes), else it is closed. */
KILN_MUST_CHECK kiln_rc pack_package_open(struct pack_package *p, const char *path, int *fd,
                                          struct kiln_err *err);
/* The same parser over memory (the fuzz entry point); p->payload_off is where the
 * payload starts in data. */
KILN_MUST_CHECK kiln_rc pack_package_from_mem(struct pack_package *p, const void *data, size_t len,
                                              struct kiln_err *err);
void pack_package_release(struct pack_package *p);

/* The header rpm shows to queries: the main header plus the signature tags rpm merges
 * into it (SIZE -> SIGSIZE 257, MD5 -> SIGMD5 261, PAYLOADSIZE -> ARCHIVESIZE 1046, ...,
 * section 2.3), exposed as a rpmtag_qf source. The view borrows p; p must outlive it. */
struct pack_qf_view {
	const struct pack_package *pkg;   /* borrowed */
	const struct pack_entry **merged; /* owned (heap): sorted by main-header number */
	uint32_t *tags;                   /* owned (heap): merged[i]'s main-header number */
	size_t n;
	/* %{HEADERIMMUTABLE}: the immutable region as a blob of its own (count, data length,
	 * index, data), as rpm's headerGet gives it; NULL when the header has none. Borrowed
	 * from pkg->hdr_raw when the region is the whole header, else owned (region_owned). */
	const unsigned char *region;
	size_t region_len;
	unsigned char *region_owned;
};
KILN_MUST_CHECK kiln_rc pack_qf_view_init(struct pack_qf_view *v, const struct pack_package *p,
                                          struct kiln_err *err);
void pack_qf_view_release(struct pack_qf_view *v);
/* A source over the view (flags: enum rpmtag_qf_source_flags). Valid while v lives. */
struct rpmtag_qf_source pack_qf_view_source(struct pack_qf_view *v, unsigned flags);

/* `rpm -qp` output for one package: qf (NULL: rpm's default "%{NVR}%{ARCHSUFFIX}\n" unless a
 * file listing is asked for), then with list the file names, with dump rpm's --dump lines
 * ("(contains no files)" when there are none). Appends to out. */
struct pack_query_opts {
	const char *qf; /* borrowed; a query format, e.g. rpmtag_qf_alias("info") */
	bool list;      /* -l */
	bool dump;      /* --dump */
	bool verbose;   /* -v: the VERBOSE tag is present for %|VERBOSE?...|, and -l lists
	                 * files like ls -l (rpm -qlv) */
	unsigned only;  /* list only files having one of these SPEC_FILE_* flags (-c -d -L) */
	unsigned skip;  /* and none of these (--noghost: RPMTAG_FILE_GHOST) */
	int64_t now;    /* for -lv dates: older than 6 months shows the year (0: the clock) */
};
KILN_MUST_CHECK kiln_rc pack_query(const struct pack_package *p, const struct pack_query_opts *o,
                                   struct kiln_buf *out, struct kiln_err *err);

/* ======================================================================================== */
/* Compression */

enum pack_comp_kind {
	PACK_COMP_NONE,
	PACK_COMP_GZIP,
	PACK_COMP_XZ,
	PACK_COMP_ZSTD,
};

/* A payload compression choice, parsed from an rpmio mode string ("w19.zstdio",
 * "w7T16.xzdio", "w9.gzdio", "w.ufdio"). */
struct pack_compress {
	enum pack_comp_kind kind;
	int level;        /* -1: the library default */
	int threads;      /* 0: single-threaded; "T" alone or "T0": all CPUs */
	char flags[32];   /* PAYLOADFLAGS as rpm records it: "19", "7T16", "" */
	const char *name; /* static: PAYLOADCOMPRESSOR ("zstd"), NULL for none */
};
/* Parse mode; KILN_EINVAL for anything rpm would not accept (bzip2 and lzma are refused
 * with KILN_EUNSUPP: kiln does not write them). */
KILN_MUST_CHECK kiln_rc pack_compress_parse(const char *mode, struct pack_compress *out,
                                            struct kiln_err *err);

/* A compressed stream to a file descriptor, for data that is not a payload (worker/'s
 * source tarballs). The output depends on the bytes and the compression choice only (gzip
 * gets no name and no time). OUT: *out, free with pack_compfile_free(), which does not
 * close fd. Write errors carry errno (KILN_EIO). Not thread-safe per stream. */
struct pack_compfile;
KILN_MUST_CHECK kiln_rc pack_compfile_open(const struct pack_compress *c, int fd,
                                           struct pack_compfile **out, struct kiln_err *err);
KILN_MUST_CHECK kiln_rc pack_compfile_write(struct pack_compfile *f, const void *data, size_t len,
                                            struct kiln_err *err);
/* End the stream (flushes everything to fd). */
KILN_MUST_CHECK kiln_rc pack_compfile_finish(struct pack_compfile *f, struct kiln_err *err);
void pack_compfile_free(struct pack_compfile *f);
/* Decompress data (gzip, xz or zstd, told by its magic; anything else is copied as it is)
 * and append the result to out, which bounds it (KILN_ELIMIT beyond out->max): for
 * compressed files that are not payloads (repository metadata, roots/). KILN_EFORMAT for a
 * corrupt or truncated stream. */
KILN_MUST_CHECK kiln_rc pack_decompress_mem(const void *data, size_t len, struct kiln_buf *out,
                                            struct kiln_err *err);

/* ======================================================================================== */
/* Payloads */

/* One member of a payload, as the header describes it (the reader maps each cpio entry to
 * its header file; stripped 07070X entries carry only the file index). */
struct pack_file_info {
	uint32_t index;     /* index into the header's file arrays */
	const char *path;   /* borrowed: "/usr/bin/x" (or "x" in a source package) */
	uint32_t mode;      /* FILEMODES (with type bits) */
	const char *user;   /* borrowed: FILEUSERNAME */
	const char *group;  /* borrowed: FILEGROUPNAME */
	uint32_t mtime;     /* FILEMTIMES */
	uint64_t size;      /* FILESIZES / LONGFILESIZES */
	uint32_t flags;     /* FILEFLAGS */
	const char *link;   /* borrowed: FILELINKTOS ("" when not a symlink) */
	const char *digest; /* borrowed: FILEDIGESTS hex ("" for none) */
	uint32_t rdev;      /* FILERDEVS */
	uint32_t inode;     /* FILEINODES */
	uint32_t nlink;     /* members of its hard-link set (1 when none) */
	bool link_data;     /* the member of its set whose entry carries the data (last) */
	uint64_t data_size; /* bytes that follow this entry in the payload */
};

/* Streaming payload reader: decompresses the payload of an open package and walks its
 * entries in payload order, checking each against the header. */
struct pack_payload;

/* Start reading the payload of p from fd (positioned at p->payload_off). Payload digests
 * (compressed and uncompressed) are computed while reading and checked at the end.
 * *out: caller frees with pack_payload_free(). */
KILN_MUST_CHECK kiln_rc pack_payload_open(const struct pack_package *p, int fd,
                                          struct pack_payload **out, struct kiln_err *err);
/* The same over a compressed payload in memory (the fuzz entry point). */
KILN_MUST_CHECK kiln_rc pack_payload_from_mem(const struct pack_package *p, const void *data,
                                              size_t len, struct pack_payload **out,
                                              struct kiln_err *err);
/* Next entry: KILN_OK with *fi filled (valid until the next call), KILN_ENOTFOUND after the
 * trailer, when the digests have been checked too (KILN_EDIGEST when they do not match).
 * KILN_EFORMAT for a bad archive ("payload: entry 3: bad cpio magic at offset 1204"). */
KILN_MUST_CHECK kiln_rc pack_payload_next(struct pack_payload *pl, struct pack_file_info *fi,
                                          struct kiln_err *err);
/* Read up to len bytes of the current entry's data; *got = 0 at its end. */
KILN_MUST_CHECK kiln_rc pack_payload_read(struct pack_payload *pl, void *buf, size_t len,
                                          size_t *got, struct kiln_err *err);
/* Copy the uncompressed payload as a plain newc cpio archive to fd (rpm2cpio); stripped
 * payloads are converted to newc with names and metadata from the header. */
KILN_MUST_CHECK kiln_rc pack_payload_to_cpio(struct pack_payload *pl, int fd, struct kiln_err *err);
void pack_payload_free(struct pack_payload *pl);
/* Decompress on a thread of its own, a few blocks (of 256 KiB) ahead of the reader, so the
 * reader's work on one block overlaps with inflating the next. Call right after opening,
 * before the first read; the payload then must not be shared with another thread. Results
 * and errors are the same as without it (an error is reported after the blocks before it).
 * Without a thread to be had it silently reads on the caller's thread. */
KILN_MUST_CHECK kiln_rc pack_payload_readahead(struct pack_payload *pl, struct kiln_err *err);

/* Write the payload as a gzip-compressed ustar/pax tar archive (rpm2archive) to fd. */
KILN_MUST_CHECK kiln_rc pack_payload_to_tar(struct pack_payload *pl, int fd, bool gzip,
                                            struct kiln_err *err);

/* Extract every payload entry below the directory rootfd: names are checked with
 * util_path_check_relative and opened with util_path_open_beneath (no "..", no absolute
 * names, never through a symlink). Modes and mtimes are applied; owners only when
 * PACK_EXTRACT_F_OWNERS is set (and then by name lookup, falling back to 0). Device nodes
 * are created only as root. */
enum pack_extract_flags {
	PACK_EXTRACT_F_OWNERS = 1 << 0,
};
KILN_MUST_CHECK kiln_rc pack_payload_extract(struct pack_payload *pl, int rootfd, unsigned flags,
                                             struct kiln_err *err);

/* ======================================================================================== */
/* Verification (rpm -K --nosignature) */

enum pack_check_result {
	PACK_CHECK_ABSENT = 0,
	PACK_CHECK_OK,
	PACK_CHECK_BAD,
};

struct pack_check_item {
	const char *what;           /* static: "Header SHA256 digest", "MD5 digest", ... */
	enum pack_check_result res; /* */
	char expected[2 * UTIL_DIGEST_MAX + 1];
	char actual[2 * UTIL_DIGEST_MAX + 1];
};

#define PACK_CHECK_MAX 12

struct pack_check {
	struct pack_check_item items[PACK_CHECK_MAX]; /* in rpm -Kv order */
	size_t n;
	bool ok; /* no BAD item, a header digest and a payload digest were verified */
};

/* Verify every digest of the package at path: header SHA1/SHA256/SHA3-256, payload
 * SHA256 (and ALT, SHA512, SHA3-256 in v6), MD5 over header+payload, sizes. A BAD digest is
 * not an error: it is reported in out (rc KILN_OK). Structural problems are errors. */
KILN_MUST_CHECK kiln_rc pack_check_file(const char *path, struct pack_check *out,
                                        struct kiln_err *err);
/* Only the header digests of a package already read (what rpm -qp checks before it shows
 * anything): out->ok is false when one of them is BAD (a package without any passes). */
KILN_MUST_CHECK kiln_rc pack_check_header(const struct pack_package *p, struct pack_check *out,
                                          struct kiln_err *err);

/* ======================================================================================== */
/* Signature headers, for sign/ */

/* How sign/ adds a signature: pack_package_open() gives the signature header in p.sig and
 * the exact bytes a header-only signature covers in p.hdr_raw (from the 8e ad e8 magic to
 * the end of the main header's data); sign those, add RSA (268) / DSA (267) blobs or an
 * OPENPGP (278) string array to p.sig with pack_header_put*, then call
 * pack_sigheader_replace(path, &p.sig). Removing the tags again and replacing restores the
 * original bytes exactly. */

/* Encode sig (signature numbering) so that it takes exactly size bytes including the
 * padding to 8 that follows it, by resizing its RESERVEDSPACE (1008) or RESERVED (999)
 * entry; that is how rpm adds and removes signatures without moving the main header.
 * KILN_ELIMIT when the other tags do not fit in size; KILN_EINVAL without a reservation
 * tag. The tag's data is zeros. */
KILN_MUST_CHECK kiln_rc pack_sigheader_fit(struct pack_header *sig, size_t size,
                                           struct kiln_buf *out, struct kiln_err *err);
/* Replace the signature header of the package at path by sig (fitted as above to the
 * size of the old one, so the main header and payload keep their offsets), atomically
 * (a temporary file renamed over path). Refuses a file that does not parse. */
KILN_MUST_CHECK kiln_rc pack_sigheader_replace(const char *path, struct pack_header *sig,
                                               struct kiln_err *err);

/* ======================================================================================== */
/* Writing packages */

/* One file of a package. The build pipeline decides every field; the writer only reads
 * contents (regular files) and checks consistency. Strings are borrowed for the call. */
/* One dependency generated for a file (FILEDEPENDSX/N and DEPENDSDICT, what %{FILEREQUIRE}
 * and %{FILEPROVIDE} answer): kind is PACK_DEP_PROVIDE or PACK_DEP_REQUIRE, and the same
 * name, version and sense must be in the header's set of that kind (a missing one is left
 * out, as rpmbuild leaves it). */
struct pack_filedep {
	enum pack_dep_kind kind;
	const char *name, *version;
	uint32_t flags;
};

struct pack_file {
	const char *path;   /* in-package path: "/usr/bin/x" (binary) or "x.spec" (source) */
	const char *src;    /* where to read contents of a regular file, NULL for ghosts */
	uint32_t mode;      /* st_mode with type bits (S_IFREG, S_IFDIR, S_IFLNK, S_IFCHR, ...) */
	const char *user;   /* NULL: "root" */
	const char *group;  /* NULL: "root" */
	uint32_t mtime;     /* already clamped by the caller */
	uint32_t flags;     /* SPEC_FILE_* (%config, %doc, %ghost, %license, %artifact, ...) */
	uint32_t verify;    /* SPEC_VERIFY_* bits; use RPMTAG_VERIFY_ALL by default */
	const char *lang;   /* %lang, "" or NULL for none */
	const char *caps;   /* %caps text, NULL for none */
	const char *link;   /* symlink target (S_IFLNK) */
	uint32_t rdev;      /* device nodes: (major << 8) | minor */
	uint64_t size;      /* non-regular files and ghosts: the size to record (dirs: 0) */
	uint32_t hardlink;  /* non-zero: files with the same value are one hard-link set */
	uint32_t color;     /* FILECOLORS: 1 ELF32, 2 ELF64, 0 other */
	const char *fclass; /* v4 FILECLASS text ("ASCII text", "directory", ""); NULL = "" */
	const char *mime;   /* v6 MIME type ("text/plain"); NULL = "" */
	bool absent;        /* a %ghost missing from the build root: rpmbuild records device 0
	                     * (FILEDEVICES) for it, 1 for every other file */
	const struct pack_filedep *deps; /* binary packages: the file's generated dependencies */
	size_t ndeps;                    /* in rpm's order (borrowed, like the strings) */
};

struct pack_write_opts {
	int format;                    /* 4 or 6 */
	struct pack_compress comp;     /* payload compression */
	enum util_digest_algo fdigest; /* file digests (SHA256 by default; v6 requires >= it) */
	bool source;                   /* a source package (lead type 1, bare payload names) */
	uint16_t archnum, osnum;       /* v4 lead; ignored for v6 (zero) */
	bool rpmlib_deps;              /* add the payload/file rpmlib() requires (section 2.7) */
	size_t reserved_space;         /* signature-header reservation, 0 = 4128 like rpm */
	/* Do not fsync the package (util_atomic_file.nosync): for outputs the caller can build
	 * again, as rpmbuild writes them. Still renamed into place whole. */
	bool nosync;
	/* Optional work the caller finishes while the payload is compressed: pack_write
	 * starts the payload on a thread of its own, then calls overlap(overlap_arg) on the
	 * calling thread before it reads hdr or the files' color, fclass and mime, which the
	 * callback may still fill in (through the caller's own pointers; the payload reads
	 * none of them). A non-zero return stops the payload and is pack_write's error. The
	 * output bytes are the same as without it. */
	kiln_rc (*overlap)(void *arg, struct kiln_err *err);
	void *overlap_arg;
	/* Optional: where the 16 bytes of the package's MD5 over header and payload go (SIGMD5,
	 * rpm's pkgid, what binary packages name as SOURCEPKGID). v4 only: zeros for v6. */
	unsigned char *pkgid_out;
	/* Compressed bytes held in memory until the header is done; past it the payload
	 * waits for the callback. 0 = 64 MiB. */
	size_t overlap_spill_max;
};

/* Write a package to path atomically. hdr holds the caller's tags (NAME, VERSION, RELEASE,
 * SUMMARY, DESCRIPTION, BUILDTIME, BUILDHOST, LICENSE, GROUP, OS, ARCH, SOURCERPM or
 * SOURCEPACKAGE, RPMVERSION, dependencies, scriptlets, triggers, changelog, ...); it is
 * copied, never changed. files (n of them, any order) are sorted by path; the writer adds
 * every file tag, SIZE/LONGSIZE, PAYLOADFORMAT/COMPRESSOR/FLAGS, FILEDIGESTALGO, payload
 * digests and sizes, v6's RPMFORMAT, then the signature header. Same input, same bytes.
 * Errors: KILN_EINVAL for inconsistent input (duplicate paths, a hard-link set mixing
 * types, missing NAME/VERSION/RELEASE), KILN_EIO, KILN_ELIMIT. */
KILN_MUST_CHECK kiln_rc pack_write(const char *path, const struct pack_header *hdr,
                                   const struct pack_file *files, size_t n,
                                   const struct pack_write_opts *opts, struct kiln_err *err);
/* Defaults: v4, w9.gzdio, SHA256 file digests, binary, archnum/osnum 1 (x86_64, Linux),
 * rpmlib_deps on. */
void pack_write_opts_init(struct pack_write_opts *o);

/* ======================================================================================== */
/* Comparing packages */

/* An RPM-aware diff of two package files (`kiln diff`, the build pipeline's
 * --verify-reproducible): the lead, every main-header tag (the signature header is ignored:
 * it changes with signing, not with what was built), the file list, each file's attributes
 * and the contents of regular files, read from both payloads. Per-file header arrays
 * (FILEMODES, FILEDIGESTS, ...) are compared file by file and reported under the file's
 * path; a difference in such an array that no file explains (inode numbering, dictionary
 * order) is reported as a tag. When every tag and file is equal but the header or payload
 * bytes are not, a BYTES item says so: two packages without items are identical apart
 * from their signature headers. Output formats are described in docs/diff.md. */

enum pack_diff_kind {
	PACK_DIFF_LEAD,         /* a lead field (name: "name", "type", "archnum", ...) */
	PACK_DIFF_TAG,          /* a main-header tag added, removed or changed */
	PACK_DIFF_FILE_ADDED,   /* path only in the new package (new_v: a summary) */
	PACK_DIFF_FILE_REMOVED, /* path only in the old package (old_v: a summary) */
	PACK_DIFF_FILE_ATTR,    /* an attribute of path (name: "mode", "user", "digest", ...) */
	PACK_DIFF_FILE_CONTENT, /* the data of the regular file path differs */
	PACK_DIFF_BYTES,        /* name "header" or "payload": bytes differ, nothing else does */
};

enum pack_diff_content {
	PACK_DIFF_CONTENT_TEXT,   /* text: a unified diff in text */
	PACK_DIFF_CONTENT_BINARY, /* a side has a NUL byte: sizes and digests only */
	PACK_DIFF_CONTENT_LARGE,  /* over the size or change limits: sizes and digests only */
};

/* A rendered value: numbers in decimal (modes in octal, verify flags in hex), strings as
 * they are, BIN as hex, file flags as rpm's fflags letters. */
struct pack_diff_value {
	uint32_t count;           /* elements; 0 when absent (an added or removed tag) */
	const char *const *elems; /* borrowed from the diff's arena */
	bool array;               /* a list, even with one element (JSON prints [...]) */
	bool numeric;             /* elements are decimal numbers (JSON prints them bare) */
};

struct pack_diff_item {
	enum pack_diff_kind kind;
	uint32_t tag;     /* TAG: the tag number */
	const char *name; /* arena: TAG rpm's tag name ("TAG_1234" when unknown), LEAD and
	                   * FILE_ATTR the field, BYTES "header"/"payload"; else NULL */
	const char *path; /* arena: FILE_* the in-package path; else NULL */
	struct pack_diff_value old_v, new_v;
	enum pack_diff_content content;      /* FILE_CONTENT */
	const char *text;                    /* arena: FILE_CONTENT TEXT the unified diff
	                                 * ("--- a/PATH", "+++ b/PATH", hunks); else NULL */
	const char *reason;                  /* arena: FILE_CONTENT LARGE why no diff; else NULL */
	uint64_t old_size, new_size;         /* FILE_CONTENT data bytes; BYTES byte counts */
	char old_sha256[65], new_sha256[65]; /* FILE_CONTENT: of the data as read */
};

/* The differences in output order: lead, tags by number, then files by path (for each:
 * added/removed, attributes, contents), then BYTES. */
struct pack_diff {
	struct kiln_arena arena;      /* owns every string the items point at */
	struct pack_diff_item *items; /* owned (heap) */
	size_t n, cap;
};

struct pack_diff_opts {
	size_t text_max;  /* files larger than this get no unified diff (KILN_LIMIT_DIFF_TEXT) */
	size_t edits_max; /* more changed lines than this: no diff (KILN_LIMIT_DIFF_EDITS) */
	unsigned context; /* lines of context around each change (3) */
};
void pack_diff_opts_init(struct pack_diff_opts *o);

/* Compare the packages at old_path and new_path into out (freshly zeroed or released;
 * release it with pack_diff_release() on success and on error). o may be NULL for the
 * defaults. A package that cannot be read is an error naming the file and the structure
 * ("b.rpm: payload: entry at offset 512: bad cpio magic ..."): KILN_EIO, KILN_EFORMAT,
 * KILN_EDIGEST (a payload that does not match its header's digest), KILN_ELIMIT,
 * KILN_ENOMEM. Differences are not errors: out->n == 0 means identical. */
KILN_MUST_CHECK kiln_rc pack_diff_files(const char *old_path, const char *new_path,
                                        const struct pack_diff_opts *o, struct pack_diff *out,
                                        struct kiln_err *err);
void pack_diff_release(struct pack_diff *d);

/* The distinct paths named by FILE_* items, in order (what --verify-reproducible reports).
 * *paths: OUT, caller frees the array with free(); the strings are borrowed from d. */
KILN_MUST_CHECK kiln_rc pack_diff_paths(const struct pack_diff *d, const char ***paths, size_t *n,
                                        struct kiln_err *err);

enum pack_diff_format_flags {
	PACK_DIFF_F_JSON = 1 << 0, /* one JSON object instead of text */
};
/* Render d (as docs/diff.md describes) appending to out; old_name/new_name label the
 * packages. Text output is empty for an identical pair; JSON always has an object.
 * KILN_ELIMIT when out->max is reached. */
KILN_MUST_CHECK kiln_rc pack_diff_format(const struct pack_diff *d, const char *old_name,
                                         const char *new_name, unsigned flags, struct kiln_buf *out,
                                         struct kiln_err *err);

/* A unified diff (context lines each side of a change) of the text a[0..alen) and
 * b[0..blen), split at newlines, appended to out: "--- label_a" and "+++ label_b" first
 * unless they are NULL, then "@@ -l,n +l,n @@" hunks with "\ No newline at end of file"
 * where a side lacks its last newline. Nothing is appended when the texts are equal.
 * Myers' O((N+M)D) algorithm after stripping the common prefix and suffix; more than
 * edits_max changed lines (removed plus added) is KILN_ELIMIT (nothing appended), as is a
 * full out. */
KILN_MUST_CHECK kiln_rc pack_diff_text(const char *a, size_t alen, const char *b, size_t blen,
                                       const char *label_a, const char *label_b, unsigned context,
                                       size_t edits_max, struct kiln_buf *out,
                                       struct kiln_err *err);

#endif
