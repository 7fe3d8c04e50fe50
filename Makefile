# kiln - one non-recursive GNU Makefile (shared/STYLE.md rule 19).
#
#   make            build build/kiln and build/libkiln.a
#   make check      install missing Debian packages, build, lint, run every test
#   make demo       install missing Debian packages, build, run the demo
#   make asan       ASan+UBSan build of the unit tests, run
#   make lint       formatting, cppcheck, layering, symbol and banned-call checks
#   make bench      run every benchmark in bench/, rewrite bench/RESULTS.md
#   make fuzz       build the libFuzzer targets with clang, run each FUZZ_SECONDS
#   make install    PREFIX=/usr/local DESTDIR=
#   make deps       install missing Debian packages (scripts/deps.sh)
#   make clean
#
# Local overrides go in an untracked config.mak. V=1 shows full commands.

-include config.mak

VERSION := $(shell cat VERSION)
PREFIX ?= /usr/local
DESTDIR ?=
BUILD ?= build
CC ?= cc
PKG_CONFIG ?= pkg-config
FUZZ_SECONDS ?= 600

# Modules in layering order: each may include only the headers of those before it.
MODULES := util macro rpmtag spec pack sign repo chroot api sources roots batch worker scheduler cli

# $(call dlopen_soname,OBJ,MACRO,LIB): OBJ (under $(BUILD)) is compiled with
# -DMACRO_SONAME='"SONAME"' of the library LIB (libfoo.so) found by $(CC), for the files
# that open a library with dlopen rather than link it (see docs/ARCHITECTURE.md).
soname_of = $(shell objdump -p "$$($(CC) -print-file-name=$(1))" 2>/dev/null | \
	awk '$$1 == "SONAME" { print $$2 }')
define dlopen_soname_rule
$$(BUILD)/$(1): CFLAGS_ALL += $(if $(3),-D$(2)_SONAME='"$(3)"')
endef
dlopen_soname = $(eval $(call dlopen_soname_rule,$(1),$(2),$(call soname_of,$(3))))
include $(foreach m,$(MODULES),$(wildcard $(m)/module.mk))

PKGS := $(sort $(foreach m,$(MODULES),$($(m)_PKGS)))
PKG_CFLAGS := $(if $(PKGS),$(shell $(PKG_CONFIG) --cflags $(PKGS) 2>/dev/null))
PKG_LIBS := $(if $(PKGS),$(shell $(PKG_CONFIG) --libs $(PKGS) 2>/dev/null))

WARNINGS := -Wall -Wextra -Werror -Wshadow -Wstrict-prototypes -Wmissing-prototypes \
	-Wformat=2 -Wvla -Wwrite-strings -Wpointer-arith -Wimplicit-fallthrough -Wundef \
	-fno-common
OPTFLAGS ?= -O2 -g
SANFLAGS ?=
CFLAGS_ALL = -std=c17 $(WARNINGS) $(OPTFLAGS) $(SANFLAGS) -D_GNU_SOURCE -I. $(PKG_CFLAGS) \
	-DKILN_VERSION='"$(VERSION)"' -MMD -MP $(CFLAGS)
LDFLAGS_ALL = $(SANFLAGS) $(LDFLAGS)
LIBS_ALL = $(PKG_LIBS) -lpthread $(LIBS)

ifeq ($(V),1)
Q :=
else
Q := @
endif

LIB_SRCS := $(foreach m,$(MODULES),$($(m)_SRCS))
LIB_OBJS := $(LIB_SRCS:%.c=$(BUILD)/%.o)

