/*
 * shlite.c - %(...) bodies written in a tiny, side-effect-free part of POSIX sh, evaluated
 * in-process instead of by a forked /bin/sh.
 *
 * rpm defines macros such as %_smp_build_ncpus lazily, so every use runs its %(...) again:
 * a spec batch starts a hundred shells that only test a variable and echo a number, each
 * costing a fork and an exec for a microsecond of work. What is accepted here: variable
 * assignments (NAME=value, nothing after them), $NAME and ${NAME}, '...', "..." and
 * backslash quoting, `[`/`test` with -z -n = != -eq -ne -gt -ge -lt -le (and ! in front),
 * `echo`, `true`, `false`, `:`, `!`, `&&`, `||`, `;`, newlines and if/then/elif/else/fi.
 * Anything else - command substitution, redirection, pipes, globbing, tildes, braces,
 * comments, other commands or parameters, an operand that could read as an operator, an
 * integer the shell might reject, echo options or backslashes (dash and bash disagree
 * there), variables the shell sets itself (PWD, IFS, ...), unquoted values that would be
 * split or globbed, bytes outside printable ASCII - makes macro_shlite_run() say no, and the
 * caller runs the real shell: the fast path never guesses. Only stdout exists here (every
 * case that would write to stderr falls back), and its text is what dash or bash print.
 */
#include "util/util.h"

#include <fcntl.h>
#include <limits.h>
#include <spawn.h>
#include <sys/stat.h>
#include <sys/wait.h>
#include <unistd.h>

#include "macro/macro_int.h"

#define SL_MAX_SCRIPT 16384 /* longer bodies go to the real shell */
#define SL_MAX_DEPTH 16     /* nested ifs */
#define SL_MAX_VARS 32      /* distinct variables assigned */
#define SL_MAX_NAME 64
#define SL_MAX_VALUE 4096 /* one variable's value */
#define SL_MAX_ARGS 64    /* words of one command */
#define SL_MAX_OUTPUT 65536

struct sl_var {
	char name[SL_MAX_NAME];
	char *val; /* owned */
	size_t len;
};

struct sl {
	const char *p; /* into the cleaned script (NUL-terminated) */
	const char *const *env;
	struct sl_var vars[SL_MAX_VARS];
	size_t nvars;
	struct kiln_buf out;
	struct kiln_buf args;       /* the current command's fields, each NUL-terminated */
	size_t argoff[SL_MAX_ARGS]; /* where each field starts in args */
	size_t argc;
	int depth;
	unsigned flags;   /* MACRO_SHLITE_* */
	bool dry;         /* validation: every branch runs, no program starts */
	bool dynamic;     /* the script expands or assigns a variable */
	size_t nexternal; /* programs the script names */
	bool ran;         /* a program was started: no way back to the shell */
	bool bail;        /* outside the subset: the real shell must run it */
};

/* ---------------------------------------------------------------------------------------- */
/* Characters and names. */

static bool sl_blank(char c)
{
	return c == ' ' || c == '\t';
}

/* Ends an unquoted word: blanks, newline and the shell's operator characters. */
static bool sl_meta(char c)
{
	return c == '\0' || sl_blank(c) || c == '\n' || c == ';' || c == '&' || c == '|' ||
	       c == '<' || c == '>' || c == '(' || c == ')';
}

static bool sl_name_start(char c)
{
	return (c >= 'A' && c <= 'Z') || (c >= 'a' && c <= 'z') || c == '_';
}

static bool sl_name_char(char c)
{
	return sl_name_start(c) || (c >= '0' && c <= '9');
}

static bool sl_prefix(const char *name, size_t len, const char *prefix)
{
	size_t n = strlen(prefix);

	return len >= n && !memcmp(name, prefix, n);
}

/* Variables some shell sets or changes at start-up (dash, bash, busybox): their value in the
 * shell may differ from the environment's, so a script reading or setting one goes to the
 * real shell. */
