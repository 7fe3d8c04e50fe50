/*
 * pkgconfig.c - what pkgconf 1.8 prints for one .pc file, and what Debian's
 * pkgconfigdeps.sh makes of it (autodeps_int.h).
 *
 * rpm's pkgconfig generator runs `pkg-config --print-provides` and `--print-requires
 * --print-requires-private` on each .pc file with the dependency resolver off and pipes the
 * lines through `read n r v`. kiln does the same work in process, so the result does not
 * depend on the build host's pkg-config. The reading follows pkgconf 1.8.1 as Debian 12
 * ships it, quirks included (checked against it by tests/integration/test_autodeps.py):
 * an operator glued to its version loses the version's first character ("foo >=1" gives a
 * version of ","), "foo>=1" is one module name, and an unknown operator prints as "(any)".
 */
#include "util/util.h"

#include "worker/autodeps_int.h"

/* pkgconf's buffer sizes: an expanded value, and a variable name. */
#define PC_BUFSIZE 65535
#define PC_ITEM_SIZE 4096

struct pc_var {
	char *key, *value; /* heap */
};

struct pc {
	struct pc_var *vars; /* heap; the file's variables, pcfiledir first */
	size_t nvars, capvars;
	char *name, *desc, *version;                  /* heap; NULL while the field is absent */
	struct kiln_buf provides, requires, privates; /* printed lines per list */
	kiln_rc err;                                  /* sticky ENOMEM */
};

static bool pc_space(int c)
{
	return c == ' ' || c == '\t' || c == '\n' || c == '\v' || c == '\f' || c == '\r';
}

static bool pc_alpha(int c)
{
	return (c >= 'a' && c <= 'z') || (c >= 'A' && c <= 'Z');
}

static bool pc_keychar(int c)
{
	return pc_alpha(c) || (c >= '0' && c <= '9') || c == '_' || c == '.';
}

/* ---------------------------------------------------------------------------------------- */
/* Variables: NAME=VALUE, expanded when defined; ${x} in an expansion is looked up again. */

static const char *var_find(const struct pc *pc, const char *key)
{
	size_t i;

	/* pkgconf's globals win over the file's variables. */
	if (!strcmp(key, "pc_sysrootdir"))
		return "/";
	if (!strcmp(key, "pc_top_builddir"))
		return "$(top_builddir)";
	for (i = 0; i < pc->nvars; i++) {
		if (!strcmp(pc->vars[i].key, key))
			return pc->vars[i].value;
	}
	return NULL;
}

static void expand(const struct pc *pc, const char *value, int depth, struct kiln_buf *out);

/* ${NAME...}: p points after "${"; returns where the reference ends (its '}' or the
 * character after a too long name, which pkgconf skips). */
static const char *expand_ref(const struct pc *pc, const char *p, int depth, struct kiln_buf *out)
{
	char name[PC_ITEM_SIZE];
	size_t n = 0;
	const char *kv;

	for (; *p && *p != '}'; p++) {
		if (n + 1 >= sizeof(name))
			break;
		name[n++] = *p;
	}
	name[n] = '\0';
	kv = var_find(pc, name);
	if (kv && (!strcmp(name, "pc_sysrootdir") || !strcmp(name, "pc_top_builddir")))
		kiln_buf_addstr(out, kv);
	else if (kv && depth < KILN_LIMIT_PC_DEPTH)
		expand(pc, kv, depth + 1, out); /* deeper cycles expand to nothing */
	return p;
}

static void expand(const struct pc *pc, const char *value, int depth, struct kiln_buf *out)
{
	const char *p;

	for (p = value; *p && out->len < PC_BUFSIZE - 1; p++) {
		if (p[0] != '$' || p[1] != '{') {
			kiln_buf_addch(out, *p);
			continue;
		}
		p = expand_ref(pc, p + 2, depth, out);
		if (!*p)
			break;
	}
	if (out->len > PC_BUFSIZE - 1)
		kiln_buf_truncate(out, PC_BUFSIZE - 1);
}

static char *expand_dup(struct pc *pc, const char *value)
{
	struct kiln_buf b = KILN_BUF_INIT(4 * PC_BUFSIZE);
	char *s;

	expand(pc, value, 0, &b);
	s = kiln_buf_take(&b, NULL);
	if (!s)
		pc->err = KILN_ENOMEM;
	return s;
}

/* A value starting with a quote loses that quote character everywhere, except where a
 * backslash escapes it (pkgconf's dequote). */
static char *dequote(const char *v)
{
	char quote = (*v == '\'' || *v == '"') ? *v : 0;
	char *out = kiln_malloc(strlen(v) + 1);
	char *o = out;

	if (!out)
		return NULL;
	for (; *v; v++) {
		if (*v == '\\' && quote && v[1] == quote)
			*o++ = *++v;
		else if (*v != quote)
			*o++ = *v;
	}
	*o = '\0';
	return out;
}

