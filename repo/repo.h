/*
 * repo.h - dnf/zypper repository metadata: primary, filelists, other and repomd.xml for the
 * packages below a directory, written the way createrepo_c writes them, reproducibly, and
 * swapped in atomically (`kiln repo regenerate --dir`, and the farm's publishing through
 * scheduler/). See docs/publish.md.
 */
#ifndef KILN_REPO_H
#define KILN_REPO_H

#include "util/util.h"

struct sign_key;

struct repo_metadata_opts {
	bool zstd;                  /* .xml.zst instead of .xml.gz (gzip for old clients) */
	unsigned workers;           /* threads reading packages, 0: one per CPU */
	unsigned keep;              /* metadata generations kept, the current one included */
	int64_t revision;           /* <revision> and timestamps; -1: the newest build time */
	const struct sign_key *key; /* signs repomd.xml (repomd.xml.asc); NULL: unsigned */
	/* When set: index only these packages (paths below dir, sorted by strcmp); other .rpm
	 * files below dir are left out of the metadata but not touched. */
	const char *const *only;
	size_t nonly;
	/* A comps file (createrepo_c -g): copied in as type group and compressed as group_gz
	 * (group_zst with zstd), named "<sha256>-BASENAME"; NULL: none. */
	const char *groups;
};

struct repo_metadata_result {
	size_t npackages;
	int64_t revision;
	char repomd_sha256[65];
};

/* Defaults: gzip, a worker per CPU, keep 3, revision from the packages, no key. */
void repo_metadata_opts_init(struct repo_metadata_opts *o);
/* Index every .rpm below dir (not in dot directories or repodata/, at most 8 levels) into
 * a fresh generation dir/.repodata-gens/HASH (primary, filelists, other, repomd.xml and
 * with a key repomd.xml.asc) and make dir/repodata a symlink to it with one rename, then
 * drop generations beyond o->keep. The same packages give the same bytes. A package that
 * cannot be read is an error naming it; nothing changes then. */
KILN_MUST_CHECK kiln_rc repo_metadata_write(const char *dir, const struct repo_metadata_opts *o,
                                            struct repo_metadata_result *res, struct kiln_err *err);

#endif
