# worker/: source fetching and caching, the build pipeline, the worker daemon.
worker_SRCS := $(wildcard worker/*.c)
worker_PKGS := libcurl libgit2 jansson libmagic
# libcurl, libgit2 and libmagic are opened with dlopen at their first use
# (worker/lib*_int.h), by the SONAME of the library built against.
$(call dlopen_soname,worker/fetch.o,WORKER_LIBCURL,libcurl.so)
$(call dlopen_soname,worker/git.o,WORKER_LIBGIT2,libgit2.so)
$(call dlopen_soname,worker/filelist.o,WORKER_LIBMAGIC,libmagic.so)
