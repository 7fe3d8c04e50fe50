# scheduler/: job store (sqlite3), dispatch, leases, publishing, reproducibility reruns.
scheduler_SRCS := $(wildcard scheduler/*.c)
scheduler_PKGS := sqlite3
