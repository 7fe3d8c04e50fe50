/*
 * elfimg.h - build small synthetic ELF images for the worker tests: any class and byte
 * order, with a PT_INTERP, .dynstr, .dynamic, .gnu.version_d and .gnu.version_r, and a
 * record of where each structure went so tests can corrupt it.
 */
#ifndef KILN_TESTS_WORKER_ELFIMG_H
#define KILN_TESTS_WORKER_ELFIMG_H

#include "util/util.h"

#include <elf.h>

struct elfimg_spec {
	int cls;  /* ELFCLASS32 or ELFCLASS64 */
	int data; /* ELFDATA2LSB or ELFDATA2MSB */
	uint16_t type, machine;
	const char *interp; /* NULL: no PT_INTERP */
	const char *soname; /* NULL: no DT_SONAME */
	const char *needed[4];
	bool sysv_hash, gnu_hash, debug, pie;
	const char *verdef_base; /* NULL: no .gnu.version_d */
	const char *verdefs[4];  /* each a definition with its parent as second aux */
	const char *vn_file;     /* NULL: no .gnu.version_r */
	const char *vn_names[4];
};

/* Offsets of what a test may want to break. */
struct elfimg_layout {
	size_t phoff, interp, dynstr, dynstr_len, dynamic, verdef, verneed, shoff;
	size_t shentsize, dynentsize;
	size_t sh_dynstr, sh_dynamic, sh_verdef, sh_verneed; /* section header offsets */
	size_t len;
};

struct elfimg {
	unsigned char *b;
	size_t len, cap;
	bool is64, be;
};

static inline void elfimg_put(struct elfimg *m, size_t off, uint64_t v, int size)
{
	int i;

	for (i = 0; i < size; i++) {
		int shift = 8 * (m->be ? size - 1 - i : i);

		m->b[off + (size_t)i] = (unsigned char)(v >> shift);
	}
}

static inline size_t elfimg_reserve(struct elfimg *m, size_t n, size_t align)
{
	size_t off = (m->len + align - 1) / align * align;

	if (off + n > m->cap)
		abort();
	m->len = off + n;
	return off;
}

/* Add a string to .dynstr (built first, in place); returns its offset in the table. */
static inline uint32_t elfimg_str(struct elfimg *m, size_t dynstr, const char *s)
{
	size_t off = elfimg_reserve(m, strlen(s) + 1, 1);

	memcpy(m->b + off, s, strlen(s) + 1);
	return (uint32_t)(off - dynstr);
}

static inline uint32_t elfimg_elf_hash(const char *s)
{
	uint32_t h = 0;

	for (; *s; s++) {
		uint32_t g;

		h = (h << 4) + (unsigned char)*s;
		g = h & 0xf0000000u;
		if (g)
			h ^= g >> 24;
		h &= ~g;
	}
	return h;
}

static inline void elfimg_dyn(struct elfimg *m, size_t *at, int64_t tag, uint64_t val)
{
	int w = m->is64 ? 8 : 4;

	elfimg_put(m, *at, (uint64_t)tag, w);
	elfimg_put(m, *at + (size_t)w, val, w);
	*at += 2 * (size_t)w;
}

static inline void elfimg_shdr(struct elfimg *m, size_t at, uint32_t type, uint64_t off,
                               uint64_t size, uint32_t link, uint32_t info, uint64_t entsize)
{
	if (m->is64) {
		elfimg_put(m, at + 4, type, 4);
		elfimg_put(m, at + 24, off, 8);
		elfimg_put(m, at + 32, size, 8);
		elfimg_put(m, at + 40, link, 4);
		elfimg_put(m, at + 44, info, 4);
		elfimg_put(m, at + 56, entsize, 8);
	} else {
		elfimg_put(m, at + 4, type, 4);
		elfimg_put(m, at + 16, off, 4);
		elfimg_put(m, at + 20, size, 4);
		elfimg_put(m, at + 24, link, 4);
		elfimg_put(m, at + 28, info, 4);
		elfimg_put(m, at + 36, entsize, 4);
	}
}

static inline size_t elfimg_count(const char *const *v, size_t max)
{
	size_t n = 0;

	while (n < max && v[n])
		n++;
	return n;
}

