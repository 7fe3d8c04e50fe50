/*
 * test_fetch.c - the libcurl transfer over file:// and a refused loopback connection (no
 * network needed; the HTTP behaviours are in tests/integration/test_sources.py).
 */
#include "util/util.h"

#include <fcntl.h>
#include <sys/socket.h>
#include <netinet/in.h>
#include <unistd.h>

#include "tests/unit/sources/sources_test.h"

static kiln_rc download(const struct sources_fetch_opts *o, const char *url, struct kiln_buf *out,
                        char *sha, struct kiln_err *err)
{
	char hex[SOURCES_HASHES_MAX][2 * UTIL_DIGEST_MAX + 1], p[512];
	struct sources *s = NULL;
	struct sources_hashes h;
	kiln_rc rc;
	int fd;

	assert_ok(sources_new(o, &s, err), err);
	assert_ok(sources_hashes_init(&h, NULL, false, err), err);
	fd = open(wt_path(p, sizeof(p), "fetch.out"), O_RDWR | O_CREAT | O_TRUNC | O_CLOEXEC, 0644);
	assert_true(fd >= 0);
	rc = sources_curl_download(s, url, fd, &h, err);
	if (!rc) {
		assert_ok(sources_hashes_final(&h, hex, err), err);
		memcpy(sha, hex[0], 65);
		assert_ok(util_read_file(p, KILN_MIB, out, err), err);
	}
	util_close(fd);
	sources_hashes_release(&h);
	sources_free(s);
	return rc;
}

KILN_TEST(fetch_file_url)
{
	struct kiln_err err = KILN_ERR_INIT;
	struct kiln_buf out = KILN_BUF_INIT(KILN_MIB);
	char cache[512], src[512], url[600], sha[65], want[65];
	struct sources_fetch_opts o = wt_opts(cache, sizeof(cache), "fc1");

	wt_write(wt_path(src, sizeof(src), "srv/a.txt"), "file body\n", 10);
	snprintf(url, sizeof(url), "file://%s", src);
	assert_ok(download(&o, url, &out, sha, &err), &err);
	assert_string_equal(out.ptr, "file body\n");
	wt_sha256("file body\n", 10, want);
	assert_string_equal(sha, want);
	kiln_buf_release(&out);
}

KILN_TEST(fetch_missing_file_names_the_url)
{
	struct kiln_err err = KILN_ERR_INIT;
	struct kiln_buf out = KILN_BUF_INIT(KILN_MIB);
	char cache[512], url[600], sha[65];
	struct sources_fetch_opts o = wt_opts(cache, sizeof(cache), "fc2");

	snprintf(url, sizeof(url), "file://%s/none.tgz", kiln_test_tmpdir());
	assert_int_equal(download(&o, url, &out, sha, &err), KILN_ENOTFOUND);
	assert_non_null(strstr(err.msg, "cannot fetch 'file://"));
	assert_non_null(strstr(err.msg, "none.tgz': no such file"));
	kiln_buf_release(&out);
}

KILN_TEST(fetch_size_limit)
{
	struct kiln_err err = KILN_ERR_INIT;
	struct kiln_buf out = KILN_BUF_INIT(KILN_MIB);
	char cache[512], src[512], url[600], sha[65];
	struct sources_fetch_opts o = wt_opts(cache, sizeof(cache), "fc3");

	wt_write(wt_path(src, sizeof(src), "srv/big.txt"), "0123456789", 10);
	snprintf(url, sizeof(url), "file://%s", src);
	o.max_size = 4;
	assert_int_equal(download(&o, url, &out, sha, &err), KILN_ELIMIT);
	assert_non_null(strstr(err.msg, "larger than the limit of 4 bytes"));
	kiln_buf_release(&out);
}

KILN_TEST(fetch_connection_refused)
{
	struct kiln_err err = KILN_ERR_INIT;
	struct kiln_buf out = KILN_BUF_INIT(KILN_MIB);
	struct sockaddr_in sa = {.sin_family = AF_INET};
	socklen_t len = sizeof(sa);
	char cache[512], url[128], sha[65], want[64];
	struct sources_fetch_opts o = wt_opts(cache, sizeof(cache), "fc4");
	int sock = socket(AF_INET, SOCK_STREAM | SOCK_CLOEXEC, 0);

	/* A port that was free a moment ago and has no listener: connect is refused. */
	sa.sin_addr.s_addr = htonl(INADDR_LOOPBACK);
	assert_int_equal(bind(sock, (struct sockaddr *)&sa, sizeof(sa)), 0);
	assert_int_equal(getsockname(sock, (struct sockaddr *)&sa, &len), 0);
	close(sock);
	snprintf(url, sizeof(url), "http://127.0.0.1:%d/x.tgz", ntohs(sa.sin_port));
	o.retries = 1;
	assert_int_equal(download(&o, url, &out, sha, &err), KILN_ENET);
	snprintf(want, sizeof(want), "cannot connect to 127.0.0.1:%d", ntohs(sa.sin_port));
	assert_non_null(strstr(err.msg, want));
	assert_non_null(strstr(err.msg, "after 2 attempts"));
	kiln_buf_release(&out);
}
