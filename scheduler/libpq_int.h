/*
 * libpq_int.h - libpq (PostgreSQL's client library), opened on first use rather than linked
 * (util_dl_ready), as libsqlite3 is (scheduler/libsqlite3_int.h).
 *
 * Only scheduler/store_pg.c includes this, after <libpq-fe.h>. Most farms run on sqlite3,
 * so no kiln command should pay for mapping libpq and what it pulls in (Kerberos, LDAP,
 * OpenSSL) at start. Its calls go through a table of entry points filled on first use; the
 * names below turn each call into a call through the table. A call to a function missing
 * from the list fails to link: add new ones here.
 */
#ifndef KILN_SCHEDULER_LIBPQ_INT_H
#define KILN_SCHEDULER_LIBPQ_INT_H

#ifndef SCHEDULER_LIBPQ_SONAME
#define SCHEDULER_LIBPQ_SONAME "libpq.so" /* the Makefile passes the exact SONAME */
#endif

#define SCHEDULER_LIBPQ_FUNCS(X)                                                                   \
	X(PQclear)                                                                                 \
	X(PQcmdTuples)                                                                             \
	X(PQconninfoFree)                                                                          \
	X(PQconninfoParse)                                                                         \
	X(PQconnectdbParams)                                                                       \
	X(PQconsumeInput)                                                                          \
	X(PQerrorMessage)                                                                          \
	X(PQexec)                                                                                  \
	X(PQexecPrepared)                                                                          \
	X(PQfinish)                                                                                \
	X(PQfreemem)                                                                               \
	X(PQgetisnull)                                                                             \
	X(PQgetvalue)                                                                              \
	X(PQnotifies)                                                                              \
	X(PQntuples)                                                                               \
	X(PQprepare)                                                                               \
	X(PQreset)                                                                                 \
	X(PQresultErrorField)                                                                      \
	X(PQresultErrorMessage)                                                                    \
	X(PQresultStatus)                                                                          \
	X(PQsetNoticeProcessor)                                                                    \
	X(PQsetNoticeReceiver)                                                                     \
	X(PQsocket)                                                                                \
	X(PQstatus)

/* The entry points (the file's registry of them). */
struct scheduler_libpq_fns {
#define SCHEDULER_LIBPQ_FIELD(f) __typeof__(f) *fn_##f;
	SCHEDULER_LIBPQ_FUNCS(SCHEDULER_LIBPQ_FIELD)
#undef SCHEDULER_LIBPQ_FIELD
};

#define SCHEDULER_LIBPQ_SYM(f) {#f, offsetof(struct scheduler_libpq_fns, fn_##f)},
static const struct util_dl_sym scheduler_libpq_syms[] = {
    SCHEDULER_LIBPQ_FUNCS(SCHEDULER_LIBPQ_SYM)};
#undef SCHEDULER_LIBPQ_SYM

#define PQclear (scheduler_libpq.fn_PQclear)
#define PQcmdTuples (scheduler_libpq.fn_PQcmdTuples)
#define PQconninfoFree (scheduler_libpq.fn_PQconninfoFree)
#define PQconninfoParse (scheduler_libpq.fn_PQconninfoParse)
#define PQconnectdbParams (scheduler_libpq.fn_PQconnectdbParams)
#define PQconsumeInput (scheduler_libpq.fn_PQconsumeInput)
#define PQerrorMessage (scheduler_libpq.fn_PQerrorMessage)
#define PQexec (scheduler_libpq.fn_PQexec)
#define PQexecPrepared (scheduler_libpq.fn_PQexecPrepared)
#define PQfinish (scheduler_libpq.fn_PQfinish)
#define PQfreemem (scheduler_libpq.fn_PQfreemem)
#define PQgetisnull (scheduler_libpq.fn_PQgetisnull)
#define PQgetvalue (scheduler_libpq.fn_PQgetvalue)
#define PQnotifies (scheduler_libpq.fn_PQnotifies)
#define PQntuples (scheduler_libpq.fn_PQntuples)
#define PQprepare (scheduler_libpq.fn_PQprepare)
#define PQreset (scheduler_libpq.fn_PQreset)
#define PQresultErrorField (scheduler_libpq.fn_PQresultErrorField)
#define PQresultErrorMessage (scheduler_libpq.fn_PQresultErrorMessage)
#define PQresultStatus (scheduler_libpq.fn_PQresultStatus)
#define PQsetNoticeProcessor (scheduler_libpq.fn_PQsetNoticeProcessor)
#define PQsetNoticeReceiver (scheduler_libpq.fn_PQsetNoticeReceiver)
#define PQsocket (scheduler_libpq.fn_PQsocket)
#define PQstatus (scheduler_libpq.fn_PQstatus)

#endif
