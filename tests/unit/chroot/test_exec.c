#include "util/util.h"

#include <fcntl.h>
#include <signal.h>
#include <sys/stat.h>

#include "tests/unit/chroot/chroot_test.h"

struct sinkbuf {
	struct kiln_buf b[3];
};

static void sink(void *data, int stream, const char *buf, size_t len)
{
	struct sinkbuf *s = data;

	kiln_buf_add(&s->b[stream], buf, len);
}

static struct chroot_exec *new_exec(enum chroot_exec_kind kind, struct chroot_limits *lim)
{
	struct kiln_err err = KILN_ERR_INIT;
	struct chroot_config cfg;
	struct chroot_exec *ex = NULL;

	chroot_config_init(&cfg);
	cfg.kind = kind;
	if (lim)
		cfg.limits = *lim;
	assert_ok(chroot_exec_new(&cfg, &ex, &err), &err);
	assert_int_equal(chroot_exec_kind(ex), kind);
	return ex;
}

KILN_TEST(exec_config_parsers)
{
	struct kiln_arena a = KILN_ARENA_INIT(KILN_MIB);
	struct kiln_err err = KILN_ERR_INIT;
	struct chroot_config cfg;

	chroot_config_init(&cfg);
	assert_ok(chroot_config_root_parse(&cfg, "dir:/srv/root", &err), &err);
	assert_int_equal(cfg.root, CHROOT_ROOT_DIR);
	assert_string_equal(cfg.root_path, "/srv/root");
	assert_ok(chroot_config_root_parse(&cfg, "tar:/x.tar", &err), &err);
	assert_int_equal(cfg.root, CHROOT_ROOT_TAR);
	assert_ok(chroot_config_root_parse(&cfg, "host", &err), &err);
	assert_int_equal(cfg.root, CHROOT_ROOT_HOST);
	assert_int_equal(chroot_config_root_parse(&cfg, "dir:", &err), KILN_EINVAL);
	kiln_err_clear(&err);
	assert_int_equal(chroot_config_root_parse(&cfg, "image", &err), KILN_EINVAL);
	kiln_err_clear(&err);
	assert_ok(chroot_config_tmpfs_parse(&cfg, "/tmp::/home:", &a, &err), &err);
	assert_int_equal(cfg.ntmpfs, 2);
	assert_string_equal(cfg.tmpfs[1], "/home");
	assert_ok(chroot_config_tmpfs_parse(&cfg, "", &a, &err), &err);
	assert_int_equal(cfg.ntmpfs, 0);
	assert_int_equal(chroot_config_tmpfs_parse(&cfg, "/tmp:rel", &a, &err), KILN_EINVAL);
	kiln_arena_release(&a);
}

KILN_TEST(exec_new_rejects_bad_config)
{
	struct kiln_err err = KILN_ERR_INIT;
	struct chroot_config cfg;
	struct chroot_exec *ex = NULL;

	chroot_config_init(&cfg);
	cfg.kind = (enum chroot_exec_kind)7;
	assert_int_equal(chroot_exec_new(&cfg, &ex, &err), KILN_EINVAL);
	kiln_err_clear(&err);
	chroot_config_init(&cfg);
	cfg.limits.pids_max = 2;
	assert_int_equal(chroot_exec_new(&cfg, &ex, &err), KILN_EINVAL);
	kiln_err_clear(&err);
	chroot_config_init(&cfg);
	cfg.kind = CHROOT_EXEC_SANDBOX;
	cfg.hostname = "bad host";
	assert_int_equal(chroot_exec_new(&cfg, &ex, &err), KILN_EINVAL);
	kiln_err_clear(&err);
	cfg.hostname = NULL;
	cfg.root = CHROOT_ROOT_DIR;
	cfg.root_path = "/nonexistent/kiln-root";
	assert_int_equal(chroot_exec_new(&cfg, &ex, &err), KILN_ENOTFOUND);
	assert_non_null(strstr(err.msg, "/nonexistent/kiln-root"));
	assert_null(ex);
}