/* Define key, replacing an earlier definition; the old one is gone before the value is
 * expanded, so "v=${v}1" sees no v. */
static void var_set(struct pc *pc, const char *key, const char *raw, bool parse)
{
	char *dq = parse ? dequote(raw) : kiln_strdup(raw);
	char *k = kiln_strdup(key);
	char *v;
	size_t i;

	for (i = 0; i < pc->nvars; i++) {
		if (!strcmp(pc->vars[i].key, key)) {
			free(pc->vars[i].key);
			free(pc->vars[i].value);
			pc->vars[i] = pc->vars[--pc->nvars];
			break;
		}
	}
	v = dq && parse ? expand_dup(pc, dq) : dq;
	if (v != dq)
		free(dq);
	if (pc->nvars == pc->capvars) {
		size_t cap = pc->capvars ? pc->capvars * 2 : 16;
		struct pc_var *nv = kiln_reallocarray(pc->vars, cap, sizeof(*nv));

		if (nv) {
			pc->vars = nv;
			pc->capvars = cap;
		}
	}
	if (!k || !v || pc->nvars == pc->capvars) {
		free(k);
		free(v);
		pc->err = KILN_ENOMEM;
		return;
	}
	pc->vars[pc->nvars].key = k;
	pc->vars[pc->nvars++].value = v;
}

/* ---------------------------------------------------------------------------------------- */
/* Dependency lists: pkgconf 1.8.1's parser state machine. */

enum dep_state { OUTSIDE, IN_NAME, BEFORE_OP, IN_OP, AFTER_OP, IN_VERSION };

static bool dep_sep(int c)
{
	return c == ',' || pc_space(c);
}

static bool dep_opchar(int c)
{
	return c == '<' || c == '>' || c == '!' || c == '=';
}

/* The comparator pkgconf prints for an operator it read; unknown ones are "(any)". */
static const char *dep_op(const char *s, size_t len)
{
	static const char *const ops[] = {"<", "<=", "=", "!=", ">=", ">"};
	size_t i;

	for (i = 0; i < KILN_ARRAY_SIZE(ops); i++) {
		if (strlen(ops[i]) == len && !memcmp(ops[i], s, len))
			return ops[i];
	}
	return "(any)";
}

struct dep_parse {
	enum dep_state state;
	const char *start, *package, *vstart, *opstart;
	size_t psz;
	const char *op;
	struct kiln_buf *out;
};

static void dep_emit(struct dep_parse *d, const char *version, size_t vlen)
{
	kiln_buf_add(d->out, d->package ? d->package : "", d->psz);
	if (vlen) {
		kiln_buf_addf(d->out, " %s ", d->op ? d->op : "(any)");
		kiln_buf_add(d->out, version, vlen);
	}
	kiln_buf_addch(d->out, '\n');
	d->op = NULL;
	d->psz = 0;
}

static void dep_name(struct dep_parse *d, const char *ptr)
{
	const char *s;

	if (pc_space((unsigned char)*ptr)) {
		for (s = ptr; *s && pc_space((unsigned char)*s); s++)
			;
		d->state = *s && !dep_sep((unsigned char)*s) && dep_opchar((unsigned char)*s)
		               ? BEFORE_OP
		               : OUTSIDE;
	} else if (dep_sep((unsigned char)*ptr)) {
		d->state = OUTSIDE;
	}
	if (d->state != IN_NAME && d->start != ptr) {
		for (s = d->start; dep_sep((unsigned char)*s); s++)
			;
		d->package = s;
		d->psz = (size_t)(ptr - s);
		d->start = ptr;
	}
	if (d->state == OUTSIDE)
		dep_emit(d, NULL, 0);
}

static void dep_step(struct dep_parse *d, const char *ptr)
{
	unsigned char c = (unsigned char)*ptr;

	switch (d->state) {
	case OUTSIDE:
		if (!dep_sep(c))
			d->state = IN_NAME;
		break;
	case IN_NAME:
		dep_name(d, ptr);
		break;
	case BEFORE_OP:
		if (dep_opchar(c)) {
			d->opstart = ptr;
			d->state = IN_OP;
		}
		break;
	case IN_OP:
		/* 1.8.1 consumes the character that ends the operator. */
		if (!dep_opchar(c)) {
			d->op = dep_op(d->opstart, (size_t)(ptr - d->opstart));
			d->state = AFTER_OP;
		}
		break;
	case AFTER_OP:
		if (!pc_space(c)) {
			d->vstart = ptr;
			d->state = IN_VERSION;
		}
		break;
	case IN_VERSION:
		if (dep_sep(c) || !ptr[1]) {
			d->state = OUTSIDE;
			dep_emit(d, d->vstart, (size_t)(ptr - d->vstart));
			d->start = ptr;
		}
		break;
	}
}

