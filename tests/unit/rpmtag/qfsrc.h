/*
 * qfsrc.h - a tiny in-memory query-format source for rpmtag/ unit tests.
 */
#ifndef KILN_TESTS_QFSRC_H
#define KILN_TESTS_QFSRC_H

#include "util/util.h"

#include "rpmtag/rpmtag.h"

struct qfsrc_tag {
	uint32_t tag;
	struct rpmtag_qf_value v;
};

struct qfsrc {
	const struct qfsrc_tag *tags; /* sorted by tag */
	size_t n;
};

static inline bool qfsrc_get(void *ctx, uint32_t tag, struct rpmtag_qf_value *v)
{
	const struct qfsrc *s = ctx;
	size_t i;

	for (i = 0; i < s->n; i++) {
		if (s->tags[i].tag == tag) {
			*v = s->tags[i].v;
			return true;
		}
	}
	return false;
}

static inline size_t qfsrc_count(void *ctx)
{
	return ((const struct qfsrc *)ctx)->n;
}

static inline uint32_t qfsrc_tag_at(void *ctx, size_t i)
{
	return ((const struct qfsrc *)ctx)->tags[i].tag;
}

static const struct rpmtag_qf_source_ops qfsrc_ops = {qfsrc_get, qfsrc_count, qfsrc_tag_at, NULL};

#define QF_STR(t, ...)                                                                             \
	{                                                                                          \
		t,                                                                                 \
		{                                                                                  \
			RPMTAG_TYPE_STRING, 1, (const char *[])                                    \
			{                                                                          \
				__VA_ARGS__                                                        \
			}                                                                          \
		}                                                                                  \
	}
#define QF_STRS(t, n, ...)                                                                         \
	{                                                                                          \
		t,                                                                                 \
		{                                                                                  \
			RPMTAG_TYPE_STRING_ARRAY, n, (const char *[])                              \
			{                                                                          \
				__VA_ARGS__                                                        \
			}                                                                          \
		}                                                                                  \
	}
#define QF_U32S(t, n, ...)                                                                         \
	{                                                                                          \
		t,                                                                                 \
		{                                                                                  \
			RPMTAG_TYPE_INT32, n, (const uint32_t[])                                   \
			{                                                                          \
				__VA_ARGS__                                                        \
			}                                                                          \
		}                                                                                  \
	}
#define QF_U16S(t, n, ...)                                                                         \
	{                                                                                          \
		t,                                                                                 \
		{                                                                                  \
			RPMTAG_TYPE_INT16, n, (const uint16_t[])                                   \
			{                                                                          \
				__VA_ARGS__                                                        \
			}                                                                          \
		}                                                                                  \
	}

/* A sample package header: demo-2:1.0-3.noarch with three files and two requires. */
static const struct qfsrc_tag qfsrc_demo[] = {
    QF_STRS(RPMTAG_HEADERI18NTABLE, 1, "C"),
    {RPMTAG_SIGMD5, {RPMTAG_TYPE_BIN, 4, "\x01\x02\xfe\xff"}},
    QF_STR(RPMTAG_NAME, "demo"),
    QF_STR(RPMTAG_VERSION, "1.0"),
    QF_STR(RPMTAG_RELEASE, "3"),
    QF_U32S(RPMTAG_EPOCH, 1, 2),
    {RPMTAG_SUMMARY, {RPMTAG_TYPE_I18NSTRING, 2, (const char *[]){"Demo <x> & 'y'", "Demo de"}}},
    QF_U32S(RPMTAG_BUILDTIME, 1, 1704067200),
    QF_STR(RPMTAG_ARCH, "noarch"),
    QF_U32S(RPMTAG_FILESIZES, 3, 4096, 1500, 4),
    QF_U16S(RPMTAG_FILEMODES, 3, 040755, 0104755, 0120777),
    QF_U32S(RPMTAG_FILEFLAGS, 3, 0, 17, 64),
    QF_STR(RPMTAG_SOURCERPM, "demo-1.0-3.src.rpm"),
    QF_U32S(RPMTAG_REQUIREFLAGS, 2, 12, 16777226),
    QF_STRS(RPMTAG_REQUIRENAME, 2, "bash", "rpmlib(X)"),
    QF_STRS(RPMTAG_REQUIREVERSION, 2, "4.0", "1.0-1"),
    QF_U32S(RPMTAG_DIRINDEXES, 3, 0, 1, 1),
    QF_STRS(RPMTAG_BASENAMES, 3, "etc", "su", "link"),
    QF_STRS(RPMTAG_DIRNAMES, 2, "/", "/usr/bin/"),
};

static inline struct rpmtag_qf_source qfsrc_demo_source(struct qfsrc *s)
{
	struct rpmtag_qf_source src = {&qfsrc_ops, s, 0};

	s->tags = qfsrc_demo;
	s->n = KILN_ARRAY_SIZE(qfsrc_demo);
	return src;
}

/* Render fmt over the demo source; returns a static buffer's contents or the error. */
static inline const char *qfsrc_render(const char *fmt, char *dst, size_t size)
{
	struct kiln_buf out = KILN_BUF_INIT(KILN_MIB);
	struct kiln_err err = KILN_ERR_INIT;
	struct qfsrc s;
	struct rpmtag_qf_source src = qfsrc_demo_source(&s);

	if (rpmtag_qf_format(fmt, &src, &out, &err))
		snprintf(dst, size, "ERR:%s", err.msg);
	else
		snprintf(dst, size, "%s", out.ptr);
	kiln_buf_release(&out);
	return dst;
}

#endif
