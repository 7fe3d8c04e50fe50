/*
 * elf.c - a small, bounds-checked ELF reader: the header, PT_INTERP, and the dynamic and
 * symbol-version sections that dependency generation looks at (worker.h section 2).
 *
 * Everything comes from the file through one checked read primitive, so an offset or size
 * from the file is compared with the file's size before anything is read, and sections are
 * copied into bounded buffers. 32- and 64-bit files of either byte order are decoded field
 * by field; no structure is cast over file bytes.
 */
#include "util/util.h"

#include <elf.h>
#include <fcntl.h>
#include <sys/stat.h>
#include <unistd.h>

#include "worker/worker.h"

#ifndef DF_1_PIE
#define DF_1_PIE 0x08000000 /* glibc's <elf.h> has it only since 2.37 */
#endif

/* The longest PT_INTERP string read (a path). */
#define INTERP_MAX 4096

/* Where the bytes come from: memory, or a file read with pread(). */
struct src {
	const unsigned char *mem; /* borrowed; NULL for a file */
	int fd;
	uint64_t size;
	const char *name;
};

/* One section header, decoded. */
struct shdr {
	uint32_t name, type, link, info;
	uint64_t flags, offset, size, entsize, addralign;
};

/* A section's contents, read on demand and kept for the string lookups. */
struct sect {
	unsigned char *data; /* heap, or NULL while not loaded */
	size_t size;
	bool loaded;
};

struct rd {
	struct src src;
	struct worker_elf *out;
	struct kiln_err *err;
	bool be, is64;
	uint32_t shnum;
	struct shdr *sh;    /* heap: shnum headers */
	struct sect *sects; /* heap: shnum slots */
	uint64_t budget;    /* bytes of section contents we may still read */
	size_t entries;     /* version entries seen, for KILN_LIMIT_ELF_ENTRIES */
	uint32_t nverdef_sections;
};

static uint16_t get16(const struct rd *r, const unsigned char *p)
{
	return r->be ? (uint16_t)(p[0] << 8 | p[1]) : (uint16_t)(p[1] << 8 | p[0]);
}

static uint32_t get32(const struct rd *r, const unsigned char *p)
{
	if (r->be)
		return (uint32_t)p[0] << 24 | (uint32_t)p[1] << 16 | (uint32_t)p[2] << 8 | p[3];
	return (uint32_t)p[3] << 24 | (uint32_t)p[2] << 16 | (uint32_t)p[1] << 8 | p[0];
}

static uint64_t get64(const struct rd *r, const unsigned char *p)
{
	uint64_t hi = get32(r, r->be ? p : p + 4);
	uint64_t lo = get32(r, r->be ? p + 4 : p);

	return hi << 32 | lo;
}

/* An address-sized field: 4 bytes in ELF32, 8 in ELF64. */
static uint64_t getaddr(const struct rd *r, const unsigned char *p)
{
	return r->is64 ? get64(r, p) : get32(r, p);
}

static kiln_rc src_read(const struct src *s, uint64_t off, size_t len, void *buf, const char *what,
                        struct kiln_err *err)
{
	size_t done = 0;

	if (off > s->size || len > s->size - off)
		return kiln_err_set(err, KILN_EFORMAT,
		                    "%s: truncated ELF file: %s (%zu bytes at offset %" PRIu64
		                    ") ends past the end of the file (%" PRIu64 " bytes)",
		                    s->name, what, len, off, s->size);
	if (s->mem) {
		memcpy(buf, s->mem + off, len);
		return KILN_OK;
	}
	while (done < len) {
		ssize_t got = pread(s->fd, (char *)buf + done, len - done, (off_t)(off + done));

		if (got < 0 && errno == EINTR)
			continue;
		if (got < 0)
			return kiln_err_sys(err, KILN_EIO, "%s: cannot read %s", s->name, what);
		if (got == 0)
			return kiln_err_set(err, KILN_EFORMAT, "%s: %s: file shrank while read",
			                    s->name, what);
		done += (size_t)got;
	}
	return KILN_OK;
}

/* Record the arena's sticky error in r->err. */
static void arena_fail(struct rd *r)
{
	kiln_rc rc = kiln_arena_finish(&r->out->arena, r->err);

	(void)rc;
}