KILN_TEST(exec_host_status_signal_env_cwd)
{
	struct chroot_exec *ex = new_exec(CHROOT_EXEC_HOST, NULL);
	struct kiln_err err = KILN_ERR_INIT;
	struct kiln_buf out = KILN_BUF_INIT(KILN_MIB);
	struct chroot_result res;
	const char *env[] = {"A=1", NULL};
	const char *show[] = {"/usr/bin/env", NULL};
	const char *fail[] = {"sh", "-c", "exit 3", NULL};
	const char *sig[] = {"sh", "-c", "kill -TERM $$", NULL};
	struct chroot_run run;

	assert_ok(run_capture(ex, show, env, &out, &res, &err), &err);
	/* Exactly what was given, plus the fixed parts: nothing from the test's environment. */
	assert_string_equal(out.ptr, "A=1\nTZ=UTC\nPATH=" CHROOT_DEFAULT_PATH "\nLANG=C.UTF-8\n");
	assert_false(res.sandboxed);
	kiln_buf_reset(&out);
	assert_ok(run_capture(ex, fail, env, &out, &res, &err), &err);
	assert_int_equal(res.exit_code, 3);
	assert_ok(run_capture(ex, sig, env, &out, &res, &err), &err);
	assert_int_equal(res.exit_code, -1);
	assert_int_equal(res.signal, SIGTERM);
	memset(&run, 0, sizeof(run));
	run.argv = (const char *[]){"pwd", NULL};
	run.env = env;
	run.cwd = "/usr";
	run.stdin_fd = run.stdout_fd = run.stderr_fd = -1;
	kiln_buf_reset(&out);
	run.capture = &out;
	assert_ok(chroot_exec_run(ex, &run, &res, &err), &err);
	assert_string_equal(out.ptr, "/usr\n");
	run.cwd = "usr";
	assert_int_equal(chroot_exec_run(ex, &run, &res, &err), KILN_EINVAL);
	kiln_err_clear(&err);
	run.cwd = "/nonexistent/kiln";
	assert_int_equal(chroot_exec_run(ex, &run, &res, &err), KILN_ENOTFOUND);
	assert_non_null(strstr(err.msg, "/nonexistent/kiln"));
	chroot_exec_free(ex);
	kiln_buf_release(&out);
}

KILN_TEST(exec_host_not_found_timeout_and_output_cap)
{
	struct chroot_limits lim = {.timeout_ms = 300, .output_max = 1000};
	struct chroot_exec *ex = new_exec(CHROOT_EXEC_HOST, &lim);
	struct kiln_err err = KILN_ERR_INIT;
	struct kiln_buf out = KILN_BUF_INIT(KILN_MIB);
	struct chroot_result res;
	const char *env[] = {NULL};
	const char *missing[] = {"kiln-no-such-command", NULL};
	const char *slow[] = {"sleep", "30", NULL};
	const char *loud[] = {"yes", NULL};
	int64_t t0;

	assert_int_equal(run_capture(ex, missing, env, &out, &res, &err), KILN_ENOTFOUND);
	assert_non_null(strstr(err.msg, "kiln-no-such-command"));
	assert_int_equal(res.exit_code, 127);
	kiln_err_clear(&err);
	t0 = util_clock_mono_ns();
	assert_int_equal(run_capture(ex, slow, env, &out, &res, &err), KILN_ETIMEOUT);
	assert_true(res.timed_out);
	assert_int_equal(res.signal, SIGKILL);
	assert_string_equal(err.msg, "'sleep' killed after 0.300 s (time limit)");
	assert_true(util_clock_mono_ns() - t0 < 10 * (int64_t)1000000000);
	kiln_err_clear(&err);
	assert_int_equal(run_capture(ex, loud, env, &out, &res, &err), KILN_ELIMIT);
	assert_true(res.output_truncated);
	assert_int_equal(res.output_bytes, 1000);
	assert_int_equal(out.len, 1000);
	assert_non_null(strstr(err.msg, "output exceeded 1000 bytes"));
	assert_non_null(strstr(res.limits, "timeout=300ms"));
	assert_non_null(strstr(res.limits, "output=1000"));
	chroot_exec_free(ex);
	kiln_buf_release(&out);
}

