/*
 * gate.c - the accept loop in front of libmicrohttpd. Each new connection waits here (no
 * thread, no buffer of its own: its bytes stay in the kernel, looked at with MSG_PEEK)
 * until its request head has arrived, and only then goes to libmicrohttpd. A head longer
 * than API_GATE_HEAD would otherwise reach libmicrohttpd's own memory limit and its
 * built-in HTML 414/431 (text compiled into the library); the gate answers it in JSON
 * instead, after reading it to its end, so the client is still reading when the answer
 * comes. The gate caps the connections waiting in it, in all and per address, and closes
 * those whose head does not arrive within the idle timeout.
 */
#include "util/util.h"

#include <netinet/in.h>
#include <poll.h>
#include <pthread.h>
#include <sys/epoll.h>
#include <sys/eventfd.h>
#include <sys/socket.h>
#include <unistd.h>

#include "api/api_int.h"

#define EV_LISTEN UINT64_MAX
#define EV_WAKE (UINT64_MAX - 1)
#define DISCARD_MAX ((uint64_t)64 * KILN_MIB)
#define DRAIN_MS 2000

enum api_head api_head_scan(const char *p, size_t len, size_t max)
{
	const char *nl = memchr(p, '\n', len);
	size_t i;
	int lines = 0;

	if (!nl || (size_t)(nl - p) >= max)
		return len >= max ? API_HEAD_LINE_TOO_LONG : API_HEAD_PARTIAL;
	/* the head ends at an empty line: two line ends with nothing but '\r' between */
	for (i = (size_t)(nl - p); i < len && i < max; i++) {
		if (p[i] == '\n') {
			if (++lines == 2)
				return API_HEAD_COMPLETE;
		} else if (p[i] != '\r') {
			lines = 0;
		}
	}
	return len >= max ? API_HEAD_TOO_LARGE : API_HEAD_PARTIAL;
}

enum gate_state {
	G_FREE,
	G_PEEK,    /* waiting for the head */
	G_DISCARD, /* head too long: reading it to its end, then the answer */
	G_DRAIN,   /* answered: reading what the client still sends until it closes */
};

struct gate_conn {
	int fd;
	enum gate_state st;
	struct sockaddr_storage sa;
	socklen_t salen;
	int64_t deadline_ms;
	uint64_t discarded;
	int lines;  /* line ends in a row while discarding (api_head_scan's rule) */
	int status; /* 414 or 431 */
};

struct api_gate {
	struct api_gate_config cfg;
	int ep, wake_fd;
	pthread_t th;
	bool running;
	struct gate_conn *c; /* cfg.max_pending slots */
	char *buf;           /* API_GATE_HEAD bytes */
};

static int64_t now_ms(void)
{
	return util_clock_mono_ns() / 1000000;
}

static void conn_close(struct api_gate *g, struct gate_conn *c)
{
	(void)epoll_ctl(g->ep, EPOLL_CTL_DEL, c->fd, NULL);
	close(c->fd);
	c->fd = -1;
	c->st = G_FREE;
}

static bool same_address(const struct sockaddr_storage *a, const struct sockaddr_storage *b)
{
	if (a->ss_family != b->ss_family)
		return false;
	if (a->ss_family == AF_INET)
		return ((const struct sockaddr_in *)a)->sin_addr.s_addr ==
		       ((const struct sockaddr_in *)b)->sin_addr.s_addr;
	if (a->ss_family == AF_INET6)
		return !memcmp(&((const struct sockaddr_in6 *)a)->sin6_addr,
		               &((const struct sockaddr_in6 *)b)->sin6_addr,
		               sizeof(struct in6_addr));
	return false;
}

/* A free slot for a connection from sa, or NULL when the gate or sa's share is full. */
static struct gate_conn *slot_for(struct api_gate *g, const struct sockaddr_storage *sa)
{
	struct gate_conn *free_slot = NULL;
	unsigned i, same = 0;

	for (i = 0; i < g->cfg.max_pending; i++) {
		if (g->c[i].st == G_FREE) {
			if (!free_slot)
				free_slot = &g->c[i];
		} else if (same_address(&g->c[i].sa, sa) && ++same >= g->cfg.max_per_address) {
			return NULL;
		}
	}
	return free_slot;
}

