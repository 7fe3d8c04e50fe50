# spec/: spec parser, conditionals, %files, BuildSystem, -a/-p, query format over specs.
spec_SRCS := $(wildcard spec/*.c)
spec_PKGS := jansson
