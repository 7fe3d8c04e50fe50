/*
 * batch.h - the build graph of a batch: which source packages of a set must be built before
 * which, from their specs alone (Koji's chain builds, Copr's batches, OBS's project order,
 * mock --chain).
 *
 * Each node is one source package: its BuildRequires, and what the binary packages it will
 * build provide (every package's name at the spec's EVR, and its Provides: lines). Node A
 * depends on node B when one of A's BuildRequires is provided by B (versions compared as
 * rpm does; an unversioned side matches any version; in a rich dependency every package
 * name counts, versions aside, which can only order more, never less). What only the built
 * packages can say (automatic Provides such as sonames or pkgconfig(), files) is not known
 * here: such a dependency gives no edge, and the root's resolution reports it if it fails.
 *
 * Cycles (strongly connected components) are an error naming each cycle's members and the
 * dependencies that close it, unless the caller names bootstrap packages: a bootstrap
 * package's dependencies inside its cycle are dropped, so it builds first on what the root
 * offers (a compiler built with the previous one).
 *
 * The order is by levels: level 0 needs nothing in the batch, level k needs only lower
 * levels, so the packages of one level can build in parallel. Within a level, the order
 * packages were added.
 *
 * Thread safety: one graph belongs to one thread.
 */
#ifndef KILN_BATCH_H
#define KILN_BATCH_H

#include "util/util.h"

struct spec_deps; /* spec/spec.h */

/* Bounds on a batch (a mass rebuild is a few thousand packages). */
#define BATCH_MAX_NODES 20000
#define BATCH_MAX_DEPS 200000 /* BuildRequires plus Provides over the whole batch */

struct batch_graph;

/* OUT: *out, free with batch_graph_free(). */
KILN_MUST_CHECK kiln_rc batch_graph_new(struct batch_graph **out, struct kiln_err *err);
void batch_graph_free(struct batch_graph *g);

/* Add a source package: label names it in messages (the spec's path), name is the source
 * package's name; provides and buildrequires are copied. KILN_EEXIST when a package of that
 * name is in the batch already, KILN_ELIMIT beyond the bounds. *index gets its number
 * (in the order of adding) when index is not NULL. */
KILN_MUST_CHECK kiln_rc batch_graph_add(struct batch_graph *g, const char *label, const char *name,
                                        const struct spec_deps *provides,
                                        const struct spec_deps *buildrequires, size_t *index,
                                        struct kiln_err *err);

/* Find the edges, break the cycles at the nboot bootstrap packages (by name; an unknown
 * name is KILN_ENOTFOUND) and order the graph. A cycle left is KILN_ECONFLICT:
 * "build dependency cycle: a, b (a: BuildRequires b-devel, built by b; b: BuildRequires
 * a-devel >= 1, built by a)", every cycle listed. Call once, after every add. */
KILN_MUST_CHECK kiln_rc batch_graph_order(struct batch_graph *g, const char *const *bootstrap,
                                          size_t nboot, struct kiln_err *err);

/* After batch_graph_order(): the number of nodes, the k-th node to build, its level, and
 * the nodes it waits for (after bootstrap edges were dropped). Pointers stay valid until
 * batch_graph_free(). */
size_t batch_graph_count(const struct batch_graph *g);
size_t batch_graph_at(const struct batch_graph *g, size_t k);
unsigned batch_graph_level(const struct batch_graph *g, size_t node);
const size_t *batch_graph_deps(const struct batch_graph *g, size_t node, size_t *n);
const char *batch_graph_name(const struct batch_graph *g, size_t node);
const char *batch_graph_label(const struct batch_graph *g, size_t node);
/* Why node waits for dep: "BuildRequires: b-devel >= 1" (the first dependency found), or
 * NULL when it does not. */
const char *batch_graph_why(const struct batch_graph *g, size_t node, size_t dep);

#endif