KILN_TEST(exec_streams_fds_sink_and_merge)
{
	struct chroot_exec *ex = new_exec(CHROOT_EXEC_HOST, NULL);
	struct kiln_err err = KILN_ERR_INIT;
	struct kiln_buf file = KILN_BUF_INIT(KILN_MIB);
	struct sinkbuf s = {
	    {KILN_BUF_INIT(KILN_MIB), KILN_BUF_INIT(KILN_MIB), KILN_BUF_INIT(KILN_MIB)}};
	struct chroot_result res;
	const char *env[] = {NULL};
	const char *argv[] = {"sh", "-c", "echo out; echo err >&2; echo out2", NULL};
	struct chroot_run run;
	char path[600];
	int fd;

	snprintf(path, sizeof(path), "%s/log", kiln_test_tmpdir());
	fd = open(path, O_WRONLY | O_CREAT | O_TRUNC | O_CLOEXEC, 0644);
	assert_true(fd >= 0);
	memset(&run, 0, sizeof(run));
	run.argv = argv;
	run.env = env;
	run.stdin_fd = -1;
	/* One fd for both: one pipe, so the log keeps the order the command wrote in. */
	run.stdout_fd = run.stderr_fd = fd;
	run.sink = sink;
	run.sink_data = &s;
	assert_ok(chroot_exec_run(ex, &run, &res, &err), &err);
	util_close(fd);
	assert_ok(util_read_file(path, KILN_MIB, &file, &err), &err);
	assert_string_equal(file.ptr, "out\nerr\nout2\n");
	assert_string_equal(s.b[1].ptr, "out\nerr\nout2\n");
	assert_int_equal(res.output_bytes, 13);
	/* Separate fds: separate streams in the sink. */
	kiln_buf_reset(&s.b[1]);
	run.stdout_fd = -1;
	run.stderr_fd = -1;
	assert_ok(chroot_exec_run(ex, &run, &res, &err), &err);
	assert_string_equal(s.b[1].ptr, "out\nout2\n");
	assert_string_equal(s.b[2].ptr, "err\n");
	chroot_exec_free(ex);
	kiln_buf_release(&file);
	for (int i = 0; i < 3; i++)
		kiln_buf_release(&s.b[i]);
}

static bool gone_or_zombie(pid_t pid)
{
	int64_t end = util_clock_mono_ns() + 5 * (int64_t)1000000000;
	char path[64];

	snprintf(path, sizeof(path), "/proc/%d/stat", (int)pid);
	/* SIGKILL is delivered asynchronously: look until it has taken effect (bounded). */
	while (util_clock_mono_ns() < end) {
		struct kiln_buf st = KILN_BUF_INIT(4096);
		bool done = util_read_file(path, st.max, &st, NULL) || strstr(st.ptr, ") Z ");

		kiln_buf_release(&st);
		if (done)
			return true;
		sched_yield();
	}
	return false;
}

KILN_TEST(exec_host_kills_the_process_group_afterwards)
{
	struct chroot_exec *ex = new_exec(CHROOT_EXEC_HOST, NULL);
	struct kiln_err err = KILN_ERR_INIT;
	struct kiln_buf out = KILN_BUF_INIT(KILN_MIB);
	struct chroot_result res;
	const char *env[] = {NULL};
	const char *argv[] = {"sh", "-c", "sleep 300 >/dev/null 2>&1 & echo $!", NULL};
	int64_t pid = 0;

	assert_ok(run_capture(ex, argv, env, &out, &res, &err), &err);
	kiln_buf_rtrim(&out, "\n");
	assert_ok(util_parse_i64(out.ptr, out.len, 10, 2, INT32_MAX, &pid, &err), &err);
	/* The background sleep was in the command's process group, which kiln killed. It may
	 * be a zombie for a moment (its reaper is the host's init), but it no longer runs. */
	assert_true(gone_or_zombie((pid_t)pid));
	chroot_exec_free(ex);
	kiln_buf_release(&out);
}

