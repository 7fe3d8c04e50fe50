# worker/: the build pipeline and the worker daemon.
worker_SRCS := $(wildcard worker/*.c)
worker_PKGS := jansson libmagic
# libmagic is opened with dlopen at its first use (worker/libmagic_int.h), by the SONAME of
# the library built against.
$(call dlopen_soname,worker/fileclass.o,WORKER_LIBMAGIC,libmagic.so)
