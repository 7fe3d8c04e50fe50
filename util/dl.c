/*
 * dl.c - libraries opened at run time: a table of entry points filled once by dlopen(3).
 *
 * kiln links only the libraries every command needs; the ones only a few commands use
 * (libcrypto, libcurl, libgit2, libmagic, libmicrohttpd, libsqlite3) are opened by the file
 * that uses them, the first time it does, because mapping and relocating them and what they
 * pull in cost every command several milliseconds at start.
 */
#include "util/util.h"

#include <dlfcn.h>
#include <pthread.h>

/* One lock for every table: opening is rare, and a table must be filled only once. */
static pthread_mutex_t dl_lock = PTHREAD_MUTEX_INITIALIZER;

static void dl_open(struct util_dl *dl)
{
	void *h = dlopen(dl->soname, RTLD_NOW | RTLD_LOCAL);
	size_t i;

	if (!h) {
		snprintf(dl->error, sizeof(dl->error), "cannot load %s: %s", dl->soname, dlerror());
		return;
	}
	for (i = 0; i < dl->nsyms; i++) {
		void *p = dlsym(h, dl->syms[i].name);

		if (!p) {
			snprintf(dl->error, sizeof(dl->error), "%s has no %s", dl->soname,
			         dl->syms[i].name);
			return;
		}
		/* POSIX: a function pointer has the representation of the void * dlsym gives. */
		memcpy((char *)dl->table + dl->syms[i].offset, &p, sizeof(p));
	}
	/* The library stays open for the life of the process. */
}

kiln_rc util_dl_ready(struct util_dl *dl, struct kiln_err *err)
{
	kiln_rc rc = KILN_OK;

	/* Hot callers (a digest per file) pass here without the lock once it is open. */
	if (__atomic_load_n(&dl->ok, __ATOMIC_ACQUIRE))
		return KILN_OK;
	pthread_mutex_lock(&dl_lock);
	if (!dl->tried) {
		dl->error[0] = '\0';
		dl_open(dl);
		dl->tried = true;
		if (!dl->error[0])
			__atomic_store_n(&dl->ok, true, __ATOMIC_RELEASE);
	}
	if (dl->error[0])
		rc = kiln_err_set(err, KILN_ENOTFOUND, "%s", dl->error);
	pthread_mutex_unlock(&dl_lock);
	return rc;
}
