/*
 * util.h - kiln's primitives: return codes, errors, buffers, string views, arenas, logging,
 * paths, files, digests, encoders, integer parsing and the clock.
 *
 * Every kiln .c file includes this header first. util/ depends on libc and OpenSSL's EVP
 * digests only (OpenSSL stays inside util/digest.c); it knows nothing about rpm.
 *
 * Unless a comment says otherwise, functions are thread-safe as long as callers do not share
 * the objects they pass in, and every _release/_free accepts NULL or zeroed input.
 */
#ifndef KILN_UTIL_H
#define KILN_UTIL_H

#include "util/compat.h"
#include "util/limits.h"

/* ---------------------------------------------------------------------------------------- */
/* Return codes. Append only; the number of each is part of the API (logs, JSON errors). */

typedef enum kiln_rc {
	KILN_OK = 0,         /* 0: success */
	KILN_ENOMEM = 1,     /* 1: out of memory */
	KILN_EIO = 2,        /* 2: a system call failed (see sys_errno) */
	KILN_ESYNTAX = 3,    /* 3: malformed text input (spec, macro, config, JSON) */
	KILN_ELIMIT = 4,     /* 4: an input exceeded a limit from util/limits.h */
	KILN_ENOTFOUND = 5,  /* 5: a named thing does not exist */
	KILN_ESIG = 6,       /* 6: signature or key failure */
	KILN_EPRIV = 7,      /* 7: not permitted (privileges, permissions, escapes a root) */
	KILN_EINVAL = 8,     /* 8: invalid argument or option */
	KILN_EEXIST = 9,     /* 9: already exists */
	KILN_EFORMAT = 10,   /* 10: malformed binary input (package, header, archive) */
	KILN_EDIGEST = 11,   /* 11: a digest did not match */
	KILN_ENET = 12,      /* 12: network failure */
	KILN_ETIMEOUT = 13,  /* 13: timed out */
	KILN_ECANCEL = 14,   /* 14: cancelled on request */
	KILN_EUNSUPP = 15,   /* 15: not supported here */
	KILN_EBUILD = 16,    /* 16: a build step failed */
	KILN_EAUTH = 17,     /* 17: authentication or authorisation failed */
	KILN_ECONFLICT = 18, /* 18: state conflict (stale lease, concurrent change) */
	KILN_EMACRO = 19,    /* 19: a macro reported an error (%{error:}, failed expansion) */
} kiln_rc;

/* Short lowercase words for a code ("out of memory"); never NULL. */
const char *kiln_rc_str(kiln_rc rc);

/* ---------------------------------------------------------------------------------------- */
/* Errors (shared/STYLE.md rule 5). The caller allocates, usually on the stack; NULL means
 * "don't care". The first error wins: setting an already set error does nothing, so the root
 * cause survives; outer layers add context with kiln_err_wrap(). Nothing here allocates. */

#define KILN_ERR_MSG_MAX 512
#define KILN_ERR_INPUT_MAX 256

struct kiln_err {
	kiln_rc code;                   /* KILN_OK until the first error */
	int sys_errno;                  /* errno at failure, 0 if none */
	const char *src_file;           /* static string: __FILE__ of the setter */
	int src_line;                   /* __LINE__ of the setter */
	char input[KILN_ERR_INPUT_MAX]; /* input name ("foo.spec"), "" if unknown */
	int line, col;                  /* position in input, 0 = unknown */
	char msg[KILN_ERR_MSG_MAX];     /* lowercase, no final period */
};

#define KILN_ERR_INIT                                                                              \
	{                                                                                          \
		.code = KILN_OK                                                                    \
	}

/* Record an error; returns rc so callers can `return kiln_err_set(err, ...)`. */
#define kiln_err_set(e, rc, ...) kiln_err_set_at((e), (rc), __FILE__, __LINE__, __VA_ARGS__)
/* Same, also saving errno and appending ": <strerror>" to the message. */
#define kiln_err_sys(e, rc, ...) kiln_err_sys_at((e), (rc), __FILE__, __LINE__, __VA_ARGS__)

kiln_rc kiln_err_set_at(struct kiln_err *err, kiln_rc rc, const char *file, int line,
                        const char *fmt, ...) KILN_PRINTF(5, 6);
kiln_rc kiln_err_sys_at(struct kiln_err *err, kiln_rc rc, const char *file, int line,
                        const char *fmt, ...) KILN_PRINTF(5, 6);
