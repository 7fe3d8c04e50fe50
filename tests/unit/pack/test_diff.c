#include "util/util.h"

#include <sys/stat.h>

#include "pack/pack.h"
#include "tests/unit/harness.h"

/* A package described in the test and written with pack_write(): a few files of each
 * kind, changed one field at a time to make the second package of a pair. */
struct fx_file {
	const char *path;
	const char *data; /* regular files */
	size_t len;       /* 0: strlen(data) */
	uint32_t mode;
	const char *user;
	uint32_t mtime;
	uint32_t flags;
	const char *link;
	uint32_t hardlink;
};

struct fx {
	struct fx_file f[8];
	size_t n;
	const char *summary;
	const char *url; /* NULL: no URL tag */
	uint16_t archnum;
	const char *payload;
};

static const char conf[] = "# settings\nalpha=1\nbeta=2\ngamma=3\ndelta=4\nepsilon=5\n";
static const char blob[] = {0x7f, 'E', 'L', 'F', 0, 1, 2, 3, 4, 5};

static void fx_base(struct fx *x)
{
	memset(x, 0, sizeof(*x));
	x->f[0] = (struct fx_file){"/etc/x.conf",      conf, 0, S_IFREG | 0644, NULL, 1704067200,
	                           RPMTAG_FILE_CONFIG, NULL, 0};
	x->f[1] = (struct fx_file){
	    "/usr/bin/x", "#!/bin/sh\necho x\n", 0, S_IFREG | 0755, NULL, 1704067200, 0, NULL, 0};
	x->f[2] =
	    (struct fx_file){"/usr/bin/y", NULL, 0, S_IFLNK | 0777, NULL, 1704067200, 0, "x", 0};
	x->f[3] =
	    (struct fx_file){"/usr/share/x", NULL, 0, S_IFDIR | 0755, NULL, 1704067200, 0, NULL, 0};
	x->f[4] = (struct fx_file){
	    "/usr/share/x/blob", blob, sizeof(blob), S_IFREG | 0644, NULL, 1704067200, 0, NULL, 0};
	x->n = 5;
	x->summary = "a test package";
	x->archnum = 1;
	x->payload = "w9.gzdio";
}

static const char *fx_write(const char *name, const struct fx *x, char *path, size_t size)
{
	struct kiln_err err = KILN_ERR_INIT;
	struct pack_file files[8];
	char src[8][1024];
	struct pack_write_opts o;
	struct pack_header h;
	const char *d = kiln_test_tmpdir();
	size_t i;

	memset(files, 0, sizeof(files));
	for (i = 0; i < x->n; i++) {
		const struct fx_file *f = &x->f[i];

		files[i] = (struct pack_file){.path = f->path,
		                              .mode = f->mode,
		                              .user = f->user,
		                              .mtime = f->mtime,
		                              .flags = f->flags,
		                              .verify = RPMTAG_VERIFY_ALL,
		                              .link = f->link,
		                              .hardlink = f->hardlink};
		if (!f->data)
			continue;
		snprintf(src[i], sizeof(src[i]), "%s/%s.%zu", d, name, i);
		assert_ok(util_write_atomic(src[i], f->data, f->len ? f->len : strlen(f->data),
		                            0644, &err),
		          &err);
		files[i].src = src[i];
	}
	snprintf(path, size, "%s/%s.rpm", d, name);
	pack_header_init(&h);
	assert_ok(pack_header_put_string(&h, RPMTAG_NAME, "fx", &err), &err);
	assert_ok(pack_header_put_string(&h, RPMTAG_VERSION, "1.0", &err), &err);
	assert_ok(pack_header_put_string(&h, RPMTAG_RELEASE, "1", &err), &err);
	assert_ok(pack_header_put_string(&h, RPMTAG_ARCH, "x86_64", &err), &err);
	assert_ok(pack_header_put_i18n(&h, RPMTAG_SUMMARY, x->summary, &err), &err);
	assert_ok(pack_header_put_string(&h, RPMTAG_SOURCERPM, "fx-1.0-1.src.rpm", &err), &err);
	if (x->url)
		assert_ok(pack_header_put_string(&h, RPMTAG_URL, x->url, &err), &err);
	pack_write_opts_init(&o);
	o.archnum = x->archnum;
	assert_ok(pack_compress_parse(x->payload, &o.comp, &err), &err);
	assert_ok(pack_write(path, &h, files, x->n, &o, &err), &err);
	pack_header_release(&h);
	return path;
}