KILN_TEST(exec_sandbox_isolation)
{
	struct chroot_exec *ex;
	struct kiln_err err = KILN_ERR_INIT;
	struct kiln_buf out = KILN_BUF_INIT(KILN_MIB);
	struct chroot_result res;
	const char *env[] = {NULL};
	char hostfile[600], script[1400];
	const char *argv[] = {"/bin/sh", "-c", script, NULL};

	SANDBOX_OR_SKIP();
	ex = new_exec(CHROOT_EXEC_SANDBOX, NULL);
	snprintf(hostfile, sizeof(hostfile), "/tmp/kiln-unit-visible-%d", (int)getpid());
	assert_ok(util_write_atomic(hostfile, "x", 1, 0644, &err), &err);
	snprintf(script, sizeof(script),
	         "test -e %s && echo host-tmp-visible; "
	         "touch /usr/kiln-x 2>/dev/null && echo usr-writable; "
	         "touch /kiln-x 2>/dev/null && echo root-writable; "
	         "touch /tmp/ok && echo tmp-ok; "
	         "hostname; echo $$; umask; "
	         "cat /proc/net/dev | grep -c :",
	         hostfile);
	assert_ok(run_capture(ex, argv, env, &out, &res, &err), &err);
	assert_string_equal(out.ptr, "tmp-ok\nkiln\n2\n0022\n1\n");
	assert_true(res.sandboxed);
	assert_false(res.network);
	unlink(hostfile);
	chroot_exec_free(ex);
	kiln_buf_release(&out);
}

/* suppress_sync: the sync family returns 0 without running. Observable through fsync(2)
 * of a pipe, which the kernel refuses (EINVAL) but the filter answers before it. */
static void sync_of_a_pipe(enum chroot_exec_kind kind, bool suppress, const char *want)
{
	struct kiln_err err = KILN_ERR_INIT;
	struct kiln_buf out = KILN_BUF_INIT(KILN_MIB);
	struct chroot_config cfg;
	struct chroot_exec *ex = NULL;
	struct chroot_result res;
	const char *env[] = {"PATH=/usr/bin:/bin", NULL};
	const char *argv[] = {"/bin/sh", "-c",
	                      "echo | sync /dev/stdin 2>/dev/null && echo synced || echo refused",
	                      NULL};

	chroot_config_init(&cfg);
	cfg.kind = kind;
	cfg.suppress_sync = suppress;
	assert_ok(chroot_exec_new(&cfg, &ex, &err), &err);
	assert_ok(run_capture(ex, argv, env, &out, &res, &err), &err);
	assert_string_equal(out.ptr, want);
	chroot_exec_free(ex);
	kiln_buf_release(&out);
}

KILN_TEST(exec_suppress_sync)
{
	sync_of_a_pipe(CHROOT_EXEC_HOST, false, "refused\n");
	sync_of_a_pipe(CHROOT_EXEC_HOST, true, "synced\n");
	SANDBOX_OR_SKIP();
	sync_of_a_pipe(CHROOT_EXEC_SANDBOX, false, "refused\n");
	sync_of_a_pipe(CHROOT_EXEC_SANDBOX, true, "synced\n");
}