/* Prepend context: "while X: <old message>". Keeps code, errno and location. No-op when err
 * is NULL or not set. */
void kiln_err_wrap(struct kiln_err *err, const char *fmt, ...) KILN_PRINTF(2, 3);
/* Attach an input location unless one is already recorded. input may be NULL. */
void kiln_err_locate(struct kiln_err *err, const char *input, int line, int col);
/* Reset to "no error". */
void kiln_err_clear(struct kiln_err *err);
/* Render "input:line:col: msg" (parts that are unknown are left out) into dst; returns dst. */
const char *kiln_err_format(const struct kiln_err *err, char *dst, size_t size);
/* Move src into dst unless dst is already set (first error wins across contexts). */
void kiln_err_merge(struct kiln_err *dst, const struct kiln_err *src);

/* ---------------------------------------------------------------------------------------- */
/* Growable byte buffer (rule 8). ptr is never NULL and always NUL-terminated; the buffer may
 * hold NULs. max is required. Errors are sticky: after a failed append further appends do
 * nothing and kiln_buf_finish() reports KILN_ENOMEM or KILN_ELIMIT once. */

struct kiln_buf {
	char *ptr;   /* owned (heap) once cap > 0, else points at a static "" */
	size_t len;  /* bytes used, not counting the NUL */
	size_t cap;  /* bytes allocated, 0 while ptr is the static "" */
	size_t max;  /* the most len may grow to */
	kiln_rc err; /* sticky: KILN_OK, KILN_ENOMEM or KILN_ELIMIT */
};

extern char kiln_buf_empty[1];
#define KILN_BUF_INIT(limit)                                                                       \
	{                                                                                          \
		.ptr = kiln_buf_empty, .max = (limit)                                              \
	}

void kiln_buf_init(struct kiln_buf *b, size_t max);
void kiln_buf_release(struct kiln_buf *b);
/* Empty the buffer but keep its memory; also clears a sticky error. */
void kiln_buf_reset(struct kiln_buf *b);
/* Make room for extra more bytes; false (and sticky error) when it cannot. */
bool kiln_buf_grow(struct kiln_buf *b, size_t extra);
void kiln_buf_addstr(struct kiln_buf *b, const char *s);
void kiln_buf_addf(struct kiln_buf *b, const char *fmt, ...) KILN_PRINTF(2, 3);
/* Append s as one POSIX shell word: in single quotes, each ' written as '\'' (what rpm's
 * %{shescape:} and :shescape do). */
void kiln_buf_add_shquoted(struct kiln_buf *b, const char *s);
void kiln_buf_vaddf(struct kiln_buf *b, const char *fmt, va_list ap) KILN_PRINTF(2, 0);
/* Insert at pos (clamped to len). */
void kiln_buf_insert(struct kiln_buf *b, size_t pos, const void *ptr, size_t len);
/* Remove len bytes at pos (clamped). */
void kiln_buf_remove(struct kiln_buf *b, size_t pos, size_t len);
/* Shrink to len bytes (no-op when already shorter). */
void kiln_buf_truncate(struct kiln_buf *b, size_t len);
/* Drop trailing bytes that are in set (e.g. "\n", " \t\r\n"). */
void kiln_buf_rtrim(struct kiln_buf *b, const char *set);
/* Report the sticky error (once) into err; KILN_OK when none. */
KILN_MUST_CHECK kiln_rc kiln_buf_finish(struct kiln_buf *b, struct kiln_err *err);
/* Hand the contents over: returns a malloc'ed NUL-terminated string (OUT: caller frees with
 * free()), or NULL on a sticky error or ENOMEM. The buffer is reset to empty. */
char *kiln_buf_take(struct kiln_buf *b, size_t *len);

/* Append len bytes (ptr may point into b). Inline: a macro expansion appends a few bytes
 * at a time, a million times in bench/macro, and the call was a tenth of the append. The
 * checks are kiln_buf_grow's: cap never exceeds max + 1, and an error sticks. */
static inline void kiln_buf_add(struct kiln_buf *b, const void *ptr, size_t len)
{
	if (!len)
		return;
	if (KILN_UNLIKELY(b->err || len >= b->cap - b->len) && !kiln_buf_grow(b, len))
		return;
	memmove(b->ptr + b->len, ptr, len);
	b->len += len;
	b->ptr[b->len] = '\0';
}

