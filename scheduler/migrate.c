/*
 * migrate.c - kiln store migrate: a farm's sqlite3 job store copied into PostgreSQL
 * (issue 25), for a farm that outgrows one scheduler host.
 *
 * The stores do the SQL (scheduler_store_sqlite_dump, scheduler_pg_import_*); this file
 * checks the copy. Every table goes across in one PostgreSQL transaction, and each table's
 * row count and digest are compared before the commit: the digest is the sha256 of the
 * table's rows (each value length-prefixed, NULL apart from ""), sorted, so it does not
 * depend on the order either database returns them in.
 */
#include "util/util.h"

#include "scheduler/scheduler_int.h"

struct migrate {
	struct scheduler_pg_import *im;
	int out_fd;
	size_t tables, rows;
};

/* Row r of t in its canonical bytes, into b. */
static void row_bytes(const struct scheduler_table *t, size_t r, struct kiln_buf *b)
{
	size_t k;

	kiln_buf_reset(b);
	for (k = 0; k < t->ncols; k++) {
		const char *v = t->vals[r * t->ncols + k];

		if (!v)
			kiln_buf_addstr(b, "N;");
		else
			kiln_buf_addf(b, "%zu:%s;", strlen(v), v);
	}
}

struct row_ref {
	const char *p;
	size_t len;
};

static int row_cmp(const void *x, const void *y)
{
	const struct row_ref *a = x, *b = y;
	int c = memcmp(a->p, b->p, a->len < b->len ? a->len : b->len);

	return c ? c : (a->len > b->len) - (a->len < b->len);
}

/* The digest of t's rows (sha256 hex of the sorted canonical rows). */
static kiln_rc table_digest(const struct scheduler_table *t, char hex[65], struct kiln_err *err)
{
	struct kiln_arena a = KILN_ARENA_INIT(KILN_LIMIT_ARENA);
	struct kiln_buf b = KILN_BUF_INIT(KILN_LIMIT_ARENA);
	struct row_ref *rows = kiln_arena_array(&a, t->nrows + 1, sizeof(*rows));
	struct util_digest d;
	unsigned char md[UTIL_DIGEST_MAX];
	size_t r;
	kiln_rc rc;

	for (r = 0; rows && r < t->nrows; r++) {
		row_bytes(t, r, &b);
		rows[r].len = b.len;
		rows[r].p = kiln_arena_strndup(&a, b.len ? b.ptr : "", b.len);
	}
	rc = kiln_buf_finish(&b, err);
	if (!rc)
		rc = kiln_arena_finish(&a, err);
	if (!rc)
		rc = util_digest_init(&d, UTIL_DIGEST_SHA256, err);
	if (rc)
		goto out;
	qsort(rows, t->nrows, sizeof(*rows), row_cmp);
	for (r = 0; r < t->nrows; r++) {
		char len[32];

		snprintf(len, sizeof(len), "%zu\n", rows[r].len);
		util_digest_update(&d, len, strlen(len));
		util_digest_update(&d, rows[r].p, rows[r].len);
	}
	rc = util_digest_final(&d, md, err);
	util_digest_release(&d);
	if (!rc)
		util_hex_encode(md, 32, hex);
out:
	kiln_buf_release(&b);
	kiln_arena_release(&a);
	return rc;
}

/* A line of the report to fd (-1: none); a reader gone away is no error of the copy. */
static void say(int fd, const char *fmt, ...) KILN_PRINTF(2, 3);
static void say(int fd, const char *fmt, ...)
{
	char line[512];
	va_list ap;
	int n;

	if (fd < 0)
		return;
	va_start(ap, fmt);
	n = vsnprintf(line, sizeof(line), fmt, ap);
	va_end(ap);
	if (n > 0 &&
	    util_write_all(fd, line, (size_t)n < sizeof(line) ? (size_t)n : sizeof(line) - 1, NULL))
		return;
}

static kiln_rc migrate_table(void *arg, const struct scheduler_table *t, struct kiln_err *err)
{
	struct migrate *m = arg;
	struct kiln_arena a = KILN_ARENA_INIT(KILN_LIMIT_ARENA);
	struct scheduler_table back;
	char from[65] = "", to[65] = "";
	kiln_rc rc;

	rc = scheduler_pg_import_table(m->im, t, &a, &back, err);
	if (!rc)
		rc = table_digest(t, from, err);
	if (!rc)
		rc = table_digest(&back, to, err);
	if (!rc && (back.nrows != t->nrows || strcmp(from, to)))
		rc =
		    kiln_err_set(err, KILN_EDIGEST,
		                 "table %s: %zu rows, sha256 %s in sqlite3 but %zu rows, sha256 %s "
		                 "in PostgreSQL",
		                 t->name, t->nrows, from, back.nrows, to);
	if (!rc)
		say(m->out_fd, "%-18s %8zu rows  sha256 %s\n", t->name, t->nrows, from);
	if (!rc)
		m->tables++, m->rows += t->nrows;
	kiln_arena_release(&a);
	return rc;
}

kiln_rc scheduler_store_migrate(const char *data_dir, const char *url, int out_fd,
                                struct kiln_err *err)
{
	struct kiln_buf db = KILN_BUF_INIT(KILN_LIMIT_PATH);
	struct migrate m = {NULL, out_fd, 0, 0};
	kiln_rc rc;

	kiln_buf_addf(&db, "%s/kiln.db", data_dir);
	rc = kiln_buf_finish(&db, err);
	if (!rc && !util_exists(db.ptr))
		rc = kiln_err_set(err, KILN_ENOTFOUND,
		                  "no job store %s (--from names a data directory)", db.ptr);
	if (!rc)
		rc = scheduler_pg_import_begin(url, &m.im, err);
	if (!rc)
		rc = scheduler_store_sqlite_dump(db.ptr, migrate_table, &m, err);
	if (m.im) {
		kiln_rc rc2 = scheduler_pg_import_end(m.im, rc == KILN_OK, rc ? NULL : err);

		rc = rc ? rc : rc2;
	}
	if (!rc)
		say(out_fd, "%zu tables, %zu rows copied and verified\n", m.tables, m.rows);
	kiln_buf_release(&db);
	return rc;
}
