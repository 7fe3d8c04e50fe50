/*
 * roots_test.h - helpers shared by the roots unit tests: rpm-md primary.xml written from a
 * compact description, so a test states its repository in a few lines.
 */
#ifndef KILN_TESTS_ROOTS_TEST_H
#define KILN_TESTS_ROOTS_TEST_H

#include "util/util.h"

#include "roots/roots.h"
#include "tests/unit/harness.h"

static inline void rt_xml_escape(struct kiln_buf *b, const char *s)
{
	for (; *s; s++) {
		if (*s == '<')
			kiln_buf_addstr(b, "&lt;");
		else if (*s == '>')
			kiln_buf_addstr(b, "&gt;");
		else if (*s == '&')
			kiln_buf_addstr(b, "&amp;");
		else if (*s == '"')
			kiln_buf_addstr(b, "&quot;");
		else
			kiln_buf_addch(b, *s);
	}
}

/* One <rpm:entry>: "name", "name OP [E:]V[-R]" or "(rich)". */
static inline void rt_entry(struct kiln_buf *b, const char *dep)
{
	static const char *const ops[][2] = {
	    {"<=", "LE"}, {">=", "GE"}, {"=", "EQ"}, {"<", "LT"}, {">", "GT"}};
	char name[256], op[4], evr[256], ver[256], rel[300] = "", epoch[256] = "0";
	const char *flags = NULL;
	char *dash, *colon;
	size_t i;

	if (dep[0] == '(' || sscanf(dep, "%255s %3s %255s", name, op, evr) != 3) {
		kiln_buf_addstr(b, "<rpm:entry name=\"");
		rt_xml_escape(b, dep);
		kiln_buf_addstr(b, "\"/>");
		return;
	}
	for (i = 0; i < sizeof(ops) / sizeof(ops[0]); i++)
		if (!strcmp(op, ops[i][0]))
			flags = ops[i][1];
	assert_non_null(flags);
	colon = strchr(evr, ':');
	if (colon) {
		*colon = '\0';
		snprintf(epoch, sizeof(epoch), "%s", evr);
	}
	snprintf(ver, sizeof(ver), "%s", colon ? colon + 1 : evr);
	dash = strchr(ver, '-');
	if (dash) {
		*dash = '\0';
		snprintf(rel, sizeof(rel), " rel=\"%s\"", dash + 1);
	}
	kiln_buf_addf(b, "<rpm:entry name=\"%s\" flags=\"%s\" epoch=\"%s\" ver=\"%s\"%s/>", name,
	              flags, epoch, ver, rel);
}

/* deps: ';'-separated "K:dep" items, K one of P (provides), R (requires), C (conflicts),
 * O (obsoletes), W (recommends), F (a file). */
static inline void rt_deps(struct kiln_buf *b, const char *deps, char kind, const char *tag)
{
	char item[512];
	const char *p = deps;
	bool open = false;

	while (p && *p) {
		const char *end = strchr(p, ';');
		size_t n = end ? (size_t)(end - p) : strlen(p);

		snprintf(item, sizeof(item), "%.*s", (int)n, p);
		if (item[0] == kind && item[1] == ':') {
			if (!open)
				kiln_buf_addf(b, "<rpm:%s>", tag);
			open = true;
			rt_entry(b, item + 2);
		}
		p = end ? end + 1 : NULL;
	}
	if (open)
		kiln_buf_addf(b, "</rpm:%s>\n", tag);
}

static inline void rt_files(struct kiln_buf *b, const char *deps)
{
	const char *p = deps;

	while (p && *p) {
		const char *end = strchr(p, ';');
		size_t n = end ? (size_t)(end - p) : strlen(p);

		if (n > 2 && p[0] == 'F' && p[1] == ':')
			kiln_buf_addf(b, "<file>%.*s</file>\n", (int)n - 2, p + 2);
		p = end ? end + 1 : NULL;
	}
}

/* Append one <package> of name-[epoch:]version-release.arch to b. */
static inline void rt_package(struct kiln_buf *b, const char *name, const char *evr,
                              const char *arch, const char *deps)
{
	char ver[128], sum[65];
	const char *rel, *colon = strchr(evr, ':');
	struct kiln_err err = KILN_ERR_INIT;

	snprintf(ver, sizeof(ver), "%s", colon ? colon + 1 : evr);
	rel = strchr(ver, '-') + 1;
	ver[rel - 1 - ver] = '\0';
	assert_ok(util_digest_mem_hex(UTIL_DIGEST_SHA256, name, strlen(name), sum, &err), &err);
	kiln_buf_addf(b,
	              "<package type=\"rpm\"><name>%s</name><arch>%s</arch>"
	              "<version epoch=\"%.*s\" ver=\"%s\" rel=\"%s\"/>"
	              "<checksum type=\"sha256\" pkgid=\"YES\">%s</checksum>"
	              "<summary>s</summary><description>d</description>"
	              "<size package=\"1000\" installed=\"1\" archive=\"1\"/>"
	              "<location href=\"Packages/%s-%s.%s.rpm\"/><format>\n",
	              name, arch, colon ? (int)(colon - evr) : 1, colon ? evr : "0", ver, rel, sum,
	              name, colon ? colon + 1 : evr, arch);
	rt_deps(b, deps, 'P', "provides");
	rt_deps(b, deps, 'R', "requires");
	rt_deps(b, deps, 'C', "conflicts");
	rt_deps(b, deps, 'O', "obsoletes");
	rt_deps(b, deps, 'W', "recommends");
	rt_files(b, deps);
	kiln_buf_addstr(b, "</format></package>\n");
}

static inline void rt_primary_begin(struct kiln_buf *b)
{
	kiln_buf_addstr(b, "<?xml version=\"1.0\" encoding=\"UTF-8\"?>\n"
	                   "<metadata xmlns=\"http://linux.duke.edu/metadata/common\" "
	                   "xmlns:rpm=\"http://linux.duke.edu/metadata/rpm\">\n");
}

static inline void rt_primary_end(struct kiln_buf *b)
{
	kiln_buf_addstr(b, "</metadata>\n");
}

#endif
