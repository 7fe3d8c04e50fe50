/*
 * libmagic_int.h - libmagic, opened on first use rather than linked (util_dl_ready).
 *
 * Only worker/fileclass.c includes this, after <magic.h>. kiln does not link libmagic: mapping
 * and relocating it and the libraries it pulls in would cost every kiln command at start
 * (about 1 ms), though only this file uses it. Its calls go through a table of entry
 * points filled on first use; the names below turn each call into a call through the
 * table. A call to a function missing from the list fails to link: add new ones here.
 */
#ifndef KILN_WORKER_LIBMAGIC_INT_H
#define KILN_WORKER_LIBMAGIC_INT_H

#ifndef WORKER_LIBMAGIC_SONAME
#define WORKER_LIBMAGIC_SONAME "libmagic.so" /* the Makefile passes the exact SONAME */
#endif

#define WORKER_LIBMAGIC_FUNCS(X)                                                                   \
	X(magic_close)                                                                             \
	X(magic_descriptor)                                                                        \
	X(magic_error)                                                                             \
	X(magic_file)                                                                              \
	X(magic_load)                                                                              \
	X(magic_open)

/* The entry points (the file's registry of them). */
struct worker_libmagic_fns {
#define WORKER_LIBMAGIC_FIELD(f) __typeof__(f) *fn_##f;
	WORKER_LIBMAGIC_FUNCS(WORKER_LIBMAGIC_FIELD)
#undef WORKER_LIBMAGIC_FIELD
};

#define WORKER_LIBMAGIC_SYM(f) {#f, offsetof(struct worker_libmagic_fns, fn_##f)},
static const struct util_dl_sym worker_libmagic_syms[] = {
    WORKER_LIBMAGIC_FUNCS(WORKER_LIBMAGIC_SYM)};
#undef WORKER_LIBMAGIC_SYM

#define magic_close (worker_libmagic.fn_magic_close)
#define magic_descriptor (worker_libmagic.fn_magic_descriptor)
#define magic_error (worker_libmagic.fn_magic_error)
#define magic_file (worker_libmagic.fn_magic_file)
#define magic_load (worker_libmagic.fn_magic_load)
#define magic_open (worker_libmagic.fn_magic_open)

#endif
