#!/bin/sh
# How fuzz/corpus/elf/ was made: tiny C programs and libraries, linked small and stripped,
# for x86_64, i386 and x32 (gcc; -m32/-mx32 link with -nostdlib against /usr/lib32's libc)
# and for big-endian powerpc64, powerpc, mips and aarch64_be (clang and ld.lld), plus
# truncated copies. The unit tests (tests/unit/worker) and tests/integration/test_autodeps.py
# use these files too, so regenerate only on purpose. usage: fuzz/elf-seeds.sh OUTDIR
set -eu
out=$(cd "$1" && pwd)
tmp=$(mktemp -d /tmp/kiln-elf-seeds-XXXXXX)
trap 'rm -rf "$tmp"' EXIT
cd "$tmp"

cat > lib.c <<'EOF'
int puts(const char *);
int foo_old(void) { return 1; }
int foo_new(void) { return puts("x"); }
__asm__(".symver foo_old,foo@FOO_1.0");
__asm__(".symver foo_new,foo@@FOO_2.0");
EOF
printf 'FOO_1.0 { global: foo_old; local: *; };\nFOO_2.0 { global: foo_new; } FOO_1.0;\n' > lib.map
printf 'int puts(const char *s) { (void)s; return 0; }\n' > stub.c
printf 'STUB_1 { global: puts; local: *; };\n' > stub.map
printf 'int foo(void);\nvoid _start(void) { foo(); for (;;) ; }\n' > main.c
printf '#include <stdio.h>\nint main(void) { puts("hi"); return 0; }\n' > hello.c

L="-Wl,-z,noseparate-code -Wl,-z,max-page-size=4096 -Wl,--build-id=none -s -Os"
gcc $L -o exe-x86_64 hello.c
gcc $L -shared -fPIC -o libfoo-x86_64.so lib.c -Wl,-soname,libfoo.so.1 \
	-Wl,--version-script,lib.map
gcc $L -shared -fPIC -o libsysv-x86_64.so stub.c -Wl,-soname,libsysv.so.2 \
	-Wl,--hash-style=sysv -Wl,--version-script,stub.map
gcc -m32 $L -nostdlib -shared -fPIC -o libfoo-i386.so lib.c /usr/lib32/libc.so.6 \
	-Wl,-soname,libfoo.so.1 -Wl,--version-script,lib.map -Wl,--hash-style=both
gcc -m32 $L -nostdlib -fno-pie -no-pie -o exe-i386 main.c libfoo-i386.so /usr/lib32/libc.so.6 \
	-Wl,-dynamic-linker,/lib/ld-linux.so.2
gcc -mx32 $L -nostdlib -shared -fPIC -o libstub-x32.so stub.c -Wl,-soname,libstub.so.1 \
	-Wl,--version-script,stub.map
gcc -Os -c -o obj-x86_64.o lib.c

for t in powerpc64-linux-gnu powerpc-linux-gnu mips-linux-gnu aarch64_be-linux-gnu; do
	a=${t%%-*}
	clang --target=$t -fPIC -Os -c stub.c -o stub-$a.o
	ld.lld -shared -soname libstub.so.1 --version-script stub.map -z max-page-size=4096 -s \
		-o libstub-$a.so stub-$a.o
	clang --target=$t -fPIC -Os -c lib.c -o lib-$a.o
	ld.lld -shared -soname libfoo.so.1 --version-script lib.map -z max-page-size=4096 -s \
		-o libfoo-$a.so lib-$a.o libstub-$a.so
	clang --target=$t -fPIC -Os -c main.c -o main-$a.o
	ld.lld -pie -dynamic-linker /lib/ld.so.1 -z max-page-size=4096 -s -o exe-$a main-$a.o \
		libfoo-$a.so
done

cp exe-x86_64 exe-i386 libfoo-x86_64.so libsysv-x86_64.so libfoo-i386.so libstub-x32.so \
	obj-x86_64.o libfoo-powerpc64.so exe-powerpc64 libfoo-powerpc.so exe-powerpc \
	libfoo-mips.so exe-mips libfoo-aarch64_be.so "$out"/
head -c 64 libfoo-x86_64.so > "$out"/trunc-header
head -c 2000 libfoo-powerpc64.so > "$out"/trunc-2000
printf '\177ELF\2\1\1' > "$out"/trunc-ident