static char *arena_copy(struct rd *r, const char *s, size_t len)
{
	char *p = kiln_arena_strndup(&r->out->arena, s, len);

	if (!p)
		arena_fail(r);
	return p;
}

/* Make room for entry n of an arena array whose capacity is 4, 8, 16, ... (an array is
 * full when n is one of those). */
static bool arena_grow(struct rd *r, void **v, size_t n, size_t elem)
{
	void *nv;

	if (n && (n < 4 || (n & (n - 1))))
		return true;
	nv = kiln_arena_array(&r->out->arena, n ? n * 2 : 4, elem);
	if (!nv) {
		arena_fail(r);
		return false;
	}
	if (n)
		memcpy(nv, *v, n * elem);
	*v = nv;
	return true;
}

/* ---------------------------------------------------------------------------------------- */
/* ELF header */

bool worker_elf_magic(const void *head, size_t len)
{
	const unsigned char *h = head;

	return len > EI_CLASS && !memcmp(h, ELFMAG, SELFMAG) &&
	       (h[EI_CLASS] == ELFCLASS32 || h[EI_CLASS] == ELFCLASS64);
}

struct ehdr {
	uint64_t phoff, shoff;
	uint16_t phentsize, phnum, shentsize, shnum, shstrndx;
};

static kiln_rc ident_check(struct rd *r, const unsigned char *h, uint64_t size)
{
	if (size < EI_NIDENT || memcmp(h, ELFMAG, SELFMAG))
		return kiln_err_set(r->err, KILN_EFORMAT, "%s: not an ELF file", r->src.name);
	if (h[EI_CLASS] != ELFCLASS32 && h[EI_CLASS] != ELFCLASS64)
		return kiln_err_set(r->err, KILN_EFORMAT, "%s: ELF header: invalid class %u",
		                    r->src.name, h[EI_CLASS]);
	if (h[EI_DATA] != ELFDATA2LSB && h[EI_DATA] != ELFDATA2MSB)
		return kiln_err_set(r->err, KILN_EFORMAT, "%s: ELF header: invalid byte order %u",
		                    r->src.name, h[EI_DATA]);
	if (h[EI_VERSION] != EV_CURRENT)
		return kiln_err_set(r->err, KILN_EFORMAT, "%s: ELF header: invalid version %u",
		                    r->src.name, h[EI_VERSION]);
	return KILN_OK;
}

static kiln_rc ehdr_read(struct rd *r, struct ehdr *eh)
{
	unsigned char h[sizeof(Elf64_Ehdr)];
	size_t len = sizeof(Elf32_Ehdr);
	kiln_rc rc;

	rc = src_read(&r->src, 0, r->src.size < EI_NIDENT ? r->src.size : EI_NIDENT, h,
	              "ELF identification", r->err);
	if (!rc)
		rc = ident_check(r, h, r->src.size);
	if (rc)
		return rc;
	r->is64 = h[EI_CLASS] == ELFCLASS64;
	r->be = h[EI_DATA] == ELFDATA2MSB;
	if (r->is64)
		len = sizeof(Elf64_Ehdr);
	rc = src_read(&r->src, 0, len, h, "ELF header", r->err);
	if (rc)
		return rc;
	r->out->elfclass = h[EI_CLASS];
	r->out->data = h[EI_DATA];
	r->out->type = get16(r, h + 16);
	r->out->machine = get16(r, h + 18);
	eh->phoff = getaddr(r, h + (r->is64 ? 32 : 28));
	eh->shoff = getaddr(r, h + (r->is64 ? 40 : 32));
	eh->phentsize = get16(r, h + (r->is64 ? 54 : 42));
	eh->phnum = get16(r, h + (r->is64 ? 56 : 44));
	eh->shentsize = get16(r, h + (r->is64 ? 58 : 46));
	eh->shnum = get16(r, h + (r->is64 ? 60 : 48));
	eh->shstrndx = get16(r, h + (r->is64 ? 62 : 50));
	return KILN_OK;
}

/* ---------------------------------------------------------------------------------------- */
/* Section headers */