/* Write both packages and compare them. */
static void fx_diff(const struct fx *a, const struct fx *b, const struct pack_diff_opts *o,
                    struct pack_diff *d)
{
	struct kiln_err err = KILN_ERR_INIT;
	char pa[1024], pb[1024];

	fx_write("old", a, pa, sizeof(pa));
	fx_write("new", b, pb, sizeof(pb));
	assert_ok(pack_diff_files(pa, pb, o, d, &err), &err);
}

static size_t count_kind(const struct pack_diff *d, enum pack_diff_kind kind)
{
	size_t i, n = 0;

	for (i = 0; i < d->n; i++)
		n += d->items[i].kind == kind;
	return n;
}

/* The item of kind for path (file items) or name (tags, lead, attributes); NULL if none. */
static const struct pack_diff_item *find(const struct pack_diff *d, enum pack_diff_kind kind,
                                         const char *path, const char *name)
{
	size_t i;

	for (i = 0; i < d->n; i++) {
		const struct pack_diff_item *it = &d->items[i];

		if (it->kind != kind)
			continue;
		if (path && (!it->path || strcmp(it->path, path)))
			continue;
		if (name && (!it->name || strcmp(it->name, name)))
			continue;
		return it;
	}
	return NULL;
}

static void assert_attr(const struct pack_diff *d, const char *path, const char *field,
                        const char *old_v, const char *new_v)
{
	const struct pack_diff_item *it = find(d, PACK_DIFF_FILE_ATTR, path, field);

	assert_non_null(it);
	assert_int_equal(it->old_v.count, 1);
	assert_int_equal(it->new_v.count, 1);
	assert_string_equal(it->old_v.elems[0], old_v);
	assert_string_equal(it->new_v.elems[0], new_v);
}

/* No per-file array may be reported as a tag when a file item explains it. */
static void assert_no_file_tags(const struct pack_diff *d)
{
	static const char *const names[] = {
	    "FILEMODES", "FILEDIGESTS", "FILESIZES",    "BASENAMES",  "DIRINDEXES", "FILEMTIMES",
	    "FILEFLAGS", "FILELINKTOS", "FILEUSERNAME", "FILEINODES", "CLASSDICT",  "FILECLASS"};
	size_t i;

	for (i = 0; i < KILN_ARRAY_SIZE(names); i++)
		assert_null(find(d, PACK_DIFF_TAG, NULL, names[i]));
}

static const char *format(const struct pack_diff *d, unsigned flags)
{
	static char res[16384];
	struct kiln_buf out = KILN_BUF_INIT(KILN_MIB);
	struct kiln_err err = KILN_ERR_INIT;

	assert_ok(pack_diff_format(d, "old.rpm", "new.rpm", flags, &out, &err), &err);
	assert_true(out.len < sizeof(res));
	memcpy(res, out.ptr, out.len + 1);
	kiln_buf_release(&out);
	return res;
}

KILN_TEST(diff_identical_packages)
{
	struct pack_diff d;
	struct kiln_err err = KILN_ERR_INIT;
	const char **paths = NULL;
	struct fx a;
	size_t n = 1;

	fx_base(&a);
	fx_diff(&a, &a, NULL, &d);
	assert_int_equal(d.n, 0);
	assert_string_equal(format(&d, 0), "");
	assert_string_equal(format(&d, PACK_DIFF_F_JSON),
	                    "{\n  \"old\": \"old.rpm\",\n  \"new\": \"new.rpm\",\n"
	                    "  \"identical\": true,\n  \"differences\": [],\n  \"files\": []\n}\n");
	assert_ok(pack_diff_paths(&d, &paths, &n, &err), &err);
	assert_int_equal(n, 0);
	free(paths);
	pack_diff_release(&d);
}

