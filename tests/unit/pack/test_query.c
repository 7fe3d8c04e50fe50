#include "util/util.h"

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
