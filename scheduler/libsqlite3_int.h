/*
 * libsqlite3_int.h - libsqlite3, opened on first use rather than linked (util_dl_ready).
 *
 * Only scheduler/store_sqlite.c includes this, after <sqlite3.h>. kiln does not link libsqlite3: mapping
 * and relocating it and the libraries it pulls in would cost every kiln command at start
 * (about 1 ms), though only this file uses it. Its calls go through a table of entry
 * points filled on first use; the names below turn each call into a call through the
 * table. A call to a function missing from the list fails to link: add new ones here.
 */
#ifndef KILN_SCHEDULER_LIBSQLITE3_INT_H
#define KILN_SCHEDULER_LIBSQLITE3_INT_H

#ifndef SCHEDULER_LIBSQLITE3_SONAME
#define SCHEDULER_LIBSQLITE3_SONAME "libsqlite3.so" /* the Makefile passes the exact SONAME */
#endif

#define SCHEDULER_LIBSQLITE3_FUNCS(X)                                                              \
	X(sqlite3_bind_int)                                                                        \
	X(sqlite3_bind_int64)                                                                      \
	X(sqlite3_bind_null)                                                                       \
	X(sqlite3_bind_text)                                                                       \
	X(sqlite3_busy_timeout)                                                                    \
	X(sqlite3_changes)                                                                         \
	X(sqlite3_clear_bindings)                                                                  \
	X(sqlite3_close)                                                                           \
	X(sqlite3_column_count)                                                                    \
	X(sqlite3_column_int)                                                                      \
	X(sqlite3_column_int64)                                                                    \
	X(sqlite3_column_type)                                                                     \
	X(sqlite3_column_name)                                                                     \
	X(sqlite3_column_text)                                                                     \
	X(sqlite3_errcode)                                                                         \
	X(sqlite3_errmsg)                                                                          \
	X(sqlite3_exec)                                                                            \
	X(sqlite3_finalize)                                                                        \
	X(sqlite3_free)                                                                            \
	X(sqlite3_last_insert_rowid)                                                               \
	X(sqlite3_open_v2)                                                                         \
	X(sqlite3_prepare_v2)                                                                      \
	X(sqlite3_prepare_v3)                                                                      \
	X(sqlite3_reset)                                                                           \
	X(sqlite3_step)                                                                            \
	X(sqlite3_wal_checkpoint_v2)

/* The entry points (the file's registry of them). */
struct scheduler_libsqlite3_fns {
#define SCHEDULER_LIBSQLITE3_FIELD(f) __typeof__(f) *fn_##f;
	SCHEDULER_LIBSQLITE3_FUNCS(SCHEDULER_LIBSQLITE3_FIELD)
#undef SCHEDULER_LIBSQLITE3_FIELD
};

#define SCHEDULER_LIBSQLITE3_SYM(f) {#f, offsetof(struct scheduler_libsqlite3_fns, fn_##f)},
static const struct util_dl_sym scheduler_libsqlite3_syms[] = {
    SCHEDULER_LIBSQLITE3_FUNCS(SCHEDULER_LIBSQLITE3_SYM)};
#undef SCHEDULER_LIBSQLITE3_SYM

#define sqlite3_bind_int (scheduler_libsqlite3.fn_sqlite3_bind_int)
#define sqlite3_bind_int64 (scheduler_libsqlite3.fn_sqlite3_bind_int64)
#define sqlite3_bind_null (scheduler_libsqlite3.fn_sqlite3_bind_null)
#define sqlite3_bind_text (scheduler_libsqlite3.fn_sqlite3_bind_text)
#define sqlite3_busy_timeout (scheduler_libsqlite3.fn_sqlite3_busy_timeout)
#define sqlite3_changes (scheduler_libsqlite3.fn_sqlite3_changes)
#define sqlite3_clear_bindings (scheduler_libsqlite3.fn_sqlite3_clear_bindings)
#define sqlite3_close (scheduler_libsqlite3.fn_sqlite3_close)
#define sqlite3_column_count (scheduler_libsqlite3.fn_sqlite3_column_count)
#define sqlite3_column_int (scheduler_libsqlite3.fn_sqlite3_column_int)
#define sqlite3_column_int64 (scheduler_libsqlite3.fn_sqlite3_column_int64)
#define sqlite3_column_name (scheduler_libsqlite3.fn_sqlite3_column_name)
#define sqlite3_column_text (scheduler_libsqlite3.fn_sqlite3_column_text)
#define sqlite3_column_type (scheduler_libsqlite3.fn_sqlite3_column_type)
#define sqlite3_errcode (scheduler_libsqlite3.fn_sqlite3_errcode)
#define sqlite3_errmsg (scheduler_libsqlite3.fn_sqlite3_errmsg)
#define sqlite3_exec (scheduler_libsqlite3.fn_sqlite3_exec)
#define sqlite3_finalize (scheduler_libsqlite3.fn_sqlite3_finalize)
#define sqlite3_free (scheduler_libsqlite3.fn_sqlite3_free)
#define sqlite3_last_insert_rowid (scheduler_libsqlite3.fn_sqlite3_last_insert_rowid)
#define sqlite3_open_v2 (scheduler_libsqlite3.fn_sqlite3_open_v2)
#define sqlite3_prepare_v2 (scheduler_libsqlite3.fn_sqlite3_prepare_v2)
#define sqlite3_prepare_v3 (scheduler_libsqlite3.fn_sqlite3_prepare_v3)
#define sqlite3_reset (scheduler_libsqlite3.fn_sqlite3_reset)
#define sqlite3_step (scheduler_libsqlite3.fn_sqlite3_step)
#define sqlite3_wal_checkpoint_v2 (scheduler_libsqlite3.fn_sqlite3_wal_checkpoint_v2)

#endif