static inline void kiln_buf_addch(struct kiln_buf *b, char c)
{
	if (KILN_UNLIKELY(b->len + 1 >= b->cap) && !kiln_buf_grow(b, 1))
		return;
	b->ptr[b->len++] = c;
	b->ptr[b->len] = '\0';
}

/* ---------------------------------------------------------------------------------------- */
/* Non-owning string view. Lives as long as the memory it points into. */

struct kiln_str {
	const char *ptr; /* borrowed */
	size_t len;
};

#define KILN_STR_FMT "%.*s"
#define KILN_STR_ARG(s) (int)(s).len, (s).ptr
#define KILN_STR_LIT(lit) ((struct kiln_str){(lit), sizeof(lit) - 1})

struct kiln_str kiln_str_from(const char *s);
struct kiln_str kiln_str_make(const char *ptr, size_t len);
bool kiln_str_eq(struct kiln_str a, struct kiln_str b);
bool kiln_str_eq_cstr(struct kiln_str a, const char *s);
bool kiln_str_starts(struct kiln_str s, const char *prefix);
bool kiln_str_ends(struct kiln_str s, const char *suffix);
/* FNV-1a of a NUL-terminated string: for the slots of small fixed-size caches. */
uint32_t util_hash_str(const char *s);
/* Trim ASCII whitespace (space, \t, \n, \v, \f, \r). */
struct kiln_str kiln_str_trim(struct kiln_str s);
struct kiln_str kiln_str_ltrim(struct kiln_str s);
struct kiln_str kiln_str_rtrim(struct kiln_str s);
/* Index of c in s, or -1. */
ptrdiff_t kiln_str_chr(struct kiln_str s, char c);
/* Split at the first c: *head gets what precedes it, the return value what follows. When c
 * is absent, *head is s and the result is empty with found = false. */
struct kiln_str kiln_str_split(struct kiln_str s, char c, struct kiln_str *head, bool *found);
/* Copy into a fresh malloc'ed C string (OUT: caller frees), NULL on ENOMEM. */
char *kiln_str_dup(struct kiln_str s);

/* ---------------------------------------------------------------------------------------- */
/* Arena: a bump allocator over chained blocks, freed all at once (rule 10). Allocation
 * failures and the max limit are sticky in a->err; allocations return NULL after one. */

struct kiln_arena_block;

struct kiln_arena {
	struct kiln_arena_block *head; /* owned; newest block first */
	size_t used;                   /* bytes handed out plus block overhead */
	size_t max;                    /* limit on used */
	kiln_rc err;                   /* sticky */
	bool prefault;                 /* new blocks are populated at once (util_prefault) */
};

#define KILN_ARENA_INIT(limit)                                                                     \
	{                                                                                          \
		.max = (limit)                                                                     \
	}

void kiln_arena_init(struct kiln_arena *a, size_t max);
/* Frees the blocks; the limit and prefault stay. */
void kiln_arena_release(struct kiln_arena *a);
/* Aligned to 16 bytes; memory is zeroed. Borrowed from the arena. */
void *kiln_arena_alloc(struct kiln_arena *a, size_t size);
/* The same, not zeroed: for callers that write every byte they read. */
void *kiln_arena_alloc_raw(struct kiln_arena *a, size_t size);
/* Allocate n elements of size, with overflow checking. */
void *kiln_arena_array(struct kiln_arena *a, size_t n, size_t size);
/* Append s to the arena-held string list *v (n entries, room for *cap; all three start
 * zeroed), doubling the room when full (the old array stays in the arena). false when the
 * arena cannot grow (its sticky error says why); nothing is appended then. */
bool kiln_arena_strv_add(struct kiln_arena *a, const char ***v, size_t *n, size_t *cap,
                         const char *s);
char *kiln_arena_strdup(struct kiln_arena *a, const char *s);
char *kiln_arena_strndup(struct kiln_arena *a, const char *s, size_t len);
char *kiln_arena_printf(struct kiln_arena *a, const char *fmt, ...) KILN_PRINTF(2, 3);
KILN_MUST_CHECK kiln_rc kiln_arena_finish(struct kiln_arena *a, struct kiln_err *err);

/* ---------------------------------------------------------------------------------------- */
/* Heap allocation. kiln_malloc and friends behave like libc's; in builds with
 * -DKILN_FAULT_INJECTION the allocation numbered $KILN_FAIL_ALLOC fails, for OOM tests.
 * util_xmalloc dies on failure and is for short-lived cli/ helpers only (rule 6). */

