#include "util/util.h"

#include "rpmtag/rpmtag.h"
#include "tests/unit/harness.h"
#include "tests/unit/rpmtag/qfsrc.h"

static char buf[4096];
#define R(fmt) qfsrc_render(fmt, buf, sizeof(buf))

KILN_TEST(ext_nevra_family)
{
	assert_string_equal(R("%{NEVRA}|%{NVRA}|%{EVR}|%{NEVR}|%{NVR}|%{ARCHSUFFIX}|%{EPOCHNUM}"),
	                    "demo-2:1.0-3.noarch|demo-1.0-3.noarch|2:1.0-3|demo-2:1.0-3|demo-1.0-3|"
	                    ".noarch|2");
}

KILN_TEST(ext_files_and_deps)
{
	assert_string_equal(R("[%{FILENAMES},]"), "/etc,/usr/bin/su,/usr/bin/link,");
	assert_string_equal(R("[%{REQUIRENEVRS},]"), "bash >= 4.0,rpmlib(X) <= 1.0-1,");
	assert_string_equal(R("[%{FILENLINKS}]"), "111");
	assert_string_equal(R("%{LONGSIZE}|[%{LONGFILESIZES} ]|%{RPMFORMAT}"),
	                    "(none)|4096 1500 4 |3");
	assert_string_equal(R("%{HEADERCOLOR}|%{DBINSTANCE}|%|VERBOSE?{v}:{q}|"), "0|0|q");
}

KILN_TEST(ext_triggers)
{
	const struct qfsrc_tag tags[] = {
	    QF_STRS(RPMTAG_TRIGGERSCRIPTS, 2, "echo a", "echo b"),
	    QF_STRS(RPMTAG_TRIGGERNAME, 3, "bash", "zsh", "ksh"),
	    QF_STRS(RPMTAG_TRIGGERVERSION, 3, "", "5", ""),
	    QF_U32S(RPMTAG_TRIGGERFLAGS, 3, RPMTAG_DEP_TRIGGERIN, RPMTAG_DEP_TRIGGERIN | 12,
	            RPMTAG_DEP_TRIGGERPOSTUN),
	    QF_U32S(RPMTAG_TRIGGERINDEX, 3, 0, 0, 1),
	};
	struct qfsrc s = {tags, KILN_ARRAY_SIZE(tags)};
	struct rpmtag_qf_source src = {&qfsrc_ops, &s, 0};
	struct kiln_buf out = KILN_BUF_INIT(KILN_MIB);
	struct kiln_err err = KILN_ERR_INIT;

	assert_ok(rpmtag_qf_format("[%{TRIGGERTYPE}: %{TRIGGERCONDS}\\n]", &src, &out, &err), &err);
	assert_string_equal(out.ptr, "in: bash, zsh >= 5\npostun: ksh\n");
	kiln_buf_release(&out);
}

/* A file without a class text reads as its type, as in rpm (checked with rpm 4.18 on a
 * package whose CLASSDICT has only ""). */
KILN_TEST(ext_fileclass_by_type)
{
	const struct qfsrc_tag tags[] = {
	    QF_U16S(RPMTAG_FILEMODES, 7, 040755, 0100644, 010644, 0140644, 020644, 060644, 0120777),
	    QF_STRS(RPMTAG_FILELINKTOS, 7, "", "", "", "", "", "", "x"),
	    QF_STRS(RPMTAG_BASENAMES, 7, "d", "f", "p", "s", "c", "b", "l"),
	    QF_U32S(RPMTAG_FILECLASS, 7, 0, 1, 0, 0, 0, 0, 0),
	    QF_STRS(RPMTAG_CLASSDICT, 2, "", "ASCII text"),
	};
	struct qfsrc s = {tags, KILN_ARRAY_SIZE(tags)};
	struct rpmtag_qf_source src = {&qfsrc_ops, &s, 0};
	struct kiln_buf out = KILN_BUF_INIT(KILN_MIB);
	struct kiln_err err = KILN_ERR_INIT;

	assert_ok(rpmtag_qf_format("[%{FILECLASS}|]", &src, &out, &err), &err);
	assert_string_equal(out.ptr, "directory|ASCII text|fifo (named pipe)|socket|"
	                             "character special|block special|symbolic link to `x'|");
	kiln_buf_release(&out);
}