/* .gnu.version_d: the base entry, then one per version (its name, then its parent). */
static inline size_t elfimg_verdef(struct elfimg *m, const struct elfimg_spec *s, size_t dynstr,
                                   const uint32_t *names, uint32_t base, size_t *count)
{
	size_t n = elfimg_count(s->verdefs, 4);
	size_t at = elfimg_reserve(m, (n + 1) * 20 + (2 * n + 1) * 8, 4);
	size_t i;

	(void)dynstr;
	*count = n + 1;
	for (i = 0; i <= n; i++) {
		size_t d = at + i * 20;
		size_t aux = at + (n + 1) * 20 + (i ? 8 + (i - 1) * 16 : 0);
		uint16_t cnt = i ? 2 : 1;

		elfimg_put(m, d, 1, 2);
		elfimg_put(m, d + 2, i ? 0 : VER_FLG_BASE, 2);
		elfimg_put(m, d + 4, i + 1, 2);
		elfimg_put(m, d + 6, cnt, 2);
		elfimg_put(m, d + 8, elfimg_elf_hash(i ? s->verdefs[i - 1] : s->verdef_base), 4);
		elfimg_put(m, d + 12, aux - d, 4);
		elfimg_put(m, d + 16, i < n ? 20 : 0, 4);
		elfimg_put(m, aux, i ? names[i - 1] : base, 4);
		elfimg_put(m, aux + 4, cnt == 2 ? 8 : 0, 4);
		if (cnt == 2) {
			elfimg_put(m, aux + 8, i > 1 ? names[i - 2] : base, 4);
			elfimg_put(m, aux + 12, 0, 4);
		}
	}
	return at;
}

/* .gnu.version_r: one file with its versions. */
static inline size_t elfimg_verneed(struct elfimg *m, const struct elfimg_spec *s, uint32_t file,
                                    const uint32_t *names)
{
	size_t n = elfimg_count(s->vn_names, 4);
	size_t at = elfimg_reserve(m, 16 + n * 16, 4);
	size_t i;

	elfimg_put(m, at, 1, 2);
	elfimg_put(m, at + 2, n, 2);
	elfimg_put(m, at + 4, file, 4);
	elfimg_put(m, at + 8, 16, 4);
	elfimg_put(m, at + 12, 0, 4);
	for (i = 0; i < n; i++) {
		size_t a = at + 16 + i * 16;

		elfimg_put(m, a, elfimg_elf_hash(s->vn_names[i]), 4);
		elfimg_put(m, a + 4, 0, 2);
		elfimg_put(m, a + 6, i + 2, 2);
		elfimg_put(m, a + 8, names[i], 4);
		elfimg_put(m, a + 12, i + 1 < n ? 16 : 0, 4);
	}
	return at;
}

static inline void elfimg_ehdr(struct elfimg *m, const struct elfimg_spec *s,
                               const struct elfimg_layout *l, uint16_t phnum, uint16_t shnum)
{
	memcpy(m->b, ELFMAG, SELFMAG);
	m->b[EI_CLASS] = (unsigned char)s->cls;
	m->b[EI_DATA] = (unsigned char)s->data;
	m->b[EI_VERSION] = EV_CURRENT;
	elfimg_put(m, 16, s->type, 2);
	elfimg_put(m, 18, s->machine, 2);
	elfimg_put(m, 20, EV_CURRENT, 4);
	if (m->is64) {
		elfimg_put(m, 32, phnum ? l->phoff : 0, 8);
		elfimg_put(m, 40, l->shoff, 8);
		elfimg_put(m, 52, sizeof(Elf64_Ehdr), 2);
		elfimg_put(m, 54, sizeof(Elf64_Phdr), 2);
		elfimg_put(m, 56, phnum, 2);
		elfimg_put(m, 58, sizeof(Elf64_Shdr), 2);
		elfimg_put(m, 60, shnum, 2);
	} else {
		elfimg_put(m, 28, phnum ? l->phoff : 0, 4);
		elfimg_put(m, 32, l->shoff, 4);
		elfimg_put(m, 40, sizeof(Elf32_Ehdr), 2);
		elfimg_put(m, 42, sizeof(Elf32_Phdr), 2);
		elfimg_put(m, 44, phnum, 2);
		elfimg_put(m, 46, sizeof(Elf32_Shdr), 2);
		elfimg_put(m, 48, shnum, 2);
	}
}

static inline void elfimg_phdr(struct elfimg *m, size_t at, size_t off, size_t size)
{
	elfimg_put(m, at, PT_INTERP, 4);
	if (m->is64) {
		elfimg_put(m, at + 8, off, 8);
		elfimg_put(m, at + 32, size, 8);
		elfimg_put(m, at + 40, size, 8);
	} else {
		elfimg_put(m, at + 4, off, 4);
		elfimg_put(m, at + 16, size, 4);
		elfimg_put(m, at + 20, size, 4);
	}
}

/* Build the image into out (cap bytes, zeroed here); returns its length. */
static inline size_t elfimg_build(const struct elfimg_spec *s, unsigned char *out, size_t cap,
                                  struct elfimg_layout *l)
{
	struct elfimg m = {out, 0, cap, s->cls == ELFCLASS64, s->data == ELFDATA2MSB};
	size_t ehsize = m.is64 ? sizeof(Elf64_Ehdr) : sizeof(Elf32_Ehdr);
	size_t phsize = m.is64 ? sizeof(Elf64_Phdr) : sizeof(Elf32_Phdr);
	uint32_t needed[4], vd[4], vn[4], soname = 0, base = 0, vnfile = 0;
	size_t i, at, ndyn, nvd = 0, dynstr_len;
	uint16_t shnum = 3;

