/*
 * fuzz_spec.c - the spec parser on arbitrary text: reader, conditionals, every section,
 * %setup/%patch, %files, BuildSystem synthesis, then the JSON and query outputs.
 *
 * The macro context is restricted (no shell, no Lua I/O) with a 1 MiB expansion limit, and
 * the parse reads no files (SPEC_PARSE_NO_FILES), as the farm parses submitted specs.
 */
#include "util/util.h"

#include "macro/macro.h"
#include "spec/spec.h"

int LLVMFuzzerTestOneInput(const uint8_t *data, size_t size);

static void quiet(void *data, enum kiln_log_level level, const char *msg)
{
	(void)data;
	(void)level;
	(void)msg;
}

/* Enough of rpm's configuration for %setup, %patch, %autosetup and a build system. */
static const char *const predefined[] = {
    "_topdir /b",
    "_builddir %{_topdir}/BUILD",
    "_sourcedir %{_topdir}/SOURCES",
    "buildroot /b/BUILDROOT/%{NAME}-%{VERSION}-%{RELEASE}",
    "_target_cpu x86_64",
    "_target_os linux",
    "_target_platform x86_64-kiln-linux",
    "_arch x86_64",
    "optflags -O2",
    "_defaultdocdir /usr/share/doc",
    "_defaultlicensedir /usr/share/licenses",
    "__rpmuncompress /usr/lib/kiln/rpmuncompress",
    "__patch /usr/bin/patch",
    "__mkdir_p /bin/mkdir -p",
    "_fixperms /bin/chmod -Rf a+rX,u+w,g-w,o-w",
    "_default_patch_flags --no-backup-if-mismatch -f",
    "_default_patch_fuzz 0",
    "buildsystem_default_prep() %setup -q %*",
    "buildsystem_fz_build() make %*",
    "buildsystem_fz_install() make install %*",
    "with() %{expand:%%{?with_%{1}:1}%%{!?with_%{1}:0}}",
};

static void outputs(struct spec *spec)
{
	struct kiln_buf out = KILN_BUF_INIT(4 * KILN_MIB);
	struct kiln_err err = KILN_ERR_INIT;
	struct rpmtag_qf_source src;
	struct rpmtag_qf *qf = NULL;
	static const char fmt[] = "%{nvra} [%{REQUIRENAME} %{REQUIREFLAGS:depflags} "
	                          "%{REQUIREVERSION}\n][%{*:tagname}]\n";
	size_t i;

	(void)!spec_json_write(spec, &out, &err);
	kiln_err_clear(&err);
	if (rpmtag_qf_compile(fmt, sizeof(fmt) - 1, &qf, &err))
		KILN_BUG("fixed query format does not compile");
	for (i = 0; i < spec->npackages; i++) {
		kiln_buf_reset(&out);
		if (!spec_qf_source_make(spec, spec->packages[i]->tags, &src, &err))
			(void)!rpmtag_qf_render(qf, &src, &out, &err);
		kiln_err_clear(&err);
		(void)!spec_package_build_tags(spec, spec->packages[i], &err);
		kiln_err_clear(&err);
	}
	if (!spec_qf_source_make(spec, spec->srctags, &src, &err))
		(void)!rpmtag_qf_render(qf, &src, &out, &err);
	rpmtag_qf_free(qf);
	kiln_buf_release(&out);
}

int LLVMFuzzerTestOneInput(const uint8_t *data, size_t size)
{
	struct kiln_err err = KILN_ERR_INIT;
	struct macro_ctx *ctx;
	struct spec *spec = NULL;
	size_t i;

	if (size > 256 * KILN_KIB)
		return 0;
	ctx = macro_ctx_new(&err);
	if (!ctx)
		return 0;
	macro_ctx_set_diag(ctx, quiet, NULL);
	macro_ctx_set_restricted(ctx, true);
	macro_ctx_set_limit(ctx, KILN_MIB);
	for (i = 0; i < KILN_ARRAY_SIZE(predefined); i++)
		(void)!macro_define_line(ctx, predefined[i], MACRO_LEVEL_CMDLINE, &err);
	kiln_err_clear(&err);
	if (spec_parse_mem("fuzz.spec", (const char *)data, size, ctx,
	                   SPEC_PARSE_ANYARCH | SPEC_PARSE_FORCE | SPEC_PARSE_NO_FILES, &spec,
	                   &err) == KILN_OK) {
		if (!spec || !spec->npackages)
			KILN_BUG("a successful parse without a main package");
		outputs(spec);
	} else if (!err.code || !err.msg[0]) {
		KILN_BUG("a failed parse without an error message");
	}
	spec_free(spec);
	macro_ctx_free(ctx);
	return 0;
}
