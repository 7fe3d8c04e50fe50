# pack/: header codec, v4/v6 writers and readers, cpio payloads, compressors, queries.
pack_SRCS := $(wildcard pack/*.c)
pack_PKGS := libzstd liblzma zlib
