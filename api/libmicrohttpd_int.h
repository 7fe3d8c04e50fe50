/*
 * libmicrohttpd_int.h - libmicrohttpd, opened on first use rather than linked (util_dl_ready).
 *
 * Only api/server.c includes this, after <microhttpd.h>. kiln does not link libmicrohttpd: mapping
 * and relocating it and the libraries it pulls in would cost every kiln command at start
 * (about 3 ms), though only this file uses it. Its calls go through a table of entry
 * points filled on first use; the names below turn each call into a call through the
 * table. A call to a function missing from the list fails to link: add new ones here.
 */
#ifndef KILN_API_LIBMICROHTTPD_INT_H
#define KILN_API_LIBMICROHTTPD_INT_H

#ifndef API_LIBMICROHTTPD_SONAME
#define API_LIBMICROHTTPD_SONAME "libmicrohttpd.so" /* the Makefile passes the exact SONAME */
#endif

#define API_LIBMICROHTTPD_FUNCS(X)                                                                 \
	X(MHD_add_connection)                                                                      \
	X(MHD_add_response_header)                                                                 \
	X(MHD_create_response_from_buffer)                                                         \
	X(MHD_create_response_from_fd_at_offset64)                                                 \
	X(MHD_destroy_response)                                                                    \
	X(MHD_get_connection_info)                                                                 \
	X(MHD_get_connection_values)                                                               \
	X(MHD_is_feature_supported)                                                                \
	X(MHD_lookup_connection_value)                                                             \
	X(MHD_queue_response)                                                                      \
	X(MHD_resume_connection)                                                                   \
	X(MHD_start_daemon)                                                                        \
	X(MHD_stop_daemon)                                                                         \
	X(MHD_suspend_connection)

/* The entry points (the file's registry of them). */
struct api_libmicrohttpd_fns {
#define API_LIBMICROHTTPD_FIELD(f) __typeof__(f) *fn_##f;
	API_LIBMICROHTTPD_FUNCS(API_LIBMICROHTTPD_FIELD)
#undef API_LIBMICROHTTPD_FIELD
};

#define API_LIBMICROHTTPD_SYM(f) {#f, offsetof(struct api_libmicrohttpd_fns, fn_##f)},
static const struct util_dl_sym api_libmicrohttpd_syms[] = {
    API_LIBMICROHTTPD_FUNCS(API_LIBMICROHTTPD_SYM)};
#undef API_LIBMICROHTTPD_SYM

#define MHD_add_connection (api_libmicrohttpd.fn_MHD_add_connection)
#define MHD_add_response_header (api_libmicrohttpd.fn_MHD_add_response_header)
#define MHD_create_response_from_buffer (api_libmicrohttpd.fn_MHD_create_response_from_buffer)
#define MHD_create_response_from_fd_at_offset64                                                    \
	(api_libmicrohttpd.fn_MHD_create_response_from_fd_at_offset64)
#define MHD_destroy_response (api_libmicrohttpd.fn_MHD_destroy_response)
#define MHD_get_connection_info (api_libmicrohttpd.fn_MHD_get_connection_info)
#define MHD_get_connection_values (api_libmicrohttpd.fn_MHD_get_connection_values)
#define MHD_is_feature_supported (api_libmicrohttpd.fn_MHD_is_feature_supported)
#define MHD_lookup_connection_value (api_libmicrohttpd.fn_MHD_lookup_connection_value)
#define MHD_queue_response (api_libmicrohttpd.fn_MHD_queue_response)
#define MHD_resume_connection (api_libmicrohttpd.fn_MHD_resume_connection)
#define MHD_start_daemon (api_libmicrohttpd.fn_MHD_start_daemon)
#define MHD_stop_daemon (api_libmicrohttpd.fn_MHD_stop_daemon)
#define MHD_suspend_connection (api_libmicrohttpd.fn_MHD_suspend_connection)

#endif