static kiln_rc shdr_one(struct rd *r, uint64_t off, struct shdr *s)
{
	unsigned char b[sizeof(Elf64_Shdr)];
	size_t len = r->is64 ? sizeof(Elf64_Shdr) : sizeof(Elf32_Shdr);
	kiln_rc rc = src_read(&r->src, off, len, b, "section header", r->err);

	if (rc)
		return rc;
	s->name = get32(r, b);
	s->type = get32(r, b + 4);
	s->flags = getaddr(r, b + 8);
	s->offset = getaddr(r, b + (r->is64 ? 24 : 16));
	s->addralign = getaddr(r, b + (r->is64 ? 48 : 32));
	s->size = getaddr(r, b + (r->is64 ? 32 : 20));
	s->link = get32(r, b + (r->is64 ? 40 : 24));
	s->info = get32(r, b + (r->is64 ? 44 : 28));
	s->entsize = getaddr(r, b + (r->is64 ? 56 : 36));
	return KILN_OK;
}

/* The number of sections, with the extended numbering of e_shnum 0 (sh_size of entry 0). */
static kiln_rc shnum_get(struct rd *r, const struct ehdr *eh, uint64_t *num)
{
	size_t natural = r->is64 ? sizeof(Elf64_Shdr) : sizeof(Elf32_Shdr);
	struct shdr s0;
	kiln_rc rc;

	*num = eh->shnum;
	if (!eh->shoff)
		return KILN_OK;
	if (eh->shentsize != natural)
		return kiln_err_set(r->err, KILN_EFORMAT,
		                    "%s: ELF header: section header size %u, expected %zu",
		                    r->src.name, eh->shentsize, natural);
	if (eh->shnum)
		return KILN_OK;
	rc = shdr_one(r, eh->shoff, &s0);
	if (!rc)
		*num = s0.size;
	return rc;
}

static kiln_rc shdrs_read(struct rd *r, const struct ehdr *eh)
{
	size_t natural = r->is64 ? sizeof(Elf64_Shdr) : sizeof(Elf32_Shdr);
	uint64_t num;
	uint32_t i;
	kiln_rc rc = shnum_get(r, eh, &num);

	if (rc || !eh->shoff || !num)
		return rc;
	if (num > KILN_LIMIT_ELF_SECTIONS)
		return kiln_err_set(r->err, KILN_ELIMIT,
		                    "%s: ELF file has %" PRIu64 " sections, more than %d",
		                    r->src.name, num, KILN_LIMIT_ELF_SECTIONS);
	r->shnum = (uint32_t)num;
	r->sh = kiln_calloc(num, sizeof(*r->sh));
	r->sects = kiln_calloc(num, sizeof(*r->sects));
	if (!r->sh || !r->sects)
		return kiln_err_set(r->err, KILN_ENOMEM, "out of memory");
	for (i = 0; i < r->shnum && !rc; i++)
		rc = shdr_one(r, eh->shoff + (uint64_t)i * natural, &r->sh[i]);
	return rc;
}

/* Load section i's contents (SHT_NOBITS has none). */
static kiln_rc sect_load(struct rd *r, uint32_t i, const char *what)
{
	struct sect *s = &r->sects[i];
	const struct shdr *h = &r->sh[i];
	char label[96];

	if (s->loaded)
		return KILN_OK;
	s->loaded = true;
	if (h->type == SHT_NOBITS || !h->size)
		return KILN_OK;
	if (h->size > r->budget)
		return kiln_err_set(r->err, KILN_ELIMIT,
		                    "%s: ELF section %" PRIu32 " (%s) is %" PRIu64
		                    " bytes: more than kiln reads from one file (%zu)",
		                    r->src.name, i, what, h->size, (size_t)KILN_LIMIT_ELF_READ);
	r->budget -= h->size;
	s->data = kiln_malloc((size_t)h->size);
	if (!s->data)
		return kiln_err_set(r->err, KILN_ENOMEM, "out of memory");
	s->size = (size_t)h->size;
	snprintf(label, sizeof(label), "section %" PRIu32 " (%s)", i, what);
	return src_read(&r->src, h->offset, s->size, s->data, label, r->err);
}

