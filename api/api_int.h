/*
 * api_int.h - what api/'s files share: raw JSON documents (jansson objects behind void *).
 */
#ifndef KILN_API_INT_H
#define KILN_API_INT_H

#include "api/api.h"

/* Parse with the size and depth limits of api_json_decode(); *out is a json_t * the caller
 * releases with api_json_unload(). */
KILN_MUST_CHECK kiln_rc api_json_load(const void *data, size_t len, void **out,
                                      struct kiln_err *err);
void api_json_unload(void *doc);

/* The gate (gate.c): a thread that accepts on a listen socket and hands each connection
 * on once its request head has arrived (peek), answering heads over API_GATE_HEAD itself
 * with a JSON 414 or 431. Without peek (TLS: the bytes are ciphertext) connections are
 * handed on at once. */
#define API_GATE_HEAD (64 * KILN_KIB)

struct sockaddr;
struct api_gate;

struct api_gate_config {
	int listen_fd;            /* borrowed, non-blocking */
	unsigned max_pending;     /* connections waiting for their head, in all */
	unsigned max_per_address; /* and from one address; more are closed at once */
	unsigned idle_timeout_s;  /* a head not complete by then: closed */
	bool peek;                /* wait for the head (plain HTTP) */
	/* takes fd (and must close it one way or another) */
	void (*handoff)(void *ctx, int fd, const struct sockaddr *sa, unsigned salen);
	void *ctx;
};

KILN_MUST_CHECK kiln_rc api_gate_start(const struct api_gate_config *cfg, struct api_gate **out,
                                       struct kiln_err *err);
/* Stop accepting, close the connections still waiting, free. NULL ok. */
void api_gate_stop(struct api_gate *g);

#endif
