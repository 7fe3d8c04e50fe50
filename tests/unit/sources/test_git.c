/*
 * test_git.c - git sources: a repository built here with libgit2 (blobs, trees, commits, a
 * tag), resolved, exported and archived through the mirror in the cache.
 */
#include "util/util.h"

#include <sys/stat.h>
#include <unistd.h>

#include <git2.h>

#include "tests/unit/sources/sources_test.h"

struct repo {
	char path[512];
	git_repository *r;
	char first[41], second[41];
};

static void blob(git_repository *r, git_treebuilder *tb, const char *name, const char *data,
                 git_filemode_t mode)
{
	git_oid oid;

	assert_int_equal(git_blob_create_from_buffer(&oid, r, data, strlen(data)), 0);
	assert_int_equal(git_treebuilder_insert(NULL, tb, name, &oid, mode), 0);
}

static void commit(struct repo *rp, const char *readme, int64_t when, char *out)
{
	git_treebuilder *top = NULL, *sub = NULL;
	git_signature *sig = NULL;
	git_oid tree_id, sub_id, cid, parent_id;
	git_commit *parent = NULL;
	git_tree *tree = NULL;
	const git_commit *parents[1];
	int n = 0;

	assert_int_equal(git_treebuilder_new(&sub, rp->r, NULL), 0);
	blob(rp->r, sub, "main.c", "int main(void) { return 0; }\n", GIT_FILEMODE_BLOB);
	assert_int_equal(git_treebuilder_write(&sub_id, sub), 0);
	assert_int_equal(git_treebuilder_new(&top, rp->r, NULL), 0);
	blob(rp->r, top, "README", readme, GIT_FILEMODE_BLOB);
	blob(rp->r, top, "run.sh", "#!/bin/sh\n", GIT_FILEMODE_BLOB_EXECUTABLE);
	blob(rp->r, top, "link", "README", GIT_FILEMODE_LINK);
	assert_int_equal(git_treebuilder_insert(NULL, top, "src", &sub_id, GIT_FILEMODE_TREE), 0);
	assert_int_equal(git_treebuilder_write(&tree_id, top), 0);
	assert_int_equal(git_tree_lookup(&tree, rp->r, &tree_id), 0);
	assert_int_equal(git_signature_new(&sig, "t", "t@example.org", when, 0), 0);
	if (git_reference_name_to_id(&parent_id, rp->r, "HEAD") == 0) {
		assert_int_equal(git_commit_lookup(&parent, rp->r, &parent_id), 0);
		parents[n++] = parent;
	}
	assert_int_equal(
	    git_commit_create(&cid, rp->r, "HEAD", sig, sig, NULL, "c", tree, (size_t)n, parents),
	    0);
	git_oid_tostr(out, 41, &cid);
	git_commit_free(parent);
	git_tree_free(tree);
	git_signature_free(sig);
	git_treebuilder_free(top);
	git_treebuilder_free(sub);
}

static void make_repo(struct repo *rp, const char *name)
{
	git_object *target = NULL;
	git_oid tag;

	assert_int_equal(git_libgit2_init() > 0, 1);
	wt_path(rp->path, sizeof(rp->path), name);
	assert_int_equal(git_repository_init(&rp->r, rp->path, 0), 0);
	commit(rp, "one\n", 1700000000, rp->first);
	assert_int_equal(git_revparse_single(&target, rp->r, "HEAD"), 0);
	assert_int_equal(git_tag_create_lightweight(&tag, rp->r, "v1", target, 0), 0);
	git_object_free(target);
	commit(rp, "two\n", 1700000100, rp->second);
}

static void free_repo(struct repo *rp)
{
	git_repository_free(rp->r);
	git_libgit2_shutdown();
}

KILN_TEST(git_resolve_refs)
{
	struct kiln_err err = KILN_ERR_INIT;
	struct sources *s = NULL;
	struct sources_git_rev rev;
	char cache[512], abbrev[12];
	struct sources_fetch_opts o = wt_opts(cache, sizeof(cache), "gc1");
	struct repo rp;

	make_repo(&rp, "repo1");
	assert_ok(sources_new(&o, &s, &err), &err);
	assert_ok(sources_git_resolve(s, rp.path, "v1", &rev, &err), &err);
	assert_string_equal(rev.commit, rp.first);
	assert_false(rev.moved);
	assert_int_equal(rev.time, 1700000000);
	assert_ok(sources_git_resolve(s, rp.path, NULL, &rev, &err), &err);
	assert_string_equal(rev.commit, rp.second);
	snprintf(abbrev, sizeof(abbrev), "%.10s", rp.first);
	assert_ok(sources_git_resolve(s, rp.path, abbrev, &rev, &err), &err);
	assert_string_equal(rev.commit, rp.first);
	assert_ok(sources_git_resolve(s, rp.path, rp.second, &rev, &err), &err);
	assert_string_equal(rev.previous, rp.second);
	assert_int_equal(sources_git_resolve(s, rp.path, "nope", &rev, &err), KILN_ENOTFOUND);
	assert_non_null(strstr(err.msg, "no ref or commit 'nope'"));
	sources_free(s);
	free_repo(&rp);
}

