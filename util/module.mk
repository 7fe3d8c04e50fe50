# util/: primitives. OpenSSL (libcrypto) for digests only.
util_SRCS := $(wildcard util/*.c)
util_PKGS := libcrypto
$(call dlopen_soname,util/digest.o,UTIL_LIBCRYPTO,libcrypto.so)
