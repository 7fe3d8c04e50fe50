#include "util/util.h"

#include <net/if.h>
#include <sys/ioctl.h>
#include <sys/socket.h>

#include "tests/unit/chroot/chroot_test.h"

static int idmaps(void *arg)
{
	uid_t uid = geteuid();
	gid_t gid = getegid();

	(void)arg;
	if (unshare(CLONE_NEWUSER) < 0)
		return 77;
	if (chroot_ns_write_idmaps(uid, gid, NULL))
		return 1;
	return getuid() == 0 && getgid() == 0 ? 0 : 2;
}

KILN_TEST(ns_idmaps_make_us_root_inside)
{
	int rc = in_child(idmaps, NULL);

	if (rc == 77 && !must_work())
		skip();
	assert_int_equal(rc, 0);
}

static int lo_up(void *arg)
{
	struct ifreq ifr;
	int s;

	(void)arg;
	if (unshare(geteuid() ? CLONE_NEWUSER | CLONE_NEWNET : CLONE_NEWNET) < 0)
		return 77;
	if (geteuid() && chroot_ns_write_idmaps(geteuid(), getegid(), NULL))
		return 1;
	if (chroot_ns_lo_up(NULL))
		return 2;
	s = socket(AF_INET, SOCK_DGRAM | SOCK_CLOEXEC, 0);
	memset(&ifr, 0, sizeof(ifr));
	snprintf(ifr.ifr_name, sizeof(ifr.ifr_name), "lo");
	if (s < 0 || ioctl(s, SIOCGIFFLAGS, &ifr) < 0)
		return 3;
	return (ifr.ifr_flags & IFF_UP) ? 0 : 4;
}

KILN_TEST(ns_lo_up_in_a_new_netns)
{
	int rc = in_child(lo_up, NULL);

	if (rc == 77 && !must_work())
		skip();
	assert_int_equal(rc, 0);
}

KILN_TEST(ns_flags_follow_the_config)
{
	struct chroot_exec ex;

	memset(&ex, 0, sizeof(ex));
	assert_true(chroot_ns_flags(&ex) & CLONE_NEWNET);
	assert_true(chroot_ns_flags(&ex) & CLONE_NEWPID);
	assert_false(chroot_ns_flags(&ex) & CLONE_NEWUSER);
	ex.cfg.network = true;
	ex.userns = true;
	assert_false(chroot_ns_flags(&ex) & CLONE_NEWNET);
	assert_true(chroot_ns_flags(&ex) & CLONE_NEWUSER);
}

KILN_TEST(ns_pid1_reaps_and_takes_the_namespace_down)
{
	struct chroot_config cfg;
	struct chroot_exec *ex = NULL;
	struct kiln_err err = KILN_ERR_INIT;
	struct kiln_buf out = KILN_BUF_INIT(KILN_MIB);
	struct chroot_result res;
	/* An orphan (reparented to init) and a background child both outlive the shell. */
	const char *argv[] = {"/bin/sh", "-c", "(sleep 300 &) ; sleep 301 & echo $$", NULL};
	const char *env[] = {NULL};
	int64_t t0;

	SANDBOX_OR_SKIP();
	chroot_config_init(&cfg);
	cfg.kind = CHROOT_EXEC_SANDBOX;
	assert_ok(chroot_exec_new(&cfg, &ex, &err), &err);
	t0 = util_clock_mono_ns();
	assert_ok(run_capture(ex, argv, env, &out, &res, &err), &err);
	/* The shell is PID 2 (init is 1); the run ends at once, not after 300 s. */
	assert_string_equal(out.ptr, "2\n");
	assert_true(util_clock_mono_ns() - t0 < 20 * (int64_t)1000000000);
	assert_int_equal(res.exit_code, 0);
	assert_true(res.sandboxed);
	chroot_exec_free(ex);
	kiln_buf_release(&out);
}
