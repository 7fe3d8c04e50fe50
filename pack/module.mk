# pack/: header codec, v4/v6 writers and readers, cpio payloads, compressors, queries.
pack_SRCS := $(wildcard pack/*.c)
pack_PKGS := libzstd liblzma zlib
# libzstd is opened with dlopen at its first use (pack/libzstd_int.h), by the SONAME of
# the library built against: packaging and payload reading need it, kiln's start does not.
$(call dlopen_soname,pack/zstd.o,PACK_LIBZSTD,libzstd.so)
