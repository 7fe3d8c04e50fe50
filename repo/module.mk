# repo/: dnf/zypper repository metadata (createrepo_c's layout), written reproducibly.
repo_SRCS := $(wildcard repo/*.c)
repo_PKGS :=