KILN_TEST(exec_sandbox_timeout_and_setup_errors)
{
	struct chroot_limits lim = {.timeout_ms = 500};
	struct chroot_exec *ex;
	struct kiln_err err = KILN_ERR_INIT;
	struct kiln_buf out = KILN_BUF_INIT(KILN_MIB);
	struct chroot_result res;
	const char *env[] = {NULL};
	const char *slow[] = {"/bin/sh", "-c", "sleep 100 & sleep 100", NULL};
	const char *missing[] = {"/usr/bin/kiln-none", NULL};
	struct chroot_run run;

	SANDBOX_OR_SKIP();
	ex = new_exec(CHROOT_EXEC_SANDBOX, &lim);
	assert_int_equal(run_capture(ex, slow, env, &out, &res, &err), KILN_ETIMEOUT);
	assert_string_equal(err.msg, "'/bin/sh' killed after 0.500 s (time limit)");
	kiln_err_clear(&err);
	assert_int_equal(run_capture(ex, missing, env, &out, &res, &err), KILN_ENOTFOUND);
	kiln_err_clear(&err);
	memset(&run, 0, sizeof(run));
	run.argv = (const char *[]){"true", NULL};
	run.env = env;
	run.cwd = "/nonexistent";
	run.stdin_fd = run.stdout_fd = run.stderr_fd = -1;
	assert_int_equal(chroot_exec_run(ex, &run, &res, &err), KILN_ENOTFOUND);
	assert_non_null(strstr(err.msg, "/nonexistent"));
	chroot_exec_free(ex);
	kiln_buf_release(&out);
}

KILN_TEST(exec_sandbox_binds_and_dir_root)
{
	struct kiln_err err = KILN_ERR_INIT;
	struct kiln_buf out = KILN_BUF_INIT(KILN_MIB);
	struct chroot_config cfg;
	struct chroot_exec *ex = NULL;
	struct chroot_result res;
	const char *env[] = {NULL};
	const char *t = kiln_test_tmpdir();
	char build[600], path[700];
	struct chroot_bind b[] = {{build, "/builddir/build", false},
	                          {"/usr", "/usr", true},
	                          {"/etc/alternatives", "/etc/alternatives", true}};
	const char *argv[] = {"/usr/bin/sh", "-c",
	                      "echo made > /builddir/build/out; echo up > /etc/new; cat /etc/new",
	                      NULL};

	SANDBOX_OR_SKIP();
	snprintf(build, sizeof(build), "%s/build", t);
	assert_ok(util_mkdir_p(build, 0755, &err), &err);
	/* A dir: root holding nothing but /usr (bound in): enough for sh. */
	snprintf(path, sizeof(path), "%s/image/usr", t);
	assert_ok(util_mkdir_p(path, 0755, &err), &err);
	snprintf(path, sizeof(path), "%s/image", t);
	for (const char *l = "lib\0lib64\0bin\0"; *l; l += strlen(l) + 1) {
		char link[800], target[64];

		snprintf(link, sizeof(link), "%s/%s", path, l);
		snprintf(target, sizeof(target), "usr/%s", l);
		assert_int_equal(symlink(target, link), 0);
	}
	chroot_config_init(&cfg);
	cfg.kind = CHROOT_EXEC_SANDBOX;
	cfg.root = CHROOT_ROOT_DIR;
	cfg.root_path = path;
	cfg.binds = b;
	cfg.nbinds = KILN_ARRAY_SIZE(b);
	assert_ok(chroot_exec_new(&cfg, &ex, &err), &err);
	assert_ok(run_capture(ex, argv, env, &out, &res, &err), &err);
	assert_string_equal(out.ptr, "up\n");
	snprintf(path, sizeof(path), "%s/out", build);
	assert_true(util_exists(path));
	/* The write to /etc went to the build's upper layer, not into the image. */
	snprintf(path, sizeof(path), "%s/image/etc/new", t);
	assert_false(util_exists(path));
	chroot_exec_free(ex);
	kiln_buf_release(&out);
}

/* root_direct (roots/'s installer): the dir: root is used in place, so writes land in it;
 * it only goes with a writable dir: root in the sandbox. */
