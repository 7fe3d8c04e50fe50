# api/: HTTP server/client plumbing, JSON schemas, auth (libmicrohttpd, jansson, libcurl).
api_SRCS := $(wildcard api/*.c)
api_PKGS := libmicrohttpd jansson libcurl
# libcurl (client.c) and libmicrohttpd (server.c) are opened with dlopen at their first
# use (api/lib*_int.h), by the SONAME of the library built against.
$(call dlopen_soname,api/client.o,API_LIBCURL,libcurl.so)
$(call dlopen_soname,api/server.o,API_LIBMICROHTTPD,libmicrohttpd.so)
