/*
 * limits.h - every input limit kiln enforces, in one place (shared/STYLE.md rule 12).
 *
 * Buffers take their maximum from here at init; parsers compare counts and depths against
 * these. Hitting a limit is a normal KILN_ELIMIT error naming the limit, never a crash.
 */
#ifndef KILN_UTIL_LIMITS_H
#define KILN_UTIL_LIMITS_H

#define KILN_KIB ((size_t)1024)
#define KILN_MIB (1024 * KILN_KIB)
#define KILN_GIB (1024 * KILN_MIB)

/* Generic small strings: names, tags, one line of a config file. */
#define KILN_LIMIT_LINE (64 * KILN_KIB)
/* A path kiln builds or accepts (PATH_MAX is 4096 on Linux). */
#define KILN_LIMIT_PATH ((size_t)4096)
/* A whole text file read into memory (config, macro file, rpmrc). */
#define KILN_LIMIT_TEXT_FILE (64 * KILN_MIB)
/* A spec file, after %include. */
#define KILN_LIMIT_SPEC_BYTES (64 * KILN_MIB)
/* The output of one macro expansion. */
#define KILN_LIMIT_MACRO_EXPANSION (256 * KILN_MIB)
/* Macro nesting depth; rpm's max_macro_depth is 64. */
#define KILN_LIMIT_MACRO_DEPTH 64
/* Arguments of one macro call. */
#define KILN_LIMIT_MACRO_ARGS 65536
/* %if nesting depth in a spec. */
#define KILN_LIMIT_IF_DEPTH 256
/* Expression parser recursion depth. */
#define KILN_LIMIT_EXPR_DEPTH 256
/* Output captured from one %(shell) expansion. */
#define KILN_LIMIT_SHELL_OUTPUT (64 * KILN_MIB)
/* An Icon: file read into a spec's header. */
#define KILN_LIMIT_ICON (16 * KILN_MIB)
/* Sources and patches in one spec. */
#define KILN_LIMIT_SOURCES 65536
/* Index entries in one RPM header; rpm refuses more than 0xffff. */
#define KILN_LIMIT_HEADER_TAGS 0xffff
/* Data store of one RPM header; rpm's limit is 256 MiB. */
#define KILN_LIMIT_HEADER_DATA (256 * KILN_MIB)
/* Entries in one cpio payload. */
#define KILN_LIMIT_CPIO_ENTRIES (1024 * 1024)
/* Nesting depth of a query format ([...], %|...|); and the output of one query. */
#define KILN_LIMIT_QF_DEPTH 64
#define KILN_LIMIT_QF_OUTPUT (256 * KILN_MIB)
/* Elements of one header entry (rpm allows 0xffff... entries of 1 MiB of strings each). */
#define KILN_LIMIT_HEADER_COUNT 0xfffff
/* Index entries of a signature header; rpm refuses more than 32. */
#define KILN_LIMIT_SIG_TAGS 32
/* Data store of a signature header; rpm's limit is 64 MiB. */
#define KILN_LIMIT_SIG_DATA (64 * KILN_MIB)
/* Files in one package (rpm has no fixed limit; the header data limit bounds it). */
#define KILN_LIMIT_PACKAGE_FILES (1024 * 1024)
/* A name inside a cpio payload (rpm: 4096 with the NUL). */
#define KILN_LIMIT_CPIO_NAME ((size_t)4096)
/* One OpenPGP packet. */
#define KILN_LIMIT_PGP_PACKET (1 * KILN_MIB)
/* One OpenPGP key or signature file, armored or binary (keys to import, key files). */
#define KILN_LIMIT_PGP_FILE (16 * KILN_MIB)
/* Packets in one OpenPGP certificate (keys, user IDs, signatures). */
#define KILN_LIMIT_PGP_PACKETS 4096
/* Certificates in one keyring directory, or in one file to import. */
#define KILN_LIMIT_PGP_KEYS 10000
/* One HTTP request body (uploads stream to disk and have their own cap). */
#define KILN_LIMIT_HTTP_BODY (16 * KILN_MIB)
/* JSON nesting depth accepted from outside. */
#define KILN_LIMIT_JSON_DEPTH 64
/* One arena (per job, per request, per spec). */
#define KILN_LIMIT_ARENA (1 * KILN_GIB)
/* One log message. */
#define KILN_LIMIT_LOG_MSG (16 * KILN_KIB)

/* kiln diff: files larger than this get no unified diff; more changed lines than this
 * neither (Myers keeps (D+1)^2 ints); file contents kept in memory per package for diffs;
 * the output of one file's diff. */
#define KILN_LIMIT_DIFF_TEXT (1 * KILN_MIB)
#define KILN_LIMIT_DIFF_EDITS 2000
#define KILN_LIMIT_DIFF_KEEP (64 * KILN_MIB)
#define KILN_LIMIT_DIFF_OUTPUT (16 * KILN_MIB)

/* Sources (worker/): one downloaded source file by default (--max-size raises it); a
 * dist-git "sources" checksum file; one URL; redirects followed; one blob or tree walked
 * from git (entries of one tree export or tarball). */
#define KILN_LIMIT_SOURCE_FILE (8 * KILN_GIB)
#define KILN_LIMIT_SUMFILE (4 * KILN_MIB)
#define KILN_LIMIT_URL ((size_t)8192)
#define KILN_LIMIT_REDIRECTS 10
#define KILN_LIMIT_GIT_BLOB (2 * KILN_GIB)
#define KILN_LIMIT_GIT_ENTRIES (1024 * 1024)
#define KILN_LIMIT_GIT_DEPTH 256

/* ELF files read for automatic dependencies: sections in one file, the bytes read from its
 * sections in total (string tables, .dynamic, version sections), and version definition or
 * need entries (with their auxiliary entries) in one file. */
#define KILN_LIMIT_ELF_SECTIONS 65536
#define KILN_LIMIT_ELF_READ (256 * KILN_MIB)
#define KILN_LIMIT_ELF_ENTRIES (1024 * 1024)
/* A pkg-config .pc file read for automatic dependencies, and the nesting of its ${variable}
 * references. */
#define KILN_LIMIT_PC_FILE (4 * KILN_MIB)
#define KILN_LIMIT_PC_DEPTH 64

#endif
