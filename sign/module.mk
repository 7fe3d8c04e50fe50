# sign/: OpenPGP packets, keys, signatures, keyring (OpenSSL).
sign_SRCS := $(wildcard sign/*.c)
sign_PKGS := libcrypto
$(call dlopen_soname,sign/openssl.o,SIGN_LIBCRYPTO,libcrypto.so)