/* The NUL-terminated string at off of string table link, for section sec's entry what. */
static kiln_rc str_get(struct rd *r, uint32_t sec, uint32_t link, uint64_t off, const char *what,
                       const char **out)
{
	const struct sect *s;
	const unsigned char *nul;
	kiln_rc rc;

	if (link >= r->shnum || r->sh[link].type != SHT_STRTAB)
		return kiln_err_set(r->err, KILN_EFORMAT,
		                    "%s: ELF section %" PRIu32 " (%s): its string table %" PRIu32
		                    " is not a string table section",
		                    r->src.name, sec, what, link);
	rc = sect_load(r, link, "string table");
	if (rc)
		return rc;
	s = &r->sects[link];
	if (off >= s->size)
		return kiln_err_set(r->err, KILN_EFORMAT,
		                    "%s: ELF section %" PRIu32 " (%s): string offset %" PRIu64
		                    " is past the end of string table %" PRIu32,
		                    r->src.name, sec, what, off, link);
	nul = memchr(s->data + off, '\0', s->size - (size_t)off);
	if (!nul)
		return kiln_err_set(r->err, KILN_EFORMAT,
		                    "%s: ELF section %" PRIu32 " (%s): string at %" PRIu64
		                    " is not terminated in string table %" PRIu32,
		                    r->src.name, sec, what, off, link);
	*out = arena_copy(r, (const char *)s->data + off, (size_t)(nul - (s->data + off)));
	return *out ? KILN_OK : r->err->code;
}

/* ---------------------------------------------------------------------------------------- */
/* Program headers: PT_INTERP */

static kiln_rc interp_read(struct rd *r, uint64_t off)
{
	char buf[INTERP_MAX];
	size_t len = sizeof(buf);
	const char *nul;
	kiln_rc rc;

	if (off >= r->src.size)
		return kiln_err_set(r->err, KILN_EFORMAT,
		                    "%s: ELF program header PT_INTERP: offset %" PRIu64
		                    " is past the end of the file",
		                    r->src.name, off);
	if (r->src.size - off < len)
		len = (size_t)(r->src.size - off);
	rc = src_read(&r->src, off, len, buf, "PT_INTERP string", r->err);
	if (rc)
		return rc;
	nul = memchr(buf, '\0', len);
	if (!nul)
		return kiln_err_set(r->err, KILN_EFORMAT,
		                    "%s: ELF program header PT_INTERP: the interpreter name is not "
		                    "terminated within %zu bytes",
		                    r->src.name, len);
	r->out->interp = arena_copy(r, buf, (size_t)(nul - buf));
	if (!r->out->interp)
		return r->err->code;
	if (nul > buf)
		r->out->flags |= WORKER_ELF_INTERP;
	return KILN_OK;
}

/* The first PT_INTERP counts, as for elfdeps. */
static kiln_rc phdrs_read(struct rd *r, const struct ehdr *eh)
{
	size_t natural = r->is64 ? sizeof(Elf64_Phdr) : sizeof(Elf32_Phdr);
	unsigned char b[sizeof(Elf64_Phdr)];
	uint32_t num = eh->phnum;
	uint32_t i;
	kiln_rc rc;

	if (!num)
		return KILN_OK;
	if (eh->phentsize != natural)
		return kiln_err_set(r->err, KILN_EFORMAT,
		                    "%s: ELF header: program header size %u, expected %zu",
		                    r->src.name, eh->phentsize, natural);
	if (num == PN_XNUM && r->shnum)
		num = r->sh[0].info;
	if (num > KILN_LIMIT_ELF_SECTIONS)
		return kiln_err_set(r->err, KILN_ELIMIT,
		                    "%s: ELF file has %" PRIu32 " program headers, more than %d",
		                    r->src.name, num, KILN_LIMIT_ELF_SECTIONS);
	for (i = 0; i < num; i++) {
		rc = src_read(&r->src, eh->phoff + (uint64_t)i * natural, natural, b,
		              "program header", r->err);
		if (rc)
			return rc;
		if (get32(r, b) == PT_INTERP)
			return interp_read(r, getaddr(r, b + (r->is64 ? 8 : 4)));
	}
	return KILN_OK;
}

/* ---------------------------------------------------------------------------------------- */
/* .dynamic */