void *kiln_malloc(size_t size);
void *kiln_calloc(size_t n, size_t size);
void *kiln_realloc(void *ptr, size_t size);
/* realloc to n * size, failing (NULL, ptr untouched) on overflow. */
void *kiln_reallocarray(void *ptr, size_t n, size_t size);
char *kiln_strdup(const char *s);
char *kiln_strndup(const char *s, size_t len);

/* Large working memory that is filled soon after (compressor tables and windows): blocks of
 * UTIL_BIGMEM_MIN bytes or more are mapped on their own and offered to the kernel for huge
 * pages (MADV_HUGEPAGE), smaller ones come from malloc. zstd -19 clears ~80 MiB of tables
 * for a stream of unknown size: in 4 KiB pages that is 20,000 page faults, which on a
 * virtual machine take longer than compressing a small payload. Not zeroed; 16-byte
 * aligned; thread-safe. Free with util_bigmem_free (NULL is fine). */
#define UTIL_BIGMEM_MIN ((size_t)2 * 1024 * 1024)
void *util_bigmem_alloc(size_t size);
void util_bigmem_free(void *ptr);
/* Memory about to be written, in one call (MADV_POPULATE_WRITE) instead of a page fault per
 * 4 KiB page: the whole pages inside [p, p+len). Advice only; nothing happens on kernels
 * before 5.14. On this project's virtual machines a fault costs ~10 us, populating a page
 * about half of that. */
void util_prefault(void *p, size_t len);

/* Overflow-checked arithmetic: false when the result does not fit. */
static inline bool util_add_ok(size_t a, size_t b, size_t *out)
{
	return !__builtin_add_overflow(a, b, out);
}

static inline bool util_mul_ok(size_t a, size_t b, size_t *out)
{
	return !__builtin_mul_overflow(a, b, out);
}

/* ---------------------------------------------------------------------------------------- */
/* Logging to stderr, leveled, plain text or JSON lines. The configuration is the one
 * process-wide logging registry: cli/ sets it once at start-up with kiln_log_setup() before
 * any thread starts; everything else only reads it. */

enum kiln_log_level {
	KILN_LOG_ERROR = 0,
	KILN_LOG_WARN = 1,
	KILN_LOG_INFO = 2,
	KILN_LOG_DEBUG = 3,
};

enum kiln_log_flags {
	KILN_LOG_F_JSON = 1 << 0, /* one JSON object per line: {"ts","level","msg",...} */
};

void kiln_log_setup(enum kiln_log_level level, unsigned flags);
bool kiln_log_enabled(enum kiln_log_level level);
/* Plain mode prints "error: msg" / "warning: msg" like rpm; info and debug print the
 * message alone. Thread-safe (one write(2) per message). */
void kiln_log(enum kiln_log_level level, const char *fmt, ...) KILN_PRINTF(2, 3);
void kiln_log_err(enum kiln_log_level level, const struct kiln_err *err);
/* Parse "error", "warn", "info", "debug"; KILN_EINVAL otherwise. */
KILN_MUST_CHECK kiln_rc kiln_log_level_parse(const char *s, enum kiln_log_level *out);

#define kiln_error(...) kiln_log(KILN_LOG_ERROR, __VA_ARGS__)
#define kiln_warn(...) kiln_log(KILN_LOG_WARN, __VA_ARGS__)
#define kiln_info(...) kiln_log(KILN_LOG_INFO, __VA_ARGS__)
#define kiln_debug(...) kiln_log(KILN_LOG_DEBUG, __VA_ARGS__)

/* States the code rules out: log file:line and abort (rule 6). */
#define KILN_BUG(...) util_bug_at(__FILE__, __LINE__, __VA_ARGS__)
KILN_NORETURN void util_bug_at(const char *file, int line, const char *fmt, ...) KILN_PRINTF(3, 4);
#ifdef NDEBUG
#define KILN_ASSERT(x) ((void)0)
#else
#define KILN_ASSERT(x) ((x) ? (void)0 : KILN_BUG("assertion failed: %s", #x))
#endif

/* ---------------------------------------------------------------------------------------- */
/* Integer parsing: the whole of [s, s+len) must be a number (optional leading '-' for the
 * signed form, '+' never), base 10 unless base says otherwise (0 = C prefixes), within
 * [min, max]. KILN_ESYNTAX for junk, KILN_ELIMIT when out of range. */

