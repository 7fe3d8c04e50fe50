# util/: primitives. OpenSSL (libcrypto) for digests only.
util_SRCS := $(wildcard util/*.c)
util_PKGS := libcrypto
