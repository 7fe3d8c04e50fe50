# roots/: build roots made from RPM repositories: configurations, resolution, the lock,
# installing packages into images, the image cache.
roots_SRCS := $(wildcard roots/*.c)
roots_PKGS :=