KILN_MUST_CHECK kiln_rc util_parse_i64(const char *s, size_t len, int base, int64_t min,
                                       int64_t max, int64_t *out, struct kiln_err *err);
KILN_MUST_CHECK kiln_rc util_parse_u64(const char *s, size_t len, int base, uint64_t max,
                                       uint64_t *out, struct kiln_err *err);
/* Convenience for NUL-terminated strings. */
KILN_MUST_CHECK kiln_rc util_parse_int(const char *s, int min, int max, int *out,
                                       struct kiln_err *err);
/* The decimal text of v (printf's "%lld") into dst, which has room for UTIL_INT_MAX_TEXT
 * bytes, NUL-terminated; returns its length. For hot paths: snprintf costs hundreds of
 * instructions for it. */
#define UTIL_INT_MAX_TEXT 24
size_t util_fmt_int(char *dst, long long v);

/* ---------------------------------------------------------------------------------------- */
/* Libraries opened at run time (dl.c). A file that uses a library only some commands need
 * keeps a struct of pointers to its functions; util_dl_ready() opens the library the first
 * time and fills the struct (at the offsets syms name), then reports the same outcome on
 * every later call. Thread-safe. The library stays loaded. */

struct util_dl_sym {
	const char *name; /* the symbol */
	size_t offset;    /* of its function pointer in the table */
};

struct util_dl {
	const char *soname;
	const struct util_dl_sym *syms;
	size_t nsyms;
	void *table;     /* borrowed: the struct the offsets are in */
	bool tried;      /* under the lock in dl.c */
	char error[256]; /* why it could not be opened; empty once it is */
	bool ok;         /* atomic: the table is filled (the lock-free fast path) */
};

#define UTIL_DL_INIT(soname, syms, table)                                                          \
	{                                                                                          \
		(soname), (syms), sizeof(syms) / sizeof((syms)[0]), &(table), false, "", false     \
	}

/* KILN_OK once the table is filled; KILN_ENOTFOUND with the reason (library or symbol
 * missing) when it cannot be. */
KILN_MUST_CHECK kiln_rc util_dl_ready(struct util_dl *dl, struct kiln_err *err);

/* ---------------------------------------------------------------------------------------- */
/* Hex and base64. */

/* Write 2*len lowercase hex digits and a NUL to out (size >= 2*len+1). */
void util_hex_encode(const void *in, size_t len, char *out);
/* Decode exactly 2*outlen hex digits; KILN_ESYNTAX on junk or wrong length. */
KILN_MUST_CHECK kiln_rc util_hex_decode(const char *hex, size_t hexlen, void *out, size_t outlen,
                                        struct kiln_err *err);
/* Standard base64 with padding, no line breaks, appended to out. */
void util_base64_encode(const void *in, size_t len, struct kiln_buf *out);
/* Decode standard base64; whitespace is skipped, padding optional. */
KILN_MUST_CHECK kiln_rc util_base64_decode(const char *in, size_t len, struct kiln_buf *out,
                                           struct kiln_err *err);

/* ---------------------------------------------------------------------------------------- */
/* Digests through OpenSSL's EVP API. */

enum util_digest_algo {
	UTIL_DIGEST_MD5,
	UTIL_DIGEST_SHA1,
	UTIL_DIGEST_SHA224,
	UTIL_DIGEST_SHA256,
	UTIL_DIGEST_SHA384,
	UTIL_DIGEST_SHA512,
	UTIL_DIGEST_SHA3_256,
	UTIL_DIGEST_SHA3_512,
};

#define UTIL_DIGEST_MAX 64 /* bytes: the largest digest (SHA-512) */

struct util_digest {
	void *ctx; /* owned EVP_MD_CTX; util_digest_release() */
	enum util_digest_algo algo;
};

/* Size in bytes, and the lowercase name ("sha256"). */
size_t util_digest_size(enum util_digest_algo algo);
const char *util_digest_name(enum util_digest_algo algo);
/* Look a digest up by name (case-insensitive: "sha256", "SHA-256", "sha3-256"). */
KILN_MUST_CHECK kiln_rc util_digest_by_name(const char *name, enum util_digest_algo *out,
                                            struct kiln_err *err);
