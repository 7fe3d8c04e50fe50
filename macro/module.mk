# macro/: the rpm macro language, expressions, Lua, rpmrc/config loading, vercmp.
macro_SRCS := $(wildcard macro/*.c)
macro_PKGS := lua5.4