KILN_TEST(exec_sandbox_dir_root_in_place)
{
	struct kiln_err err = KILN_ERR_INIT;
	struct kiln_buf out = KILN_BUF_INIT(KILN_MIB);
	struct chroot_config cfg;
	struct chroot_exec *ex = NULL;
	struct chroot_result res;
	const char *env[] = {NULL};
	const char *t = kiln_test_tmpdir();
	char path[700], file[800];
	struct chroot_bind b[] = {{"/usr", "/usr", true}};
	const char *argv[] = {"/usr/bin/sh", "-c", "mkdir -p /etc && echo kept > /etc/new", NULL};
	struct kiln_buf text = KILN_BUF_INIT(KILN_MIB);

	snprintf(path, sizeof(path), "%s/inplace/usr", t);
	assert_ok(util_mkdir_p(path, 0755, &err), &err);
	snprintf(path, sizeof(path), "%s/inplace", t);
	chroot_config_init(&cfg);
	cfg.kind = CHROOT_EXEC_SANDBOX;
	cfg.root = CHROOT_ROOT_DIR;
	cfg.root_path = path;
	cfg.root_direct = true;
	cfg.root_readonly = true;
	assert_int_equal(chroot_exec_new(&cfg, &ex, &err), KILN_EINVAL);
	kiln_err_clear(&err);
	cfg.root_readonly = false;
	cfg.root = CHROOT_ROOT_HOST;
	assert_int_equal(chroot_exec_new(&cfg, &ex, &err), KILN_EINVAL);
	kiln_err_clear(&err);
	SANDBOX_OR_SKIP();
	for (const char *l = "lib\0lib64\0bin\0"; *l; l += strlen(l) + 1) {
		char link[800], target[64];

		snprintf(link, sizeof(link), "%s/%s", path, l);
		snprintf(target, sizeof(target), "usr/%s", l);
		assert_int_equal(symlink(target, link), 0);
	}
	cfg.root = CHROOT_ROOT_DIR;
	cfg.binds = b;
	cfg.nbinds = KILN_ARRAY_SIZE(b);
	assert_ok(chroot_exec_new(&cfg, &ex, &err), &err);
	assert_ok(run_capture(ex, argv, env, &out, &res, &err), &err);
	assert_int_equal(res.exit_code, 0);
	snprintf(file, sizeof(file), "%s/etc/new", path);
	assert_ok(util_read_file(file, KILN_MIB, &text, &err), &err);
	assert_string_equal(text.ptr, "kept\n");
	chroot_exec_free(ex);
	kiln_buf_release(&out);
	kiln_buf_release(&text);
}

KILN_TEST(exec_host_root_shares_its_mount_point)
{
	struct kiln_err err = KILN_ERR_INIT;
	struct chroot_config cfg;
	struct chroot_exec *ex = NULL;
	const char *t = kiln_test_tmpdir();
	char mnt[700];

	SANDBOX_OR_SKIP();
	snprintf(mnt, sizeof(mnt), "%s/kiln-sandbox-mnt-%lu", t, (unsigned long)geteuid());
	chroot_config_init(&cfg);
	cfg.kind = CHROOT_EXEC_SANDBOX;
	cfg.state_dir = t;
	/* No state directory of its own: the shared mount point, kept afterwards. */
	assert_ok(chroot_exec_new(&cfg, &ex, &err), &err);
	assert_null(ex->state_dir);
	assert_string_equal(ex->mnt, mnt);
	chroot_exec_free(ex);
	assert_true(util_is_dir(mnt));
	/* Writable by others: not trusted, a private state directory instead. */
	assert_int_equal(chmod(mnt, 0777), 0);
	assert_ok(chroot_exec_new(&cfg, &ex, &err), &err);
	assert_non_null(ex->state_dir);
	assert_true(chroot_path_within(ex->mnt, ex->state_dir));
	chroot_exec_free(ex);
	assert_int_equal(chmod(mnt, 0755), 0);
}