KILN_MUST_CHECK kiln_rc util_digest_init(struct util_digest *d, enum util_digest_algo algo,
                                         struct kiln_err *err);
void util_digest_update(struct util_digest *d, const void *data, size_t len);
/* Write the digest to out (UTIL_DIGEST_MAX bytes are enough); the context is then reset so
 * it can be reused for the same algorithm. */
KILN_MUST_CHECK kiln_rc util_digest_final(struct util_digest *d, unsigned char *out,
                                          struct kiln_err *err);
void util_digest_release(struct util_digest *d);
/* One shot over a memory block. */
KILN_MUST_CHECK kiln_rc util_digest_mem(enum util_digest_algo algo, const void *data, size_t len,
                                        unsigned char *out, struct kiln_err *err);
/* One shot over a memory block, as lowercase hex into hex (2*UTIL_DIGEST_MAX+1 bytes). */
KILN_MUST_CHECK kiln_rc util_digest_mem_hex(enum util_digest_algo algo, const void *data,
                                            size_t len, char *hex, struct kiln_err *err);
/* Digest a whole file by path; hex as above. */
KILN_MUST_CHECK kiln_rc util_digest_file_hex(enum util_digest_algo algo, const char *path,
                                             char *hex, struct kiln_err *err);
/* HMAC-SHA256 (RFC 2104) of data under key: 32 bytes into out. */
KILN_MUST_CHECK kiln_rc util_hmac_sha256(const void *key, size_t keylen, const void *data,
                                         size_t len, unsigned char out[32], struct kiln_err *err);
/* Are len bytes of a and b equal? Takes the same time wherever they differ (secrets). */
bool util_mem_equal_ct(const void *a, const void *b, size_t len);

/* ---------------------------------------------------------------------------------------- */
/* Paths. All take NUL-terminated strings and write results into caller buffers. */

/* Lexically normalise: collapse "//" and "/./", resolve ".." against earlier components,
 * drop a trailing "/" (except for "/"). An absolute path stays absolute and ".." at its root
 * stays at the root; for a relative path a ".." that would climb above the start is refused
 * with KILN_EPRIV. The empty path becomes ".". */
KILN_MUST_CHECK kiln_rc util_path_normalize(const char *path, struct kiln_buf *out,
                                            struct kiln_err *err);
/* Join base and rel with one "/" (rel absolute is an error: KILN_EPRIV), then normalise;
 * refuses a rel that climbs out of base. */
KILN_MUST_CHECK kiln_rc util_path_join(const char *base, const char *rel, struct kiln_buf *out,
                                       struct kiln_err *err);
/* Check a name found in outside input (an archive member, an artifact name): relative after
 * stripping leading "./", no ".." component, no empty name, no NUL in [name, name+len).
 * Writes the cleaned relative path to out. KILN_EPRIV when it would escape. */
KILN_MUST_CHECK kiln_rc util_path_check_relative(const char *name, size_t len, struct kiln_buf *out,
                                                 struct kiln_err *err);
/* Open rel beneath the directory rootfd without ever leaving it (openat2 RESOLVE_BENEATH):
 * "..", absolute symlinks and symlinks that climb out are refused (RESOLVE_IN_ROOT is not
 * used on purpose: an absolute symlink is an error here, not a re-rooted path). With
 * UTIL_OPEN_NOFOLLOW no symlink at all is followed. Returns a new O_CLOEXEC fd in *fd. */
enum util_open_flags {
	UTIL_OPEN_NOFOLLOW = 1 << 0,
};
KILN_MUST_CHECK kiln_rc util_path_open_beneath(int rootfd, const char *rel, int oflags, mode_t mode,
                                               unsigned flags, int *fd, struct kiln_err *err);
/* The last component ("c" of "/a/b/c"); points into path. */
const char *util_path_basename(const char *path);
/* Everything before the last component into out ("." when there is none). */
void util_path_dirname(const char *path, struct kiln_buf *out);

/* ---------------------------------------------------------------------------------------- */
/* Files. */

/* close(2) that ignores fd < 0 and keeps errno. */
void util_close(int fd);
/* Loop over short writes and EINTR. */
KILN_MUST_CHECK kiln_rc util_write_all(int fd, const void *data, size_t len, struct kiln_err *err);
/* Read up to len bytes, looping over EINTR and short reads until len or EOF; *got = bytes. */
KILN_MUST_CHECK kiln_rc util_read_full(int fd, void *data, size_t len, size_t *got,
                                       struct kiln_err *err);
