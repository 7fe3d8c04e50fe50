/*
 * worker.h - what a worker does with a job: run a spec's build
 * stages through an executor (host process or the chroot sandbox), turn the buildroot into
 * package file lists with automatic dependencies, and write the binary and source packages.
 *
 * Fetching and caching sources is sources/sources.h, a layer below.
 *
 * Sections (each owned by its sources; keep additions inside the matching section):
 *   1. Packaged files: %files applied to a buildroot      (worker/filelist.c)
 *   2. Automatic dependencies: ELF, #!, .pc (worker/elf.c autodeps.c depline.c pkgconfig.c)
 *   3. The build pipeline                                (worker/build.c, package.c, srpm.c)
 *   4. The worker daemon                                 (worker/daemon*.c)
 */
#ifndef KILN_WORKER_H
#define KILN_WORKER_H

#include "util/util.h"

#include <signal.h>

#include "macro/macro.h"
#include "spec/spec.h"
#include "pack/pack.h"
#include "sign/sign.h"
#include "chroot/chroot.h"
#include "sources/sources.h"
#include "roots/roots.h"

/* ======================================================================================== */
/* 1. Packaged files: %files applied to a buildroot                                         */
/* ======================================================================================== */

/* %files applied to a buildroot the way rpmbuild 4.20 does it (build/files.c): globs with
 * braces, directories recursed unless %dir, %exclude, %ghost, %dev, %config, %doc,
 * %license, %docdir and %__docdir_path, %lang, %caps, %verify, %attr/%defattr, symlink
 * targets, hard-link sets, RemovePathPostfixes, duplicate merging ("File listed twice"),
 * relative %doc/%license copied from the build directory, %files -f lists, FILECLASS and
 * MIME strings from libmagic and FILECOLORS from the ELF class. Every path is resolved
 * beneath the buildroot (openat2 RESOLVE_BENEATH): ".." above "/" and symlinked parents
 * that leave the buildroot are refused, so a hostile %install cannot make kiln package
 * host files. Known differences from rpm: %caps text is kept as written (rpm normalises
 * it through libcap); %pubkey files are packaged but their PUBKEYS header tag is not
 * produced. */

/* The files of one package, ready for pack_write(). Every string and the array live in
 * the list's arena; release with worker_filelist_release(). */
struct worker_filelist {
	struct pack_file *files; /* sorted by path */
	const char **disk;       /* files[i] in the buildroot on the host (symlinked parents
	                          * resolved), what classification reads */
	size_t n, cap;
	bool classified;  /* color, fclass and mime filled (worker_filelist_classify) */
	const char *root; /* the buildroot the disk paths lie in (realpath), in the arena */
	struct kiln_arena arena;
	/* Buildroot-relative disk paths ("/usr/bin/x", symlinked parents resolved, before
	 * RemovePathPostfixes) of every regular file and symlink the %files lines matched:
	 * packaged, %ghost and %exclude'd ones. What the unpackaged-files check counts as
	 * listed (rpm's check-files input). Sorted, unique. */
	const char **claimed;
	size_t nclaimed, capclaimed;
};

struct worker_filelist_opts {
	const char *buildroot;    /* absolute host path of %{buildroot} */
	const char *builddir;     /* absolute host path where relative %doc/%license and
	                        * %files -f lists are read (the build subdirectory,
	                        * %{_builddir}/%{buildsubdir}) */
	struct macro_ctx *macros; /* %_docdir, %_licensedir, %_docdir_fmt, %__docdir_path,
	                           * %_*_terminate_build; warnings go to its diagnostics */
	bool clamp_mtime;         /* clamp mtimes to clamp_to (%build_mtime_policy) */
	uint32_t clamp_to;
	/* The mtime of entries that do not exist on disk (%ghost, %dev): rpm uses "now"
	 * (then clamps); 0 means the wall clock. */
	uint32_t now;
	/* rpm <= 4.19.0: without %attr/%defattr a file's owner and group are its owner's
	 * names on disk (getpwuid/getgrgid). rpm 4.20 always records root (rpm PR #2797);
	 * that is the default (false). */
	bool owner_from_disk;
	/* The package format the list is for: 6 classifies files by MIME type only (v6
	 * stores MIME types), anything else by libmagic description only (v4's FILECLASS). */
	int rpmformat;
	/* Leave classification to a later worker_filelist_classify() (the package writer runs
	 * it while the payload is compressed). */
	bool defer_classify;
	/* The sandbox's view of the top directory and the host's: an absolute %files -f path
	 * beneath sandbox_top (%{_builddir}/... as the stages saw it, e.g. Fedora's
	 * %pyproject_files) is read beneath topdir. NULL without a sandbox. */
	const char *sandbox_top;
	const char *topdir;
};