static void deps_parse(struct pc *pc, const char *raw, struct kiln_buf *out)
{
	struct dep_parse d;
	char *val = expand_dup(pc, raw);
	struct kiln_buf buf = KILN_BUF_INIT(8 * PC_BUFSIZE);
	const char *ptr;

	if (!val || !*val) {
		free(val);
		return;
	}
	kiln_buf_addstr(&buf, val);
	kiln_buf_addch(&buf, ' ');
	free(val);
	if (buf.err) {
		pc->err = buf.err;
		kiln_buf_release(&buf);
		return;
	}
	memset(&d, 0, sizeof(d));
	d.out = out;
	d.start = buf.ptr;
	for (ptr = buf.ptr; *ptr; ptr++)
		dep_step(&d, ptr);
	kiln_buf_release(&buf);
}

/* ---------------------------------------------------------------------------------------- */
/* Fields and lines */

static void field_set(struct pc *pc, char **dest, const char *value, bool version)
{
	char *v = expand_dup(pc, value);

	if (v && version && strcspn(v, " \t"))
		v[strcspn(v, " \t")] = '\0';
	free(*dest);
	*dest = v;
}

static void keyword(struct pc *pc, const char *key, const char *value)
{
	if (!strcasecmp(key, "Name"))
		field_set(pc, &pc->name, value, false);
	else if (!strcasecmp(key, "Description"))
		field_set(pc, &pc->desc, value, false);
	else if (!strcasecmp(key, "Version"))
		field_set(pc, &pc->version, value, true);
	else if (!strcasecmp(key, "Requires"))
		deps_parse(pc, value, &pc->requires);
	else if (!strcasecmp(key, "Requires.private"))
		deps_parse(pc, value, &pc->privates);
	else if (!strcasecmp(key, "Provides"))
		deps_parse(pc, value, &pc->provides);
}

/* One logical line, as a C string (pkgconf stops at a NUL byte too). */
static void line_parse(struct pc *pc, char *line)
{
	char *p = line;
	char *key;
	char *value;
	char *e;
	char op;

	while (*p && pc_space((unsigned char)*p))
		p++;
	key = p;
	while (*p && pc_keychar((unsigned char)*p))
		p++;
	if (!pc_alpha((unsigned char)*key))
		return;
	while (*p && pc_space((unsigned char)*p))
		*p++ = '\0';
	op = *p;
	if (*p)
		*p++ = '\0';
	while (*p && pc_space((unsigned char)*p))
		p++;
	value = p;
	for (e = value + strlen(value); e > value + 1 && pc_space((unsigned char)e[-1]); e--)
		;
	if (*value && e > value)
		*e = '\0';
	if (op == ':')
		keyword(pc, key, value);
	else if (op == '=')
		var_set(pc, key, value, true);
}

/* pkgconf's line reader: a backslash escapes '#' and joins lines (eating the next line's
 * leading blanks after "\\\n"; after "\\\r\n" a newline stays inside the line), '#'
 * starts a comment (running into the end of the text it leaves a 0xff byte, pkgconf's EOF
 * pushed as a character), "\r\n" and "\r" end lines too. Appends the line without its end
 * to line and returns the position after it. */
static size_t line_read(const char *t, size_t len, size_t i, struct kiln_buf *line)
{
	bool quoted = false;

	while (i < len) {
		char c = t[i++];

		if (c == '\\' && !quoted) {
			quoted = true;
			continue;
		}
		if (c == '#' && !quoted) {
			while (i < len && t[i] != '\n')
				i++;
			kiln_buf_addch(line, i < len ? '\n' : (char)0xff);
			i += i < len;
			break;
		}
		if (c == '#') {
			kiln_buf_addch(line, '#');
			quoted = false;
			continue;
		}
		if (c == '\n' && quoted) {
			while (i < len && (t[i] == ' ' || t[i] == '\t'))
				i++;
			quoted = false;
			continue;
		}
		if (c == '\n') {
			kiln_buf_addch(line, '\n');
			break;
		}
		if (c == '\r') {
			kiln_buf_addch(line, '\n');
			i += i < len && t[i] == '\n';
			if (!quoted)
				break;
			quoted = false;
			continue;
		}
		if (quoted)
			kiln_buf_addch(line, '\\');
		quoted = false;
		kiln_buf_addch(line, c);
	}
	if (line->len && line->ptr[line->len - 1] == '\n')
		kiln_buf_truncate(line, line->len - 1);
	return i;
}