static bool sl_name_special(const char *name, size_t len)
{
	static const char names[] =
	    " PWD OLDPWD PPID IFS PS1 PS2 PS3 PS4 OPTIND OPTARG OPTERR PATH LINENO HOME SHELL TERM"
	    " MAIL MAILPATH MAILCHECK CDPATH ENV SHLVL UID EUID GROUPS HOSTNAME HOSTTYPE MACHTYPE"
	    " OSTYPE RANDOM SRANDOM SECONDS EPOCHSECONDS EPOCHREALTIME COLUMNS LINES FUNCNAME"
	    " DIRSTACK PIPESTATUS POSIXLY_CORRECT SHELLOPTS FCEDIT TMOUT _ ";
	const char *p;

	if (sl_prefix(name, len, "BASH") || sl_prefix(name, len, "HIST") ||
	    sl_prefix(name, len, "COMP") || sl_prefix(name, len, "READLINE"))
		return true;
	for (p = strstr(names, " "); p && p[1]; p = strchr(p + 1, ' '))
		if (!strncmp(p + 1, name, len) && p[1 + len] == ' ')
			return true;
	return false;
}

/* Bytes a value may hold: printable ASCII, tab and newline (no locale questions). */
static bool sl_text_ok(const char *s, size_t len)
{
	size_t i;

	for (i = 0; i < len; i++) {
		unsigned char c = (unsigned char)s[i];

		if ((c < 0x20 && c != '\t' && c != '\n') || c >= 0x7f)
			return false;
	}
	return true;
}

/* The environment a shell started with env would act on: no imported functions, start-up
 * files or options that change what the accepted commands do. */
static bool sl_env_ok(const char *const *env)
{
	static const char *const bad[] = {
	    "BASH_FUNC_", "BASH_ENV=", "ENV=", "SHELLOPTS=", "BASHOPTS=", "POSIXLY_CORRECT="};
	size_t i;

	for (; env && *env; env++)
		for (i = 0; i < KILN_ARRAY_SIZE(bad); i++)
			if (!strncmp(*env, bad[i], strlen(bad[i])))
				return false;
	return true;
}

/* ---------------------------------------------------------------------------------------- */
/* Variables. */

static struct sl_var *sl_var_find(struct sl *s, const char *name, size_t len)
{
	size_t i;

	for (i = 0; i < s->nvars; i++)
		if (!strncmp(s->vars[i].name, name, len) && s->vars[i].name[len] == '\0')
			return &s->vars[i];
	return NULL;
}

/* The value of NAME as the shell sees it: assigned here, else the environment's (a shell
 * imports every entry, a later one replacing an earlier), else unset (empty). */
static const char *sl_var_get(struct sl *s, const char *name, size_t len, size_t *vlen)
{
	const struct sl_var *v = sl_var_find(s, name, len);
	const char *val = NULL;
	const char *const *e;

	if (v) {
		*vlen = v->len;
		return v->val;
	}
	for (e = s->env; e && *e; e++)
		if (!strncmp(*e, name, len) && (*e)[len] == '=')
			val = *e + len + 1;
	*vlen = val ? strlen(val) : 0;
	return val ? val : "";
}

static void sl_var_set(struct sl *s, const char *name, size_t len, const char *val, size_t vlen)
{
	struct sl_var *v = sl_var_find(s, name, len);
	char *copy;

	if (!v) {
		if (s->nvars == SL_MAX_VARS || len >= SL_MAX_NAME) {
			s->bail = true;
			return;
		}
		v = &s->vars[s->nvars++];
		memcpy(v->name, name, len);
		v->name[len] = '\0';
		v->val = NULL;
	}
	copy = kiln_strndup(val, vlen);
	if (!copy) {
		s->bail = true;
		return;
	}
	free(v->val);
	v->val = copy;
	v->len = vlen;
}

/* ---------------------------------------------------------------------------------------- */
/* Words. */

/* $NAME or ${NAME} at s->p (on the '$'); appends the value to dst when dst is set. quoted:
 * inside "...", where the value is taken as is; outside, a value that field splitting or
 * pathname expansion would change goes to the real shell. */
static void sl_expand_param(struct sl *s, struct kiln_buf *dst, bool quoted)
{
	bool braced = s->p[1] == '{';
	const char *name = s->p + 1 + braced;
	const char *val;
	size_t len = 0, vlen;

	if (!sl_name_start(name[0])) {
		s->bail = true; /* $1 $? $@ $( ${#X} a lone $ ... */
		return;
	}
	while (sl_name_char(name[len]))
		len++;
	if ((braced && name[len] != '}') || sl_name_special(name, len)) {
		s->bail = true;
		return;
	}
	s->p = name + len + braced;
	s->dynamic = true;
	if (!dst)
		return;
	val = sl_var_get(s, name, len, &vlen);
	if (!sl_text_ok(val, vlen) || (!quoted && strpbrk(val, " \t\n*?[\\"))) {
		s->bail = true;
		return;
	}
	kiln_buf_add(dst, val, vlen);
}

