# chroot/: namespaces, mounts, limits, the build sandbox.
chroot_SRCS := $(wildcard chroot/*.c)
chroot_PKGS :=
