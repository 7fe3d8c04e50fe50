# sign/: OpenPGP packets, keys, signatures, keyring (OpenSSL).
sign_SRCS := $(wildcard sign/*.c)
sign_PKGS := libcrypto