/* One word at s->p, up to the next unquoted blank or operator. Its text after expansion
 * and quote removal goes to dst (NULL: only check the syntax, for code that does not run).
 * Returns whether the word makes a field: an unquoted expansion that is empty makes none. */
static bool sl_word(struct sl *s, struct kiln_buf *dst)
{
	const char *start = s->p;
	size_t before = dst ? dst->len : 0;
	bool field = false;

	while (!s->bail && !sl_meta(*s->p)) {
		char c = *s->p;

		switch (c) {
		case '\'': {
			const char *q = strchr(s->p + 1, '\'');

			if (!q) {
				s->bail = true;
				break;
			}
			if (dst)
				kiln_buf_add(dst, s->p + 1, (size_t)(q - s->p - 1));
			s->p = q + 1;
			field = true;
			break;
		}
		case '"':
			s->p++;
			while (!s->bail && *s->p != '"') {
				if (*s->p == '\0' || *s->p == '`') {
					s->bail = true;
				} else if (*s->p == '$') {
					sl_expand_param(s, dst, true);
				} else if (*s->p == '\\' && s->p[1] && strchr("$`\"\\", s->p[1])) {
					if (dst)
						kiln_buf_addch(dst, s->p[1]);
					s->p += 2;
				} else {
					if (dst)
						kiln_buf_addch(dst, *s->p);
					s->p++;
				}
			}
			if (!s->bail)
				s->p++;
			field = true;
			break;
		case '\\':
			if (s->p[1] == '\0') {
				s->bail = true;
				break;
			}
			if (dst)
				kiln_buf_addch(dst, s->p[1]);
			s->p += 2;
			field = true;
			break;
		case '$':
			sl_expand_param(s, dst, false);
			field = field || !dst; /* unknown without the value: assume one */
			break;
		case '[':
			/* The test command's name; any other '[' may start a bracket pattern. */
			if (s->p != start || !sl_meta(s->p[1]))
				s->bail = true;
			else if (dst)
				kiln_buf_addch(dst, c);
			s->p++;
			field = true;
			break;
		case '`':
		case '*':
		case '?':
		case '~':
		case '{':
		case '}':
			s->bail = true;
			break;
		default:
			if (c == '#' && s->p == start) {
				s->bail = true; /* a comment */
				break;
			}
			if (dst)
				kiln_buf_addch(dst, c);
			s->p++;
			field = true;
			break;
		}
	}
	if (dst && dst->err)
		s->bail = true;
	return field || (dst && dst->len > before);
}

/* The unquoted word at s->p (without moving): its length when it is exactly kw. */
static bool sl_at_word(const struct sl *s, const char *kw)
{
	size_t n = strlen(kw);

	return !strncmp(s->p, kw, n) && sl_meta(s->p[n]);
}

static bool sl_at_terminator(const struct sl *s)
{
	return sl_at_word(s, "then") || sl_at_word(s, "elif") || sl_at_word(s, "else") ||
	       sl_at_word(s, "fi");
}

static void sl_skip_blanks(struct sl *s)
{
	while (sl_blank(*s->p))
		s->p++;
}

static void sl_skip_newlines(struct sl *s)
{
	while (sl_blank(*s->p) || *s->p == '\n')
		s->p++;
}

/* ---------------------------------------------------------------------------------------- */
/* Commands. */

static const char *sl_arg(const struct sl *s, size_t i)
{
	return s->args.ptr + s->argoff[i];
}

/* An integer every shell's test reads the same way and none rejects. */
static bool sl_int(const char *a, long long *v)
{
	const char *d = a + (*a == '-');
	size_t n = strspn(d, "0123456789");

	if (n == 0 || n > 18 || d[n] != '\0')
		return false;
	*v = strtoll(a, NULL, 10);
	return true;
}

