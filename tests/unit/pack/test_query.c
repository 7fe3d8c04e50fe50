#include "util/util.h"

#include <time.h>

#include "tests/unit/pack/pkgfix.h"

KILN_TEST(query_default_list_dump)
{
	struct kiln_buf out = KILN_BUF_INIT(KILN_MIB);
	struct kiln_err err = KILN_ERR_INIT;
	struct pack_query_opts o = {0};
	struct pack_package p;
	char path[1024];

	pkgfix_write("q", 4, "w.ufdio", path, sizeof(path));
	assert_ok(pack_package_open(&p, path, NULL, &err), &err);
	assert_ok(pack_query(&p, &o, &out, &err), &err);
	assert_string_equal(out.ptr, "q-1.0-1.noarch\n");
	kiln_buf_reset(&out);
	o.list = true;
	assert_ok(pack_query(&p, &o, &out, &err), &err);
	assert_string_equal(out.ptr,
	                    "/usr/bin\n/usr/bin/hello\n/usr/bin/hi\n/usr/lib/a\n/usr/lib/b\n"
	                    "/var/log/x.log\n");
	kiln_buf_reset(&out);
	o.dump = true;
	assert_ok(pack_query(&p, &o, &out, &err), &err);
	assert_non_null(strstr(out.ptr,
	                       "/usr/bin/hi 5 1704067200 "
	                       "0000000000000000000000000000000000000000000000000000000000000000"
	                       " 0120777 root root 0 0 0 hello\n"));
	kiln_buf_reset(&out);
	o.qf = "%{SIGSIZE}|%{ARCHIVESIZE}|[%{FILENLINKS}]";
	o.dump = o.list = false;
	assert_ok(pack_query(&p, &o, &out, &err), &err);
	assert_non_null(strstr(out.ptr, "|111221"));
	pack_package_release(&p);
	kiln_buf_release(&out);
}

/* The signature tags rpm merges into the main header for queries: in a v6 package rpm 6.0
 * ignores the legacy ones (SIZE, MD5, PAYLOADSIZE...). %{HEADERIMMUTABLE} is the region:
 * the main header's bytes after the magic. */
KILN_TEST(query_merged_signature_tags_and_region)
{
	static const unsigned char md5[16] = {1, 2, 3};
	struct kiln_buf out = KILN_BUF_INIT(KILN_MIB);
	struct kiln_err err = KILN_ERR_INIT;
	struct pack_query_opts o = {0};
	struct pack_package p;
	char path[1024];

	pkgfix_write("q6", 6, "w.ufdio", path, sizeof(path));
	assert_ok(pack_package_open(&p, path, NULL, &err), &err);
	assert_ok(pack_header_put_u32(&p.sig, PACK_SIGTAG_SIZE, 1234, &err), &err);
	assert_ok(pack_header_put_bin(&p.sig, PACK_SIGTAG_MD5, md5, sizeof(md5), &err), &err);
	assert_ok(pack_header_put_u32(&p.sig, PACK_SIGTAG_PAYLOADSIZE, 99, &err), &err);
	o.qf = "%{SIGSIZE}|%{SIGMD5}|%{ARCHIVESIZE}|%{RPMFORMAT}";
	assert_ok(pack_query(&p, &o, &out, &err), &err);
	assert_string_equal(out.ptr, "(none)|(none)|(none)|6");
	kiln_buf_reset(&out);
	o.qf = "%{HEADERIMMUTABLE}";
	assert_ok(pack_query(&p, &o, &out, &err), &err);
	assert_int_equal(out.len, 2 * (p.hdr_raw.len - 8));
	assert_memory_equal(out.ptr, "000000", 6); /* the entry count, big-endian, as hex */
	kiln_buf_reset(&out);
	o.qf = "%{SHA256HEADER:arraysize}";
	assert_ok(pack_query(&p, &o, &out, &err), &err);
	assert_string_equal(out.ptr, "1");
	pack_package_release(&p);
	kiln_buf_release(&out);
}

/* rpm -qlv lines: ls-style columns, a directory's link count plus one, hard-link counts,
 * symlink targets, and the date with the time of day for a file younger than 6 months
 * (the year otherwise, or for a date in the future). -c/--noghost filter the list. */
KILN_TEST(query_verbose_list_and_filters)
{
	struct kiln_buf out = KILN_BUF_INIT(KILN_MIB);
	struct kiln_err err = KILN_ERR_INIT;
	struct pack_query_opts o = {0};
	struct pack_package p;
	char path[1024];

	setenv("TZ", "UTC", 1);
	tzset();
	pkgfix_write("qv", 4, "w.ufdio", path, sizeof(path));
	assert_ok(pack_package_open(&p, path, NULL, &err), &err);
	o.list = o.verbose = true;
	o.now = 1704067200 + 86400;
	assert_ok(pack_query(&p, &o, &out, &err), &err);
	assert_string_equal(
	    out.ptr,
	    "drwxr-xr-x    2 root     root                        0 Jan  1 00:00 /usr/bin\n"
	    "-rwxr-xr-x    1 root     root                        6 Jan  1 00:00 /usr/bin/hello\n"
	    "lrwxrwxrwx    1 root     root                        5 Jan  1 00:00 /usr/bin/hi -> "
	    "hello\n"
	    "-rw-r--r--    2 root     root                        7 Jan  1  1970 /usr/lib/a\n"
	    "-rw-r--r--    2 root     root                        7 Jan  1  1970 /usr/lib/b\n"
	    "-rw-r--r--    1 root     root                        0 Jan  1  1970 /var/log/x.log\n");
	kiln_buf_reset(&out);
	o.now = 1704067200 - 7200; /* in the future: the year */
	o.skip = RPMTAG_FILE_GHOST;
	assert_ok(pack_query(&p, &o, &out, &err), &err);
	assert_non_null(strstr(out.ptr, " 6 Jan  1  2024 /usr/bin/hello\n"));
	assert_null(strstr(out.ptr, "x.log"));
	kiln_buf_reset(&out);
	o.verbose = false;
	o.skip = 0;
	o.only = RPMTAG_FILE_GHOST;
	assert_ok(pack_query(&p, &o, &out, &err), &err);
	assert_string_equal(out.ptr, "/var/log/x.log\n");
	pack_package_release(&p);
	kiln_buf_release(&out);
}
