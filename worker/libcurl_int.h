/*
 * libcurl_int.h - libcurl, opened on first use rather than linked.
 *
 * Only worker/fetch.c includes this, after <curl/curl.h>. kiln does not link libcurl: the
 * library and the ones it pulls in (TLS, ssh, Kerberos, LDAP...) would be mapped and
 * relocated at every start of every command (about 5 ms), though only fetching uses it.
 * The file's calls go through a table of entry points that dlopen(3) fills at its global
 * init; the names below turn each call into a call through the table. A call to a
 * function missing from the list fails to link: add new ones here.
 */
#ifndef KILN_WORKER_LIBCURL_INT_H
#define KILN_WORKER_LIBCURL_INT_H

#define WORKER_LIBCURL_FUNCS(X)                                                                    \
	X(curl_easy_cleanup)                                                                       \
	X(curl_easy_getinfo)                                                                       \
	X(curl_easy_init)                                                                          \
	X(curl_easy_perform)                                                                       \
	X(curl_easy_reset)                                                                         \
	X(curl_easy_setopt)                                                                        \
	X(curl_easy_strerror)                                                                      \
	X(curl_global_init)

/* The entry points, set once by the global init (the file's registry of them). */
struct worker_libcurl_fns {
#define WORKER_LIBCURL_FIELD(f) __typeof__(f) *fn_##f;
	WORKER_LIBCURL_FUNCS(WORKER_LIBCURL_FIELD)
#undef WORKER_LIBCURL_FIELD
};

/* curl.h wraps these two in type-checking macros; the table takes their place. */
#undef curl_easy_setopt
#undef curl_easy_getinfo
#define curl_easy_cleanup (worker_libcurl.fn_curl_easy_cleanup)
#define curl_easy_getinfo (worker_libcurl.fn_curl_easy_getinfo)
#define curl_easy_init (worker_libcurl.fn_curl_easy_init)
#define curl_easy_perform (worker_libcurl.fn_curl_easy_perform)
#define curl_easy_reset (worker_libcurl.fn_curl_easy_reset)
#define curl_easy_setopt (worker_libcurl.fn_curl_easy_setopt)
#define curl_easy_strerror (worker_libcurl.fn_curl_easy_strerror)
#define curl_global_init (worker_libcurl.fn_curl_global_init)

#endif
