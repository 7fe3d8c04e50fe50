# worker/: source fetching and caching, the build pipeline, the worker daemon.
worker_SRCS := $(wildcard worker/*.c)
worker_PKGS := libcurl libgit2 jansson libmagic
# libcurl and libgit2 are opened with dlopen at their first use (worker/libcurl_int.h,
# worker/libgit2_int.h), by the SONAME of the library built against.
worker_soname = $(shell objdump -p "$$($(CC) -print-file-name=$(1))" 2>/dev/null | \
	awk '$$1 == "SONAME" { print $$2 }')
WORKER_LIBCURL_SONAME := $(call worker_soname,libcurl.so)
WORKER_LIBGIT2_SONAME := $(call worker_soname,libgit2.so)
$(BUILD)/worker/fetch.o: CFLAGS_ALL += $(if $(WORKER_LIBCURL_SONAME),-DWORKER_LIBCURL_SONAME='"$(WORKER_LIBCURL_SONAME)"')
$(BUILD)/worker/git.o: CFLAGS_ALL += $(if $(WORKER_LIBGIT2_SONAME),-DWORKER_LIBGIT2_SONAME='"$(WORKER_LIBGIT2_SONAME)"')
