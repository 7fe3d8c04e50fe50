#include "util/util.h"

#include <fcntl.h>
#include <sys/stat.h>
#include <unistd.h>

#include "tests/unit/worker/build_test.h"

static void put_source(struct bt *t, const char *name, const char *text)
{
	struct kiln_err err = KILN_ERR_INIT;
	char path[2200];

	snprintf(path, sizeof(path), "%s/SOURCES", t->top);
	assert_ok(util_mkdir_p(path, 0755, &err), &err);
	snprintf(path, sizeof(path), "%s/SOURCES/%s", t->top, name);
	assert_ok(util_write_atomic(path, text, strlen(text), 0644, &err), &err);
}

static void open_pkg(struct bt *t, const char *rel, struct pack_package *p)
{
	struct kiln_err err = KILN_ERR_INIT;
	char path[2200];

	snprintf(path, sizeof(path), "%s/%s", t->top, rel);
	memset(p, 0, sizeof(*p));
	assert_ok(pack_package_open(p, path, NULL, &err), &err);
}

#define SRC_SPEC                                                                                   \
	BT_TAGS "Source0: a.tar.gz\nSource1: b.txt\nPatch0: c.patch\n%description\nd\n"            \
	        "%files\n%changelog\n* Tue Dec 01 2026 A <a@b> - 1-1\n- x\n"

KILN_TEST(package_source_holds_spec_sources_and_patches)
{
	struct bt t;
	struct pack_package p;
	const struct pack_entry *names, *flags;
	uint64_t v;

	bt_init(&t, "srpm");
	put_source(&t, "a.tar.gz", "A");
	put_source(&t, "b.txt", "B");
	put_source(&t, "c.patch", "C");
	bt_spec(&t, "t.spec", SRC_SPEC);
	unsetenv("SOURCE_DATE_EPOCH");
	assert_ok(bt_run(&t, WORKER_STEPS_S), &t.err);
	assert_int_equal(t.res.noutputs, 1);
	assert_string_equal(t.res.outputs[0].kind, "source");
	assert_string_equal(t.res.outputs[0].arch, "src");
	assert_int_equal(strlen(t.res.outputs[0].sha256), 64);
	open_pkg(&t, "SRPMS/t-1-1.src.rpm", &p);
	assert_true(p.source);
	names = pack_header_get(&p.hdr, RPMTAG_BASENAMES);
	flags = pack_header_get(&p.hdr, RPMTAG_FILEFLAGS);
	assert_non_null(names);
	assert_int_equal(names->count, 4);
	assert_string_equal(((const char *const *)names->data)[0], "a.tar.gz");
	assert_string_equal(((const char *const *)names->data)[3], "t.spec");
	assert_int_equal(((const uint32_t *)flags->data)[3], RPMTAG_FILE_SPECFILE);
	assert_true(pack_header_get_number(&p.hdr, RPMTAG_SOURCEPACKAGE, &v));
	assert_int_equal(v, 1);
	assert_true(pack_header_get_number(&p.hdr, RPMTAG_BUILDTIME, &v));
	assert_int_equal(v, 1796126400); /* from the changelog */
	assert_string_equal(pack_header_get_string(&p.hdr, RPMTAG_BUILDHOST), "reproducible");
	assert_null(pack_header_get(&p.hdr, RPMTAG_FILECOLORS));
	assert_null(pack_header_get(&p.hdr, RPMTAG_SOURCERPM));
	assert_null(strstr(pack_header_get_string(&p.hdr, RPMTAG_SPEC), t.top));
	assert_non_null(strstr(pack_header_get_string(&p.hdr, RPMTAG_SPEC), "Source0: a.tar.gz"));
	pack_package_release(&p);
	bt_release(&t);
}

KILN_TEST(package_source_nosource_and_missing_files)
{
	struct bt t;
	struct pack_package p;
	const struct pack_entry *names;
	char path[2200];

	bt_init(&t, "nosrc");
	put_source(&t, "b.txt", "B");
	put_source(&t, "c.patch", "C");
	bt_spec(&t, "t.spec",
	        BT_TAGS "Source0: a.tar.gz\nSource1: b.txt\nPatch0: c.patch\n"
	                "NoSource: 0\n%description\nd\n%files\n");
	assert_ok(bt_run(&t, WORKER_STEPS_S), &t.err);
	open_pkg(&t, "SRPMS/t-1-1.nosrc.rpm", &p);
	names = pack_header_get(&p.hdr, RPMTAG_BASENAMES);
	assert_int_equal(names->count, 3);
	pack_package_release(&p);
	/* A source that is not NoSource must be there. */
	bt_spec(&t, "t.spec", SRC_SPEC);
	assert_int_equal(bt_run(&t, WORKER_STEPS_S), KILN_ENOTFOUND);
	snprintf(path, sizeof(path), "Bad file: %s/SOURCES/a.tar.gz: No such file or directory",
	         t.top);
	assert_string_equal(t.err.msg, path);
	snprintf(path, sizeof(path), "%s/SRPMS/t-1-1.src.rpm", t.top);
	assert_false(util_exists(path));
	bt_release(&t);
}

KILN_TEST(package_source_format_and_payload_macros)
{
	struct bt t;
	struct pack_package p;

	bt_init(&t, "fmt");
	put_source(&t, "a.tar.gz", "A");
	put_source(&t, "b.txt", "B");
	put_source(&t, "c.patch", "C");
	bt_spec(&t, "t.spec", SRC_SPEC);
	bt_define(&t, "_rpmformat 6");
	bt_define(&t, "_source_payload w6.xzdio");
	assert_ok(bt_run(&t, WORKER_STEPS_S), &t.err);
	open_pkg(&t, "SRPMS/t-1-1.src.rpm", &p);
	assert_int_equal(p.format, 6);
	assert_string_equal(pack_header_get_string(&p.hdr, RPMTAG_PAYLOADCOMPRESSOR), "xz");
	pack_package_release(&p);
	bt_define(&t, "_rpmformat 5");
	assert_int_equal(bt_run(&t, WORKER_STEPS_S), KILN_EINVAL);
	bt_define(&t, "_rpmformat 4");
	bt_define(&t, "_source_payload w9.bzdio");
	assert_int_not_equal(bt_run(&t, WORKER_STEPS_S), KILN_OK);
	bt_define(&t, "_source_payload w9.gzdio");
	bt_define(&t, "_source_filedigest_algorithm 99");
	assert_int_equal(bt_run(&t, WORKER_STEPS_S), KILN_EUNSUPP);
	bt_release(&t);
}

KILN_TEST(package_source_is_reproducible)
{
	struct bt t;
	struct kiln_buf a = KILN_BUF_INIT(KILN_MIB), b = KILN_BUF_INIT(KILN_MIB);
	struct kiln_err err = KILN_ERR_INIT;

	bt_init(&t, "repro");
	put_source(&t, "a.tar.gz", "A");
	put_source(&t, "b.txt", "B");
	put_source(&t, "c.patch", "C");
	bt_spec(&t, "t.spec", SRC_SPEC);
	assert_ok(bt_run(&t, WORKER_STEPS_S), &t.err);
	assert_ok(util_read_file(t.res.outputs[0].path, KILN_MIB, &a, &err), &err);
	sleep(1);
	assert_ok(bt_run(&t, WORKER_STEPS_S), &t.err);
	assert_ok(util_read_file(t.res.outputs[0].path, KILN_MIB, &b, &err), &err);
	assert_int_equal(a.len, b.len);
	assert_memory_equal(a.ptr, b.ptr, a.len);
	kiln_buf_release(&a);
	kiln_buf_release(&b);
	bt_release(&t);
}