KILN_TEST(diff_tag_changed_added_removed)
{
	const struct pack_diff_item *it;
	struct pack_diff d;
	struct fx a, b;

	fx_base(&a);
	fx_base(&b);
	b.summary = "another summary";
	b.url = "https://example.invalid/";
	fx_diff(&a, &b, NULL, &d);
	assert_int_equal(d.n, 2); /* the payload is the same, so are its digests */
	it = find(&d, PACK_DIFF_TAG, NULL, "SUMMARY");
	assert_non_null(it);
	assert_int_equal(it->tag, RPMTAG_SUMMARY);
	assert_string_equal(it->old_v.elems[0], "a test package");
	assert_string_equal(it->new_v.elems[0], "another summary");
	assert_false(it->old_v.array);
	it = find(&d, PACK_DIFF_TAG, NULL, "URL");
	assert_non_null(it);
	assert_int_equal(it->old_v.count, 0);
	assert_string_equal(it->new_v.elems[0], "https://example.invalid/");
	/* Tags come in number order. */
	assert_int_equal(d.items[0].tag, RPMTAG_SUMMARY);
	assert_int_equal(d.items[1].tag, RPMTAG_URL);
	assert_string_equal(format(&d, 0), "--- old.rpm\n+++ new.rpm\n"
	                                   "tag SUMMARY: a test package -> another summary\n"
	                                   "tag URL: added: https://example.invalid/\n");
	pack_diff_release(&d);
	fx_diff(&b, &a, NULL, &d);
	assert_non_null(strstr(format(&d, 0), "tag URL: removed: https://example.invalid/\n"));
	assert_non_null(strstr(format(&d, PACK_DIFF_F_JSON),
	                       "{\"kind\": \"tag\", \"tag\": 1020, \"name\": \"URL\", "
	                       "\"old\": \"https://example.invalid/\", \"new\": null}"));
	pack_diff_release(&d);
}

KILN_TEST(diff_file_added_and_removed)
{
	const struct pack_diff_item *it;
	struct kiln_err err = KILN_ERR_INIT;
	const char **paths = NULL;
	struct pack_diff d;
	struct fx a, b;
	size_t n = 0;

	fx_base(&a);
	fx_base(&b);
	b.f[b.n++] = (struct fx_file){
	    "/usr/share/x/new", "fresh\n", 0, S_IFREG | 0600, "daemon", 1704067200, 0, NULL, 0};
	fx_diff(&a, &b, NULL, &d);
	it = find(&d, PACK_DIFF_FILE_ADDED, "/usr/share/x/new", NULL);
	assert_non_null(it);
	assert_string_equal(it->new_v.elems[0], "0100600 daemon:root 6");
	assert_int_equal(count_kind(&d, PACK_DIFF_FILE_ADDED), 1);
	assert_int_equal(count_kind(&d, PACK_DIFF_FILE_ATTR), 0);
	assert_non_null(find(&d, PACK_DIFF_TAG, NULL, "SIZE"));
	assert_no_file_tags(&d);
	assert_ok(pack_diff_paths(&d, &paths, &n, &err), &err);
	assert_int_equal(n, 1);
	assert_string_equal(paths[0], "/usr/share/x/new");
	free(paths);
	assert_non_null(
	    strstr(format(&d, 0), "file /usr/share/x/new: added (0100600 daemon:root 6)\n"));
	pack_diff_release(&d);
	fx_diff(&b, &a, NULL, &d);
	assert_non_null(find(&d, PACK_DIFF_FILE_REMOVED, "/usr/share/x/new", NULL));
	pack_diff_release(&d);
}

KILN_TEST(diff_file_attributes)
{
	struct pack_diff d;
	struct fx a, b;

	fx_base(&a);
	fx_base(&b);
	b.f[1].mode = S_IFREG | 0700;
	b.f[1].user = "bin";
	b.f[3].mtime = 1704067201;
	b.f[0].flags = RPMTAG_FILE_CONFIG | RPMTAG_FILE_NOREPLACE;
	b.f[2].link = "../bin/x";
	fx_diff(&a, &b, NULL, &d);
	assert_attr(&d, "/usr/bin/x", "mode", "0100755", "0100700");
	assert_attr(&d, "/usr/bin/x", "user", "root", "bin");
	assert_attr(&d, "/usr/share/x", "mtime", "1704067200", "1704067201");
	assert_true(find(&d, PACK_DIFF_FILE_ATTR, "/usr/share/x", "mtime")->new_v.numeric);
	assert_attr(&d, "/etc/x.conf", "flags", "c", "cn");
	assert_attr(&d, "/usr/bin/y", "link", "x", "../bin/x");
	assert_attr(&d, "/usr/bin/y", "size", "1", "8"); /* a symlink's size is its target's */
	assert_int_equal(count_kind(&d, PACK_DIFF_FILE_ATTR), 6);
	assert_int_equal(count_kind(&d, PACK_DIFF_FILE_CONTENT), 0);
	assert_no_file_tags(&d);
	assert_non_null(strstr(format(&d, 0), "file /usr/bin/x: mode 0100755 -> 0100700\n"
	                                      "file /usr/bin/x: user root -> bin\n"));
	assert_non_null(strstr(format(&d, PACK_DIFF_F_JSON),
	                       "{\"kind\": \"file\", \"path\": \"/usr/share/x\", \"field\": "
	                       "\"mtime\", \"old\": 1704067200, \"new\": 1704067201}"));
	pack_diff_release(&d);
}

