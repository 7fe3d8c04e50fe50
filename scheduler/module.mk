# scheduler/: job store (sqlite3), dispatch, leases, publishing, reproducibility reruns.
scheduler_SRCS := $(wildcard scheduler/*.c)
scheduler_PKGS := sqlite3 jansson
# libsqlite3 is opened with dlopen at its first use (scheduler/libsqlite3_int.h).
$(call dlopen_soname,scheduler/store_sqlite.o,SCHEDULER_LIBSQLITE3,libsqlite3.so)