/* An operand no test implementation could take for an operator. */
static bool sl_operand(const char *a)
{
	static const char *const ops[] = {"!", "(", ")", "=", "!=", "==", "<", ">"};
	size_t i;

	if (a[0] == '-' && sl_name_start(a[1]))
		return false;
	for (i = 0; i < KILN_ARRAY_SIZE(ops); i++)
		if (!strcmp(a, ops[i]))
			return false;
	return true;
}

/* test with n arguments (POSIX's rules by argument count): 0 true, 1 false, -1 bail. */
static int sl_test(const char *const *a, size_t n)
{
	static const char *const intops[] = {"-eq", "-ne", "-gt", "-ge", "-lt", "-le"};
	long long x, y;
	size_t i;
	int r;

	switch (n) {
	case 0:
		return 1;
	case 1:
		return a[0][0] ? 0 : 1;
	case 2:
		if (!strcmp(a[0], "!"))
			return a[1][0] ? 1 : 0;
		if (!sl_operand(a[1]))
			return -1;
		if (!strcmp(a[0], "-n"))
			return a[1][0] ? 0 : 1;
		if (!strcmp(a[0], "-z"))
			return a[1][0] ? 1 : 0;
		return -1;
	case 3:
		if (sl_operand(a[0]) && sl_operand(a[2])) {
			if (!strcmp(a[1], "="))
				return strcmp(a[0], a[2]) ? 1 : 0;
			if (!strcmp(a[1], "!="))
				return strcmp(a[0], a[2]) ? 0 : 1;
			for (i = 0; i < KILN_ARRAY_SIZE(intops); i++) {
				if (strcmp(a[1], intops[i]))
					continue;
				if (!sl_int(a[0], &x) || !sl_int(a[2], &y))
					return -1;
				switch (i) {
				case 0:
					return x == y ? 0 : 1;
				case 1:
					return x != y ? 0 : 1;
				case 2:
					return x > y ? 0 : 1;
				case 3:
					return x >= y ? 0 : 1;
				case 4:
					return x < y ? 0 : 1;
				default:
					return x <= y ? 0 : 1;
				}
			}
		}
		if (strcmp(a[0], "!"))
			return -1;
		r = sl_test(a + 1, 2);
		return r < 0 ? r : !r;
	case 4:
		if (strcmp(a[0], "!"))
			return -1;
		r = sl_test(a + 1, 3);
		return r < 0 ? r : !r;
	default:
		return -1;
	}
}

static int sl_echo(struct sl *s)
{
	size_t i;

	if (s->argc > 1 && sl_arg(s, 1)[0] == '-' &&
	    strspn(sl_arg(s, 1) + 1, "neE") == strlen(sl_arg(s, 1) + 1)) {
		s->bail = true; /* an option to dash (-n) or bash (-n, -e, -E and mixes) */
		return 0;
	}
	for (i = 1; i < s->argc; i++) {
		if (strchr(sl_arg(s, i), '\\')) {
			s->bail = true; /* dash interprets escapes, bash does not */
			return 0;
		}
		if (i > 1)
			kiln_buf_addch(&s->out, ' ');
		kiln_buf_addstr(&s->out, sl_arg(s, i));
	}
	kiln_buf_addch(&s->out, '\n');
	if (s->out.err)
		s->bail = true;
	return 0;
}

/* Run the built-in named by field 0 on the collected fields. */
static int sl_builtin(struct sl *s)
{
	const char *argv[SL_MAX_ARGS];
	const char *name = sl_arg(s, 0);
	size_t i, n = s->argc - 1;
	int r;

	if (!strcmp(name, "echo"))
		return sl_echo(s);
	if (!strcmp(name, "true") || !strcmp(name, ":"))
		return 0;
	if (!strcmp(name, "false"))
		return 1;
	for (i = 0; i < n; i++)
		argv[i] = sl_arg(s, i + 1);
	if (!strcmp(name, "[")) {
		if (n == 0 || strcmp(argv[n - 1], "]")) {
			s->bail = true; /* missing ] */
			return 0;
		}
		n--;
	} else if (strcmp(name, "test")) {
		s->bail = true;
		return 0;
	}
	r = sl_test(argv, n);
	if (r < 0) {
		s->bail = true;
		return 0;
	}
	return r;
}