/* The JSON answer to a head that is too long; then drain until the client closes. */
static void conn_answer(struct api_gate *g, struct gate_conn *c)
{
	static const char uri[] =
	    "{\"error\":{\"code\":\"too_long\",\"message\":\"request path too "
	    "long (the request line is over 64 KiB)\"}}\n";
	static const char hdr[] =
	    "{\"error\":{\"code\":\"headers_too_large\",\"message\":\"request "
	    "headers over 64 KiB\"}}\n";
	const char *body = c->status == 414 ? uri : hdr;
	char msg[512];
	int n;

	n = snprintf(msg, sizeof(msg),
	             "HTTP/1.1 %d %s\r\nContent-Type: application/json\r\nContent-Length: %zu\r\n"
	             "Connection: close\r\n\r\n%s",
	             c->status,
	             c->status == 414 ? "URI Too Long" : "Request Header Fields Too Large",
	             strlen(body), body);
	/* a few hundred bytes into an empty send buffer: all of it goes at once */
	if (n <= 0 || send(c->fd, msg, (size_t)n, MSG_NOSIGNAL | MSG_DONTWAIT) != n) {
		conn_close(g, c);
		return;
	}
	(void)shutdown(c->fd, SHUT_WR);
	c->st = G_DRAIN;
	c->deadline_ms = now_ms() + DRAIN_MS;
}

/* Read and drop what has arrived (edge-triggered: until EAGAIN). While discarding, stop
 * at the head's end and answer. */
static void conn_read(struct api_gate *g, struct gate_conn *c)
{
	for (;;) {
		ssize_t n = recv(c->fd, g->buf, API_GATE_HEAD, 0), i;

		if (n < 0 && errno == EINTR)
			continue;
		if (n < 0 && (errno == EAGAIN || errno == EWOULDBLOCK))
			return;
		if (n <= 0) {
			conn_close(g, c);
			return;
		}
		if (c->st != G_DISCARD)
			continue;
		c->discarded += (uint64_t)n;
		for (i = 0; i < n && c->lines < 2; i++)
			c->lines = g->buf[i] == '\n'   ? c->lines + 1
			           : g->buf[i] == '\r' ? c->lines
			                               : 0;
		if (c->lines >= 2 || c->discarded > DISCARD_MAX) {
			conn_answer(g, c);
			if (c->st == G_FREE)
				return;
		}
	}
}

static void conn_peek(struct api_gate *g, struct gate_conn *c)
{
	ssize_t n;

	do
		n = recv(c->fd, g->buf, API_GATE_HEAD, MSG_PEEK);
	while (n < 0 && errno == EINTR);
	if (n < 0 && (errno == EAGAIN || errno == EWOULDBLOCK))
		return;
	if (n <= 0) {
		conn_close(g, c);
		return;
	}
	switch (api_head_scan(g->buf, (size_t)n, API_GATE_HEAD)) {
	case API_HEAD_PARTIAL:
		return;
	case API_HEAD_COMPLETE:
		(void)epoll_ctl(g->ep, EPOLL_CTL_DEL, c->fd, NULL);
		g->cfg.handoff(g->cfg.ctx, c->fd, (const struct sockaddr *)&c->sa,
		               (unsigned)c->salen);
		c->fd = -1;
		c->st = G_FREE;
		return;
	case API_HEAD_LINE_TOO_LONG:
		c->status = 414;
		break;
	case API_HEAD_TOO_LARGE:
		c->status = 431;
		break;
	}
	c->st = G_DISCARD;
	c->lines = 0;
	conn_read(g, c);
}

static void conn_event(struct api_gate *g, struct gate_conn *c)
{
	if (c->st == G_PEEK)
		conn_peek(g, c);
	else if (c->st != G_FREE)
		conn_read(g, c);
}

static void gate_accept(struct api_gate *g)
{
	for (;;) {
		struct sockaddr_storage sa;
		socklen_t sl = sizeof(sa);
		struct epoll_event ev = {.events = EPOLLIN | EPOLLRDHUP | EPOLLET};
		struct gate_conn *c;
		int fd = accept4(g->cfg.listen_fd, (struct sockaddr *)&sa, &sl,
		                 SOCK_NONBLOCK | SOCK_CLOEXEC);

		if (fd < 0 && (errno == EINTR || errno == ECONNABORTED))
			continue;
		if (fd < 0) {
			/* out of descriptors or memory: the listen socket stays readable, so
			 * wait a little rather than spin */
			if (errno != EAGAIN && errno != EWOULDBLOCK)
				(void)poll(NULL, 0, 10);
			return;
		}
		if (!g->cfg.peek) {
			g->cfg.handoff(g->cfg.ctx, fd, (struct sockaddr *)&sa, (unsigned)sl);
			continue;
		}
		c = slot_for(g, &sa);
		ev.data.u64 = c ? (uint64_t)(c - g->c) : 0;
		if (!c || epoll_ctl(g->ep, EPOLL_CTL_ADD, fd, &ev) < 0) {
			close(fd); /* full: as libmicrohttpd does past its limits */
			continue;
		}
		c->fd = fd;
		c->st = G_PEEK;
		c->sa = sa;
		c->salen = sl;
		c->discarded = 0;
		c->deadline_ms = now_ms() + (int64_t)g->cfg.idle_timeout_s * 1000;
		conn_peek(g, c); /* the head may be there already */
	}
}