/* Collect pkg's files: read its %files -f lists (relative to o->builddir, parsed into
 * pkg with spec_files_add_text(), so call this once per package), copy relative
 * %doc/%license files into the buildroot (%{_docdir}/<%_docdir_fmt>, default
 * %{NAME}-%{VERSION} when the macro is undefined, as rpm), apply every entry and fill *out
 * (initialised here; release it even on error). Problems use rpm's wording: "File not
 * found: BUILDROOT/PATH" (a glob that matches nothing is tried literally, as rpm does),
 * "Directory not found", "Not a directory", "More than one file on a line", "Can't mix
 * special %doc with other forms", "Illegal character (0x1f) in filename", "Path is outside
 * buildroot", "Symlink points to BuildRoot", and the entry's own parse error; err is
 * located at the spec (or list) file and line. Like rpmbuild, collection goes on after a
 * per-file error so that all of them are reported: the first is returned (KILN_ENOTFOUND,
 * KILN_EPRIV, KILN_ESYNTAX, KILN_EINVAL), the others are sent to o->macros' diagnostics
 * at error level. Warnings ("File listed twice", "absolute symlink", missing %doc files
 * when %_missing_doc_files_terminate_build is 0, ...) go to the diagnostics; "File listed
 * twice" is an error when %_duplicate_files_terminate_build is true. KILN_EIO and
 * KILN_ENOMEM stop at once. Not thread-safe for one spec (it adds the lists' entries). */
KILN_MUST_CHECK kiln_rc worker_filelist_collect(struct worker_filelist *out, struct spec *spec,
                                                struct spec_package *pkg,
                                                const struct worker_filelist_opts *o,
                                                struct kiln_err *err);

/* Classify a collected list's files for a package of format rpmformat (4 or 6): libmagic's
 * description (v4 FILECLASS, kept as rpm filters it) or MIME type (v6), and FILECOLORS
 * from ELF headers; strings go to l's arena. Does nothing when already classified. Uses
 * only l (safe while another thread reads the files' other fields). Errors: libmagic
 * missing or its database unreadable, KILN_ENOMEM. */
KILN_MUST_CHECK kiln_rc worker_filelist_classify(struct worker_filelist *l, int rpmformat,
                                                 struct kiln_err *err);

/* rpm's unpackaged-files check over a whole build: every regular file and symlink under
 * buildroot (empty directories are not reported, as rpm's check-files) that no list in
 * lists[0..n) claims. When some are found, report (if not NULL) gets rpm's text
 * "Installed (but unpackaged) file(s) found:\n   /path\n..." and: with
 * %_unpackaged_files_terminate_build true (rpm's default, also when undefined) the result
 * is KILN_EBUILD with that text (cut to the error's size); otherwise it is a warning sent
 * to macros' diagnostics and the result is KILN_OK. A %__check_files defined as empty
 * disables the check, as in rpm. */
KILN_MUST_CHECK kiln_rc worker_filelist_check_unpackaged(const char *buildroot,
                                                         const struct worker_filelist *const *lists,
                                                         size_t n, struct macro_ctx *macros,
                                                         struct kiln_buf *report,
                                                         struct kiln_err *err);

void worker_filelist_release(struct worker_filelist *fl);

/* ======================================================================================== */
/* 2. Automatic dependencies                                                                */
/* ======================================================================================== */

/* What rpmbuild's internal dependency generator (rpmfc with Debian's elf.attr, script.attr
 * and pkgconfig.attr) derives from a package's files when AutoReq/AutoProv are on: ELF
 * sonames, versioned symbols and rtld(GNU_HASH) as elfdeps prints them, #! interpreters as
 * script.req prints them, pkgconfig(...) provides and requires as pkgconfigdeps.sh gets them
 * from pkgconf 1.8 (kiln reads the .pc files itself, no pkg-config is run), plus config() and
 * user()/group() dependencies; filtered by %__requires_exclude and friends and sorted the
 * way rpm's dependency sets are. Other generators of rpm's fileattrs (perl, python, ocaml,
 * fonts, desktop files, ...) are not run. rpmlib() requires and the package's own
 * name/name(arch) provides are the package assembly's business, not this section's. */

/* One dependency (flags: rpm's RPMSENSE_* bits, enum rpmtag_dep_flags, as pack_deps_add takes
 * them). */
struct worker_dep {
	const char *name;
	const char *version; /* "" for none */
	uint32_t flags;
};

/* A sorted, de-duplicated set of dependencies, ordered as rpm orders a dependency set: by
 * name (strcmp), then comparison (the LESS/GREATER/EQUAL bits), then version (strcmp). Two
 * entries with the same name, comparison and version are one (the first one's flags stay).
 * A zeroed set is an empty set; worker_deps_release() frees it. */
struct worker_deps {
	struct worker_dep *v; /* heap, owned by the set; the strings are in the set's arena */
	size_t n, cap;
	struct kiln_arena arena;
};

void worker_deps_init(struct worker_deps *d);
/* Add a copy of name/version (NULL version: ""). KILN_EINVAL for an empty name,
 * KILN_ENOMEM, KILN_ELIMIT (the arena). */
KILN_MUST_CHECK kiln_rc worker_deps_add(struct worker_deps *d, const char *name,
                                        const char *version, uint32_t flags, struct kiln_err *err);
