/*
 * fileclass.c - what rpm records of each packaged file's content: the libmagic description
 * (FILECLASS) or MIME type (v6), and the ELF colour (FILECOLORS).
 */
#include "util/util.h"

#include <magic.h>
#include "worker/libmagic_int.h"
#include <dirent.h>
#include <fcntl.h>
#include <fnmatch.h>
#include <sys/stat.h>
#include <unistd.h>

#include "macro/macro.h"
#include "spec/spec.h"
#include "pack/pack.h"
#include "worker/worker.h"
#include "worker/filelist_int.h"

/* Filled on first use (see worker/libmagic_int.h). */
static struct worker_libmagic_fns worker_libmagic;
static struct util_dl worker_libmagic_dl =
    UTIL_DL_INIT(WORKER_LIBMAGIC_SONAME, worker_libmagic_syms, worker_libmagic);

/* ---------------------------------------------------------------------------------------- */
/* Classification: libmagic descriptions (FILECLASS, v6 MIME types) and ELF colours. */

/* rpm 4.20's token table (build/rpmfc.c rpmfcTokens): a description containing one of these
 * is kept in the class dictionary, any other one is stored as "". rpm 4.18 also kept
 * "symbolic link to ..." (Debian's rpmbuild does); 4.20's table no longer lists it. */
static const char *const class_tokens[] = {
    "directory",
    "ELF 32-bit",
    "ELF 64-bit",
    "troff or preprocessor input",
    "GNU Info",
    "perl ",
    "Perl5 module source text",
    "python ",
    "libtool library ",
    "pkgconfig ",
    "Objective caml ",
    "Mono/.Net assembly",
    "current ar archive",
    "Zip archive data",
    "tar archive",
    "cpio archive",
    "RPM v3",
    "RPM v4",
    " image",
    " font",
    " Font",
    " commands",
    " script",
    "empty",
    "HTML",
    "SGML",
    "XML",
    " source",
    "GLS_BINARY_LSB_FIRST",
    " DB ",
    " text",
};

bool worker_fileclass_kept(const char *desc)
{
	size_t i;

	for (i = 0; i < KILN_ARRAY_SIZE(class_tokens); i++) {
		if (strstr(desc, class_tokens[i]))
			return true;
	}
	return false;
}

/* Extensions rpm does not ask libmagic about (rpmfc.c skipped_extensions; .html, .png and
 * .svg since rpm 4.19). */
static const struct {
	const char *ext, *desc, *mime;
} skipped_ext[] = {
    {".pm", "Perl5 module source text", "text/plain"},
    {".c", "C Code", "text/x-c"},
    {".h", "C Header", "text/x-c"},
    {".la", "libtool library file", "text/plain"},
    {".pc", "pkgconfig file", "text/plain"},
    {".html", "HTML document", "text/html"},
    {".png", "PNG image data", "image/png"},
    {".svg", "SVG Scalable Vector Graphics image", "image/svg+xml"},
};

uint32_t worker_elf_color_fd(int fd)
{
	unsigned char h[64];
	size_t got = 0;
	unsigned machine;
	size_t need;

	if (util_read_full(fd, h, sizeof(h), &got, NULL) || got < 20)
		return 0;
	if (memcmp(h, "\177ELF", 4) || (h[4] != 1 && h[4] != 2) || (h[5] != 1 && h[5] != 2))
		return 0;
	need = h[4] == 1 ? 52 : 64;
	if (got < need)
		return 0;
	machine = h[5] == 1 ? (unsigned)(h[18] | h[19] << 8) : (unsigned)(h[18] << 8 | h[19]);
	if (machine == 247) /* EM_BPF: rpm leaves BPF objects uncoloured */
		return 0;
	return h[4];
}

/* libmagic cookies for one list: a description cookie for v4's FILECLASS or a MIME cookie
 * for v6, never both (each load is a parse of the whole magic database). */
struct magic_pair {
	magic_t ms, mime;
};

static kiln_rc magic_pair_open(struct magic_pair *m, int rpmformat, struct kiln_err *err)
{
	int flags = MAGIC_CHECK | MAGIC_COMPRESS | MAGIC_NO_CHECK_TOKENS | MAGIC_ERROR;
	magic_t *c = rpmformat == 6 ? &m->mime : &m->ms;
	kiln_rc rc = util_dl_ready(&worker_libmagic_dl, err);

	if (rc)
		return rc;
	*c = magic_open(rpmformat == 6 ? flags | MAGIC_MIME_TYPE : flags);
	if (!*c)
		return kiln_err_set(err, KILN_ENOMEM, "magic_open failed");
	if (magic_load(*c, NULL))
		return kiln_err_set(err, KILN_EIO, "magic_load failed: %s",
		                    magic_error(*c) ? magic_error(*c) : "unknown error");
	return KILN_OK;
}

static void magic_pair_close(struct magic_pair *m)
{
	if (m->ms)
		magic_close(m->ms);
	if (m->mime)
		magic_close(m->mime);
}

static const char *type_desc(uint32_t mode)
{
	switch (mode & S_IFMT) {
	case S_IFCHR:
		return "character special";
	case S_IFBLK:
		return "block special";
	case S_IFIFO:
		return "fifo (named pipe)";
	case S_IFSOCK:
		return "socket";
	case S_IFDIR:
		return "directory";
	default:
		return NULL;
	}
}

