/*
 * libcurl_int.h - libcurl, opened on first use rather than linked (util_dl_ready).
 *
 * Only sources/fetch.c includes this, after <curl/curl.h>. kiln does not link libcurl: mapping
 * and relocating it and the libraries it pulls in would cost every kiln command at start
 * (about 5 ms), though only this file uses it. Its calls go through a table of entry
 * points filled on first use; the names below turn each call into a call through the
 * table. A call to a function missing from the list fails to link: add new ones here.
 */
#ifndef KILN_WORKER_LIBCURL_INT_H
#define KILN_WORKER_LIBCURL_INT_H

#ifndef SOURCES_LIBCURL_SONAME
#define SOURCES_LIBCURL_SONAME "libcurl.so" /* the Makefile passes the exact SONAME */
#endif

#define SOURCES_LIBCURL_FUNCS(X)                                                                   \
	X(curl_easy_cleanup)                                                                       \
	X(curl_easy_getinfo)                                                                       \
	X(curl_easy_init)                                                                          \
	X(curl_easy_perform)                                                                       \
	X(curl_easy_reset)                                                                         \
	X(curl_easy_setopt)                                                                        \
	X(curl_easy_strerror)                                                                      \
	X(curl_global_init)

/* The entry points (the file's registry of them). */
struct sources_libcurl_fns {
#define SOURCES_LIBCURL_FIELD(f) __typeof__(f) *fn_##f;
	SOURCES_LIBCURL_FUNCS(SOURCES_LIBCURL_FIELD)
#undef SOURCES_LIBCURL_FIELD
};

#define SOURCES_LIBCURL_SYM(f) {#f, offsetof(struct sources_libcurl_fns, fn_##f)},
static const struct util_dl_sym sources_libcurl_syms[] = {
    SOURCES_LIBCURL_FUNCS(SOURCES_LIBCURL_SYM)};
#undef SOURCES_LIBCURL_SYM

/* The library's header wraps these in type-checking macros; the table takes their place. */
#undef curl_easy_setopt
#undef curl_easy_getinfo
#define curl_easy_cleanup (sources_libcurl.fn_curl_easy_cleanup)
#define curl_easy_getinfo (sources_libcurl.fn_curl_easy_getinfo)
#define curl_easy_init (sources_libcurl.fn_curl_easy_init)
#define curl_easy_perform (sources_libcurl.fn_curl_easy_perform)
#define curl_easy_reset (sources_libcurl.fn_curl_easy_reset)
#define curl_easy_setopt (sources_libcurl.fn_curl_easy_setopt)
#define curl_easy_strerror (sources_libcurl.fn_curl_easy_strerror)
#define curl_global_init (sources_libcurl.fn_curl_global_init)

#endif