static bool sl_is_builtin(const char *name)
{
	return !strcmp(name, "echo") || !strcmp(name, "true") || !strcmp(name, ":") ||
	       !strcmp(name, "false") || !strcmp(name, "[") || !strcmp(name, "test");
}

/* NAME=value at the start of a command: NAME's length, or 0. */
static size_t sl_assignment(const struct sl *s)
{
	size_t n = 0;

	if (!sl_name_start(s->p[0]))
		return 0;
	while (sl_name_char(s->p[n]))
		n++;
	return s->p[n] == '=' ? n : 0;
}

/* ---------------------------------------------------------------------------------------- */
/* One program, silenced: `/abs/path ARGS >/dev/null [2>&1 | 2>/dev/null]`. */

/* Where a command's stdout and stderr go after its redirections, applied in order. */
enum sl_sink { SL_TO_PIPE, SL_TO_STDERR, SL_TO_NULL };

struct sl_redir {
	enum sl_sink fd[3]; /* [1] and [2] used */
	bool any;
};

/* A redirection at s->p: [1|2]>/dev/null or [1|2]>&1|2; false when the next word is not a
 * redirection. Any other (input, appending, another file or descriptor) bails. */
static bool sl_redirect(struct sl *s, struct sl_redir *r)
{
	const char *p = s->p;
	int fd = 1;

	if (*p >= '0' && *p <= '9') {
		size_t n = strspn(p, "0123456789");

		if (p[n] != '>' && p[n] != '<')
			return false;
		if (n != 1 || (*p != '1' && *p != '2')) {
			s->bail = true;
			return false;
		}
		fd = *p++ - '0';
	} else if (*p != '>' && *p != '<') {
		return false;
	}
	if (*p++ == '<' || *p == '>' || *p == '|') {
		s->bail = true;
		return false;
	}
	if (*p == '&') {
		if ((p[1] != '1' && p[1] != '2') || !sl_meta(p[2])) {
			s->bail = true;
			return false;
		}
		r->fd[fd] = r->fd[p[1] - '0'];
		p += 2;
	} else {
		while (sl_blank(*p))
			p++;
		if (strncmp(p, "/dev/null", 9) || !sl_meta(p[9])) {
			s->bail = true;
			return false;
		}
		r->fd[fd] = SL_TO_NULL;
		p += 9;
	}
	r->any = true;
	s->p = p;
	return true;
}

static bool sl_name_valid(const char *s, size_t len)
{
	size_t i;

	if (len == 0 || !sl_name_start(s[0]))
		return false;
	for (i = 1; i < len; i++)
		if (!sl_name_char(s[i]))
			return false;
	return true;
}

/* Is /bin/sh dash? Its children's environment is then known exactly (see sl_child_env);
 * bash adds SHLVL and _, so with another shell programs run through it. */
static bool sl_sh_is_dash(void)
{
	char path[PATH_MAX];
	const char *base;

	if (!realpath("/bin/sh", path))
		return false;
	base = strrchr(path, '/');
	return base && !strcmp(base + 1, "dash");
}

/* The environment dash hands a program it starts, when the script assigned nothing: the
 * entries with a valid name (the last of a name wins), and PWD kept when it names the
 * current directory, else set to getcwd() (dash does so at start-up). The order may differ
 * from dash's. OUT: NULL-terminated, pointers into env and pwd; free() the array. */
static char **sl_child_env(const char *const *env, struct kiln_buf *pwd)
{
	const char *const *e;
	const char *old = NULL;
	struct stat a, b;
	size_t n = 0, o = 0, i;
	char cwd[PATH_MAX];
	char **out;

	for (e = env; e && *e; e++)
		n++;
	out = calloc(n + 2, sizeof(*out));
	if (!out)
		return NULL;
	for (i = 0; i < n; i++) {
		const char *eq = strchr(env[i], '=');
		size_t len = eq ? (size_t)(eq - env[i]) : 0;
		size_t j;
		bool later = false;

		if (!eq || !sl_name_valid(env[i], len))
			continue;
		for (j = i + 1; j < n && !later; j++)
			later = !strncmp(env[j], env[i], len + 1);
		if (later)
			continue;
		if (len == 3 && !strncmp(env[i], "PWD", 3)) {
			old = eq + 1;
			continue;
		}
		out[o++] = (char *)env[i];
	}
	if (!old || old[0] != '/' || stat(old, &a) || stat(".", &b) || a.st_dev != b.st_dev ||
	    a.st_ino != b.st_ino) {
		if (!getcwd(cwd, sizeof(cwd))) {
			free(out);
			return NULL;
		}
		old = cwd;
	}
	kiln_buf_addstr(pwd, "PWD=");
	kiln_buf_addstr(pwd, old);
	if (pwd->err) {
		free(out);
		return NULL;
	}
	out[o++] = pwd->ptr;
	out[o] = NULL;
	return out;
}

