/*
 * fuzz_difftext.c - the line diff behind kiln diff (pack_diff_text). Input: a context
 * byte, then the two texts separated by the first NUL byte (all of it is the first text
 * when there is none). Besides memory errors, the harness checks the diff is right:
 * replaying its hunks over the first text must give the second.
 */
#include "util/util.h"

#include "pack/pack.h"

int LLVMFuzzerTestOneInput(const uint8_t *data, size_t size);

/* Copy whole lines of a from *pos up to line number want (counted in *line). */
static void copy_lines(const char *a, size_t alen, size_t *pos, size_t *line, size_t want,
                       struct kiln_buf *out)
{
	while (*line < want && *pos < alen) {
		const char *e = memchr(a + *pos, '\n', alen - *pos);
		size_t l = e ? (size_t)(e - (a + *pos)) + 1 : alen - *pos;

		kiln_buf_add(out, a + *pos, l);
		*pos += l;
		(*line)++;
	}
}

/* Lines of a before a hunk "@@ -S[,C] ...": S - 1, or S when the range is empty. */
static size_t hunk_start(const char *p)
{
	char *end;
	unsigned long start = strtoul(p + 4, &end, 10);
	unsigned long count = *end == ',' ? strtoul(end + 1, NULL, 10) : 1;

	return count ? start - 1 : start;
}

/* Apply the hunks of diff (without labels) to a[0..alen), appending the result to out. */
static void apply(const char *diff, const char *a, size_t alen, struct kiln_buf *out)
{
	const char *p = diff, *end = diff + strlen(diff);
	size_t pos = 0, line = 0, one;
	char prev = ' ';

	while (p < end) {
		const char *nl = memchr(p, '\n', (size_t)(end - p));
		size_t len = (size_t)(nl - p);

		if (*p == '@') {
			copy_lines(a, alen, &pos, &line, hunk_start(p), out);
		} else if (*p == '\\') {
			/* The line before lacks its newline on its side(s). */
			if (prev != '-')
				kiln_buf_truncate(out, out->len - 1);
		} else {
			prev = *p;
			if (*p != '-')
				kiln_buf_addf(out, "%.*s\n", (int)len - 1, p + 1);
			if (*p != '+') {
				const char *e = memchr(a + pos, '\n', alen - pos);

				one = e ? (size_t)(e - (a + pos)) + 1 : alen - pos;
				pos += one;
				line++;
			}
		}
		p = nl + 1;
	}
	kiln_buf_add(out, a + pos, alen - pos);
}

int LLVMFuzzerTestOneInput(const uint8_t *data, size_t size)
{
	struct kiln_buf out = KILN_BUF_INIT(KILN_LIMIT_DIFF_OUTPUT);
	struct kiln_buf again = KILN_BUF_INIT(KILN_LIMIT_DIFF_OUTPUT);
	struct kiln_err err = KILN_ERR_INIT;
	const char *a, *b, *nul;
	size_t alen, blen;
	unsigned context;

	if (!size || size > 65536)
		return 0;
	context = data[0] % 8;
	a = (const char *)data + 1;
	nul = memchr(a, '\0', size - 1);
	alen = nul ? (size_t)(nul - a) : size - 1;
	b = nul ? nul + 1 : "";
	blen = nul ? size - 1 - alen - 1 : 0;
	if (memchr(b, '\0', blen))
		return 0; /* diff lines are text: a second NUL would end the replay early */
	if (!pack_diff_text(a, alen, b, blen, NULL, NULL, context, 500, &out, &err)) {
		apply(out.ptr, a, alen, &again);
		if (again.len != blen || memcmp(again.ptr, b, blen))
			KILN_BUG("the diff does not turn a into b");
	}
	kiln_buf_release(&out);
	kiln_buf_release(&again);
	return 0;
}