/* Close what waited too long: a head that does not come (or does not end), a drain. */
static void gate_expire(struct api_gate *g)
{
	int64_t now = now_ms();
	unsigned i;

	for (i = 0; i < g->cfg.max_pending; i++)
		if (g->c[i].st != G_FREE && now >= g->c[i].deadline_ms)
			conn_close(g, &g->c[i]);
}

static void *gate_main(void *p)
{
	struct api_gate *g = p;
	struct epoll_event ev[64];

	for (;;) {
		int n = epoll_wait(g->ep, ev, (int)KILN_ARRAY_SIZE(ev), 250), i;

		for (i = 0; i < n; i++) {
			if (ev[i].data.u64 == EV_WAKE)
				return NULL;
			if (ev[i].data.u64 == EV_LISTEN)
				gate_accept(g);
			else if (ev[i].data.u64 < g->cfg.max_pending)
				conn_event(g, &g->c[ev[i].data.u64]);
		}
		gate_expire(g);
	}
}

static kiln_rc gate_watch(struct api_gate *g, int fd, uint64_t tag, struct kiln_err *err)
{
	struct epoll_event ev = {.events = EPOLLIN, .data.u64 = tag};

	if (epoll_ctl(g->ep, EPOLL_CTL_ADD, fd, &ev) < 0)
		return kiln_err_sys(err, KILN_EIO, "epoll_ctl");
	return KILN_OK;
}

kiln_rc api_gate_start(const struct api_gate_config *cfg, struct api_gate **out,
                       struct kiln_err *err)
{
	struct api_gate *g = kiln_calloc(1, sizeof(*g));
	kiln_rc rc = KILN_OK;
	unsigned i;

	*out = NULL;
	if (!g)
		return kiln_err_set(err, KILN_ENOMEM, "out of memory");
	g->cfg = *cfg;
	g->ep = epoll_create1(EPOLL_CLOEXEC);
	g->wake_fd = eventfd(0, EFD_CLOEXEC | EFD_NONBLOCK);
	g->c = kiln_calloc(cfg->max_pending ? cfg->max_pending : 1, sizeof(*g->c));
	g->buf = kiln_malloc(API_GATE_HEAD);
	if (!g->c || !g->buf)
		rc = kiln_err_set(err, KILN_ENOMEM, "out of memory");
	else if (g->ep < 0 || g->wake_fd < 0)
		rc = kiln_err_sys(err, KILN_EIO, "epoll");
	for (i = 0; !rc && i < cfg->max_pending; i++)
		g->c[i].fd = -1;
	if (!rc)
		rc = gate_watch(g, cfg->listen_fd, EV_LISTEN, err);
	if (!rc)
		rc = gate_watch(g, g->wake_fd, EV_WAKE, err);
	if (!rc && pthread_create(&g->th, NULL, gate_main, g))
		rc = kiln_err_set(err, KILN_EIO, "cannot start the accept thread");
	g->running = !rc;
	if (rc) {
		api_gate_stop(g);
		return rc;
	}
	*out = g;
	return KILN_OK;
}

void api_gate_stop(struct api_gate *g)
{
	uint64_t one = 1;
	unsigned i;

	if (!g)
		return;
	if (g->running) {
		if (write(g->wake_fd, &one, sizeof(one)) != (ssize_t)sizeof(one))
			KILN_BUG("cannot wake the accept thread");
		pthread_join(g->th, NULL);
	}
	for (i = 0; g->c && i < g->cfg.max_pending; i++)
		if (g->c[i].st != G_FREE)
			conn_close(g, &g->c[i]);
	util_close(g->ep);
	util_close(g->wake_fd);
	free(g->c);
	free(g->buf);
	free(g);
}