/* Index of the entry equal to name/version/flags' comparison, or -1. */
ptrdiff_t worker_deps_find(const struct worker_deps *d, const char *name, const char *version,
                           uint32_t flags);
void worker_deps_release(struct worker_deps *d);
/* Append rpm's text of a dependency, "name" or "name OP version" (OP one of < > = <= >=),
 * to out: what `rpm -q --requires` prints and what the %__*_exclude regexes see. */
void worker_dep_format(const struct worker_dep *dep, struct kiln_buf *out);

/* ---- ELF files: kiln's own reader, for dependencies and file colors ---- */

enum worker_elf_flags {
	WORKER_ELF_HASH = 1 << 0,     /* DT_HASH: a SYSV hash table */
	WORKER_ELF_GNU_HASH = 1 << 1, /* DT_GNU_HASH */
	WORKER_ELF_DEBUG = 1 << 2,    /* DT_DEBUG (rpm's sign of an executable, not a library) */
	WORKER_ELF_PIE = 1 << 3,      /* DT_FLAGS_1 holds DF_1_PIE */
	WORKER_ELF_INTERP = 1 << 4,   /* a PT_INTERP naming a non-empty interpreter */
	WORKER_ELF_DYNAMIC = 1 << 5,  /* a SHT_DYNAMIC section */
};

/* One entry of a .gnu.version_d section: the names of its auxiliary entries in chain
 * order (the first is the version itself, the others its parents). */
struct worker_elf_verdef {
	const char **names; /* nnames of them */
	uint32_t nnames;
	uint16_t flags;   /* vd_flags: 1 = VER_FLG_BASE, the file's own name */
	uint32_t section; /* which version definition section (0, 1, ...) it came from */
};

/* One version needed from a shared object (.gnu.version_r). */
struct worker_elf_verneed {
	const char *file; /* vn_file: the soname needed, "libc.so.6" */
	const char *name; /* vna_name: the version, "GLIBC_2.34" */
};

/* What dependency generation needs from an ELF file, read with bounds checks from the
 * ELF header, the program headers and the sections whose type is SHT_DYNAMIC,
 * SHT_GNU_verdef or SHT_GNU_verneed (by section type, as rpm's elfdeps reads them; a file
 * without section headers has no dynamic information here). Files that are neither ET_EXEC
 * nor ET_DYN (objects, kernel modules, core files) are read up to the ELF header only.
 * Every string and array lives in the arena; release with worker_elf_release(). */
struct worker_elf {
	uint8_t elfclass;    /* 1 ELF32, 2 ELF64 */
	uint8_t data;        /* 1 little-endian, 2 big-endian */
	uint16_t type;       /* e_type: 2 ET_EXEC, 3 ET_DYN, ... */
	uint16_t machine;    /* e_machine */
	uint32_t flags;      /* enum worker_elf_flags */
	const char *interp;  /* PT_INTERP, NULL when none */
	const char *soname;  /* the last DT_SONAME, NULL when none */
	const char **needed; /* DT_NEEDED in order */
	size_t nneeded;
	struct worker_elf_verdef *verdefs;
	size_t nverdefs;
	struct worker_elf_verneed *verneeds;
	size_t nverneeds;
	/* The GNU build-id (the first NT_GNU_BUILD_ID note of a SHT_NOTE section, what
	 * libdw's dwelf_elf_gnu_build_id finds), NULL when none; ET_EXEC, ET_DYN and ET_REL
	 * files only. */
	const unsigned char *build_id;
	size_t build_id_len;
	bool modinfo; /* ET_REL with a .modinfo section: a kernel module */
	struct kiln_arena arena;
};

/* Parse an ELF image held in memory (the fuzz target's entry point). name is used in error
 * messages only. out is overwritten (release it before reuse). Errors: KILN_EFORMAT for a
 * file that is not ELF, is truncated, or has a structure that points outside the file or
 * its section ("foo: ELF section 5 (.gnu.version_r entry 2) ..."), KILN_ELIMIT for the
 * KILN_LIMIT_ELF_* limits, KILN_ENOMEM. On error out is released. */
KILN_MUST_CHECK kiln_rc worker_elf_from_mem(const void *data, size_t len, const char *name,
                                            struct worker_elf *out, struct kiln_err *err);
/* Same, reading the parts it needs from an open file with pread(); the file is not read
 * whole. KILN_EIO when reading fails. */
KILN_MUST_CHECK kiln_rc worker_elf_read_fd(int fd, const char *name, struct worker_elf *out,
                                           struct kiln_err *err);
void worker_elf_release(struct worker_elf *e);
/* What the post-install policy asks of a file's section headers (brp.c): a section named
 * ".symtab" (what `readelf -S` shows; strip -g keeps it, a full strip removes it) and a
 * section named ".note" with SHF_ALLOC (objdump -h's ALLOC: loaded at run time). */
struct worker_elf_sections {
	bool symtab;
	bool note_alloc;
};
/* Read them from an open ELF file of any type. KILN_EFORMAT for a file that is not ELF or
 * whose section headers or names point outside it (readelf and objdump print nothing of
 * such a file either), KILN_ELIMIT, KILN_EIO, KILN_ENOMEM. */
