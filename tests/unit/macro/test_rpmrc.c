#include "util/util.h"

#include <sys/utsname.h>

#include "tests/unit/macro/macro_test.h"

static const char rc_text[] = "# test rpmrc\n"
                              "optflags: x86_64 -O2 -g\n"
                              "optflags: i686 -O2 -g -march=i686\n"
                              "optflags: aarch64 -O3\n"
                              "arch_canon: x86_64: x86_64 1\n"
                              "arch_canon: aarch64: aarch64 19\n"
                              "os_canon: Linux: Linux 1\n"
                              "buildarchtranslate: x86_64: x86_64\n"
                              "buildarchtranslate: aarch64: aarch64\n";

static struct macro_ctx *configured(const char *target, const char *extra_macros)
{
	struct kiln_err err = KILN_ERR_INIT;
	struct macro_config cfg = {0};
	struct macro_ctx *ctx = ctx_new(NULL);
	const char *dir = kiln_test_tmpdir();
	char rc[600];
	char mac[600];

	snprintf(rc, sizeof(rc), "%s/rpmrc", dir);
	assert_ok(util_write_atomic(rc, rc_text, strlen(rc_text), 0644, &err), &err);
	snprintf(mac, sizeof(mac), "%s/macros", dir);
	assert_ok(util_write_atomic(mac, extra_macros, strlen(extra_macros), 0644, &err), &err);
	cfg.confdir = dir;
	cfg.rcfiles = rc;
	cfg.macrofiles = mac;
	cfg.target = target;
	assert_ok(macro_config_load(ctx, &cfg, &err), &err);
	return ctx;
}

KILN_TEST(rpmrc_host_target)
{
	struct utsname u;
	struct macro_ctx *ctx;
	char want[200];

	assert_int_equal(uname(&u), 0);
	ctx = configured(NULL, "%_target the-file-loses\n");
	snprintf(want, sizeof(want), "%s-linux %s linux", u.machine, u.machine);
	/* The rpmrc target wins over the macro file's definition. */
	expect(ctx, "%{_target} %{_target_cpu} %{_target_os}", want);
	if (!strcmp(u.machine, "x86_64"))
		expect(ctx, "%{optflags}", "-O2 -g");
	macro_ctx_free(ctx);
}

KILN_TEST(rpmrc_explicit_target)
{
	struct macro_ctx *ctx = configured("i686-pc-linux-gnu", "%m 1\n");

	expect(ctx, "%{_target} %{_target_cpu} %{_target_os} %{optflags}",
	       "i686-linux i686 linux -O2 -g -march=i686");
	macro_ctx_free(ctx);
	ctx = configured("aarch64", "%m 1\n");
	expect(ctx, "%{_target} %{optflags}", "aarch64-linux -O3");
	macro_ctx_free(ctx);
}

/* rpm's %_build_cpu is the machine's, whatever the target: the noarch arch check uses it. */
KILN_TEST(rpmrc_build_cpu_ignores_the_target)
{
	struct utsname u;
	struct macro_ctx *ctx;
	char cpu[64];

	assert_int_equal(uname(&u), 0);
	ctx = configured("noarch", "%m 1\n");
	expect(ctx, "%{_target_cpu}", "noarch");
	macro_build_cpu(ctx, cpu, sizeof(cpu));
	assert_string_equal(cpu, u.machine);
	macro_ctx_free(ctx);
	ctx = ctx_new(NULL); /* not configured: no answer */
	macro_build_cpu(ctx, cpu, sizeof(cpu));
	assert_string_equal(cpu, "");
	macro_ctx_free(ctx);
}

KILN_TEST(rpmrc_platform_file_by_target)
{
	struct kiln_err err = KILN_ERR_INIT;
	struct macro_config cfg = {0};
	struct macro_ctx *ctx = ctx_new(NULL);
	const char *dir = kiln_test_tmpdir();
	char p[700];
	char list[1500];

	snprintf(p, sizeof(p), "%s/rpmrc", dir);
	assert_ok(util_write_atomic(p, rc_text, strlen(rc_text), 0644, &err), &err);
	snprintf(p, sizeof(p), "%s/platform/aarch64-linux", dir);
	assert_ok(util_mkdir_p(p, 0755, &err), &err);
	snprintf(p, sizeof(p), "%s/platform/aarch64-linux/macros", dir);
	assert_ok(util_write_atomic(p, "%_arch aarch64\n", 15, 0644, &err), &err);
	snprintf(list, sizeof(list), "%s/platform/%%{_target}/macros", dir);
	cfg.confdir = dir;
	cfg.macrofiles = list;
	cfg.target = "aarch64-linux";
	assert_ok(macro_config_load(ctx, &cfg, &err), &err);
	{
		char want[700];

		snprintf(want, sizeof(want), "aarch64 %s /usr/lib/rpm", dir);
		expect(ctx, "%_arch %_kiln_confdir %getconfdir", want);
	}
	macro_ctx_free(ctx);
}

KILN_TEST(rpmrc_errors)
{
	struct kiln_err err = KILN_ERR_INIT;
	struct macro_config cfg = {0};
	struct macro_ctx *ctx = ctx_new(NULL);
	const char *dir = kiln_test_tmpdir();
	char p[600];

	cfg.rcfiles = "/nonexistent/rpmrc";
	assert_int_equal(macro_config_load(ctx, &cfg, &err), KILN_ENOTFOUND);
	assert_non_null(strstr(err.msg, "Unable to open /nonexistent/rpmrc for reading"));
	kiln_err_clear(&err);
	snprintf(p, sizeof(p), "%s/bad", dir);
	assert_ok(util_write_atomic(p, "frobnicate: x\n", 14, 0644, &err), &err);
	cfg.rcfiles = p;
	assert_int_equal(macro_config_load(ctx, &cfg, &err), KILN_ESYNTAX);
	assert_non_null(strstr(err.msg, "bad option 'frobnicate'"));
	macro_ctx_free(ctx);
}
