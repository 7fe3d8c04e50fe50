# rpmtag/: rpm's header tag table, typed tag sets and the query-format engine.
rpmtag_SRCS := $(wildcard rpmtag/*.c)