KILN_MUST_CHECK kiln_rc worker_elf_sections_fd(int fd, const char *name,
                                               struct worker_elf_sections *out,
                                               struct kiln_err *err);
/* Do these leading bytes start an ELF file rpm would classify as one: the magic, class 1 or
 * 2 (libmagic's "ELF 32-bit"/"ELF 64-bit")? */
bool worker_elf_magic(const void *head, size_t len);
/* A file's FILECOLORS value as rpmbuild 4.20 computes it: 1 for ELF32, 2 for ELF64, 0 for
 * anything else, for eBPF objects, and for files that are not regular and executable in
 * mode (rpm colors only those; mode is the packaged st_mode). Reads the first 64 bytes of
 * path; a file that cannot be read is 0. */
uint32_t worker_elf_color(const char *path, uint32_t mode);
/* The same from a file's first bytes (64 are enough). */
uint32_t worker_elf_color_head(const void *head, size_t len, uint32_t mode);

/* ---- The generators ---- */

struct worker_autodeps_opts {
	/* Read for %__requires_exclude, %__provides_exclude, their _from forms and the
	 * %__global_*_exclude_from ones, %__{elf,script,pkgconfig}_exclude_path,
	 * %__pkgconfig_path (default: %{_libdir} and %{_datadir} pkgconfig directories),
	 * %_use_weak_usergroup_deps and %_wrong_version_format_terminate_build (1 when
	 * undefined, as rpm's macros set it); warnings go to its diagnostic sink. Required. */
	struct macro_ctx *macros;
	bool autoreq;     /* AutoReq: generate requires (and recommends) */
	bool autoprov;    /* AutoProv: generate provides */
	const char *name; /* the package's name and [E:]V-R, for config(NAME) = EVR when a file */
	const char *evr;  /* is %config; NULL name: no config() dependencies; NULL evr: "" */
	/* Optional: where each file's generated dependencies go (rpmbuild's FILEDEPENDSX/N,
	 * DEPENDSDICT); initialised by the caller. */
	struct worker_filedeps *filedeps;
};

/* The dependencies generated for each file: files[i]'s are deps[start[i]] and the
 * count[i] after it, the versioned ones first, then in the order generated (provides
 * before requires), which is rpmbuild's order. worker_filedeps_init() sets it up,
 * worker_filedeps_release() frees it (the dependency strings are in its arena). */
struct worker_filedeps {
	struct pack_filedep *deps; /* heap */
	uint32_t *file;            /* heap: deps[k] belongs to files[file[k]] */
	size_t n, cap;
	size_t *start, *count; /* heap: one per file, after worker_autodeps_collect() */
	size_t nfiles;
	struct kiln_arena arena;
};
void worker_filedeps_init(struct worker_filedeps *fd);
void worker_filedeps_release(struct worker_filedeps *fd);

/* Generate the automatic dependencies of one package's files and add them to provides,
 * requires and recommends (sets the caller initialised, possibly holding entries already;
 * recommends may be NULL, then %_use_weak_usergroup_deps's user()/group() recommends are
 * dropped). files are the package's files in any order; a regular file's contents are read
 * from its src (its on-disk mode decides "executable", as rpm stats the buildroot file),
 * symlinked .pc files are followed inside the list. Generated dependencies carry
 * RPMTAG_DEP_FIND_REQUIRES or RPMTAG_DEP_FIND_PROVIDES.
 *   ELF (ET_EXEC/ET_DYN): provides the soname (for a library without DT_DEBUG; without a
 *     DT_SONAME its file name) and every version it defines, "libfoo.so.1()(64bit)",
 *     "libfoo.so.1(FOO_1.0)(64bit)"; requires DT_NEEDED, versions needed and
 *     rtld(GNU_HASH) (GNU hash without SYSV hash), unless the file has an interpreter and
 *     is not executable. Only sonames starting with lib, ld., ld-, ld64., ld64- and holding
 *     ".so" count. "(64bit)" marks ELF64 (except Alpha).
 *   Executable files starting "#!/interp": requires /interp, and for "#!.../bin/env /x"
 *     also /x.
 *   .pc files under the pkgconfig path: provides pkgconfig(NAME) = VERSION and its
 *     Provides:, requires /usr/bin/pkg-config and its Requires: and Requires.private:.
 *   config(NAME) = EVR provides and requires when a file is %config; user(U) and group(G)
 *     requires (SCRIPT_PRE|SCRIPT_POSTUN) for owners other than root (rpm 4.19+).
 * A file rpm's generators would read but that kiln cannot parse (a truncated ELF file) gets
 * a warning through the macro context and no dependencies, as rpm gives it none. Errors:
 * KILN_ESYNTAX for generator output rpm refuses (rpm's message, "/usr/bin/x: Versioned file
 * name not permitted: /usr/bin/foo >= 3"), KILN_EIO for a file that cannot be opened,
 * KILN_ELIMIT, KILN_ENOMEM; the sets may then hold part of the result. */