static kiln_rc dyn_entry(struct rd *r, uint32_t sec, int64_t tag, uint64_t val)
{
	struct worker_elf *e = r->out;
	const char *s;
	kiln_rc rc;

	switch (tag) {
	case DT_HASH:
		e->flags |= WORKER_ELF_HASH;
		return KILN_OK;
	case DT_GNU_HASH:
		e->flags |= WORKER_ELF_GNU_HASH;
		return KILN_OK;
	case DT_DEBUG:
		e->flags |= WORKER_ELF_DEBUG;
		return KILN_OK;
	case DT_FLAGS_1:
		if (val & DF_1_PIE)
			e->flags |= WORKER_ELF_PIE;
		return KILN_OK;
	case DT_SONAME:
		rc = str_get(r, sec, r->sh[sec].link, val, "DT_SONAME", &e->soname);
		return rc;
	case DT_NEEDED:
		rc = str_get(r, sec, r->sh[sec].link, val, "DT_NEEDED", &s);
		if (!rc && !arena_grow(r, (void **)&e->needed, e->nneeded, sizeof(*e->needed)))
			rc = r->err->code;
		if (!rc)
			e->needed[e->nneeded++] = s;
		return rc;
	default:
		return KILN_OK;
	}
}

/* Every entry counts, also after a DT_NULL, as elfdeps walks them. */
static kiln_rc dynamic_read(struct rd *r, uint32_t sec)
{
	size_t natural = r->is64 ? sizeof(Elf64_Dyn) : sizeof(Elf32_Dyn);
	const struct sect *s;
	size_t i;
	kiln_rc rc;

	r->out->flags |= WORKER_ELF_DYNAMIC;
	if (r->sh[sec].entsize != natural)
		return kiln_err_set(r->err, KILN_EFORMAT,
		                    "%s: ELF section %" PRIu32 " (.dynamic): entry size %" PRIu64
		                    ", expected %zu",
		                    r->src.name, sec, r->sh[sec].entsize, natural);
	rc = sect_load(r, sec, ".dynamic");
	s = &r->sects[sec];
	for (i = 0; !rc && i + natural <= s->size; i += natural) {
		const unsigned char *p = s->data + i;
		int64_t tag = r->is64 ? (int64_t)get64(r, p) : (int32_t)get32(r, p);

		rc = dyn_entry(r, sec, tag, getaddr(r, p + natural / 2));
	}
	return rc;
}

/* ---------------------------------------------------------------------------------------- */
/* Symbol versions */

/* Check that a fixed-size entry at off lies inside section sec. */
static kiln_rc entry_check(struct rd *r, uint32_t sec, uint64_t off, size_t len, const char *what,
                           size_t idx)
{
	if (++r->entries > KILN_LIMIT_ELF_ENTRIES)
		return kiln_err_set(r->err, KILN_ELIMIT,
		                    "%s: ELF file has more than %d symbol version entries",
		                    r->src.name, KILN_LIMIT_ELF_ENTRIES);
	if (off > r->sects[sec].size || len > r->sects[sec].size - off)
		return kiln_err_set(r->err, KILN_EFORMAT,
		                    "%s: ELF section %" PRIu32 " (%s entry %zu): offset %" PRIu64
		                    " is outside the section (%zu bytes)",
		                    r->src.name, sec, what, idx, off, r->sects[sec].size);
	return KILN_OK;
}

/* A chain link: zero is only allowed on the last entry, so a chain cannot loop. */
static kiln_rc next_check(struct rd *r, uint32_t sec, uint32_t next, bool last, const char *what,
                          size_t idx)
{
	if (next || last)
		return KILN_OK;
	return kiln_err_set(r->err, KILN_EFORMAT,
	                    "%s: ELF section %" PRIu32 " (%s entry %zu): next offset 0 before the "
	                    "last entry",
	                    r->src.name, sec, what, idx);
}

static kiln_rc verdaux_read(struct rd *r, uint32_t sec, uint64_t off, uint16_t cnt, size_t idx,
                            struct worker_elf_verdef *d)
{
	const unsigned char *base = r->sects[sec].data;
	uint16_t j;
	kiln_rc rc = KILN_OK;

	if (cnt) {
		d->names = kiln_arena_array(&r->out->arena, cnt, sizeof(*d->names));
		if (!d->names)
			return kiln_arena_finish(&r->out->arena, r->err);
	}
	for (j = 0; j < cnt && !rc; j++) {
		uint32_t next;

		rc = entry_check(r, sec, off, 8, ".gnu.version_d aux", idx);
		if (rc)
			break;
		next = get32(r, base + off + 4);
		rc = str_get(r, sec, r->sh[sec].link, get32(r, base + off), ".gnu.version_d",
		             &d->names[j]);
		if (!rc)
			rc = next_check(r, sec, next, j + 1 == cnt, ".gnu.version_d aux", idx);
		if (!rc)
			d->nnames = j + 1u;
		off += next;
	}
	return rc;
}