KILN_TEST(git_export_tree)
{
	struct kiln_err err = KILN_ERR_INIT;
	struct kiln_buf b = KILN_BUF_INIT(4096);
	struct sources *s = NULL;
	char cache[512], out[512], p[700], link[64];
	struct sources_fetch_opts o = wt_opts(cache, sizeof(cache), "gc2");
	struct repo rp;
	struct stat st;
	ssize_t n;

	make_repo(&rp, "repo2");
	assert_ok(sources_new(&o, &s, &err), &err);
	wt_path(out, sizeof(out), "export2");
	assert_ok(sources_git_export(s, rp.path, rp.first, out, &err), &err);
	snprintf(p, sizeof(p), "%s/README", out);
	assert_ok(util_read_file(p, 4096, &b, &err), &err);
	assert_string_equal(b.ptr, "one\n");
	snprintf(p, sizeof(p), "%s/run.sh", out);
	assert_int_equal(stat(p, &st), 0);
	assert_true(st.st_mode & 0100);
	snprintf(p, sizeof(p), "%s/link", out);
	n = readlink(p, link, sizeof(link) - 1);
	assert_int_equal(n, 6);
	snprintf(p, sizeof(p), "%s/src/main.c", out);
	assert_int_equal(access(p, F_OK), 0);
	snprintf(p, sizeof(p), "%s/.git", out);
	assert_int_equal(access(p, F_OK), -1);
	/* Not into a directory that has something in it. */
	assert_int_equal(sources_git_export(s, rp.path, rp.first, out, &err), KILN_EEXIST);
	kiln_err_clear(&err);
	assert_int_equal(sources_git_export(s, rp.path, "1234", out, &err), KILN_EINVAL);
	kiln_buf_release(&b);
	sources_free(s);
	free_repo(&rp);
}

/* Files are found at a commit (in subdirectories too, symlinks count); directories and
 * missing paths are not; bad paths and commits are refused naming them. */
KILN_TEST(git_has_file)
{
	struct kiln_err err = KILN_ERR_INIT;
	struct sources *s = NULL;
	char cache[512];
	struct sources_fetch_opts o = wt_opts(cache, sizeof(cache), "gc7");
	struct repo rp;
	bool found = true;

	make_repo(&rp, "repo7");
	assert_ok(sources_new(&o, &s, &err), &err);
	assert_ok(sources_git_has_file(s, rp.path, rp.first, "README", &found, &err), &err);
	assert_true(found);
	assert_ok(sources_git_has_file(s, rp.path, rp.second, "src/main.c", &found, &err), &err);
	assert_true(found);
	assert_ok(sources_git_has_file(s, rp.path, rp.second, "link", &found, &err), &err);
	assert_true(found);
	assert_ok(sources_git_has_file(s, rp.path, rp.second, "src", &found, &err), &err);
	assert_false(found);
	assert_ok(sources_git_has_file(s, rp.path, rp.second, "x.spec", &found, &err), &err);
	assert_false(found);
	assert_ok(sources_git_has_file(s, rp.path, rp.second, "src/x/y", &found, &err), &err);
	assert_false(found);
	assert_int_equal(sources_git_has_file(s, rp.path, rp.second, "../x", &found, &err),
	                 KILN_EINVAL);
	kiln_err_clear(&err);
	assert_int_equal(sources_git_has_file(s, rp.path, rp.second, "/README", &found, &err),
	                 KILN_EINVAL);
	kiln_err_clear(&err);
	assert_int_equal(sources_git_has_file(s, rp.path, rp.second, "src/", &found, &err),
	                 KILN_EINVAL);
	kiln_err_clear(&err);
	assert_int_equal(sources_git_has_file(s, rp.path, "abc", "README", &found, &err),
	                 KILN_EINVAL);
	kiln_err_clear(&err);
	assert_int_equal(sources_git_has_file(s, rp.path,
	                                      "0123456789012345678901234567890123456789", "README",
	                                      &found, &err),
	                 KILN_ENOTFOUND);
	sources_free(s);
	free_repo(&rp);
}