static const char *skipped_match(const char *path, bool mime)
{
	size_t len = strlen(path), i;

	for (i = 0; i < KILN_ARRAY_SIZE(skipped_ext); i++) {
		size_t el = strlen(skipped_ext[i].ext);

		if (len > el && !strcmp(path + len - el, skipped_ext[i].ext))
			return mime ? skipped_ext[i].mime : skipped_ext[i].desc;
	}
	return NULL;
}

/* libmagic on a disk path; "" for a missing file (an immaterial %ghost), fallback when
 * libmagic gives up, as rpm does. */
/* libmagic's MIME type of what is not a regular file, from the mode alone (file's fsmagic
 * names them so; only regular files are opened). NULL for a regular file. */
static const char *type_mime(uint32_t mode)
{
	switch (mode & S_IFMT) {
	case S_IFCHR:
		return "inode/chardevice";
	case S_IFBLK:
		return "inode/blockdevice";
	case S_IFIFO:
		return "inode/fifo";
	case S_IFSOCK:
		return "inode/socket";
	case S_IFDIR:
		return "inode/directory";
	case S_IFLNK:
		return "inode/symlink";
	default:
		return NULL;
	}
}

/* libmagic's answer for the open file fd (rewound first): the same as for its path, read
 * through the descriptor the buildroot gave. */
static const char *magic_ask(magic_t m, int fd, const char *fallback)
{
	const char *r;

	if (lseek(fd, 0, SEEK_SET) < 0)
		return fallback;
	r = magic_descriptor(m, fd);
	return r ? r : fallback;
}

/* FILECLASS or MIME type and FILECOLORS of one file: disk is where it is on the host, for
 * the path-based rules; the content is read through fd (-1 when it could not be opened
 * beneath the buildroot: only what the mode and the path say). */
static kiln_rc classify(const struct magic_pair *m, const char *disk, int fd, struct pack_file *f,
                        struct kiln_arena *a, struct kiln_err *err)
{
	const char *desc = type_desc(f->mode);
	const char *mime = skipped_match(disk, true);

	/* libmagic is most of the cost of packaging many small files: ask only for what the
	 * package format stores (FILECLASS in v4, MIME types in v6). */
	bool want_desc = m->ms != NULL && fd >= 0, want_mime = m->mime != NULL && fd >= 0;

	if (!desc)
		desc = skipped_match(disk, false);
	if (!strncmp(f->path, "/dev/", 5) && !type_desc(f->mode))
		desc = "";
	else if (!desc)
		desc = want_desc ? magic_ask(m->ms, fd, "data") : "";
	if (!mime && m->mime && type_mime(f->mode))
		mime = type_mime(f->mode);
	if (!mime)
		mime = want_mime ? magic_ask(m->mime, fd, "application/octet-stream") : "";
	f->fclass = worker_fileclass_kept(desc) ? kiln_arena_strdup(a, desc) : "";
	f->mime = kiln_arena_strdup(a, mime);
	if (S_ISREG(f->mode) && (f->mode & 0111) && fd >= 0 && lseek(fd, 0, SEEK_SET) == 0)
		f->color = worker_elf_color_fd(fd);
	return kiln_arena_finish(a, err);
}

/* Open a regular file of the list beneath the buildroot's descriptor, like every other
 * read of the collector: nothing outside the buildroot is classified. -1 for other types
 * and for a file that vanished or escapes. */
static int open_in_root(const struct worker_filelist *l, int rootfd, size_t i)
{
	size_t rl = strcmp(l->root, "/") ? strlen(l->root) : 0;
	const char *disk = l->disk[i];
	struct kiln_err ignored = KILN_ERR_INIT;
	int fd = -1;

	if (rootfd < 0 || !S_ISREG(l->files[i].mode) || strncmp(disk, l->root, rl) ||
	    disk[rl] != '/')
		return -1;
	if (util_path_open_beneath(rootfd, disk + rl + 1, O_RDONLY | O_NONBLOCK, 0,
	                           UTIL_OPEN_NOFOLLOW, &fd, &ignored))
		return -1;
	return fd;
}

kiln_rc worker_filelist_classify(struct worker_filelist *l, int rpmformat, struct kiln_err *err)
{
	struct magic_pair m = {NULL, NULL};
	kiln_rc rc = KILN_OK;
	int rootfd = -1;
	size_t i;

	if (l->classified || !l->n)
		return KILN_OK;
	if (l->root)
		rootfd = open(l->root, O_PATH | O_DIRECTORY | O_CLOEXEC);
	if (l->root && rootfd < 0)
		return kiln_err_sys(err, KILN_EIO, "cannot open the buildroot %s", l->root);
	rc = magic_pair_open(&m, rpmformat, err);
	for (i = 0; !rc && i < l->n; i++) {
		int fd = open_in_root(l, rootfd, i);

		rc = classify(&m, l->disk[i], fd, &l->files[i], &l->arena, err);
		if (fd >= 0)
			util_close(fd);
	}
	magic_pair_close(&m);
	if (rootfd >= 0)
		util_close(rootfd);
	l->classified = !rc;
	return rc;
}