static kiln_rc verdef_read(struct rd *r, uint32_t sec)
{
	struct worker_elf *e = r->out;
	uint64_t off = 0;
	uint32_t i;
	uint32_t count = r->sh[sec].info;
	kiln_rc rc = sect_load(r, sec, ".gnu.version_d");
	uint32_t secno = r->nverdef_sections++;

	for (i = 0; i < count && !rc; i++) {
		const unsigned char *p;
		struct worker_elf_verdef *d;
		uint32_t next;

		rc = entry_check(r, sec, off, 20, ".gnu.version_d", i);
		if (rc || !arena_grow(r, (void **)&e->verdefs, e->nverdefs, sizeof(*e->verdefs)))
			return rc ? rc : r->err->code;
		p = r->sects[sec].data + off;
		d = &e->verdefs[e->nverdefs++];
		memset(d, 0, sizeof(*d));
		d->flags = get16(r, p + 2);
		d->section = secno;
		next = get32(r, p + 16);
		rc = verdaux_read(r, sec, off + get32(r, p + 12), get16(r, p + 6), i, d);
		if (!rc)
			rc = next_check(r, sec, next, i + 1 == count, ".gnu.version_d", i);
		off += next;
	}
	return rc;
}

static kiln_rc vernaux_read(struct rd *r, uint32_t sec, uint64_t off, uint16_t cnt, size_t idx,
                            const char *file)
{
	struct worker_elf *e = r->out;
	const unsigned char *base = r->sects[sec].data;
	uint16_t j;
	kiln_rc rc = KILN_OK;

	for (j = 0; j < cnt && !rc; j++) {
		struct worker_elf_verneed *v;
		uint32_t next;

		rc = entry_check(r, sec, off, 16, ".gnu.version_r aux", idx);
		if (rc || !arena_grow(r, (void **)&e->verneeds, e->nverneeds, sizeof(*e->verneeds)))
			return rc ? rc : r->err->code;
		v = &e->verneeds[e->nverneeds];
		v->file = file;
		next = get32(r, base + off + 12);
		rc = str_get(r, sec, r->sh[sec].link, get32(r, base + off + 8), ".gnu.version_r",
		             &v->name);
		if (!rc)
			rc = next_check(r, sec, next, j + 1 == cnt, ".gnu.version_r aux", idx);
		if (!rc)
			e->nverneeds++;
		off += next;
	}
	return rc;
}

static kiln_rc verneed_read(struct rd *r, uint32_t sec)
{
	uint64_t off = 0;
	uint32_t i;
	uint32_t count = r->sh[sec].info;
	kiln_rc rc = sect_load(r, sec, ".gnu.version_r");

	for (i = 0; i < count && !rc; i++) {
		const unsigned char *p;
		const char *file;
		uint32_t next;

		rc = entry_check(r, sec, off, 16, ".gnu.version_r", i);
		if (rc)
			break;
		p = r->sects[sec].data + off;
		next = get32(r, p + 12);
		rc = str_get(r, sec, r->sh[sec].link, get32(r, p + 4), ".gnu.version_r", &file);
		if (!rc)
			rc = vernaux_read(r, sec, off + get32(r, p + 8), get16(r, p + 2), i, file);
		if (!rc)
			rc = next_check(r, sec, next, i + 1 == count, ".gnu.version_r", i);
		off += next;
	}
	return rc;
}

/* ---------------------------------------------------------------------------------------- */
/* Notes: the GNU build-id */

static size_t note_align(size_t n, size_t align)
{
	return (n + align - 1) & ~(align - 1);
}

/* The first NT_GNU_BUILD_ID note ("GNU", type 3) of note section sec. A note section that
 * does not parse is skipped, as libelf's note iterator stops at it: it is no error. */