KILN_TEST(git_tarball_is_deterministic)
{
	struct kiln_err err = KILN_ERR_INIT;
	struct kiln_buf a = KILN_BUF_INIT(KILN_MIB), b = KILN_BUF_INIT(KILN_MIB);
	struct sources *s1 = NULL, *s2 = NULL;
	char c1[512], c2[512], t1[512], t2[512];
	struct sources_fetch_opts o1 = wt_opts(c1, sizeof(c1), "gc3a");
	struct sources_fetch_opts o2 = wt_opts(c2, sizeof(c2), "gc3b");
	struct repo rp;

	make_repo(&rp, "repo3");
	assert_ok(sources_new(&o1, &s1, &err), &err);
	assert_ok(sources_new(&o2, &s2, &err), &err);
	assert_ok(sources_git_tarball(s1, rp.path, rp.second, "t-1/",
	                              wt_path(t1, sizeof(t1), "a.tgz"), &err),
	          &err);
	assert_ok(sources_git_tarball(s2, rp.path, rp.second, "t-1/",
	                              wt_path(t2, sizeof(t2), "sub/b.tgz"), &err),
	          &err);
	assert_ok(util_read_file(t1, KILN_MIB, &a, &err), &err);
	assert_ok(util_read_file(t2, KILN_MIB, &b, &err), &err);
	assert_int_equal(a.len, b.len);
	assert_memory_equal(a.ptr, b.ptr, a.len);
	assert_memory_equal(a.ptr, "\x1f\x8b\x08\x00\x00\x00\x00\x00", 8); /* no name, no time */
	kiln_buf_release(&a);
	kiln_buf_release(&b);
	sources_free(s1);
	sources_free(s2);
	free_repo(&rp);
}

KILN_TEST(git_offline_without_mirror)
{
	struct kiln_err err = KILN_ERR_INIT;
	struct sources *s = NULL;
	struct sources_git_rev rev;
	char cache[512];
	struct sources_fetch_opts o = wt_opts(cache, sizeof(cache), "gc4");
	struct repo rp;

	make_repo(&rp, "repo4");
	o.offline = true;
	assert_ok(sources_new(&o, &s, &err), &err);
	assert_int_equal(sources_git_resolve(s, rp.path, "v1", &rev, &err), KILN_ENOTFOUND);
	assert_non_null(strstr(err.msg, "offline: no mirror of"));
	sources_free(s);
	free_repo(&rp);
}

KILN_TEST(git_checkout_finds_the_spec)
{
	struct kiln_err err = KILN_ERR_INIT;
	struct kiln_buf dir = KILN_BUF_INIT(KILN_LIMIT_PATH), spec = KILN_BUF_INIT(KILN_LIMIT_PATH);
	struct sources *s = NULL;
	struct sources_git_rev rev;
	char cache[512], out[512];
	struct sources_fetch_opts o = wt_opts(cache, sizeof(cache), "gc5");
	struct repo rp;

	make_repo(&rp, "repo5");
	assert_ok(sources_new(&o, &s, &err), &err);
	/* The tree has no *.spec at its top: the error says so; a named file is found. */
	assert_int_equal(sources_checkout(s, rp.path, "v1", wt_path(out, sizeof(out), "co"), NULL,
	                                  &rev, &dir, &spec, &err),
	                 KILN_ENOTFOUND);
	assert_non_null(strstr(err.msg, "no spec file at the top"));
	kiln_err_clear(&err);
	kiln_buf_reset(&dir);
	kiln_buf_reset(&spec);
	assert_ok(sources_checkout(s, rp.path, "v1", wt_path(out, sizeof(out), "co"), "src/main.c",
	                           &rev, &dir, &spec, &err),
	          &err);
	assert_string_equal(rev.commit, rp.first);
	assert_string_equal(dir.ptr, out);
	assert_non_null(strstr(spec.ptr, "/co/src/main.c"));
	kiln_buf_release(&dir);
	kiln_buf_release(&spec);
	sources_free(s);
	free_repo(&rp);
}

KILN_TEST(git_ssh_url_is_recognised)
{
	struct kiln_err err = KILN_ERR_INIT;
	struct sources *s = NULL;
	struct sources_git_rev rev;
	char cache[512];
	struct sources_fetch_opts o = wt_opts(cache, sizeof(cache), "gc6");

	/* Offline, an ssh URL gets as far as the (missing) mirror when libgit2 has ssh, and
	 * is refused by name when it does not: never a network access either way. */
	o.offline = true;
	assert_ok(sources_new(&o, &s, &err), &err);
	assert_int_not_equal(
	    sources_git_resolve(s, "git@example.org:pkg/foo.git", "v1", &rev, &err), KILN_OK);
	assert_true(strstr(err.msg, "offline: no mirror of 'git@example.org:pkg/foo.git'") ||
	            strstr(err.msg, "no ssh support"));
	sources_free(s);
}