static void pc_release(struct pc *pc)
{
	size_t i;

	for (i = 0; i < pc->nvars; i++) {
		free(pc->vars[i].key);
		free(pc->vars[i].value);
	}
	free(pc->vars);
	free(pc->name);
	free(pc->desc);
	free(pc->version);
	kiln_buf_release(&pc->provides);
	kiln_buf_release(&pc->requires);
	kiln_buf_release(&pc->privates);
}

static void pc_read(struct pc *pc, const char *text, size_t len)
{
	struct kiln_buf line = KILN_BUF_INIT(KILN_LIMIT_PC_FILE + 16);
	size_t i = 0;

	while (i < len && !pc->err) {
		kiln_buf_reset(&line);
		i = line_read(text, len, i, &line);
		if (line.err) {
			pc->err = line.err;
			break;
		}
		line_parse(pc, line.ptr);
	}
	kiln_buf_release(&line);
}

kiln_rc worker_pc_print(const char *text, size_t len, const char *id, const char *pcfiledir,
                        enum worker_pc_list list, struct kiln_buf *out, bool *loaded,
                        struct kiln_err *err)
{
	struct pc pc;
	kiln_rc rc = KILN_OK;

	memset(&pc, 0, sizeof(pc));
	kiln_buf_init(&pc.provides, KILN_LIMIT_PC_FILE * 4);
	kiln_buf_init(&pc.requires, KILN_LIMIT_PC_FILE * 4);
	kiln_buf_init(&pc.privates, KILN_LIMIT_PC_FILE * 4);
	*loaded = false;
	var_set(&pc, "pcfiledir", pcfiledir, true);
	pc_read(&pc, text, len);
	if (pc.err || pc.provides.err || pc.requires.err || pc.privates.err) {
		rc = kiln_err_set(err, pc.err ? pc.err : KILN_ELIMIT, "%s.pc: %s", id,
		                  pc.err == KILN_ENOMEM ? "out of memory" : "too much output");
		goto out;
	}
	/* pkgconf refuses a file without these fields. */
	if (!pc.name || !pc.desc || !pc.version)
		goto out;
	*loaded = true;
	if (list == WORKER_PC_PROVIDES) {
		kiln_buf_add(out, pc.provides.ptr, pc.provides.len);
		kiln_buf_addstr(out, id);
		if (*pc.version)
			kiln_buf_addf(out, " = %s", pc.version);
		kiln_buf_addch(out, '\n');
	} else {
		kiln_buf_add(out, pc.requires.ptr, pc.requires.len);
		kiln_buf_add(out, pc.privates.ptr, pc.privates.len);
	}
out:
	pc_release(&pc);
	return rc;
}

/* ---------------------------------------------------------------------------------------- */
/* pkgconfigdeps.sh: `while read n r v` */

struct word {
	struct kiln_buf b;
	bool any; /* something (also an escaped blank) was read into it */
};

static bool ifs_blank(char c)
{
	return c == ' ' || c == '\t' || c == '\n';
}

/* One `read` line into three fields; returns the position after it. Escaped characters
 * are literal; the last field keeps the inner blanks of the rest of the line. */
static size_t read_line(const char *t, size_t len, size_t i, struct word w[3])
{
	int f = 0;
	size_t keep = 0; /* w[2]'s length up to its last literal or non-blank character */

	while (i < len) {
		char c = t[i++];
		bool lit = false;

		if (c == '\\') {
			if (i >= len)
				break;
			c = t[i++];
			if (c == '\n')
				continue;
			lit = true;
		} else if (c == '\n') {
			break;
		}
		if (!lit && ifs_blank(c)) {
			if (f < 2 && w[f].any)
				f++;
			else if (f == 2 && w[2].any)
				kiln_buf_addch(&w[2].b, c);
			continue;
		}
		kiln_buf_addch(&w[f].b, c);
		w[f].any = true;
		if (f == 2)
			keep = w[2].b.len;
	}
	kiln_buf_truncate(&w[2].b, keep);
	return i;
}

void worker_pc_rpm_lines(const char *text, size_t len, struct kiln_buf *out)
{
	size_t i = 0;
	int k;

	while (i < len) {
		struct word w[3] = {{KILN_BUF_INIT(out->max), false},
		                    {KILN_BUF_INIT(out->max), false},
		                    {KILN_BUF_INIT(out->max), false}};

		i = read_line(text, len, i, w);
		if (w[0].b.len) {
			kiln_buf_addf(out, "pkgconfig(%s) ", w[0].b.ptr);
			if (w[1].b.len && w[2].b.len)
				kiln_buf_addf(out, "%s %s", w[1].b.ptr, w[2].b.ptr);
			kiln_buf_addch(out, '\n');
		}
		for (k = 0; k < 3; k++)
			kiln_buf_release(&w[k].b);
	}
}
