# cli/: the kiln command. cli/main.c is the program; the rest goes into libkiln.a.
cli_SRCS := $(filter-out cli/main.c,$(wildcard cli/*.c))
cli_PKGS :=