KILN_MUST_CHECK kiln_rc worker_autodeps_collect(const struct pack_file *files, size_t n,
                                                const struct worker_autodeps_opts *opts,
                                                struct worker_deps *provides,
                                                struct worker_deps *requires,
                                                struct worker_deps *recommends,
                                                struct kiln_err *err);

/* ======================================================================================== */
/* 3. The build pipeline                                                                    */
/* ======================================================================================== */

/* What to run, as rpmbuild's -b/-r/-t letters: a bit per step. */
enum worker_build_steps {
	WORKER_STEP_PREP = 1 << 0,      /* %prep */
	WORKER_STEP_CONF = 1 << 1,      /* %conf (rpm 4.20) and %generate_buildrequires */
	WORKER_STEP_BUILD = 1 << 2,     /* %build */
	WORKER_STEP_INSTALL = 1 << 3,   /* %install */
	WORKER_STEP_CHECK = 1 << 4,     /* %check */
	WORKER_STEP_FILECHECK = 1 << 5, /* -bl: %files against the buildroot, nothing written */
	WORKER_STEP_BINARY = 1 << 6,    /* write the binary packages */
	WORKER_STEP_SOURCE = 1 << 7,    /* write the source package */
	WORKER_STEP_CLEAN = 1 << 8,     /* %clean and remove the buildroot afterwards */
	WORKER_STEP_RMBUILD = 1 << 9,   /* --clean: remove the build directory afterwards */
	WORKER_STEP_RMSOURCE = 1 << 10, /* --rmsource */
	WORKER_STEP_RMSPEC = 1 << 11,   /* --rmspec */
	WORKER_STEP_BUILDREQS = 1 << 12 /* -br: stop after %generate_buildrequires */
};

/* rpmbuild's -bX letters. */
#define WORKER_STEPS_P (WORKER_STEP_PREP)
#define WORKER_STEPS_F (WORKER_STEPS_P | WORKER_STEP_CONF)
#define WORKER_STEPS_C (WORKER_STEPS_F | WORKER_STEP_BUILD)
#define WORKER_STEPS_I (WORKER_STEPS_C | WORKER_STEP_INSTALL | WORKER_STEP_CHECK)
#define WORKER_STEPS_L (WORKER_STEP_FILECHECK)
#define WORKER_STEPS_B (WORKER_STEPS_I | WORKER_STEP_BINARY | WORKER_STEP_CLEAN)
#define WORKER_STEPS_A (WORKER_STEPS_B | WORKER_STEP_SOURCE)
#define WORKER_STEPS_S (WORKER_STEP_SOURCE)
#define WORKER_STEPS_R (WORKER_STEPS_P | WORKER_STEP_CONF | WORKER_STEP_BUILDREQS)

/* Options of one build. Strings are borrowed for the call. */
struct worker_build_opts {
	const char *spec_path;
	unsigned steps;     /* enum worker_build_steps */
	bool short_circuit; /* only the last stage of steps (-bc --short-circuit ...) */
	bool nodeps;        /* skip the BuildRequires check */
	bool nocheck;       /* skip %check */
	bool noprep;        /* skip %prep (rpm 4.18's --noprep) */
	bool noclean;       /* keep the buildroot (no %clean) */
	bool quiet;         /* stage output only in the build log */
	bool anyarch;       /* -bs: build the source package on any architecture */
	/* --build-in-place: the sources are the current directory, which the build links to
	 * (and the sandbox binds). Only the command line sets it: a farm job's
	 * %_build_in_place must not open the worker's own directory to the build. */
	bool build_in_place;
	/* How stages run: NULL runs them as plain host processes. Borrowed. */
	const struct chroot_config *exec;
	int out_fd; /* where stage output streams (besides the log); -1 = none */
	/* Fetch missing sources (sources_fetch) with these options before the stages;
	 * NULL fetches only when %_disable_source_fetch is 0 (rpmbuild's switch), then with
	 * default options. Borrowed. */
	const struct sources_fetch_opts *fetch;
	/* Sign every written package with this key (sign/), NULL for none. Borrowed. */
	const struct sign_key *sign_key;
	const char *lang; /* LANG of the stages; NULL = C.UTF-8. Borrowed. */
	/* Put each output's sha256 in the result (on by default). Off, sha256 is "": taking
	 * it means reading every package once more, which rpmbuild's callers never need. */
	bool output_digests;
	/* SOURCE_DATE_EPOCH of the build: >= 0 this one (a farm job's); -1 (the default) the
	 * process environment's, else the newest %changelog entry's when
	 * %source_date_epoch_from_changelog is set. */
	int64_t source_date_epoch;
	/* Building from a source package (-r, --rebuild, a farm job's SRPM): its pkgid, what
	 * binary packages name as SOURCEPKGID, as those of a -ba run name the source package
	 * written with them (rpmbuild --rebuild leaves the tag out; kiln's rebuilds then
	 * reproduce the -ba packages). Set with worker_srpm_pkgid(). */
	unsigned char source_pkgid[16];
	bool has_source_pkgid;
};
void worker_build_opts_init(struct worker_build_opts *o);