/* Start the program of the collected fields with its output silenced as r says, and wait:
 * its exit status as the shell reports it (128 + signal when killed). Bails when it could
 * not start (nothing ran then; the shell will say why). */
static int sl_spawn(struct sl *s, const struct sl_redir *r)
{
	struct kiln_buf pwd = KILN_BUF_INIT(PATH_MAX + 8);
	char *argv[SL_MAX_ARGS + 1];
	posix_spawn_file_actions_t fa;
	char **envp;
	size_t i;
	pid_t pid;
	int status = 0, e;

	envp = sl_child_env(s->env, &pwd);
	if (!envp) {
		kiln_buf_release(&pwd);
		s->bail = true;
		return 0;
	}
	for (i = 0; i < s->argc; i++)
		argv[i] = (char *)sl_arg(s, i);
	argv[s->argc] = NULL;
	fflush(NULL);
	e = posix_spawn_file_actions_init(&fa);
	if (!e)
		e = posix_spawn_file_actions_addopen(&fa, STDOUT_FILENO, "/dev/null",
		                                     O_WRONLY | O_CREAT | O_TRUNC, 0666);
	if (!e && r->fd[2] == SL_TO_NULL)
		e = posix_spawn_file_actions_adddup2(&fa, STDOUT_FILENO, STDERR_FILENO);
	if (!e)
		e = posix_spawn(&pid, argv[0], &fa, NULL, argv, envp);
	posix_spawn_file_actions_destroy(&fa);
	free(envp);
	kiln_buf_release(&pwd);
	if (e) {
		s->bail = true;
		return 0;
	}
	s->ran = true;
	while (waitpid(pid, &status, 0) < 0 && errno == EINTR)
		;
	if (WIFSIGNALED(status))
		return 128 + WTERMSIG(status);
	return WEXITSTATUS(status);
}

/* Assignments, or one built-in with its arguments, or (with MACRO_SHLITE_PROGRAMS) one
 * program named by its absolute path whose stdout goes to /dev/null; runs it when exec. */
static int sl_simple(struct sl *s, bool exec)
{
	struct kiln_buf value = KILN_BUF_INIT(SL_MAX_VALUE);
	struct sl_redir r = {{SL_TO_PIPE, SL_TO_PIPE, SL_TO_STDERR}, false};
	bool assigned = false;
	size_t n;

	kiln_buf_reset(&s->args);
	s->argc = 0;
	for (;;) {
		sl_skip_blanks(s);
		if (s->bail)
			break;
		if (sl_redirect(s, &r))
			continue;
		if (s->bail || sl_meta(*s->p))
			break;
		n = s->argc == 0 ? sl_assignment(s) : 0;
		if (n) {
			const char *name = s->p;

			if (sl_name_special(name, n)) {
				s->bail = true;
				break;
			}
			s->p += n + 1;
			kiln_buf_reset(&value);
			sl_word(s, exec ? &value : NULL);
			if (exec && !s->bail)
				sl_var_set(s, name, n, value.ptr, value.len);
			assigned = true;
			s->dynamic = true;
			continue;
		}
		if (assigned || s->argc == SL_MAX_ARGS) {
			s->bail = true; /* assignments before a command act differently per kind */
			break;
		}
		s->argoff[s->argc] = s->args.len;
		if (s->argc == 0) {
			/* The name is literal: expansions there could name anything. */
			const char *start = s->p;

			while (!sl_meta(*s->p) && *s->p != '$')
				s->p++;
			if (*s->p == '$') {
				s->bail = true;
				break;
			}
			s->p = start;
		}
		if (sl_word(s, exec || s->argc == 0 ? &s->args : NULL)) {
			kiln_buf_addch(&s->args, '\0');
			s->argc++;
		}
		if (s->args.err)
			s->bail = true;
	}
	kiln_buf_release(&value);
	if (s->bail)
		return 0;
	if (s->argc == 0 && (!assigned || r.any)) {
		s->bail = true; /* an empty command (a syntax error), or redirections alone */
		return 0;
	}
	if (s->argc == 0)
		return 0;
	if (sl_is_builtin(sl_arg(s, 0)) && !r.any)
		return exec ? sl_builtin(s) : 0;
	/* A program: its path given, its output silenced, its error output not captured. */
	if (!(s->flags & MACRO_SHLITE_PROGRAMS) || sl_arg(s, 0)[0] != '/' ||
	    r.fd[1] != SL_TO_NULL || r.fd[2] == SL_TO_PIPE) {
		s->bail = true;
		return 0;
	}
	if (!exec)
		s->nexternal++;
	return exec && !s->dry ? sl_spawn(s, &r) : 0;
}