static kiln_rc note_read(struct rd *r, uint32_t sec)
{
	size_t align = r->sh[sec].addralign == 8 ? 8 : 4;
	const unsigned char *d;
	size_t off = 0, size;
	kiln_rc rc = sect_load(r, sec, "note");

	if (rc || r->out->build_id)
		return rc;
	d = r->sects[sec].data;
	size = r->sects[sec].size;
	while (d && off <= size && size - off >= 12) {
		uint32_t namesz = get32(r, d + off), descsz = get32(r, d + off + 4);
		uint32_t type = get32(r, d + off + 8);
		size_t name = off + 12, desc = note_align(name + namesz, align);

		if (namesz > size || descsz > size || desc > size || descsz > size - desc)
			break;
		if (type == NT_GNU_BUILD_ID && namesz == 4 && !memcmp(d + name, "GNU", 4)) {
			unsigned char *id = kiln_arena_alloc(&r->out->arena, descsz ? descsz : 1);

			if (!id)
				return kiln_err_set(r->err, KILN_ENOMEM, "out of memory");
			memcpy(id, d + desc, descsz);
			r->out->build_id = id;
			r->out->build_id_len = descsz;
			break;
		}
		off = note_align(desc + descsz, align);
	}
	return KILN_OK;
}

/* An ET_REL file: is it a kernel module (a .modinfo section, rpm's haveModinfo), and its
 * build-id. */
static kiln_rc rel_walk(struct rd *r, const struct ehdr *eh)
{
	const char *name;
	uint32_t i;
	kiln_rc rc = KILN_OK;

	for (i = 1; i < r->shnum && !rc; i++) {
		if (r->sh[i].type == SHT_NOTE)
			rc = note_read(r, i);
		if (!rc && !r->out->modinfo &&
		    !(rc = str_get(r, i, eh->shstrndx, r->sh[i].name, "section name", &name)))
			r->out->modinfo = !strcmp(name, ".modinfo");
	}
	return rc;
}

/* Sections by type, in section order (section 0 is the null section). */
static kiln_rc sections_walk(struct rd *r)
{
	uint32_t i;
	kiln_rc rc = KILN_OK;

	for (i = 1; i < r->shnum && !rc; i++) {
		switch (r->sh[i].type) {
		case SHT_DYNAMIC:
			rc = dynamic_read(r, i);
			break;
		case SHT_GNU_verdef:
			rc = verdef_read(r, i);
			break;
		case SHT_GNU_verneed:
			rc = verneed_read(r, i);
			break;
		case SHT_NOTE:
			rc = note_read(r, i);
			break;
		default:
			break;
		}
	}
	return rc;
}

/* ---------------------------------------------------------------------------------------- */

static void rd_release(struct rd *r)
{
	uint32_t i;

	for (i = 0; r->sects && i < r->shnum; i++)
		free(r->sects[i].data);
	free(r->sects);
	free(r->sh);
}

static kiln_rc elf_parse(struct src *src, struct worker_elf *out, struct kiln_err *err)
{
	struct rd r;
	struct ehdr eh;
	kiln_rc rc;

	memset(out, 0, sizeof(*out));
	kiln_arena_init(&out->arena, KILN_LIMIT_ARENA);
	memset(&r, 0, sizeof(r));
	r.src = *src;
	r.out = out;
	r.err = err;
	r.budget = KILN_LIMIT_ELF_READ;
	rc = ehdr_read(&r, &eh);
	/* rpm reads dependencies of executables and shared objects only. */
	if (!rc && (out->type == ET_EXEC || out->type == ET_DYN)) {
		rc = shdrs_read(&r, &eh);
		if (!rc)
			rc = phdrs_read(&r, &eh);
		if (!rc)
			rc = sections_walk(&r);
	} else if (!rc && out->type == ET_REL) {
		/* Only for build-id links: a damaged object file is still an object file,
		 * read as far as it goes. */
		struct kiln_err rel = KILN_ERR_INIT;

		r.err = &rel;
		if (!shdrs_read(&r, &eh))
			(void)rel_walk(&r, &eh);
		r.err = err;
		if (rel.code == KILN_ENOMEM)
			rc = kiln_err_set(err, KILN_ENOMEM, "out of memory");
	}
	rd_release(&r);
	if (rc)
		worker_elf_release(out);
	return rc;
}

kiln_rc worker_elf_from_mem(const void *data, size_t len, const char *name, struct worker_elf *out,
                            struct kiln_err *err)
{
	struct src src = {data, -1, len, name ? name : "(memory)"};

	if (!data)
		src.size = 0;
	return elf_parse(&src, out, err);
}

