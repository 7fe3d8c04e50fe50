# roots/: root configurations, repository metadata, libsolv resolution, the lock;
# installing packages into images and the image cache.
roots_SRCS := $(wildcard roots/*.c)
roots_PKGS := libsolv libsolvext
# libsolvext (and through it libsolv) is opened with dlopen at its first use
# (roots/libsolv_int.h), by the SONAME of the library built against.
$(call dlopen_soname,roots/solve.o,ROOTS_LIBSOLVEXT,libsolvext.so)
