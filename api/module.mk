# api/: HTTP server/client plumbing, JSON schemas, auth (libmicrohttpd, jansson, libcurl).
api_SRCS := $(wildcard api/*.c)
api_PKGS := libmicrohttpd jansson libcurl
