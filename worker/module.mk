# worker/: source fetching and caching, the build pipeline, the worker daemon.
worker_SRCS := $(wildcard worker/*.c)
worker_PKGS := libcurl libgit2 jansson libmagic