kiln_rc worker_elf_read_fd(int fd, const char *name, struct worker_elf *out, struct kiln_err *err)
{
	struct src src = {NULL, fd, 0, name ? name : "(file)"};
	struct stat st;

	memset(out, 0, sizeof(*out));
	if (fstat(fd, &st) < 0)
		return kiln_err_sys(err, KILN_EIO, "%s: cannot stat", src.name);
	if (!S_ISREG(st.st_mode))
		return kiln_err_set(err, KILN_EFORMAT, "%s: not a regular file", src.name);
	src.size = (uint64_t)st.st_size;
	return elf_parse(&src, out, err);
}

/* The section name string table: e_shstrndx, or with SHN_XINDEX the sh_link of entry 0. */
static uint32_t shstrndx_get(const struct rd *r, const struct ehdr *eh)
{
	return eh->shstrndx == SHN_XINDEX && r->shnum ? r->sh[0].link : eh->shstrndx;
}

kiln_rc worker_elf_sections_fd(int fd, const char *name, struct worker_elf_sections *out,
                               struct kiln_err *err)
{
	struct worker_elf scratch;
	struct src src = {NULL, fd, 0, name ? name : "(file)"};
	struct stat st;
	struct ehdr eh;
	struct rd r;
	const char *sname;
	uint32_t i, strndx;
	kiln_rc rc;

	memset(out, 0, sizeof(*out));
	if (fstat(fd, &st) < 0)
		return kiln_err_sys(err, KILN_EIO, "%s: cannot stat", src.name);
	src.size = (uint64_t)st.st_size;
	memset(&scratch, 0, sizeof(scratch));
	kiln_arena_init(&scratch.arena, KILN_LIMIT_ARENA);
	memset(&r, 0, sizeof(r));
	r.src = src;
	r.out = &scratch;
	r.err = err;
	r.budget = KILN_LIMIT_ELF_READ;
	rc = ehdr_read(&r, &eh);
	if (!rc)
		rc = shdrs_read(&r, &eh);
	strndx = shstrndx_get(&r, &eh);
	for (i = 1; !rc && i < r.shnum; i++) {
		rc = str_get(&r, i, strndx, r.sh[i].name, "section name", &sname);
		if (rc)
			break;
		if (!strcmp(sname, ".symtab"))
			out->symtab = true;
		else if (!strcmp(sname, ".note") && (r.sh[i].flags & SHF_ALLOC))
			out->note_alloc = true;
	}
	rd_release(&r);
	worker_elf_release(&scratch);
	return rc;
}

void worker_elf_release(struct worker_elf *e)
{
	if (!e)
		return;
	kiln_arena_release(&e->arena);
	memset(e, 0, sizeof(*e));
}

uint32_t worker_elf_color_head(const void *head, size_t len, uint32_t mode)
{
	const unsigned char *h = head;
	struct kiln_err err = KILN_ERR_INIT;
	struct rd r;
	uint32_t color;

	/* rpmbuild colors executable regular files only (rpmfcClassify). */
	if (!S_ISREG(mode) || !(mode & (S_IXUSR | S_IXGRP | S_IXOTH)))
		return 0;
	memset(&r, 0, sizeof(r));
	r.src.name = "";
	r.err = &err;
	if (ident_check(&r, h, len))
		return 0;
	/* rpm needs the whole ELF header to be there (gelf_getehdr). */
	if (len < (h[EI_CLASS] == ELFCLASS64 ? sizeof(Elf64_Ehdr) : sizeof(Elf32_Ehdr)))
		return 0;
	r.be = h[EI_DATA] == ELFDATA2MSB;
	color = h[EI_CLASS] == ELFCLASS64 ? 2 : 1;
	/* eBPF objects are not native code (rpm's exception to coloring). */
	return get16(&r, h + 18) == EM_BPF ? 0 : color;
}

uint32_t worker_elf_color(const char *path, uint32_t mode)
{
	unsigned char h[sizeof(Elf64_Ehdr)];
	struct kiln_err err = KILN_ERR_INIT;
	size_t got = 0;
	uint32_t color = 0;
	int fd;

	if (!S_ISREG(mode) || !(mode & (S_IXUSR | S_IXGRP | S_IXOTH)))
		return 0;
	fd = open(path, O_RDONLY | O_CLOEXEC | O_NOCTTY | O_NONBLOCK);
	if (fd < 0)
		return 0;
	if (!util_read_full(fd, h, sizeof(h), &got, &err))
		color = worker_elf_color_head(h, got, mode);
	util_close(fd);
	return color;
}