/* What a build is given besides its spec, alike for `kiln build` and a farm job: one
 * function (worker_build_prepare) turns it into macro definitions, build options and the
 * executor, so the same spec, defines and --with give the same packages either way. */
struct worker_build_setup {
	/* Macros, defined in this order at the command line's level; NULL: left alone. */
	const char *topdir, *buildroot, *rpm_format, *sourcedir;
	const char *const *defines; /* "NAME BODY" each, as rpm's --define reads it */
	size_t ndefines;
	const char *const *with, *const *without; /* --with NAME / --without NAME */
	size_t nwith, nwithout;
	int64_t source_date_epoch; /* as worker_build_opts.source_date_epoch; -1 none */
	/* The executor: host processes, or the namespace sandbox with these settings. */
	bool sandbox;
	const char *root; /* "host", "dir:PATH", "tar:FILE"; NULL: host */
	bool network;     /* the sandbox keeps the host network */
	struct chroot_limits limits;
};
/* Nothing defined, no SOURCE_DATE_EPOCH, host processes. */
void worker_build_setup_init(struct worker_build_setup *s);

/* A build root made from a root configuration (`kiln build --root CONFIG`, mock's -r): the
 * configuration's base set plus the spec's (or source package's) build dependencies,
 * resolved and locked, installed once into the image cache, and the image's own rpm macro
 * configuration for the build. */
struct worker_root {
	struct roots_config cfg;
	struct roots_lock lock;
	struct roots_image img;
	struct macro_ctx *macros; /* owned: kiln's, then the image's rpm macros, then the
	                           * configuration's [macros], then the caller's configure */
	char *root_arg;           /* owned: "dir:IMAGE", for worker_build_setup.root */
	bool dynamic;             /* the spec has %generate_buildrequires (rounds needed) */
};
/* Is this --root value a root configuration (a name or a path to NAME.cfg) rather than
 * host, dir:PATH or tar:FILE? */
bool worker_root_is_config(const char *root);
/* Open the root for building input (a spec, or a source package when srpm): configure
 * (may be NULL) is applied to each macro context made, for the caller's --define and
 * --with. out is filled; release with worker_root_close() also on failure. Errors name the
 * configuration, the repository or the packages (libsolv's problems go to o->log_fd). */
KILN_MUST_CHECK kiln_rc worker_root_open(const char *config, const char *input, bool srpm,
                                         const struct roots_make_opts *o,
                                         kiln_rc (*configure)(void *arg, struct macro_ctx *mc,
                                                              struct kiln_err *err),
                                         void *arg, struct worker_root *out, struct kiln_err *err);
void worker_root_close(struct worker_root *r);
/* Apply s: its macros into mc (NULL: they were applied already, with
 * worker_build_setup_macros), SOURCE_DATE_EPOCH into bo, and with s->sandbox the sandbox
 * into cc (chroot_config_init'ed here) with bo->exec = cc; without it bo->exec = NULL. cc
 * must outlive the build. Errors name the definition or the root that was refused. */
/* Only the macros of s into mc (a configure callback of worker_root_open takes it). */
KILN_MUST_CHECK kiln_rc worker_build_setup_macros(void *s, struct macro_ctx *mc,
                                                  struct kiln_err *err);
KILN_MUST_CHECK kiln_rc worker_build_prepare(const struct worker_build_setup *s,
                                             struct macro_ctx *mc, struct worker_build_opts *bo,
                                             struct chroot_config *cc, struct kiln_err *err);

struct worker_build_output {
	const char *path; /* written package */
	const char *kind; /* "binary" or "source" */
	const char *name; /* package name */
	const char *arch; /* "x86_64", "noarch", "src" */
	char sha256[65];  /* "" when worker_build_opts.output_digests was off */
};

struct worker_build_stage {
	const char *name; /* "prep", "build", ..., "package" */
	int64_t ms;
	int exit_code;
};

/* The result of worker_build(), filled also on failure as far as the build got. Release
 * with worker_build_result_release(). */
struct worker_build_result {
	struct worker_build_output *outputs;
	size_t noutputs, capoutputs;
	struct worker_build_stage *stages;
	size_t nstages, capstages;
	const char **warnings;
	size_t nwarnings, capwarnings;
	const char *log_path;      /* the build log, NULL before the build dir exists */
	int64_t source_date_epoch; /* -1 when none */
	int64_t buildtime;
	bool buildreqs_unmet; /* -br: %generate_buildrequires asked for missing ones */
	/* The spec parsed (arch checks passed) and its build dependencies were met: what
	 * rpmbuild calls building. Only a failure after that gets rpmbuild's "RPM build
	 * errors:" summary; one before (a parse error, an excluded --target) is a bare
	 * "error: ..." line. */
	bool building;
	/* What %generate_buildrequires printed, a dependency a line ("name", "name >= 1.2",
	 * "(a or b)"), in the result's arena; none when the spec has no such section. */
	const char **genreqs;
	size_t ngenreqs, capgenreqs;
	bool sandboxed; /* the stages ran in the namespace sandbox */
	bool network;   /* ... with the host network shared */
	struct kiln_arena arena;
};

