/*
 * pkgtool.c - a test-only helper that drives pack/ directly, for integration tests that need
 * the library without a user-facing command (never installed).
 *
 *   pkgtool roundtrip PKG...   re-encode both headers of each package and compare with the
 *                              file's bytes; exit 1 on any difference
 *   pkgtool extract PKG DIR    extract the payload below DIR (which must exist)
 *   pkgtool build DESC OUT     write a package with pack_write() from a description file:
 *                              one item per line, fields separated by TABs:
 *       format	4|6                payload	w9.gzdio      source	0|1       digest	sha256
 *       tag	NUM	s|i18n|u32|u64|strs|u32s	VALUE...
 *       dep	require|provide|conflict|obsolete|recommend|suggest	NAME	VERSION	FLAGS
 *       file	path=/usr/bin/x	mode=0100755	src=/abs/file	user=root	group=root
 *            	mtime=N	flags=N	verify=N	link=T	rdev=N	hardlink=N	lang=L	caps=C
 *            	size=N	color=N	class=TEXT	mime=TYPE
 */
#include "util/util.h"

#include <fcntl.h>
#include <unistd.h>

#include "pack/pack.h"

static int fail(const struct kiln_err *err)
{
	char msg[1024];

	fprintf(stderr, "pkgtool: %s\n", kiln_err_format(err, msg, sizeof(msg)));
	return 1;
}

static int compare(const char *path, const char *what, const unsigned char *want, size_t wlen,
                   const struct kiln_buf *got)
{
	size_t i;

	if (got->len == wlen && !memcmp(got->ptr, want, wlen))
		return 0;
	for (i = 0; i < wlen && i < got->len && (unsigned char)got->ptr[i] == want[i]; i++)
		;
	fprintf(stderr, "pkgtool: %s: %s differs at byte %zu (sizes %zu and %zu)\n", path, what, i,
	        wlen, got->len);
	return 1;
}

static int roundtrip(const char *path)
{
	struct kiln_buf file = KILN_BUF_INIT(KILN_GIB);
	struct kiln_buf out = KILN_BUF_INIT(KILN_GIB);
	struct kiln_err err = KILN_ERR_INIT;
	struct pack_package p;
	int rc = 1;

	memset(&p, 0, sizeof(p));
	if (util_read_file(path, KILN_GIB, &file, &err) ||
	    pack_package_open(&p, path, NULL, &err)) {
		rc = fail(&err);
		goto out;
	}
	if (pack_header_write(&p.sig, PACK_SIGTAG_HEADERSIGNATURES, &out, &err)) {
		rc = fail(&err);
		goto out;
	}
	rc = compare(path, "signature header", (const unsigned char *)file.ptr + p.sig_off,
	             p.sig_size, &out);
	kiln_buf_reset(&out);
	if (pack_header_write(&p.hdr, RPMTAG_HEADERIMMUTABLE, &out, &err)) {
		rc = fail(&err);
		goto out;
	}
	rc |=
	    compare(path, "main header", (const unsigned char *)p.hdr_raw.ptr, p.hdr_raw.len, &out);
	if (!rc)
		printf("%s: roundtrip ok (%zu entries)\n", path, p.hdr.n);
out:
	pack_package_release(&p);
	kiln_buf_release(&file);
	kiln_buf_release(&out);
	return rc;
}

static int extract(const char *pkg, const char *dir)
{
	struct kiln_err err = KILN_ERR_INIT;
	struct pack_payload *pl = NULL;
	struct pack_package p;
	int fd = -1, root = open(dir, O_RDONLY | O_DIRECTORY | O_CLOEXEC);
	kiln_rc rc = root < 0 ? kiln_err_sys(&err, KILN_EIO, "open %s", dir) : KILN_OK;

	memset(&p, 0, sizeof(p));
	if (!rc)
		rc = pack_package_open(&p, pkg, &fd, &err);
	if (!rc)
		rc = pack_payload_open(&p, fd, &pl, &err);
	if (!rc)
		rc = pack_payload_extract(pl, root, 0, &err);
	pack_payload_free(pl);
	pack_package_release(&p);
	util_close(fd);
	util_close(root);
	return rc ? fail(&err) : 0;
}

#define MAXF 64

/* Split line at TABs into at most max fields (in place). */
static size_t split(char *line, char **f, size_t max)
{
	size_t n = 0;

	while (n < max) {
		f[n++] = line;
		line = strchr(line, '\t');
		if (!line)
			break;
		*line++ = '\0';
	}
	return n;
}

static uint64_t num(const char *s)
{
	return strtoull(s, NULL, 0);
}

/* "\\n" in a value stands for a newline. */
static void unescape(char *s)
{
	char *d = s;

	for (; *s; s++) {
		if (s[0] == '\\' && s[1] == 'n') {
			*d++ = '\n';
			s++;
		} else {
			*d++ = *s;
		}
	}
	*d = '\0';
}

static kiln_rc desc_tag(struct pack_header *h, char **f, size_t n, struct kiln_err *err)
{
	uint32_t tag = (uint32_t)num(f[1]), v[MAXF];
	size_t i;

	for (i = 3; i < n; i++)
		unescape(f[i]);
	if (n < 4)
		return kiln_err_set(err, KILN_EINVAL, "tag line needs NUM TYPE VALUE");
	if (!strcmp(f[2], "s"))
		return pack_header_put_string(h, tag, f[3], err);
	if (!strcmp(f[2], "i18n"))
		return pack_header_put_i18n(h, tag, f[3], err);
	if (!strcmp(f[2], "u32"))
		return pack_header_put_u32(h, tag, (uint32_t)num(f[3]), err);
	if (!strcmp(f[2], "u64"))
		return pack_header_put_u64(h, tag, num(f[3]), err);
	if (!strcmp(f[2], "strs"))
		return pack_header_put_strings(h, tag, (const char *const *)f + 3,
		                               (uint32_t)(n - 3), err);
	for (i = 3; i < n; i++)
		v[i - 3] = (uint32_t)num(f[i]);
	return pack_header_put(h, tag, RPMTAG_TYPE_INT32, v, (uint32_t)(n - 3), err);
}

