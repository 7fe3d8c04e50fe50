/*
 * libsolv_int.h - libsolv and libsolvext, opened on first use rather than linked
 * (util_dl_ready).
 *
 * Only roots/solve.c includes this, after the <solv/...> headers. kiln does not link
 * libsolv: libsolvext pulls in librpm, libgcrypt, Lua 5.3, sqlite and more, which would
 * cost every kiln command at start though only resolving a root needs them. Debian ships
 * both as shared libraries only (libsolv1, libsolvext1); the table is filled from
 * libsolvext's handle, whose dlsym() also finds the symbols of libsolv, which it depends on.
 * A call to a function missing from the list fails to link: add new ones here. The headers'
 * static inline helpers that call into the library (queue_push, pool_whatprovides,
 * pool_solvid2str, ...) must not be used: they would call the library directly.
 */
#ifndef KILN_ROOTS_LIBSOLV_INT_H
#define KILN_ROOTS_LIBSOLV_INT_H

#ifndef ROOTS_LIBSOLVEXT_SONAME
#define ROOTS_LIBSOLVEXT_SONAME "libsolvext.so.1" /* the Makefile passes the exact SONAME */
#endif

#define ROOTS_LIBSOLV_FUNCS(X)                                                                     \
	X(pool_addfileprovides)                                                                    \
	X(pool_addrelproviders)                                                                    \
	X(pool_create)                                                                             \
	X(pool_createwhatprovides)                                                                 \
	X(pool_dep2str)                                                                            \
	X(pool_errstr)                                                                             \
	X(pool_free)                                                                               \
	X(pool_id2str)                                                                             \
	X(pool_parserpmrichdep)                                                                    \
	X(pool_queuetowhatprovides)                                                                \
	X(pool_rel2id)                                                                             \
	X(pool_set_flag)                                                                           \
	X(pool_setarch)                                                                            \
	X(pool_setdisttype)                                                                        \
	X(pool_solvable2str)                                                                       \
	X(pool_str2id)                                                                             \
	X(pool_strn2id)                                                                            \
	X(pool_whatmatchessolvable)                                                                \
	X(queue_free)                                                                              \
	X(queue_init)                                                                              \
	X(queue_insert)                                                                            \
	X(repo_add_comps)                                                                          \
	X(repo_add_rpmmd)                                                                          \
	X(repo_add_solvable)                                                                       \
	X(repo_addid_dep)                                                                          \
	X(repo_create)                                                                             \
	X(repo_free)                                                                               \
	X(repo_internalize)                                                                        \
	X(solvable_lookup_checksum)                                                                \
	X(solvable_lookup_deparray)                                                                \
	X(solvable_lookup_location)                                                                \
	X(solvable_lookup_num)                                                                     \
	X(solvable_lookup_str)                                                                     \
	X(solver_create)                                                                           \
	X(solver_findallproblemrules)                                                              \
	X(solver_free)                                                                             \
	X(solver_get_decisionqueue)                                                                \
	X(solver_problem_count)                                                                    \
	X(solver_problemruleinfo2str)                                                              \
	X(solver_ruleinfo)                                                                         \
	X(solver_set_flag)                                                                         \
	X(solver_solve)

/* The entry points (the file's registry of them). */
struct roots_libsolv_fns {
#define ROOTS_LIBSOLV_FIELD(f) __typeof__(f) *fn_##f;
	ROOTS_LIBSOLV_FUNCS(ROOTS_LIBSOLV_FIELD)
#undef ROOTS_LIBSOLV_FIELD
};

#define ROOTS_LIBSOLV_SYM(f) {#f, offsetof(struct roots_libsolv_fns, fn_##f)},
static const struct util_dl_sym roots_libsolv_syms[] = {ROOTS_LIBSOLV_FUNCS(ROOTS_LIBSOLV_SYM)};
#undef ROOTS_LIBSOLV_SYM

#define pool_addfileprovides (roots_libsolv.fn_pool_addfileprovides)
#define pool_addrelproviders (roots_libsolv.fn_pool_addrelproviders)
#define pool_create (roots_libsolv.fn_pool_create)
#define pool_createwhatprovides (roots_libsolv.fn_pool_createwhatprovides)
#define pool_dep2str (roots_libsolv.fn_pool_dep2str)
#define pool_errstr (roots_libsolv.fn_pool_errstr)
#define pool_free (roots_libsolv.fn_pool_free)
#define pool_id2str (roots_libsolv.fn_pool_id2str)
#define pool_parserpmrichdep (roots_libsolv.fn_pool_parserpmrichdep)
#define pool_queuetowhatprovides (roots_libsolv.fn_pool_queuetowhatprovides)
#define pool_rel2id (roots_libsolv.fn_pool_rel2id)
#define pool_set_flag (roots_libsolv.fn_pool_set_flag)
#define pool_setarch (roots_libsolv.fn_pool_setarch)
#define pool_setdisttype (roots_libsolv.fn_pool_setdisttype)
#define pool_solvable2str (roots_libsolv.fn_pool_solvable2str)
#define pool_str2id (roots_libsolv.fn_pool_str2id)
#define pool_strn2id (roots_libsolv.fn_pool_strn2id)
#define pool_whatmatchessolvable (roots_libsolv.fn_pool_whatmatchessolvable)
#define queue_free (roots_libsolv.fn_queue_free)
#define queue_init (roots_libsolv.fn_queue_init)
#define queue_insert (roots_libsolv.fn_queue_insert)
#define repo_add_comps (roots_libsolv.fn_repo_add_comps)
#define repo_add_rpmmd (roots_libsolv.fn_repo_add_rpmmd)
#define repo_add_solvable (roots_libsolv.fn_repo_add_solvable)
#define repo_addid_dep (roots_libsolv.fn_repo_addid_dep)
#define repo_create (roots_libsolv.fn_repo_create)
#define repo_free (roots_libsolv.fn_repo_free)
#define repo_internalize (roots_libsolv.fn_repo_internalize)
#define solvable_lookup_checksum (roots_libsolv.fn_solvable_lookup_checksum)
#define solvable_lookup_deparray (roots_libsolv.fn_solvable_lookup_deparray)
#define solvable_lookup_location (roots_libsolv.fn_solvable_lookup_location)
#define solvable_lookup_num (roots_libsolv.fn_solvable_lookup_num)
#define solvable_lookup_str (roots_libsolv.fn_solvable_lookup_str)
#define solver_create (roots_libsolv.fn_solver_create)
#define solver_findallproblemrules (roots_libsolv.fn_solver_findallproblemrules)
#define solver_free (roots_libsolv.fn_solver_free)
#define solver_get_decisionqueue (roots_libsolv.fn_solver_get_decisionqueue)
#define solver_problem_count (roots_libsolv.fn_solver_problem_count)
#define solver_problemruleinfo2str (roots_libsolv.fn_solver_problemruleinfo2str)
#define solver_ruleinfo (roots_libsolv.fn_solver_ruleinfo)
#define solver_set_flag (roots_libsolv.fn_solver_set_flag)
#define solver_solve (roots_libsolv.fn_solver_solve)

#endif