/* Run the steps of o on o->spec_path with macro context mc (configured by the caller:
 * rpmrc, macro files, --define...; the build adds its own definitions). On failure err has
 * rpm's message ("Bad exit status from /.../BUILD/.kiln-build.sh (%build)") and nothing is
 * left half-written in the output directories. */
KILN_MUST_CHECK kiln_rc worker_build(const struct worker_build_opts *o, struct macro_ctx *mc,
                                     struct worker_build_result *res, struct kiln_err *err);
void worker_build_result_release(struct worker_build_result *res);
/* Append the result as JSON ({"outputs":[{path,kind,name,arch,sha256}],"stages":[...],
 * "warnings":[...],"log":...,"source_date_epoch":...}) to out. */
void worker_build_result_json(const struct worker_build_result *res, bool ok,
                              const struct kiln_err *err, struct kiln_buf *out);

/* Variations of a rerun, shared by --verify-reproducible and the farm's reruns (a rerun
 * job's "variations"): what rebuilders and reprotest vary that kiln can vary without
 * root-only tricks. Build paths inside the sandbox never vary (/builddir/build). */
enum worker_vary {
	WORKER_VARY_TIME = 1u << 0,       /* another wall-clock second (waits one) */
	WORKER_VARY_BUILD_PATH = 1u << 1, /* another top directory outside the sandbox (the
	                                   * caller picks it) */
	WORKER_VARY_HOSTNAME = 1u << 2,   /* the sandbox's host name */
	WORKER_VARY_CPUS = 1u << 3,       /* the sandbox's CPU count (nproc, %_smp_build_ncpus) */
	WORKER_VARY_UMASK = 1u << 4,      /* kiln's umask */
	WORKER_VARY_LOCALE = 1u << 5,     /* LANG of the stages (C instead of C.UTF-8) */
	WORKER_VARY_FILE_ORDER = 1u << 6, /* the sandbox sees the top directory through
	                                   * disorderfs: every directory lists in reverse
	                                   * (skipped, with a warning, without FUSE or
	                                   * disorderfs or the sandbox) */
	WORKER_VARY_ENV = 1u << 7,        /* noise in kiln's own environment */
};
#define WORKER_VARY_ALL 0xffu
/* "time", "build_path", "hostname", "cpus", "umask", "locale", "file_order", "env" for one
 * bit; NULL for others. */
const char *worker_vary_name(unsigned bit);
/* The bit of a name; KILN_EINVAL naming it (and the known ones) otherwise. */
KILN_MUST_CHECK kiln_rc worker_vary_parse(const char *name, unsigned *bit, struct kiln_err *err);

/* What worker_vary_apply() changed, for worker_vary_restore(). */
struct worker_vary_state {
	struct chroot_config cfg;
	char host[64], noise[64];
	mode_t old_umask;
	bool umask_set, env_set;
	unsigned applied; /* the WORKER_VARY_* bits actually applied (file_order may not be) */
};
/* Apply the variations of rerun number run (1, 2, ...) to o (o->exec may be replaced by
 * st->cfg) and to this process (umask, environment). */
void worker_vary_apply(unsigned vary, unsigned run, struct worker_build_opts *o,
                       struct worker_vary_state *st);
void worker_vary_restore(struct worker_vary_state *st);

/* Reproducibility verification (kiln build --verify-reproducible): the build runs `runs`
 * times, the first as asked (its packages are the build's output), the others in fresh
 * top directories with deliberate variations: another path outside the sandbox, another
 * wall-clock time (at least a second later), another umask outside, another host name and
 * CPU count inside the sandbox, noise in kiln's environment. Every package of the first
 * run is compared with pack_diff_files() with its namesake of each rerun. */
struct worker_verify_diff {
	unsigned run;        /* the rerun (2..runs) that differed */
	const char *package; /* relative to the top directory: "RPMS/x86_64/a-1-1.x86_64.rpm" */
	const char *what;    /* "/usr/share/a/stamp: contents differ", "tag BUILDTIME", ... */
};

struct worker_verify_result {
	unsigned runs;
	size_t npackages; /* packages of the first run */
	/* What the reruns varied, as worker_vary_name()s: "build_path, time, ..." */
	const char *varied;
	/* Each rerun's top directory (runs - 1 of them, rerun k at [k - 2]): its RPMS/ and
	 * SRPMS/ are kept for a look (the rest is removed). */
	const char **kept;
	/* Per differing package of a rerun: `kiln diff`'s text report of first vs rerun. */
	struct worker_verify_report {
		unsigned run;
		const char *package, *text;
	} * reports;
	size_t nreports, capreports;
	struct worker_verify_diff *diffs;
	size_t ndiffs, capdiffs;
	struct worker_build_result first; /* the first run: the build's own result */
	struct kiln_arena arena;
};