static kiln_rc desc_dep(struct pack_header *h, char **f, size_t n, struct kiln_err *err)
{
	static const char *const kinds[] = {"require",   "provide", "conflict",   "obsolete",
	                                    "recommend", "suggest", "supplement", "enhance"};
	size_t k;

	for (k = 0; k < KILN_ARRAY_SIZE(kinds) && (n < 5 || strcmp(kinds[k], f[1])); k++)
		;
	if (k == KILN_ARRAY_SIZE(kinds))
		return kiln_err_set(err, KILN_EINVAL, "bad dep line");
	return pack_deps_add(h, (enum pack_dep_kind)k, f[2], f[3], (uint32_t)num(f[4]), err);
}

static void desc_file(struct pack_file *pf, char **f, size_t n)
{
	size_t i;

	memset(pf, 0, sizeof(*pf));
	pf->verify = (uint32_t)RPMTAG_VERIFY_ALL;
	for (i = 1; i < n; i++) {
		char *eq = strchr(f[i], '=');
		const char *k = f[i], *v = eq ? eq + 1 : "";

		if (eq)
			*eq = '\0';
		if (!strcmp(k, "path"))
			pf->path = v;
		else if (!strcmp(k, "src"))
			pf->src = v;
		else if (!strcmp(k, "mode"))
			pf->mode = (uint32_t)num(v);
		else if (!strcmp(k, "user"))
			pf->user = v;
		else if (!strcmp(k, "group"))
			pf->group = v;
		else if (!strcmp(k, "mtime"))
			pf->mtime = (uint32_t)num(v);
		else if (!strcmp(k, "flags"))
			pf->flags = (uint32_t)num(v);
		else if (!strcmp(k, "verify"))
			pf->verify = (uint32_t)num(v);
		else if (!strcmp(k, "link"))
			pf->link = v;
		else if (!strcmp(k, "rdev"))
			pf->rdev = (uint32_t)num(v);
		else if (!strcmp(k, "hardlink"))
			pf->hardlink = (uint32_t)num(v);
		else if (!strcmp(k, "lang"))
			pf->lang = v;
		else if (!strcmp(k, "caps"))
			pf->caps = v;
		else if (!strcmp(k, "size"))
			pf->size = num(v);
		else if (!strcmp(k, "color"))
			pf->color = (uint32_t)num(v);
		else if (!strcmp(k, "class"))
			pf->fclass = v;
		else if (!strcmp(k, "mime"))
			pf->mime = v;
	}
}

static int build(const char *desc, const char *out)
{
	struct kiln_buf text = KILN_BUF_INIT(64 * KILN_MIB);
	struct kiln_err err = KILN_ERR_INIT;
	struct pack_write_opts o;
	struct pack_file *files = NULL;
	struct pack_header h;
	size_t nfiles = 0, n;
	char *line, *next, *f[MAXF];
	kiln_rc rc;

	pack_header_init(&h);
	pack_write_opts_init(&o);
	rc = util_read_file(desc, 64 * KILN_MIB, &text, &err);
	files = kiln_calloc(KILN_LIMIT_PACKAGE_FILES, sizeof(*files));
	for (line = text.ptr; !rc && line && *line; line = next) {
		next = strchr(line, '\n');
		if (next)
			*next++ = '\0';
		if (!*line || *line == '#')
			continue;
		n = split(line, f, MAXF);
		if (!strcmp(f[0], "format") && n > 1)
			o.format = (int)num(f[1]);
		else if (!strcmp(f[0], "payload") && n > 1)
			rc = pack_compress_parse(f[1], &o.comp, &err);
		else if (!strcmp(f[0], "source") && n > 1)
			o.source = num(f[1]) != 0;
		else if (!strcmp(f[0], "digest") && n > 1)
			rc = util_digest_by_name(f[1], &o.fdigest, &err);
		else if (!strcmp(f[0], "tag"))
			rc = desc_tag(&h, f, n, &err);
		else if (!strcmp(f[0], "dep"))
			rc = desc_dep(&h, f, n, &err);
		else if (!strcmp(f[0], "file") && nfiles < KILN_LIMIT_PACKAGE_FILES)
			desc_file(&files[nfiles++], f, n);
		else
			rc = kiln_err_set(&err, KILN_EINVAL, "bad description line '%s'", f[0]);
	}
	if (!rc)
		rc = pack_write(out, &h, files, nfiles, &o, &err);
	free(files);
	pack_header_release(&h);
	kiln_buf_release(&text);
	return rc ? fail(&err) : 0;
}

int main(int argc, char **argv)
{
	int i, rc = 0;

	if (argc == 4 && !strcmp(argv[1], "build"))
		return build(argv[2], argv[3]);
	if (argc == 4 && !strcmp(argv[1], "extract"))
		return extract(argv[2], argv[3]);
	if (argc < 3 || strcmp(argv[1], "roundtrip")) {
		fprintf(stderr,
		        "usage: pkgtool roundtrip PKG... | extract PKG DIR | build DESC OUT\n");
		return 2;
	}
	for (i = 2; i < argc; i++)
		rc |= roundtrip(argv[i]);
	return rc;
}