	memset(out, 0, cap);
	memset(l, 0, sizeof(*l));
	l->shentsize = m.is64 ? sizeof(Elf64_Shdr) : sizeof(Elf32_Shdr);
	l->dynentsize = m.is64 ? 16 : 8;
	elfimg_reserve(&m, ehsize, 1);
	if (s->interp) {
		l->phoff = elfimg_reserve(&m, phsize, 8);
		l->interp = elfimg_reserve(&m, strlen(s->interp) + 1, 1);
		memcpy(out + l->interp, s->interp, strlen(s->interp) + 1);
		elfimg_phdr(&m, l->phoff, l->interp, strlen(s->interp) + 1);
	}
	l->dynstr = elfimg_reserve(&m, 1, 1);
	for (i = 0; i < 4 && s->needed[i]; i++)
		needed[i] = elfimg_str(&m, l->dynstr, s->needed[i]);
	if (s->soname)
		soname = elfimg_str(&m, l->dynstr, s->soname);
	if (s->verdef_base)
		base = elfimg_str(&m, l->dynstr, s->verdef_base);
	for (i = 0; s->verdef_base && i < elfimg_count(s->verdefs, 4); i++)
		vd[i] = elfimg_str(&m, l->dynstr, s->verdefs[i]);
	if (s->vn_file)
		vnfile = elfimg_str(&m, l->dynstr, s->vn_file);
	for (i = 0; s->vn_file && i < elfimg_count(s->vn_names, 4); i++)
		vn[i] = elfimg_str(&m, l->dynstr, s->vn_names[i]);
	dynstr_len = l->dynstr_len = m.len - l->dynstr;
	ndyn = elfimg_count(s->needed, 4) + !!s->soname + s->sysv_hash + s->gnu_hash + s->debug +
	       s->pie + 1;
	l->dynamic = at = elfimg_reserve(&m, ndyn * l->dynentsize, 8);
	for (i = 0; i < elfimg_count(s->needed, 4); i++)
		elfimg_dyn(&m, &at, DT_NEEDED, needed[i]);
	if (s->soname)
		elfimg_dyn(&m, &at, DT_SONAME, soname);
	if (s->sysv_hash)
		elfimg_dyn(&m, &at, DT_HASH, 0x1000);
	if (s->gnu_hash)
		elfimg_dyn(&m, &at, DT_GNU_HASH, 0x2000);
	if (s->debug)
		elfimg_dyn(&m, &at, DT_DEBUG, 0);
	if (s->pie)
		elfimg_dyn(&m, &at, DT_FLAGS_1, 0x08000000);
	elfimg_dyn(&m, &at, DT_NULL, 0);
	if (s->verdef_base) {
		l->verdef = elfimg_verdef(&m, s, l->dynstr, vd, base, &nvd);
		shnum++;
	}
	if (s->vn_file) {
		l->verneed = elfimg_verneed(&m, s, vnfile, vn);
		shnum++;
	}
	l->shoff = elfimg_reserve(&m, shnum * l->shentsize, 8);
	l->sh_dynstr = l->shoff + l->shentsize;
	l->sh_dynamic = l->sh_dynstr + l->shentsize;
	elfimg_shdr(&m, l->sh_dynstr, SHT_STRTAB, l->dynstr, dynstr_len, 0, 0, 0);
	elfimg_shdr(&m, l->sh_dynamic, SHT_DYNAMIC, l->dynamic, ndyn * l->dynentsize, 1, 0,
	            l->dynentsize);
	at = l->sh_dynamic + l->shentsize;
	if (s->verdef_base) {
		l->sh_verdef = at;
		elfimg_shdr(&m, at, SHT_GNU_verdef, l->verdef, nvd * 20 + (2 * nvd - 1) * 8, 1,
		            (uint32_t)nvd, 0);
		at += l->shentsize;
	}
	if (s->vn_file) {
		l->sh_verneed = at;
		elfimg_shdr(&m, at, SHT_GNU_verneed, l->verneed,
		            16 + elfimg_count(s->vn_names, 4) * 16, 1, 1, 0);
	}
	elfimg_ehdr(&m, s, l, s->interp ? 1 : 0, shnum);
	l->len = m.len;
	return m.len;
}

/* Rewrite a field of an image built with the same spec's byte order. */
static inline void elfimg_poke(unsigned char *img, bool be, size_t off, uint64_t v, int size)
{
	struct elfimg m = {img, 0, 0, false, be};

	elfimg_put(&m, off, v, size);
}

#endif