static int sl_list(struct sl *s, bool exec, bool top);

/* Does a part whose turn depends on cond run? In the dry pass every part runs. */
static bool sl_runs(const struct sl *s, bool exec, bool cond)
{
	return exec && (s->dry || cond);
}

/* if ... then ... [elif ... then ...]... [else ...] fi, at s->p on "if". */
static int sl_if(struct sl *s, bool exec)
{
	bool taken = false;
	int status = 0, cond;

	if (++s->depth > SL_MAX_DEPTH) {
		s->bail = true;
		return 0;
	}
	s->p += 2;
	for (;;) {
		bool run;

		cond = sl_list(s, sl_runs(s, exec, !taken), false);
		if (s->bail || !sl_at_word(s, "then")) {
			s->bail = true;
			return 0;
		}
		s->p += 4;
		run = sl_runs(s, exec, !taken && cond == 0);
		cond = sl_list(s, run, false);
		if (run) {
			taken = true;
			status = cond;
		}
		if (s->bail)
			return 0;
		if (sl_at_word(s, "elif")) {
			s->p += 4;
			continue;
		}
		break;
	}
	if (sl_at_word(s, "else")) {
		s->p += 4;
		cond = sl_list(s, sl_runs(s, exec, !taken), false);
		if (exec && !taken)
			status = cond;
	}
	if (s->bail || !sl_at_word(s, "fi")) {
		s->bail = true;
		return 0;
	}
	s->p += 2;
	s->depth--;
	return status;
}

/* [!] command */
static int sl_pipeline(struct sl *s, bool exec)
{
	static const char *const reserved[] = {
	    "then", "elif", "else", "fi", "do", "done",     "case",   "esac", "while", "until",
	    "for",  "in",   "!",    "[[", "]]", "function", "select", "time", "coproc"};
	bool negate = false;
	size_t i;
	int status;

	sl_skip_blanks(s);
	if (sl_at_word(s, "!")) {
		negate = true;
		s->p++;
		sl_skip_blanks(s);
	}
	if (sl_at_word(s, "if")) {
		status = sl_if(s, exec);
		/* After fi comes an operator, a newline or the end. */
		sl_skip_blanks(s);
		if (!sl_meta(*s->p) || sl_blank(*s->p))
			s->bail = true;
	} else {
		for (i = 0; i < KILN_ARRAY_SIZE(reserved); i++)
			if (sl_at_word(s, reserved[i]))
				s->bail = true;
		status = s->bail ? 0 : sl_simple(s, exec);
	}
	return negate ? !status : status;
}

/* pipeline { (&& | ||) newlines pipeline } */
static int sl_and_or(struct sl *s, bool exec)
{
	int status = sl_pipeline(s, exec);

	while (!s->bail) {
		bool and_op;
		int r;

		sl_skip_blanks(s);
		if (s->p[0] == '&' && s->p[1] == '&')
			and_op = true;
		else if (s->p[0] == '|' && s->p[1] == '|')
			and_op = false;
		else
			break;
		s->p += 2;
		sl_skip_newlines(s);
		r = sl_pipeline(s, sl_runs(s, exec, and_op ? status == 0 : status != 0));
		if (exec && (and_op ? status == 0 : status != 0))
			status = r;
	}
	return status;
}