# The dashboard (web/, served by the scheduler): embedded into libkiln.a as a generated C
# file of byte arrays (scripts/web-embed.sh), so a clean build serves it with nothing
# installed beside the binary.
WEB_FILES := $(sort $(wildcard web/*.html web/*.css web/*.js web/*.svg))
WEB_GEN := $(BUILD)/gen/web_assets.c
LIB_OBJS += $(BUILD)/gen/web_assets.o
MAIN_OBJ := $(BUILD)/cli/main.o
LIBKILN := $(BUILD)/libkiln.a
KILN := $(BUILD)/kiln

# Unit tests: one runner per module, built from tests/unit/<module>/test_*.c.
UNIT_MODULES := $(notdir $(patsubst %/,%,$(sort $(dir $(wildcard tests/unit/*/test_*.c)))))
UNIT_HARNESS := $(BUILD)/tests/unit/runner.o
UNIT_BINS := $(UNIT_MODULES:%=$(BUILD)/tests/unit-%)
CMOCKA_LIBS = $(shell $(PKG_CONFIG) --libs cmocka 2>/dev/null || echo -lcmocka)

# Test-only helper programs (tests/helpers/<name>.c -> build/tests/<name>), for pytest.
HELPER_BINS := $(patsubst tests/helpers/%.c,$(BUILD)/tests/%,$(wildcard tests/helpers/*.c))

# Fuzz targets: fuzz/fuzz_<target>.c; replayed over fuzz/corpus/<target> in make check.
FUZZ_TARGETS := $(patsubst fuzz/fuzz_%.c,%,$(wildcard fuzz/fuzz_*.c))
REPLAY_BINS := $(FUZZ_TARGETS:%=$(BUILD)/fuzz/replay-%)

.PHONY: all lib unit-bins unit check check-run demo asan lint format bench fuzz fuzz-bins \
	fuzz-replay-bins helper-bins install clean deps
.DEFAULT_GOAL := all
# Keep intermediate objects (runner.o, fuzz objects) so rebuilds stay incremental.
.SECONDARY:

all: $(KILN)
lib: $(LIBKILN)

$(BUILD)/%.o: %.c
	@mkdir -p $(@D)
	@$(if $(Q),echo "  CC      $<")
	$(Q)$(CC) $(CFLAGS_ALL) -c -o $@ $<

$(WEB_GEN): $(WEB_FILES) scripts/web-embed.sh
	@$(if $(Q),echo "  GEN     $@")
	$(Q)./scripts/web-embed.sh $@ $(WEB_FILES)

$(BUILD)/gen/web_assets.o: $(WEB_GEN)
	@$(if $(Q),echo "  CC      $<")
	$(Q)$(CC) $(CFLAGS_ALL) -c -o $@ $<

$(LIBKILN): $(LIB_OBJS)
	@mkdir -p $(@D)
	@$(if $(Q),echo "  AR      $@")
	$(Q)rm -f $@ && ar rcs $@ $^

# Small libraries every kiln process would load at start (jansson, liblzma, Lua, zlib) are
# linked in from their archives where installed (Debian's -dev packages ship them): loading
# them as shared objects was ~0.5 ms of each `kiln` start, which sandbox runs and CLI calls
# pay (bench/chroot). Not libzstd: Debian's libzstd.a is built without multi-threading
# (ZSTD_c_nbWorkers is refused), which large payloads use; it is opened on first use, like
# the heavy ones (libcrypto, libcurl, libgit2, libmagic, sqlite, libmicrohttpd).
# KILN_STATIC_LIBS= links all of them shared; a security update of a static one needs a
# rebuild of kiln (docs/ARCHITECTURE.md).
KILN_STATIC_LIBS ?= jansson lzma lua5.4 z
KILN_STATIC_AR := $(foreach l,$(KILN_STATIC_LIBS),$(filter /%,$(shell $(CC) -print-file-name=lib$(l).a)))
KILN_STATIC_L := $(patsubst lib%.a,-l%,$(notdir $(KILN_STATIC_AR)))

# Full RELRO (-z now): every symbol is bound at start and the GOT is read-only, so the
# sandbox's forked processes never resolve symbols (and dirty pages) each on their own.
$(KILN): $(MAIN_OBJ) $(LIBKILN)
	@$(if $(Q),echo "  LD      $@")
	$(Q)$(CC) $(LDFLAGS_ALL) -Wl,--as-needed -Wl,-z,relro,-z,now -o $@ $(MAIN_OBJ) $(LIBKILN) \
		$(KILN_STATIC_AR) $(filter-out $(KILN_STATIC_L),$(LIBS_ALL)) -lm

# Each unit runner links its module's tests, the shared harness and libkiln.a.
unit_objs = $(patsubst %.c,$(BUILD)/%.o,$(wildcard tests/unit/$(1)/test_*.c))
.SECONDEXPANSION:
$(BUILD)/tests/unit-%: $$(call unit_objs,$$*) $(UNIT_HARNESS) $(LIBKILN)
	@$(if $(Q),echo "  LD      $@")
	$(Q)$(CC) $(LDFLAGS_ALL) -o $@ $(filter %.o,$^) $(LIBKILN) $(CMOCKA_LIBS) $(LIBS_ALL)

$(HELPER_BINS): $(BUILD)/tests/%: $(BUILD)/tests/helpers/%.o $(LIBKILN)
	@$(if $(Q),echo "  LD      $@")
	$(Q)$(CC) $(LDFLAGS_ALL) -o $@ $< $(LIBKILN) $(LIBS_ALL)

$(BUILD)/fuzz/replay-%: $(BUILD)/fuzz/fuzz_%.o $(BUILD)/fuzz/replay.o $(LIBKILN)
	@$(if $(Q),echo "  LD      $@")
	$(Q)$(CC) $(LDFLAGS_ALL) -o $@ $(filter %.o,$^) $(LIBKILN) $(LIBS_ALL)

unit-bins: $(UNIT_BINS)
helper-bins: $(HELPER_BINS)
fuzz-replay-bins: $(REPLAY_BINS)

unit: $(UNIT_BINS)
	$(Q)./scripts/run-unit.sh $(UNIT_BINS)

deps:
	./scripts/deps.sh
	./scripts/web-deps.sh

# check and demo install what is missing first, then re-enter make so that pkg-config
# sees the freshly installed libraries.
check:
	./scripts/deps.sh
	./scripts/web-deps.sh
	$(MAKE) --no-print-directory check-run

check-run: all unit-bins fuzz-replay-bins helper-bins
	./scripts/check.sh

demo:
	./scripts/deps.sh
	$(MAKE) --no-print-directory all
	./scripts/demo.sh

asan:
	$(MAKE) --no-print-directory BUILD=build-asan OPTFLAGS="-O1 -g" \
		SANFLAGS="-fsanitize=address,undefined -fno-sanitize-recover=all -fno-omit-frame-pointer" \
		unit

lint: $(LIBKILN)
	./scripts/lint.sh $(LIBKILN)

format:
	clang-format -i $$(git ls-files --cached --others --exclude-standard '*.c' '*.h' | \
		grep -v '^tests/data/')

bench: all
	./scripts/bench.sh

fuzz:
	$(MAKE) --no-print-directory BUILD=build-fuzz CC=clang OPTFLAGS="-O1 -g" \
		SANFLAGS="-fsanitize=address,undefined,fuzzer-no-link -fno-omit-frame-pointer" fuzz-bins
	./scripts/fuzz.sh build-fuzz $(FUZZ_SECONDS) $(FUZZ_TARGETS)

fuzz-bins: $(FUZZ_TARGETS:%=$(BUILD)/fuzz/fuzzer-%)

$(BUILD)/fuzz/fuzzer-%: $(BUILD)/fuzz/fuzz_%.o $(LIBKILN)
	@$(if $(Q),echo "  LD      $@")
	$(Q)$(CC) $(LDFLAGS_ALL) -fsanitize=fuzzer -o $@ $< $(LIBKILN) $(LIBS_ALL)

install: all
	install -d $(DESTDIR)$(PREFIX)/bin $(DESTDIR)$(PREFIX)/lib/kiln
	install -m 0755 $(KILN) $(DESTDIR)$(PREFIX)/bin/kiln
	cp -R configs/. $(DESTDIR)$(PREFIX)/lib/kiln/

clean:
	rm -rf build build-asan build-fuzz

-include $(shell find $(BUILD) -name '*.d' 2>/dev/null)