KILN_TEST(diff_text_contents)
{
	const struct pack_diff_item *it;
	struct pack_diff d;
	struct fx a, b;

	fx_base(&a);
	fx_base(&b);
	b.f[0].data = "# settings\nalpha=1\nbeta=two\ngamma=3\ndelta=4\nepsilon=5\n";
	fx_diff(&a, &b, NULL, &d);
	it = find(&d, PACK_DIFF_FILE_CONTENT, "/etc/x.conf", NULL);
	assert_non_null(it);
	assert_int_equal(it->content, PACK_DIFF_CONTENT_TEXT);
	assert_int_equal(it->old_size, sizeof(conf) - 1);
	assert_int_equal(it->new_size, sizeof(conf) + 1);
	assert_string_equal(it->text, "--- a/etc/x.conf\n+++ b/etc/x.conf\n@@ -1,6 +1,6 @@\n"
	                              " # settings\n alpha=1\n-beta=2\n+beta=two\n gamma=3\n"
	                              " delta=4\n epsilon=5\n");
	assert_non_null(find(&d, PACK_DIFF_FILE_ATTR, "/etc/x.conf", "digest"));
	assert_non_null(find(&d, PACK_DIFF_FILE_ATTR, "/etc/x.conf", "size"));
	assert_no_file_tags(&d);
	assert_non_null(strstr(format(&d, 0), "file /etc/x.conf: contents differ\n"
	                                      "  --- a/etc/x.conf\n  +++ b/etc/x.conf\n"
	                                      "  @@ -1,6 +1,6 @@\n   # settings\n"));
	assert_non_null(
	    strstr(format(&d, PACK_DIFF_F_JSON),
	           "\"diff\": \"--- a/etc/x.conf\\n+++ b/etc/x.conf\\n@@ -1,6 +1,6 @@\\n"));
	pack_diff_release(&d);
}

KILN_TEST(diff_binary_contents)
{
	static const char other[] = {0x7f, 'E', 'L', 'F', 0, 9, 9, 9, 9, 9};
	struct kiln_err err = KILN_ERR_INIT;
	const struct pack_diff_item *it;
	char hex[2 * UTIL_DIGEST_MAX + 1];
	struct pack_diff d;
	struct fx a, b;

	fx_base(&a);
	fx_base(&b);
	b.f[4].data = other;
	fx_diff(&a, &b, NULL, &d);
	it = find(&d, PACK_DIFF_FILE_CONTENT, "/usr/share/x/blob", NULL);
	assert_non_null(it);
	assert_int_equal(it->content, PACK_DIFF_CONTENT_BINARY);
	assert_null(it->text);
	assert_ok(util_digest_mem_hex(UTIL_DIGEST_SHA256, blob, sizeof(blob), hex, &err), &err);
	assert_string_equal(it->old_sha256, hex);
	assert_ok(util_digest_mem_hex(UTIL_DIGEST_SHA256, other, sizeof(other), hex, &err), &err);
	assert_string_equal(it->new_sha256, hex);
	assert_attr(&d, "/usr/share/x/blob", "digest", it->old_sha256, it->new_sha256);
	assert_non_null(strstr(format(&d, 0), "file /usr/share/x/blob: binary contents differ "
	                                      "(sha256 "));
	pack_diff_release(&d);
}