/* and_or { (; | newlines) and_or } [;]: the whole script (top) or the part of an if up to
 * its next keyword. Returns the status of the last command run. */
static int sl_list(struct sl *s, bool exec, bool top)
{
	bool any = false;
	int status = 0;

	sl_skip_newlines(s);
	while (!s->bail && *s->p && !sl_at_terminator(s)) {
		int r = sl_and_or(s, exec);

		any = true;
		if (exec)
			status = r;
		if (s->bail)
			break;
		sl_skip_blanks(s);
		if (*s->p == ';') {
			s->p++;
			sl_skip_newlines(s);
			if (*s->p == ';')
				s->bail = true;
		} else if (*s->p == '\n') {
			sl_skip_newlines(s);
		} else if (*s->p) {
			s->bail = true; /* & | < > ( ) or a word after fi */
		}
	}
	if (!s->bail && (top ? sl_at_terminator(s) : (!any || !*s->p)))
		s->bail = true;
	return status;
}

/* ---------------------------------------------------------------------------------------- */
/* Entry point. */

/* The script without backslash-newline pairs (removed by the shell wherever they are not
 * quoted by '...' or a backslash); NULL when it holds a byte outside printable ASCII, tab
 * and newline, or is too long. OUT: free(). */
static char *sl_clean(const char *cmd)
{
	size_t len = strlen(cmd), i, o = 0;
	char quote = 0;
	char *dst;

	if (len > SL_MAX_SCRIPT || !sl_text_ok(cmd, len))
		return NULL;
	dst = malloc(len + 1);
	if (!dst)
		return NULL;
	for (i = 0; i < len; i++) {
		char c = cmd[i];

		if (quote == '\'') {
			if (c == '\'')
				quote = 0;
		} else if (c == '\\' && i + 1 < len) {
			if (cmd[++i] == '\n')
				continue;
			dst[o++] = c;
			c = cmd[i];
		} else if (c == '\'' && !quote) {
			quote = c;
		} else if (c == '"') {
			quote = quote ? 0 : c;
		}
		dst[o++] = c;
	}
	dst[o] = '\0';
	return dst;
}

/* Run the script from its start. */
static void sl_pass(struct sl *s, const char *script, bool exec, bool dry)
{
	s->p = script;
	s->depth = 0;
	s->dry = dry;
	kiln_buf_reset(&s->out);
	sl_list(s, exec, true);
}

bool macro_shlite_run(const char *cmd, const char *const *env, unsigned flags, struct kiln_buf *out)
{
	struct sl s;
	bool ok = false;
	char *script;
	size_t i;

	if (!sl_env_ok(env))
		return false;
	script = sl_clean(cmd);
	if (!script)
		return false;
	memset(&s, 0, sizeof(s));
	s.env = env;
	s.flags = flags;
	kiln_buf_init(&s.out, SL_MAX_OUTPUT);
	kiln_buf_init(&s.args, SL_MAX_VALUE * 4);
	/* The syntax first: nothing runs. */
	sl_pass(&s, script, false, false);
	/* A program runs once, as in the shell: nothing after its start may send the script
	 * to the shell. So one program, no variable, /bin/sh known (dash), room for the
	 * output (at most twice the script: only echo prints, its words at most once), and
	 * every command checked beforehand with the words it will see. */
	if (!s.bail && s.nexternal &&
	    (s.nexternal > 1 || s.dynamic || out->max - out->len < 2 * strlen(script) + 2 ||
	     !sl_sh_is_dash()))
		s.bail = true;
	if (!s.bail && s.nexternal)
		sl_pass(&s, script, true, true);
	if (!s.bail)
		sl_pass(&s, script, true, false);
	if (s.bail && s.ran)
		KILN_BUG("shell subset bailed out after starting a program: %s", cmd);
	if (!s.bail && !s.out.err && out->len + s.out.len <= out->max) {
		kiln_buf_add(out, s.out.ptr, s.out.len);
		ok = !out->err;
	}
	for (i = 0; i < s.nvars; i++)
		free(s.vars[i].val);
	kiln_buf_release(&s.out);
	kiln_buf_release(&s.args);
	free(script);
	return ok;
}