/* Run and compare as above; mc is duplicated for each run (not changed). KILN_OK when
 * every run built: vr->ndiffs == 0 means reproducible. A failing run is an error. */
KILN_MUST_CHECK kiln_rc worker_build_verify(const struct worker_build_opts *o,
                                            const struct macro_ctx *mc, unsigned runs,
                                            struct worker_verify_result *vr, struct kiln_err *err);
void worker_verify_result_release(struct worker_verify_result *vr);
/* The first run's worker_build_result_json() plus "reproducible": {"runs", "identical",
 * "differences": [{"run", "package", "what"}], "varied": "build_path, ...", "kept": [the
 * reruns' top directories]}. */
void worker_verify_result_json(const struct worker_verify_result *vr, bool ok,
                               const struct kiln_err *err, struct kiln_buf *out);

/* -r: install a source package's files into %{_sourcedir} and its spec into %{_specdir}
 * (as rpm -i of a .src.rpm does); *spec_path gets the spec's path (in arena a). */
KILN_MUST_CHECK kiln_rc worker_srpm_install(const char *srpm, struct macro_ctx *mc,
                                            struct kiln_arena *a, const char **spec_path,
                                            struct kiln_err *err);
/* The pkgid (signature header MD5) of the source package srpm into o->source_pkgid; a
 * package without one (v6) leaves o as it is. */
KILN_MUST_CHECK kiln_rc worker_srpm_pkgid(const char *srpm, struct worker_build_opts *o,
                                          struct kiln_err *err);
/* -t: unpack the tarball's spec file (the first *.spec of the archive) into %{_specdir}
 * and copy the tarball to %{_sourcedir}; *spec_path as above. */
KILN_MUST_CHECK kiln_rc worker_tarball_spec(const char *tarball, struct macro_ctx *mc,
                                            struct kiln_arena *a, const char **spec_path,
                                            struct kiln_err *err);

/* ======================================================================================== */
/* 4. The worker daemon                                                                     */
/* ======================================================================================== */

/* `kiln worker`: registers with a scheduler over HTTP (api/), long-polls for leases, and for
 * each lease downloads the job's inputs, runs worker_build() in a child process (its own
 * process group, killed with the daemon), streams the log to the scheduler by offset,
 * heartbeats (a cancel in the reply kills the build within a heartbeat), uploads every
 * package with its sha256 and completes. The daemon never holds signing keys: the
 * scheduler signs. A scheduler that cannot be reached is retried with backoff; finished
 * results stay in the work directory until they are uploaded or the lease is gone.
 *
 * Thread safety: worker_daemon_run() owns its threads (one per slot). */

struct worker_daemon_opts {
	const char *scheduler_url; /* "http://127.0.0.1:8470" */
	const char *token;         /* a token with the worker scope */
	const char *ca_file;       /* CA bundle for an https scheduler; NULL: the system's */
	const char *name;          /* NULL: the host name */
	unsigned slots;            /* parallel builds; 0 = 1 */
	const char *const *arches; /* NULL/0: the host's arch and noarch */
	size_t narches;
	const char *const *tags;
	size_t ntags;
	const char *work_dir; /* NULL: ./kiln-worker */
	const char *root;     /* sandbox root: "host", "dir:PATH", "tar:FILE"; NULL host */
	/* Root configurations (names or paths) this worker offers: jobs naming one are built
	 * in a root made from it (worker_root_open); the worker advertises "root:NAME". */
	const char *const *root_configs;
	size_t nroot_configs;
	bool no_sandbox; /* stages as plain host processes */
	bool sandbox;    /* the sandbox is required (an error when unavailable) */
	int64_t poll_ms; /* long poll length, 0 = 20 s */
	int ready_fd;    /* "registered as NAME" is written here once; -1 for none */
	/* Caps on every build; 0 = the default. The cgroup ones (pids: 4096; memory: 3/4 of
	 * the machine's RAM shared by the slots; cpu: percent of one CPU, the machine's CPUs
	 * shared by the slots) are in force in the sandbox; the log cap (64 MiB per attempt)
	 * always. A job's own limits only lower them. */
	uint64_t pids_max, memory_bytes, cpu_percent, log_max;
};

/* Run until *stop is non-zero: 1 stops taking work and lets running builds finish; 2 or
 * more also kills running builds and hands their leases back. KILN_EINVAL for bad options,
 * KILN_EPRIV when the sandbox is required but unavailable. */
KILN_MUST_CHECK kiln_rc worker_daemon_run(const struct worker_daemon_opts *o,
                                          volatile sig_atomic_t *stop, struct kiln_err *err);

/* `kiln worker --build-child FILE`: the daemon's build child, in a process of its own. The
 * daemon's slots are threads, and a child forked from a threaded process may hold a copy
 * of a lock another thread held at the fork (OpenSSL's, libcurl's, malloc's), so the
 * daemon forks only to exec this: FILE names the job, its directories and caps
 * (worker_child_req_write). Returns the exit status (0 when the build succeeded). */
int worker_build_child_main(const char *request_path);

#endif
