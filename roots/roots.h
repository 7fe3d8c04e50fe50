/*
 * roots.h - build roots made from RPM repositories (issue #21): root configurations,
 * resolution and the lock, installing packages into an image, and the image cache.
 *
 * This header is shared by several parts of the module; each keeps to its own section.
 * What roots/ does not do: build packages (worker/), run builds (chroot/ runs the
 * scriptlets and the builds for it), or talk to a host rpm or dnf: nothing here needs them.
 */
#ifndef KILN_ROOTS_H
#define KILN_ROOTS_H

#include "util/util.h"

/* ======================================================================================== */
/* Installing packages into an image */

/* What roots_install does, in rpm's order (docs/roots.md, "Installing packages"):
 *
 *   1. read every package's headers with pack/ and refuse the whole set, before anything
 *      is written, when one is hostile: a path that is not clean and absolute ("..",
 *      empty components), a device node, a socket, a setuid or setgid file (unless
 *      ROOTS_INSTALL_F_ALLOW_SETID), a header whose file arrays do not agree;
 *   2. order the set as rpm's transaction ordering does (roots_int.h, order.c);
 *   3. run every %pretrans, then per package: %triggerprein, %pre, unpack, %post,
 *      %triggerin; then every %posttrans; scriptlets run in kiln's sandbox chrooted into
 *      the image, writing into it, without network;
 *   4. where the set has a package named "rpm": run the image's own rpm (--justdb) so its
 *      database lists exactly the set.
 *
 * Unpacking goes beneath a directory descriptor of the image with openat2(RESOLVE_IN_ROOT):
 * symlinks already in the image (usrmerge's /bin -> usr/bin) are followed as the image
 * sees them, never out of it. Owners come from the header's user and group names looked
 * up in the image's /etc/passwd and /etc/group as they are when the file is written, and
 * are 0 (root) when the name is unknown or those files do not exist yet (with a warning,
 * as rpm gives); as an unprivileged caller owners are not set at all. */
enum roots_install_flags {
	ROOTS_INSTALL_F_ALLOW_SETID = 1 << 0, /* setuid/setgid files are allowed */
	ROOTS_INSTALL_F_NOSCRIPTS = 1 << 1,   /* unpack only: no scriptlets, no triggers */
	ROOTS_INSTALL_F_NORPMDB = 1 << 2,     /* no rpm database even when rpm is in the set */
};

struct roots_install_opts {
	unsigned flags;            /* enum roots_install_flags */
	int log_fd;                /* scriptlet output and progress lines; -1 = discard */
	const char *state_dir;     /* borrowed: where the sandbox keeps its state; NULL = TMPDIR */
	int64_t script_timeout_ms; /* per scriptlet; 0 = 10 minutes */
};

/* No flags, output discarded, default state directory and timeout. */
void roots_install_opts_init(struct roots_install_opts *o);

/* What an install did. */
struct roots_install_report {
	size_t packages;      /* packages installed */
	size_t files;         /* payload entries written */
	size_t scriptlets;    /* scriptlets and triggers run */
	size_t warnings;      /* %post-side failures and unknown owners (warnings, as rpm) */
	bool rpmdb;           /* an rpm database was written */
	int64_t unpack_ns;    /* time spent unpacking */
	int64_t scriptlet_ns; /* time spent in scriptlets and the rpm database */
};

/* Install the n package files pkgs into the directory image (created when missing; meant
 * to be new and empty). rep may be NULL. Errors: KILN_EPRIV for a hostile package
 * ("PKG.rpm: file '/x/../y': ..."; nothing has been written), KILN_EFORMAT / KILN_EDIGEST /
 * KILN_EIO for a package that cannot be read (naming it), KILN_EBUILD for a failing
 * %pretrans or %pre ("PKG: %pre scriptlet failed, exit status 1"; the image is then
 * incomplete and the caller throws it away), KILN_EUNSUPP when the sandbox cannot run here
 * and the set has scriptlets. Not thread-safe for one image; distinct images may be
 * installed in parallel. */
KILN_MUST_CHECK kiln_rc roots_install(const char *image, const char *const *pkgs, size_t n,
                                      const struct roots_install_opts *o,
                                      struct roots_install_report *rep, struct kiln_err *err);

/* ======================================================================================== */
/* The image cache */

/* Images live under CACHE/images (CACHE: the directory kiln's source cache uses):
 *
 *   images/KEY/root   the image, immutable once renamed into place
 *   images/KEY/info   "key", "size" (bytes) and one "package" line per package file name
 *   images/lock/KEY   flock(2) file: exclusive while KEY is being made, shared while used
 *   images/tmp/       images being made (KEY.XXXXXX), renamed to images/KEY when whole
 *
 * KEY is the caller's (the lock's sha256): 1 to 128 characters of [0-9a-zA-Z._-]. N
 * processes asking for one missing KEY make it once: the first takes the exclusive lock and
 * builds, the others wait on it and then use its image. Different keys never wait on each
 * other. The mtime of images/KEY records its last use (for the LRU collection). */

/* Makes a new image: fill the empty directory root (which exists). */
typedef kiln_rc (*roots_image_make_fn)(void *arg, const char *root, struct kiln_err *err);

/* An image in use: its path and the shared lock that keeps the collector away. */
struct roots_image {
	char *root;    /* owned: CACHE/images/KEY/root */
	int lock_fd;   /* owned: shared flock on images/lock/KEY (-1 when released) */
	bool made;     /* this call made the image */
	uint64_t size; /* bytes, from the info file */
};

/* Get the image KEY under cache_dir, making it with make(arg, root) when missing; *img is
 * held (shared lock) until roots_image_release(). A failed make leaves no image (its temp
 * directory is removed) and returns make's error. Errors: KILN_EINVAL (bad key), KILN_EIO.
 * Thread-safe across processes; within one process use one call per thread. */
KILN_MUST_CHECK kiln_rc roots_image_get(const char *cache_dir, const char *key,
                                        roots_image_make_fn make, void *arg,
                                        struct roots_image *img, struct kiln_err *err);
/* Drop the lock and free the path. A zeroed or released img is fine (fd 0, standard
 * input, is never taken for a lock). */
void roots_image_release(struct roots_image *img);

struct roots_image_gc {
	uint64_t images, image_bytes; /* removed images */
	uint64_t kept, kept_bytes;    /* images left (in use or within the cap) */
	uint64_t busy;                /* images skipped because they were in use */
	uint64_t tmp;                 /* unfinished images removed */
};

/* Collect: remove unfinished images nobody is making, and with max_bytes > 0 remove images
 * least recently used first until the rest fit in max_bytes. An image in use (its shared
 * lock held) is never removed. out may be NULL. Errors: KILN_EIO. */
KILN_MUST_CHECK kiln_rc roots_image_collect(const char *cache_dir, uint64_t max_bytes,
                                            struct roots_image_gc *out, struct kiln_err *err);

#endif