/* Read a whole file (at most max bytes, else KILN_ELIMIT) and append it to out. */
KILN_MUST_CHECK kiln_rc util_read_file(const char *path, size_t max, struct kiln_buf *out,
                                       struct kiln_err *err);
/* Read everything from fd until EOF into out (limit out->max). */
KILN_MUST_CHECK kiln_rc util_read_fd(int fd, struct kiln_buf *out, struct kiln_err *err);
/* Atomic replace: write to a temp file in the same directory, fsync, rename over path,
 * fsync the directory. Readers see the old or the new contents, never a mix. */
KILN_MUST_CHECK kiln_rc util_write_atomic(const char *path, const void *data, size_t len,
                                          mode_t mode, struct kiln_err *err);
/* The same without the fsyncs (util_atomic_file.nosync), for scratch files the caller
 * writes again on its next run (a build stage's script). */
KILN_MUST_CHECK kiln_rc util_write_atomic_nosync(const char *path, const void *data, size_t len,
                                                 mode_t mode, struct kiln_err *err);

/* Streaming form of util_write_atomic for large outputs. */
struct util_atomic_file {
	int fd;     /* the temp file, -1 when closed */
	char *path; /* owned: final path */
	char *tmp;  /* owned: temp path, unlinked by abort */
	/* Set after open to commit without the two fsyncs, for files the caller can make
	 * again (build outputs): readers still never see a partial file while the system
	 * runs, but after a crash the new name may hold a short file. */
	bool nosync;
};
KILN_MUST_CHECK kiln_rc util_atomic_open(struct util_atomic_file *f, const char *path, mode_t mode,
                                         struct kiln_err *err);
/* fsync, rename into place, fsync the directory (no fsyncs with f->nosync); releases f. */
KILN_MUST_CHECK kiln_rc util_atomic_commit(struct util_atomic_file *f, struct kiln_err *err);
/* Remove the temp file and release f; safe on a zeroed or committed f. */
void util_atomic_abort(struct util_atomic_file *f);

/* mkdir -p; existing directories are fine. */
KILN_MUST_CHECK kiln_rc util_mkdir_p(const char *path, mode_t mode, struct kiln_err *err);
/* rm -rf that never follows symlinks; a missing path is fine. */
KILN_MUST_CHECK kiln_rc util_rm_rf(const char *path, struct kiln_err *err);
/* Copy a regular file's contents (mode as given), atomically. */
KILN_MUST_CHECK kiln_rc util_copy_file(const char *src, const char *dst, mode_t mode,
                                       struct kiln_err *err);
bool util_is_dir(const char *path);
bool util_exists(const char *path);

/* ---------------------------------------------------------------------------------------- */
/* Where kiln finds its default configuration (configs/): $KILN_CONFIGDIR when set; else,
 * relative to the running binary, <bindir>/../configs when that holds a "macros" file (the
 * build tree: build/kiln) and <bindir>/../lib/kiln when installed. No absolute path is
 * compiled in. */
KILN_MUST_CHECK kiln_rc util_configdir_find(struct kiln_buf *out, struct kiln_err *err);
/* The absolute path of the running binary (/proc/self/exe). */
KILN_MUST_CHECK kiln_rc util_self_exe(struct kiln_buf *out, struct kiln_err *err);

/* ---------------------------------------------------------------------------------------- */
/* Clock (rule 17): the only place kiln reads wall-clock time. */

/* Seconds since the epoch, now. Never stamp this into a package: use the build-time rule
 * of the pipeline, which starts from util_clock_source_date_epoch(). */
int64_t util_clock_wall(void);
/* Wall-clock milliseconds since the epoch, for logs and job records. */
int64_t util_clock_wall_ms(void);
/* Monotonic nanoseconds, for durations and timeouts. */
int64_t util_clock_mono_ns(void);
/* SOURCE_DATE_EPOCH from the environment: KILN_OK with *out set, KILN_ENOTFOUND when unset
 * or empty, KILN_ESYNTAX when it is not a non-negative integer. */
KILN_MUST_CHECK kiln_rc util_clock_source_date_epoch(int64_t *out, struct kiln_err *err);
/* Format t (UTC) with strftime fmt into dst; returns dst ("" on failure). */
const char *util_clock_format_utc(int64_t t, const char *fmt, char *dst, size_t size);

#endif
