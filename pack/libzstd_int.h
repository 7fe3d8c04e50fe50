/*
 * libzstd_int.h - libzstd, opened on first use rather than linked (util_dl_ready).
 *
 * Only pack/zstd.c includes this, after <zstd.h>. Only packaging and payload reading use
 * zstd, yet a linked libzstd is mapped and relocated by every kiln process at start
 * (`kiln sandbox`, the helpers a build forks). Its calls go through a table of entry points
 * filled on first use; the names below turn each call into a call through the table. A
 * call to a function missing from the list fails to link: add new ones here.
 */
#ifndef KILN_PACK_LIBZSTD_INT_H
#define KILN_PACK_LIBZSTD_INT_H

#ifndef PACK_LIBZSTD_SONAME
#define PACK_LIBZSTD_SONAME "libzstd.so" /* the Makefile passes the exact SONAME */
#endif

#define PACK_LIBZSTD_FUNCS(X)                                                                      \
	X(ZSTD_CCtx_setParameter)                                                                  \
	X(ZSTD_DCtx_setParameter)                                                                  \
	X(ZSTD_compressStream2)                                                                    \
	X(ZSTD_createCCtx_advanced)                                                                \
	X(ZSTD_createDCtx)                                                                         \
	X(ZSTD_decompressStream)                                                                   \
	X(ZSTD_freeCCtx)                                                                           \
	X(ZSTD_freeDCtx)                                                                           \
	X(ZSTD_getErrorName)                                                                       \
	X(ZSTD_isError)

/* The entry points (the file's registry of them). */
struct pack_libzstd_fns {
#define PACK_LIBZSTD_FIELD(f) __typeof__(f) *fn_##f;
	PACK_LIBZSTD_FUNCS(PACK_LIBZSTD_FIELD)
#undef PACK_LIBZSTD_FIELD
};

#define PACK_LIBZSTD_SYM(f) {#f, offsetof(struct pack_libzstd_fns, fn_##f)},
static const struct util_dl_sym pack_libzstd_syms[] = {PACK_LIBZSTD_FUNCS(PACK_LIBZSTD_SYM)};
#undef PACK_LIBZSTD_SYM

#define ZSTD_CCtx_setParameter (pack_libzstd.fn_ZSTD_CCtx_setParameter)
#define ZSTD_DCtx_setParameter (pack_libzstd.fn_ZSTD_DCtx_setParameter)
#define ZSTD_compressStream2 (pack_libzstd.fn_ZSTD_compressStream2)
#define ZSTD_createCCtx_advanced (pack_libzstd.fn_ZSTD_createCCtx_advanced)
#define ZSTD_createDCtx (pack_libzstd.fn_ZSTD_createDCtx)
#define ZSTD_decompressStream (pack_libzstd.fn_ZSTD_decompressStream)
#define ZSTD_freeCCtx (pack_libzstd.fn_ZSTD_freeCCtx)
#define ZSTD_freeDCtx (pack_libzstd.fn_ZSTD_freeDCtx)
#define ZSTD_getErrorName (pack_libzstd.fn_ZSTD_getErrorName)
#define ZSTD_isError (pack_libzstd.fn_ZSTD_isError)

#endif
