# scheduler/: job store (sqlite3 or PostgreSQL), dispatch, leases, publishing, reproducibility reruns.
scheduler_SRCS := $(wildcard scheduler/*.c)
scheduler_PKGS := sqlite3 libpq jansson
# libsqlite3 is opened with dlopen at its first use (scheduler/libsqlite3_int.h).
$(call dlopen_soname,scheduler/store_sqlite.o,SCHEDULER_LIBSQLITE3,libsqlite3.so)
# libpq likewise, by the PostgreSQL store only (scheduler/libpq_int.h).
$(call dlopen_soname,scheduler/store_pg.o,SCHEDULER_LIBPQ,libpq.so)
# and by the store's unit test, which listens to the schedulers' notifications itself
$(call dlopen_soname,tests/unit/scheduler/test_store.o,SCHEDULER_LIBPQ,libpq.so)
