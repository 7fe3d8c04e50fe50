/*
 * libgit2_int.h - libgit2, opened on first use rather than linked (util_dl_ready).
 *
 * Only sources/git.c includes this, after <git2.h>. kiln does not link libgit2: mapping
 * and relocating it and the libraries it pulls in would cost every kiln command at start
 * (about 3 ms), though only this file uses it. Its calls go through a table of entry
 * points filled on first use; the names below turn each call into a call through the
 * table. A call to a function missing from the list fails to link: add new ones here.
 */
#ifndef KILN_WORKER_LIBGIT2_INT_H
#define KILN_WORKER_LIBGIT2_INT_H

#ifndef SOURCES_LIBGIT2_SONAME
#define SOURCES_LIBGIT2_SONAME "libgit2.so" /* the Makefile passes the exact SONAME */
#endif

#define SOURCES_LIBGIT2_FUNCS(X)                                                                   \
	X(git_blob_free)                                                                           \
	X(git_blob_lookup)                                                                         \
	X(git_blob_rawcontent)                                                                     \
	X(git_blob_rawsize)                                                                        \
	X(git_buf_dispose)                                                                         \
	X(git_commit_committer)                                                                    \
	X(git_commit_free)                                                                         \
	X(git_commit_lookup)                                                                       \
	X(git_commit_tree)                                                                         \
	X(git_commit_tree_id)                                                                      \
	X(git_credential_ssh_key_from_agent)                                                       \
	X(git_credential_ssh_key_new)                                                              \
	X(git_credential_username_new)                                                             \
	X(git_error_last)                                                                          \
	X(git_fetch_options_init)                                                                  \
	X(git_libgit2_features)                                                                    \
	X(git_libgit2_init)                                                                        \
	X(git_object_free)                                                                         \
	X(git_object_id)                                                                           \
	X(git_object_peel)                                                                         \
	X(git_oid_cpy)                                                                             \
	X(git_oid_equal)                                                                           \
	X(git_oid_fromstr)                                                                         \
	X(git_oid_tostr)                                                                           \
	X(git_remote_connect)                                                                      \
	X(git_remote_create_options_init)                                                          \
	X(git_remote_create_with_opts)                                                             \
	X(git_remote_default_branch)                                                               \
	X(git_remote_fetch)                                                                        \
	X(git_remote_free)                                                                         \
	X(git_repository_free)                                                                     \
	X(git_repository_init)                                                                     \
	X(git_repository_open_bare)                                                                \
	X(git_repository_set_head)                                                                 \
	X(git_revparse_single)                                                                     \
	X(git_tree_entry_byindex)                                                                  \
	X(git_tree_entry_bypath)                                                                   \
	X(git_tree_entry_filemode_raw)                                                             \
	X(git_tree_entry_free)                                                                     \
	X(git_tree_entry_id)                                                                       \
	X(git_tree_entry_name)                                                                     \
	X(git_tree_entrycount)                                                                     \
	X(git_tree_free)                                                                           \
	X(git_tree_lookup)

/* The entry points (the file's registry of them). */
struct sources_libgit2_fns {
#define SOURCES_LIBGIT2_FIELD(f) __typeof__(f) *fn_##f;
	SOURCES_LIBGIT2_FUNCS(SOURCES_LIBGIT2_FIELD)
#undef SOURCES_LIBGIT2_FIELD
};

#define SOURCES_LIBGIT2_SYM(f) {#f, offsetof(struct sources_libgit2_fns, fn_##f)},
static const struct util_dl_sym sources_libgit2_syms[] = {
    SOURCES_LIBGIT2_FUNCS(SOURCES_LIBGIT2_SYM)};
#undef SOURCES_LIBGIT2_SYM

#define git_blob_free (sources_libgit2.fn_git_blob_free)
#define git_blob_lookup (sources_libgit2.fn_git_blob_lookup)
#define git_blob_rawcontent (sources_libgit2.fn_git_blob_rawcontent)
#define git_blob_rawsize (sources_libgit2.fn_git_blob_rawsize)
#define git_buf_dispose (sources_libgit2.fn_git_buf_dispose)
#define git_commit_committer (sources_libgit2.fn_git_commit_committer)
#define git_commit_free (sources_libgit2.fn_git_commit_free)
#define git_commit_lookup (sources_libgit2.fn_git_commit_lookup)
#define git_commit_tree (sources_libgit2.fn_git_commit_tree)
#define git_commit_tree_id (sources_libgit2.fn_git_commit_tree_id)
#define git_credential_ssh_key_from_agent (sources_libgit2.fn_git_credential_ssh_key_from_agent)
#define git_credential_ssh_key_new (sources_libgit2.fn_git_credential_ssh_key_new)
#define git_credential_username_new (sources_libgit2.fn_git_credential_username_new)
#define git_error_last (sources_libgit2.fn_git_error_last)
#define git_fetch_options_init (sources_libgit2.fn_git_fetch_options_init)
#define git_libgit2_features (sources_libgit2.fn_git_libgit2_features)
#define git_libgit2_init (sources_libgit2.fn_git_libgit2_init)
#define git_object_free (sources_libgit2.fn_git_object_free)
#define git_object_id (sources_libgit2.fn_git_object_id)
#define git_object_peel (sources_libgit2.fn_git_object_peel)
#define git_oid_cpy (sources_libgit2.fn_git_oid_cpy)
#define git_oid_equal (sources_libgit2.fn_git_oid_equal)
#define git_oid_fromstr (sources_libgit2.fn_git_oid_fromstr)
#define git_oid_tostr (sources_libgit2.fn_git_oid_tostr)
#define git_remote_connect (sources_libgit2.fn_git_remote_connect)
#define git_remote_create_options_init (sources_libgit2.fn_git_remote_create_options_init)
#define git_remote_create_with_opts (sources_libgit2.fn_git_remote_create_with_opts)
#define git_remote_default_branch (sources_libgit2.fn_git_remote_default_branch)
#define git_remote_fetch (sources_libgit2.fn_git_remote_fetch)
#define git_remote_free (sources_libgit2.fn_git_remote_free)
#define git_repository_free (sources_libgit2.fn_git_repository_free)
#define git_repository_init (sources_libgit2.fn_git_repository_init)
#define git_repository_open_bare (sources_libgit2.fn_git_repository_open_bare)
#define git_repository_set_head (sources_libgit2.fn_git_repository_set_head)
#define git_revparse_single (sources_libgit2.fn_git_revparse_single)
#define git_tree_entry_byindex (sources_libgit2.fn_git_tree_entry_byindex)
#define git_tree_entry_bypath (sources_libgit2.fn_git_tree_entry_bypath)
#define git_tree_entry_free (sources_libgit2.fn_git_tree_entry_free)
#define git_tree_entry_filemode_raw (sources_libgit2.fn_git_tree_entry_filemode_raw)
#define git_tree_entry_id (sources_libgit2.fn_git_tree_entry_id)
#define git_tree_entry_name (sources_libgit2.fn_git_tree_entry_name)
#define git_tree_entrycount (sources_libgit2.fn_git_tree_entrycount)
#define git_tree_free (sources_libgit2.fn_git_tree_free)
#define git_tree_lookup (sources_libgit2.fn_git_tree_lookup)

#endif
