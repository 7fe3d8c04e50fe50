# batch/: a batch's build graph from its specs (edges, cycles, bootstrap breaks, levels).
batch_SRCS := $(wildcard batch/*.c)
