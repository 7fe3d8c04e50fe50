# sources/: source fetching (libcurl, libgit2), checksum files and the content-addressed cache.
sources_SRCS := $(wildcard sources/*.c)
sources_PKGS := libcurl libgit2
# libcurl and libgit2 are opened with dlopen at their first use (sources/lib*_int.h), by the
# SONAME of the library built against.
$(call dlopen_soname,sources/fetch.o,SOURCES_LIBCURL,libcurl.so)
$(call dlopen_soname,sources/git.o,SOURCES_LIBGIT2,libgit2.so)