KILN_TEST(diff_large_and_busy_contents)
{
	const struct pack_diff_item *it;
	struct pack_diff_opts o;
	struct pack_diff d;
	struct fx a, b;

	fx_base(&a);
	fx_base(&b);
	b.f[0].data = "# settings\nALPHA=1\nBETA=2\ngamma=3\ndelta=4\nepsilon=5\n";
	pack_diff_opts_init(&o);
	o.text_max = 20;
	fx_diff(&a, &b, &o, &d);
	it = find(&d, PACK_DIFF_FILE_CONTENT, "/etc/x.conf", NULL);
	assert_non_null(it);
	assert_int_equal(it->content, PACK_DIFF_CONTENT_LARGE);
	assert_string_equal(it->reason, "larger than 20 bytes");
	assert_non_null(strstr(format(&d, 0), "file /etc/x.conf: contents differ (52 bytes vs 52 "
	                                      "bytes; larger than 20 bytes)\n  sha256 "));
	pack_diff_release(&d);

	pack_diff_opts_init(&o);
	o.edits_max = 3; /* two lines changed: 4 edits */
	fx_diff(&a, &b, &o, &d);
	it = find(&d, PACK_DIFF_FILE_CONTENT, "/etc/x.conf", NULL);
	assert_int_equal(it->content, PACK_DIFF_CONTENT_LARGE);
	assert_string_equal(it->reason, "more than 3 lines changed");
	pack_diff_release(&d);
}

KILN_TEST(diff_hard_links)
{
	struct pack_diff d;
	struct fx a, b;

	/* Two files with the same data, hard-linked in the new package only. */
	fx_base(&a);
	a.f[a.n++] = (struct fx_file){
	    "/usr/share/x/h1", "same\n", 0, S_IFREG | 0644, NULL, 1704067200, 0, NULL, 0};
	a.f[a.n++] = (struct fx_file){
	    "/usr/share/x/h2", "same\n", 0, S_IFREG | 0644, NULL, 1704067200, 0, NULL, 0};
	b = a;
	b.f[5].hardlink = b.f[6].hardlink = 1;
	fx_diff(&a, &b, NULL, &d);
	assert_attr(&d, "/usr/share/x/h1", "hardlinks", "", "/usr/share/x/h2");
	assert_attr(&d, "/usr/share/x/h2", "hardlinks", "", "/usr/share/x/h1");
	/* The data is the same: only the member carrying it is in the payload, and the other
	 * shares it. */
	assert_int_equal(count_kind(&d, PACK_DIFF_FILE_CONTENT), 0);
	assert_no_file_tags(&d);
	pack_diff_release(&d);

	/* Changing the data of a set shows on every member. */
	b.f[5].data = b.f[6].data = "other\n";
	fx_diff(&a, &b, NULL, &d);
	assert_non_null(find(&d, PACK_DIFF_FILE_CONTENT, "/usr/share/x/h1", NULL));
	assert_non_null(find(&d, PACK_DIFF_FILE_CONTENT, "/usr/share/x/h2", NULL));
	assert_string_equal(
	    find(&d, PACK_DIFF_FILE_CONTENT, "/usr/share/x/h1", NULL)->text,
	    "--- a/usr/share/x/h1\n+++ b/usr/share/x/h1\n@@ -1 +1 @@\n-same\n+other\n");
	pack_diff_release(&d);
}

KILN_TEST(diff_lead_and_payload)
{
	struct pack_diff d;
	struct fx a, b;

	fx_base(&a);
	fx_base(&b);
	b.archnum = 12;
	b.payload = "w3.zstdio";
	fx_diff(&a, &b, NULL, &d);
	assert_int_equal(d.items[0].kind, PACK_DIFF_LEAD);
	assert_string_equal(d.items[0].name, "archnum");
	assert_string_equal(d.items[0].old_v.elems[0], "1");
	assert_string_equal(d.items[0].new_v.elems[0], "12");
	assert_non_null(find(&d, PACK_DIFF_TAG, NULL, "PAYLOADCOMPRESSOR"));
	assert_non_null(find(&d, PACK_DIFF_TAG, NULL, "PAYLOADFLAGS"));
	/* Different compressed bytes, the same files. */
	assert_int_equal(count_kind(&d, PACK_DIFF_FILE_CONTENT), 0);
	assert_int_equal(count_kind(&d, PACK_DIFF_FILE_ATTR), 0);
	assert_non_null(strstr(format(&d, 0), "lead archnum: 1 -> 12\n"));
	pack_diff_release(&d);
}

