/*
 * hello.c - the ceiling for bench/farm: a bare libmicrohttpd server answering every GET
 * with a small JSON body, with the same threading as kiln's (an internal thread pool).
 * usage: hello THREADS  (prints the port it listens on, on 127.0.0.1)
 */
#include "util/util.h"

#include <arpa/inet.h>
#include <microhttpd.h>
#include <netinet/in.h>
#include <stdio.h>
#include <stdlib.h>
#include <unistd.h>

static enum MHD_Result answer(void *cls, struct MHD_Connection *c, const char *url,
                              const char *method, const char *version, const char *data,
                              size_t *size, void **ptr)
{
	static const char body[] = "{\"status\":\"ok\"}\n";
	struct MHD_Response *r;
	enum MHD_Result ret;

	static int seen;

	(void)cls, (void)url, (void)method, (void)version, (void)data, (void)size;
	/* Answer on the second call, as kiln does: a response queued before the request is
	 * read completely makes libmicrohttpd close the connection (no keep-alive). */
	if (!*ptr) {
		*ptr = &seen;
		return MHD_YES;
	}
	r = MHD_create_response_from_buffer(sizeof(body) - 1, (void *)body, MHD_RESPMEM_PERSISTENT);
	MHD_add_response_header(r, "Content-Type", "application/json");
	ret = MHD_queue_response(c, 200, r);
	MHD_destroy_response(r);
	return ret;
}

int main(int argc, char **argv)
{
	unsigned threads = argc > 1 ? (unsigned)strtoul(argv[1], NULL, 10) : 4;
	struct sockaddr_in sa = {.sin_family = AF_INET};
	struct MHD_Daemon *d;
	const union MHD_DaemonInfo *i;

	sa.sin_addr.s_addr = htonl(INADDR_LOOPBACK);
	d = MHD_start_daemon(MHD_USE_AUTO_INTERNAL_THREAD, 0, NULL, NULL, answer, NULL,
	                     MHD_OPTION_SOCK_ADDR, &sa, MHD_OPTION_THREAD_POOL_SIZE, threads,
	                     MHD_OPTION_CONNECTION_LIMIT, 1000, MHD_OPTION_END);
	if (!d)
		return 1;
	i = MHD_get_daemon_info(d, MHD_DAEMON_INFO_BIND_PORT);
	printf("%u\n", i ? i->port : 0);
	fflush(stdout);
	pause();
	return 0;
}
