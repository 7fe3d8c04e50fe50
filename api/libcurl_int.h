/*
 * libcurl_int.h - libcurl, opened on first use rather than linked (util_dl_ready).
 *
 * Only api/client.c includes this, after <curl/curl.h>. kiln does not link libcurl: mapping
 * and relocating it and the libraries it pulls in would cost every kiln command at start
 * (about 5 ms), though only this file uses it. Its calls go through a table of entry
 * points filled on first use; the names below turn each call into a call through the
 * table. A call to a function missing from the list fails to link: add new ones here.
 */
#ifndef KILN_API_LIBCURL_INT_H
#define KILN_API_LIBCURL_INT_H

#ifndef API_LIBCURL_SONAME
#define API_LIBCURL_SONAME "libcurl.so" /* the Makefile passes the exact SONAME */
#endif

#define API_LIBCURL_FUNCS(X)                                                                       \
	X(curl_easy_cleanup)                                                                       \
	X(curl_easy_getinfo)                                                                       \
	X(curl_easy_init)                                                                          \
	X(curl_easy_perform)                                                                       \
	X(curl_easy_reset)                                                                         \
	X(curl_easy_setopt)                                                                        \
	X(curl_easy_strerror)                                                                      \
	X(curl_global_init)                                                                        \
	X(curl_slist_append)                                                                       \
	X(curl_slist_free_all)

/* The entry points (the file's registry of them). */
struct api_libcurl_fns {
#define API_LIBCURL_FIELD(f) __typeof__(f) *fn_##f;
	API_LIBCURL_FUNCS(API_LIBCURL_FIELD)
#undef API_LIBCURL_FIELD
};

#define API_LIBCURL_SYM(f) {#f, offsetof(struct api_libcurl_fns, fn_##f)},
static const struct util_dl_sym api_libcurl_syms[] = {API_LIBCURL_FUNCS(API_LIBCURL_SYM)};
#undef API_LIBCURL_SYM

/* The library's header wraps these in type-checking macros; the table takes their place. */
#undef curl_easy_setopt
#undef curl_easy_getinfo
#define curl_easy_cleanup (api_libcurl.fn_curl_easy_cleanup)
#define curl_easy_getinfo (api_libcurl.fn_curl_easy_getinfo)
#define curl_easy_init (api_libcurl.fn_curl_easy_init)
#define curl_easy_perform (api_libcurl.fn_curl_easy_perform)
#define curl_easy_reset (api_libcurl.fn_curl_easy_reset)
#define curl_easy_setopt (api_libcurl.fn_curl_easy_setopt)
#define curl_easy_strerror (api_libcurl.fn_curl_easy_strerror)
#define curl_global_init (api_libcurl.fn_curl_global_init)
#define curl_slist_append (api_libcurl.fn_curl_slist_append)
#define curl_slist_free_all (api_libcurl.fn_curl_slist_free_all)

#endif