KILN_TEST(diff_json_escapes)
{
	struct pack_diff d;
	struct fx a, b;

	fx_base(&a);
	fx_base(&b);
	b.summary = "quote \" backslash \\ tab \t latin1 \xe9 utf8 \xc3\xa9";
	fx_diff(&a, &b, NULL, &d);
	assert_non_null(strstr(format(&d, PACK_DIFF_F_JSON),
	                       "\"new\": \"quote \\\" backslash \\\\ tab \\t latin1 \\u00e9 utf8 "
	                       "\xc3\xa9\"}"));
	pack_diff_release(&d);
}

/* Unreadable input: errors name the file and the structure. */
KILN_TEST(diff_refuses_broken_packages)
{
	struct kiln_buf raw = KILN_BUF_INIT(KILN_MIB);
	struct kiln_err err = KILN_ERR_INIT;
	struct pack_package p;
	struct pack_diff d;
	char pa[1024], pb[1024];
	struct fx a;

	fx_base(&a);
	a.payload = "w.ufdio";
	fx_write("good", &a, pa, sizeof(pa));
	fx_write("bad", &a, pb, sizeof(pb));
	assert_ok(pack_package_open(&p, pb, NULL, &err), &err);
	assert_ok(util_read_file(pb, KILN_MIB, &raw, &err), &err);

	/* A flipped byte of file data: the payload digest catches it. */
	raw.ptr[raw.len - 200] ^= 1;
	assert_ok(util_write_atomic(pb, raw.ptr, raw.len, 0644, &err), &err);
	assert_int_equal(pack_diff_files(pa, pb, NULL, &d, &err), KILN_EDIGEST);
	assert_non_null(strstr(err.msg, "bad.rpm: payload: "));
	pack_diff_release(&d);

	/* Cut inside the payload. */
	kiln_err_clear(&err);
	assert_ok(util_write_atomic(pb, raw.ptr, (size_t)p.payload_off + 50, 0644, &err), &err);
	assert_int_equal(pack_diff_files(pa, pb, NULL, &d, &err), KILN_EFORMAT);
	assert_non_null(strstr(err.msg, "bad.rpm: payload: "));
	pack_diff_release(&d);

	/* Cut inside the main header. */
	kiln_err_clear(&err);
	assert_ok(util_write_atomic(pb, raw.ptr, (size_t)p.hdr_off + 40, 0644, &err), &err);
	assert_int_equal(pack_diff_files(pb, pa, NULL, &d, &err), KILN_EFORMAT);
	assert_non_null(strstr(err.msg, "bad.rpm: header: "));
	pack_diff_release(&d);

	kiln_err_clear(&err);
	assert_int_equal(pack_diff_files(pa, "/nonexistent.rpm", NULL, &d, &err), KILN_EIO);
	assert_non_null(strstr(err.msg, "/nonexistent.rpm"));
	pack_diff_release(&d);
	pack_package_release(&p);
	kiln_buf_release(&raw);
}

/* Re-encode the main header of the package at path after edit() changed it; the lead,
 * signature header and payload stay as they are. */
static void rewrite_header(const char *path, void (*edit)(struct pack_header *h))
{
	struct kiln_buf raw = KILN_BUF_INIT(KILN_MIB), out = KILN_BUF_INIT(KILN_MIB);
	struct kiln_err err = KILN_ERR_INIT;
	struct pack_package p;

	assert_ok(util_read_file(path, KILN_MIB, &raw, &err), &err);
	assert_ok(pack_package_open(&p, path, NULL, &err), &err);
	edit(&p.hdr);
	kiln_buf_add(&out, raw.ptr, (size_t)p.hdr_off);
	assert_ok(pack_header_write(&p.hdr, RPMTAG_HEADERIMMUTABLE, &out, &err), &err);
	kiln_buf_add(&out, raw.ptr + p.payload_off, raw.len - (size_t)p.payload_off);
	assert_ok(kiln_buf_finish(&out, &err), &err);
	assert_ok(util_write_atomic(path, out.ptr, out.len, 0644, &err), &err);
	pack_package_release(&p);
	kiln_buf_release(&raw);
	kiln_buf_release(&out);
}

