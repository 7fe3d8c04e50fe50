/*
 * api_test.h - a server on a loopback port with test routes, for test_server.c and
 * test_client.c.
 */
#ifndef KILN_TESTS_API_TEST_H
#define KILN_TESTS_API_TEST_H

#include "api/api.h"

struct api_test_srv {
	struct api_server *srv;
	char url[64];
	int waits;       /* how often the wait handler was called */
	int64_t wait_ms; /* how long the wait handler waits */
};

/* Start on 127.0.0.1:0 with a small body limit (1 KiB) and upload limit (4 KiB); tokens:
 * "good" (read), "admin" (everything). */
void api_test_start(struct api_test_srv *t, bool anonymous_read);
void api_test_stop(struct api_test_srv *t);
/* One call; the reply's status and body are returned in r (initialised here). */
void api_test_call(struct api_test_srv *t, const char *token, const struct api_call *c,
                   struct api_reply *r);

#endif