static void shift_inodes(struct pack_header *h)
{
	struct kiln_err err = KILN_ERR_INIT;
	const struct pack_entry *e = pack_header_get(h, RPMTAG_FILEINODES);
	uint32_t v[16];
	uint32_t i;

	assert_non_null(e);
	assert_true(e->count <= 16);
	for (i = 0; i < e->count; i++)
		v[i] = ((const uint32_t *)e->data)[i] + 100;
	assert_ok(pack_header_put(h, RPMTAG_FILEINODES, RPMTAG_TYPE_INT32, v, e->count, &err),
	          &err);
}

/* Inode numbers that differ without changing any hard-link set: no file explains the
 * FILEINODES difference, so it is reported as a tag (a reproducibility problem all the
 * same). */
KILN_TEST(diff_unexplained_file_tag)
{
	struct kiln_err err = KILN_ERR_INIT;
	const struct pack_diff_item *it;
	struct pack_diff d;
	char pa[1024], pb[1024];
	struct fx a;

	fx_base(&a);
	fx_write("ino-old", &a, pa, sizeof(pa));
	fx_write("ino-new", &a, pb, sizeof(pb));
	rewrite_header(pb, shift_inodes);
	assert_ok(pack_diff_files(pa, pb, NULL, &d, &err), &err);
	assert_int_equal(d.n, 1);
	it = find(&d, PACK_DIFF_TAG, NULL, "FILEINODES");
	assert_non_null(it);
	assert_true(it->old_v.array);
	assert_int_equal(it->old_v.count, 5);
	assert_string_equal(it->old_v.elems[0], "1");
	assert_string_equal(it->new_v.elems[0], "101");
	assert_non_null(strstr(format(&d, 0), "tag FILEINODES:\n  @@ -1,5 +1,5 @@\n  -1\n  -2\n"));
	pack_diff_release(&d);
}

static uint32_t be32(const char *p)
{
	const unsigned char *u = (const unsigned char *)p;

	return (uint32_t)u[0] << 24 | (uint32_t)u[1] << 16 | (uint32_t)u[2] << 8 | u[3];
}

/* Write a non-zero byte into the alignment padding after a STRING entry of the main header:
 * the same tags and data, different bytes on disk. */
static void dirty_padding(const char *path)
{
	struct kiln_buf raw = KILN_BUF_INIT(KILN_MIB);
	struct kiln_err err = KILN_ERR_INIT;
	struct pack_package p;
	const char *index;
	char *store;
	uint32_t il, i, j;
	bool done = false;

	assert_ok(util_read_file(path, KILN_MIB, &raw, &err), &err);
	assert_ok(pack_package_open(&p, path, NULL, &err), &err);
	index = raw.ptr + p.hdr_off + 16;
	il = be32(raw.ptr + p.hdr_off + 8);
	store = raw.ptr + p.hdr_off + 16 + 16 * (size_t)il;
	for (i = 0; i < il && !done; i++) {
		uint32_t off = be32(index + 16 * i + 8), end;

		if (be32(index + 16 * i + 4) != RPMTAG_TYPE_STRING)
			continue;
		end = off + (uint32_t)strlen(store + off) + 1;
		for (j = 0; j < il && !done; j++) {
			uint32_t next = be32(index + 16 * j + 8);

			if (next > end && next % 4 == 0 && next - end < 4 &&
			    be32(index + 16 * j + 4) == 4) {
				store[end] = 'X';
				done = true;
			}
		}
	}
	assert_true(done);
	assert_ok(util_write_atomic(path, raw.ptr, raw.len, 0644, &err), &err);
	pack_package_release(&p);
	kiln_buf_release(&raw);
}

KILN_TEST(diff_header_bytes_only)
{
	struct kiln_err err = KILN_ERR_INIT;
	const struct pack_diff_item *it;
	struct pack_diff d;
	char pa[1024], pb[1024];
	struct fx a;

	fx_base(&a);
	fx_write("bytes-old", &a, pa, sizeof(pa));
	fx_write("bytes-new", &a, pb, sizeof(pb));
	dirty_padding(pb);
	assert_ok(pack_diff_files(pa, pb, NULL, &d, &err), &err);
	assert_int_equal(d.n, 1);
	it = &d.items[0];
	assert_int_equal(it->kind, PACK_DIFF_BYTES);
	assert_string_equal(it->name, "header");
	assert_int_equal(it->new_size, it->old_size);
	assert_non_null(strstr(format(&d, 0), "header: bytes differ ("));
	assert_non_null(strstr(format(&d, 0), "), though every tag is equal\n"));
	pack_diff_release(&d);
}
