/*
 * lua.c - the embedded Lua 5.4 interpreter: %{lua:...}, the rpm, macros and posix modules.
 *
 * One lua_State per macro context, created on first use, so contexts never share Lua
 * globals. print() appends to the innermost %{lua:} being expanded (tab-separated, no
 * newline, as rpm does); outside an expansion it writes a line to stdout.
 */
#include "util/util.h"

#include <dirent.h>
#include <fcntl.h>
#include <glob.h>
#include <sys/stat.h>
#include <sys/utsname.h>
#include <sys/wait.h>
#include <unistd.h>

#include <lauxlib.h>
#include <lua.h>
#include <lualib.h>

#include "macro/macro_int.h"

#define LUA_PRINT_DEPTH 64

/* Small blocks for the Lua state. Lua allocates and frees many small blocks (a %{lua:}
 * chunk is compiled on every expansion, and the compiler's pieces are short-lived); glibc's
 * malloc costs several times more per block than taking one from a free list of its size.
 * Blocks up to LUA_POOL_MAX bytes come from one region, in classes LUA_POOL_STEP apart;
 * larger ones, and all once the region is used up, from the allocator Lua was created
 * with. The region is reserved at once but its pages are touched only as used. */
#define LUA_POOL_SIZE (16 * KILN_MIB)
#define LUA_POOL_MAX 512
#define LUA_POOL_STEP 16
#if defined(__SANITIZE_ADDRESS__)
#define LUA_POOL_ENABLED 0
#elif defined(__has_feature)
#if __has_feature(address_sanitizer)
#define LUA_POOL_ENABLED 0
#endif
#endif
#ifndef LUA_POOL_ENABLED
#define LUA_POOL_ENABLED 1
#endif

struct lua_pool {
	char *base, *next, *end; /* owned region; next = first block never handed out */
	void *free[LUA_POOL_MAX / LUA_POOL_STEP + 1]; /* per class, linked through the block */
	lua_Alloc prev;                               /* for blocks outside the region */
	void *prev_ud;
};

struct macro_lua {
	struct lua_pool pool;
	lua_State *L;
	struct macro_ctx *ctx;
	struct mbuf *mb; /* the expansion running Lua now, or NULL */
	struct kiln_buf *prints[LUA_PRINT_DEPTH];
	int nprints;
};

static struct macro_lua *upv(lua_State *L)
{
	return lua_touserdata(L, lua_upvalueindex(1));
}

static struct kiln_err *cur_err(struct macro_lua *ml, struct kiln_err *local)
{
	return ml->mb ? ml->mb->err : local;
}

/* ---------------------------------------------------------------------------------------- */
/* print and the rpm module. */

/* luaL_tolstring of print's argument i. A number without a __tostring metamethod (the
 * usual %{lua: print(n)}) is converted by lua_tolstring: the same text (both format
 * through Lua's tostringbuff), without lua_pushfstring's format parsing, which cost a
 * third of a short chunk's run. Pushes one value, as luaL_tolstring does. */
static const char *print_arg(lua_State *L, int i, size_t *len)
{
	if (lua_type(L, i) == LUA_TNUMBER && luaL_getmetafield(L, i, "__tostring") == LUA_TNIL) {
		lua_pushvalue(L, i);
		return lua_tolstring(L, -1, len);
	}
	return luaL_tolstring(L, i, len);
}

static int l_print(lua_State *L)
{
	struct macro_lua *ml = upv(L);
	struct kiln_buf *b = ml->nprints ? ml->prints[ml->nprints - 1] : NULL;
	int n = lua_gettop(L);
	luaL_Buffer line;
	int i;

	/* The caller owns b and releases it even when a __tostring raises an error here;
	 * without a buffer the line is built in Lua's memory for the same reason. */
	if (!b)
		luaL_buffinit(L, &line);
	for (i = 1; i <= n; i++) {
		size_t len;
		const char *s;

		/* an integer goes straight into the buffer: the text Lua's "%lld" gives, without
		 * interning a string for it (a tenth of a short chunk's run) */
		if (b && lua_isinteger(L, i) && luaL_getmetafield(L, i, "__tostring") == LUA_TNIL) {
			char num[32];

			if (i > 1)
				kiln_buf_addch(b, '\t');
			kiln_buf_add(b, num, util_fmt_int(num, (long long)lua_tointeger(L, i)));
			continue;
		}
		s = print_arg(L, i, &len);
		if (b) {
			if (i > 1)
				kiln_buf_addch(b, '\t');
			kiln_buf_add(b, s, len);
			lua_pop(L, 1);
		} else {
			if (i > 1)
				luaL_addchar(&line, '\t');
			luaL_addvalue(&line);
		}
	}
	if (!b) {
		luaL_pushresult(&line);
		fwrite(lua_tostring(L, -1), 1, lua_rawlen(L, -1), stdout);
		fputc('\n', stdout);
	}
	return 0;
}

static int l_expand(lua_State *L)
{
	struct macro_lua *ml = upv(L);
	struct kiln_buf out = KILN_BUF_INIT(ml->ctx->max_expansion);
	struct kiln_err local = KILN_ERR_INIT;
	size_t len;
	const char *s = luaL_checklstring(L, 1, &len);

	if (macro_expand(ml->ctx, s, len, &out, cur_err(ml, &local))) {
		kiln_buf_release(&out);
		return luaL_error(L, "error expanding macro");
	}
	lua_pushlstring(L, out.ptr, out.len);
	kiln_buf_release(&out);
	return 1;
}

static int l_define(lua_State *L)
{
	struct macro_lua *ml = upv(L);
	struct kiln_err local = KILN_ERR_INIT;
	const char *s = luaL_checkstring(L, 1);

	if (macro_define_line(ml->ctx, s, MACRO_LEVEL_GLOBAL, cur_err(ml, &local)))
		return luaL_error(L, "error defining macro");
	return 0;
}

static int l_undefine(lua_State *L)
{
	struct macro_lua *ml = upv(L);
	struct kiln_err local = KILN_ERR_INIT;
	const char *s = luaL_checkstring(L, 1);

	if (macro_undefine(ml->ctx, s, &local))
		return luaL_error(L, "%s", local.msg);
	return 0;
}

static int l_isdefined(lua_State *L)
{
	struct macro_lua *ml = upv(L);
	const char *s = luaL_checkstring(L, 1);
	struct macro_slot *slot = macro_table_find(&ml->ctx->table, s, strlen(s));
	bool defined = slot && (slot->top || slot->builtin);

	lua_pushboolean(L, defined);
	lua_pushboolean(L, defined && ((slot->top && slot->top->opts) ||
	                               (slot->builtin && slot->builtin->args != MACRO_BI_NONE)));
	return 2;
}

static int l_load(lua_State *L)
{
	struct macro_lua *ml = upv(L);
	struct kiln_err err = KILN_ERR_INIT;
	const char *s = luaL_checkstring(L, 1);

	if (macro_load_file(ml->ctx, s, MACRO_LEVEL_FILE, &err))
		return luaL_error(L, "failed to load macro file %s", s);
	return 0;
}

static int evr_compare(const char *a, const char *b)
{
	struct macro_evr ea;
	struct macro_evr eb;
	int rc;

	if (macro_evr_parse(a, &ea, NULL))
		return 0;
	if (macro_evr_parse(b, &eb, NULL)) {
		macro_evr_release(&ea);
		return 0;
	}
	rc = macro_vercmp(ea.epoch ? ea.epoch : "0", eb.epoch ? eb.epoch : "0");
	if (!rc)
		rc = macro_vercmp(ea.version, eb.version);
	/* rpmverCmp: a missing release compares as "". */
	if (!rc)
		rc = macro_vercmp(ea.release ? ea.release : "", eb.release ? eb.release : "");
	macro_evr_release(&ea);
	macro_evr_release(&eb);
	return rc;
}

static int l_vercmp(lua_State *L)
{
	lua_pushinteger(L, evr_compare(luaL_checkstring(L, 1), luaL_checkstring(L, 2)));
	return 1;
}

/* rpm.ver objects: a table {e, v, r} with comparison and tostring metamethods. */
/* Raw access only: no metamethod may run (and raise) while a buffer is held. */
static const char *ver_field(lua_State *L, int idx, const char *name)
{
	const char *s;

	lua_pushstring(L, name);
	lua_rawget(L, idx);
	s = lua_type(L, -1) == LUA_TSTRING ? lua_tostring(L, -1) : NULL;
	lua_pop(L, 1);
	return s;
}

static void ver_evr(lua_State *L, int idx, struct kiln_buf *b)
{
	const char *e = ver_field(L, idx, "e");
	const char *v = ver_field(L, idx, "v");
	const char *r = ver_field(L, idx, "r");

	if (e)
		kiln_buf_addf(b, "%s:", e);
	kiln_buf_addstr(b, v ? v : "");
	if (r)
		kiln_buf_addf(b, "-%s", r);
}

static int ver_cmp_idx(lua_State *L)
{
	struct kiln_buf a = KILN_BUF_INIT(KILN_LIMIT_LINE);
	struct kiln_buf b = KILN_BUF_INIT(KILN_LIMIT_LINE);
	int rc;

	luaL_checktype(L, 1, LUA_TTABLE);
	luaL_checktype(L, 2, LUA_TTABLE);
	ver_evr(L, 1, &a);
	ver_evr(L, 2, &b);
	rc = evr_compare(a.ptr, b.ptr);
	kiln_buf_release(&a);
	kiln_buf_release(&b);
	return rc;
}

static int ver_tostring(lua_State *L)
{
	struct kiln_buf b = KILN_BUF_INIT(KILN_LIMIT_LINE);

	luaL_checktype(L, 1, LUA_TTABLE);
	ver_evr(L, 1, &b);
	lua_pushlstring(L, b.ptr, b.len);
	kiln_buf_release(&b);
	return 1;
}

static int ver_eq(lua_State *L)
{
	lua_pushboolean(L, ver_cmp_idx(L) == 0);
	return 1;
}

static int ver_lt(lua_State *L)
{
	lua_pushboolean(L, ver_cmp_idx(L) < 0);
	return 1;
}

static int ver_le(lua_State *L)
{
	lua_pushboolean(L, ver_cmp_idx(L) <= 0);
	return 1;
}

static int l_ver(lua_State *L)
{
	struct macro_evr evr;
	int nargs = lua_gettop(L);

	lua_newtable(L);
	if (nargs >= 3) { /* rpm.ver(e, v, r) */
		if (!lua_isnil(L, 1)) {
			lua_pushvalue(L, 1);
			lua_setfield(L, -2, "e");
		}
		lua_pushvalue(L, 2);
		lua_setfield(L, -2, "v");
		if (!lua_isnil(L, 3)) {
			lua_pushvalue(L, 3);
			lua_setfield(L, -2, "r");
		}
	} else {
		if (macro_evr_parse(luaL_checkstring(L, 1), &evr, NULL))
			return luaL_error(L, "out of memory");
		if (evr.epoch) {
			lua_pushstring(L, evr.epoch);
			lua_setfield(L, -2, "e");
		}
		lua_pushstring(L, evr.version);
		lua_setfield(L, -2, "v");
		if (evr.release) {
			lua_pushstring(L, evr.release);
			lua_setfield(L, -2, "r");
		}
		macro_evr_release(&evr);
	}
	luaL_getmetatable(L, "rpm.ver");
	lua_setmetatable(L, -2);
	return 1;
}

static int push_status(lua_State *L, int status)
{
	if (status == 0) {
		lua_pushnumber(L, 0);
		return 1;
	}
	lua_pushnil(L);
	lua_pushstring(L, strerror(status));
	lua_pushnumber(L, status);
	return 3;
}

static int l_execute(lua_State *L)
{
	int n = lua_gettop(L);
	const char **argv;
	pid_t pid;
	int status = 0;
	int i;

	argv = lua_newuserdatauv(L, sizeof(*argv) * (size_t)(n + 1), 0);
	for (i = 0; i < n; i++)
		argv[i] = luaL_checkstring(L, i + 1);
	argv[n] = NULL;
	if (n < 1)
		return luaL_error(L, "not enough arguments");
	fflush(NULL);
	pid = fork();
	if (pid < 0)
		return push_status(L, errno);
	if (pid == 0) {
		execvp(argv[0], (char *const *)argv);
		_exit(127);
	}
	while (waitpid(pid, &status, 0) < 0 && errno == EINTR)
		;
	return push_status(L, status);
}

static int l_interactive(lua_State *L)
{
	if (!isatty(STDIN_FILENO))
		return luaL_error(L, "not a tty");
	return luaL_error(L, "interactive mode is not supported by kiln");
}

static int l_b64encode(lua_State *L)
{
	struct kiln_buf raw = KILN_BUF_INIT(KILN_LIMIT_MACRO_EXPANSION);
	struct kiln_buf out = KILN_BUF_INIT(KILN_LIMIT_MACRO_EXPANSION);
	size_t len;
	const char *s = luaL_checklstring(L, 1, &len);
	lua_Integer linelen = luaL_optinteger(L, 2, 64);
	size_t i;

	util_base64_encode(s, len, &raw);
	if (linelen <= 0) {
		kiln_buf_add(&out, raw.ptr, raw.len);
	} else {
		for (i = 0; i < raw.len; i += (size_t)linelen) {
			size_t n = raw.len - i < (size_t)linelen ? raw.len - i : (size_t)linelen;

			kiln_buf_add(&out, raw.ptr + i, n);
			kiln_buf_addch(&out, '\n');
		}
	}
	lua_pushlstring(L, out.ptr, out.len);
	kiln_buf_release(&raw);
	kiln_buf_release(&out);
	return 1;
}

static int l_b64decode(lua_State *L)
{
	struct kiln_buf out = KILN_BUF_INIT(KILN_LIMIT_MACRO_EXPANSION);
	size_t len;
	const char *s = luaL_checklstring(L, 1, &len);

	if (util_base64_decode(s, len, &out, NULL))
		lua_pushnil(L);
	else
		lua_pushlstring(L, out.ptr, out.len);
	kiln_buf_release(&out);
	return 1;
}

static int l_splitargs(lua_State *L)
{
	struct kiln_err err = KILN_ERR_INIT;
	size_t len;
	const char *s = luaL_checklstring(L, 1, &len);
	char **argv = NULL;
	int argc = 0;
	int i;

	if (macro_split_args(s, len, &argv, &argc, &err)) {
		macro_argv_free(argv, argc);
		return luaL_error(L, "%s", err.msg);
	}
	lua_createtable(L, argc, 0);
	for (i = 0; i < argc; i++) {
		lua_pushstring(L, argv[i]);
		lua_rawseti(L, -2, i + 1);
	}
	macro_argv_free(argv, argc);
	return 1;
}

static int l_unsplitargs(lua_State *L)
{
	luaL_Buffer b;
	lua_Integer i;
	lua_Integer n;

	luaL_checktype(L, 1, LUA_TTABLE);
	n = (lua_Integer)lua_rawlen(L, 1);
	luaL_buffinit(L, &b);
	for (i = 1; i <= n; i++) {
		if (i > 1)
			luaL_addchar(&b, ' ');
		luaL_addchar(&b, '\037');
		lua_rawgeti(L, 1, i);
		luaL_addvalue(&b);
		luaL_addchar(&b, '\037');
	}
	luaL_pushresult(&b);
	return 1;
}

static int l_glob(lua_State *L)
{
	const char *pat = luaL_checkstring(L, 1);
	const char *flags = luaL_optstring(L, 2, "");
	glob_t g = {0};
	size_t i;
	int rc;

	rc = glob(pat, GLOB_TILDE | (strchr(flags, 'c') ? GLOB_NOCHECK : 0), NULL, &g);
	if (rc && rc != GLOB_NOMATCH) {
		globfree(&g);
		return luaL_error(L, "glob %s failed", pat);
	}
	lua_createtable(L, (int)g.gl_pathc, 0);
	for (i = 0; i < g.gl_pathc; i++) {
		lua_pushstring(L, g.gl_pathv[i]);
		lua_rawseti(L, -2, (lua_Integer)i + 1);
	}
	globfree(&g);
	return 1;
}

static const luaL_Reg rpm_funcs[] = {
    {"expand", l_expand},
    {"define", l_define},
    {"undefine", l_undefine},
    {"isdefined", l_isdefined},
    {"load", l_load},
    {"vercmp", l_vercmp},
    {"ver", l_ver},
    {"execute", l_execute},
    {"interactive", l_interactive},
    {"b64encode", l_b64encode},
    {"b64decode", l_b64decode},
    {"splitargs", l_splitargs},
    {"unsplitargs", l_unsplitargs},
    {"glob", l_glob},
    {NULL, NULL},
};

/* What restricted contexts get: no process execution, no file access. */
static const luaL_Reg rpm_pure_funcs[] = {
    {"expand", l_expand},
    {"define", l_define},
    {"undefine", l_undefine},
    {"isdefined", l_isdefined},
    {"vercmp", l_vercmp},
    {"ver", l_ver},
    {"b64encode", l_b64encode},
    {"b64decode", l_b64decode},
    {"splitargs", l_splitargs},
    {"unsplitargs", l_unsplitargs},
    {NULL, NULL},
};

/* ---------------------------------------------------------------------------------------- */
/* The macros table. */

/* Call a macro with arguments from a Lua string (split like a macro call) or table. */
static int macro_closure(lua_State *L)
{
	struct macro_lua *ml = upv(L);
	const char *name = lua_tostring(L, lua_upvalueindex(2));
	struct macro_slot *slot = macro_table_find(&ml->ctx->table, name, strlen(name));
	struct kiln_buf out = KILN_BUF_INIT(ml->ctx->max_expansion);
	struct kiln_err local = KILN_ERR_INIT;
	/* A failure here does not fail the caller (see below), so it is not reported
	 * into the caller's error either. */
	struct mbuf mb = {.ctx = ml->ctx,
	                  .out = &out,
	                  .err = &local,
	                  .trace = ml->ctx->trace,
	                  .depth0 = ml->ctx->trace_base};
	char **argv = NULL;
	int argc = 0;
	int i;

	if (macro_argv_add(&argv, &argc, name, strlen(name), mb.err))
		goto oom;
	if (lua_istable(L, 1)) {
		int n = (int)lua_rawlen(L, 1);

		for (i = 1; i <= n; i++) {
			size_t len;
			const char *a;

			lua_rawgeti(L, 1, i);
			a = lua_tolstring(L, -1, &len);
			if (macro_argv_add(&argv, &argc, a, len, mb.err)) {
				lua_pop(L, 1);
				goto oom;
			}
			lua_pop(L, 1);
		}
	} else if (!lua_isnoneornil(L, 1)) {
		size_t len;
		const char *s = lua_tolstring(L, 1, &len);

		if (macro_split_args(s, len, &argv, &argc, mb.err))
			goto oom;
	}
	if (slot) {
		ml->ctx->active++;
		macro_call_traced(&mb, slot, argc, argv);
		ml->ctx->active--;
	}
	macro_argv_free(argv, argc);
	/* rpm's macros.NAME() returns nothing when the call fails, and the failure stays
	 * inside the call: the message is out, the enclosing expansion goes on. */
	if (mb.error) {
		if (local.code) {
			char msg[KILN_ERR_MSG_MAX + KILN_ERR_INPUT_MAX + 32];

			macro_diag(ml->ctx, KILN_LOG_ERROR, "%s",
			           kiln_err_format(&local, msg, sizeof(msg)));
		}
		kiln_buf_release(&out);
		return 0;
	}
	lua_pushlstring(L, out.ptr, out.len);
	kiln_buf_release(&out);
	return 1;
oom:
	macro_argv_free(argv, argc);
	return luaL_error(L, "out of memory");
}

static int macros_index(lua_State *L)
{
	struct macro_lua *ml = upv(L);
	const char *name = luaL_checkstring(L, 2);
	struct macro_slot *slot = macro_table_find(&ml->ctx->table, name, strlen(name));
	struct kiln_buf expr = KILN_BUF_INIT(KILN_LIMIT_LINE);
	bool callable;

	if (!slot || (!slot->top && !slot->builtin)) {
		lua_pushnil(L);
		return 1;
	}
	callable = slot->top ? slot->top->opts != NULL
	                     : (slot->builtin->args == MACRO_BI_ONE ||
	                        slot->builtin->args == MACRO_BI_MANY);
	if (callable) {
		lua_pushlightuserdata(L, ml);
		lua_pushstring(L, name);
		lua_pushcclosure(L, macro_closure, 2);
		return 1;
	}
	kiln_buf_addf(&expr, "%%{%s}", name);
	{
		struct kiln_buf out = KILN_BUF_INIT(ml->ctx->max_expansion);
		struct kiln_err local = KILN_ERR_INIT;
		kiln_rc rc = macro_expand(ml->ctx, expr.ptr, expr.len, &out, cur_err(ml, &local));

		kiln_buf_release(&expr);
		if (rc) {
			kiln_buf_release(&out);
			return luaL_error(L, "error expanding macro");
		}
		lua_pushlstring(L, out.ptr, out.len);
		kiln_buf_release(&out);
	}
	return 1;
}

static int macros_newindex(lua_State *L)
{
	struct macro_lua *ml = upv(L);
	struct kiln_err err = KILN_ERR_INIT;
	const char *name = luaL_checkstring(L, 2);

	if (lua_isnil(L, 3)) {
		if (macro_undefine(ml->ctx, name, &err))
			return luaL_error(L, "%s", err.msg);
		return 0;
	}
	if (macro_define(ml->ctx, name, NULL, luaL_tolstring(L, 3, NULL), MACRO_LEVEL_GLOBAL, &err))
		return luaL_error(L, "%s", err.msg);
	return 0;
}

/* ---------------------------------------------------------------------------------------- */
/* A posix subset, with luaposix's conventions: 0 on success, (nil, message, errno) on
 * failure; numbers are Lua floats as rpm's bundled module pushes them. */

static int px_result(lua_State *L, int rc, const char *info)
{
	int e = errno;

	if (rc != -1) {
		lua_pushnumber(L, rc);
		return 1;
	}
	lua_pushnil(L);
	if (info)
		lua_pushfstring(L, "%s: %s", info, strerror(e));
	else
		lua_pushstring(L, strerror(e));
	lua_pushnumber(L, e);
	return 3;
}

static void mode_string(mode_t m, char *s)
{
	static const char rwx[] = "rwxrwxrwx";
	int i;

	for (i = 0; i < 9; i++)
		s[i] = (m & (1u << (8 - i))) ? rwx[i] : '-';
	if (m & S_ISUID)
		s[2] = (m & S_IXUSR) ? 's' : 'S';
	if (m & S_ISGID)
		s[5] = (m & S_IXGRP) ? 's' : 'S';
	if (m & S_ISVTX)
		s[8] = (m & S_IXOTH) ? 't' : 'T';
	s[9] = '\0';
}

static int px_access(lua_State *L)
{
	const char *path = luaL_checkstring(L, 1);
	const char *how = luaL_optstring(L, 2, "f");
	int mode = 0;

	for (; *how; how++) {
		if (*how == 'r')
			mode |= R_OK;
		else if (*how == 'w')
			mode |= W_OK;
		else if (*how == 'x')
			mode |= X_OK;
		else if (*how != 'f')
			return luaL_argerror(L, 2, "unknown mode");
	}
	{
		struct kiln_buf scratch = KILN_BUF_INIT(KILN_LIMIT_PATH);
		int r = access(macro_path_host(upv(L)->ctx, path, &scratch), mode);

		kiln_buf_release(&scratch);
		return px_result(L, r, path);
	}
}

static int px_chdir(lua_State *L)
{
	const char *path = luaL_checkstring(L, 1);

	return px_result(L, chdir(path), path);
}

static int px_chmod(lua_State *L)
{
	const char *path = luaL_checkstring(L, 1);
	mode_t mode = (mode_t)luaL_checkinteger(L, 2);

	return px_result(L, chmod(path, mode), path);
}

static int px_getcwd(lua_State *L)
{
	char buf[KILN_LIMIT_PATH];

	if (!getcwd(buf, sizeof(buf)))
		return px_result(L, -1, ".");
	lua_pushstring(L, buf);
	return 1;
}

static int px_getenv(lua_State *L)
{
	const char *v = getenv(luaL_checkstring(L, 1));

	if (v)
		lua_pushstring(L, v);
	else
		lua_pushnil(L);
	return 1;
}

static int px_setenv(lua_State *L)
{
	const char *name = luaL_checkstring(L, 1);
	const char *value = luaL_optstring(L, 2, NULL);
	int overwrite = lua_isnoneornil(L, 3) ? 1 : lua_toboolean(L, 3);

	if (!value)
		return px_result(L, unsetenv(name), name);
	return px_result(L, setenv(name, value, overwrite), name);
}

static int px_unsetenv(lua_State *L)
{
	const char *name = luaL_checkstring(L, 1);

	return px_result(L, unsetenv(name), name);
}

static int px_putenv(lua_State *L)
{
	const char *s = luaL_checkstring(L, 1);
	const char *eq = strchr(s, '=');
	char name[256];

	if (!eq || (size_t)(eq - s) >= sizeof(name))
		return luaL_argerror(L, 1, "expected NAME=VALUE");
	memcpy(name, s, (size_t)(eq - s));
	name[eq - s] = '\0';
	return px_result(L, setenv(name, eq + 1, 1), s);
}

static int px_mkdir(lua_State *L)
{
	const char *path = luaL_checkstring(L, 1);

	return px_result(L, mkdir(path, 0777), path);
}

static int px_rmdir(lua_State *L)
{
	const char *path = luaL_checkstring(L, 1);

	return px_result(L, rmdir(path), path);
}

static int px_link(lua_State *L)
{
	const char *a = luaL_checkstring(L, 1);
	const char *b = luaL_checkstring(L, 2);

	return px_result(L, link(a, b), NULL);
}

static int px_symlink(lua_State *L)
{
	const char *a = luaL_checkstring(L, 1);
	const char *b = luaL_checkstring(L, 2);

	return px_result(L, symlink(a, b), NULL);
}

static int px_readlink(lua_State *L)
{
	const char *path = luaL_checkstring(L, 1);
	char buf[KILN_LIMIT_PATH];
	ssize_t n = readlink(path, buf, sizeof(buf));

	if (n < 0)
		return px_result(L, -1, path);
	lua_pushlstring(L, buf, (size_t)n);
	return 1;
}

static const char *file_type(mode_t m)
{
	if (S_ISREG(m))
		return "regular";
	if (S_ISLNK(m))
		return "link";
	if (S_ISDIR(m))
		return "directory";
	if (S_ISCHR(m))
		return "character device";
	if (S_ISBLK(m))
		return "block device";
	if (S_ISFIFO(m))
		return "fifo";
	if (S_ISSOCK(m))
		return "socket";
	return "?";
}

static void stat_push_field(lua_State *L, const struct stat *st, const char *f)
{
	char mode[10];

	if (!strcmp(f, "mode")) {
		mode_string(st->st_mode, mode);
		lua_pushstring(L, mode);
	} else if (!strcmp(f, "type")) {
		lua_pushstring(L, file_type(st->st_mode));
	} else if (!strcmp(f, "ino")) {
		lua_pushnumber(L, (lua_Number)st->st_ino);
	} else if (!strcmp(f, "dev")) {
		lua_pushnumber(L, (lua_Number)st->st_dev);
	} else if (!strcmp(f, "nlink")) {
		lua_pushnumber(L, (lua_Number)st->st_nlink);
	} else if (!strcmp(f, "uid")) {
		lua_pushnumber(L, st->st_uid);
	} else if (!strcmp(f, "gid")) {
		lua_pushnumber(L, st->st_gid);
	} else if (!strcmp(f, "size")) {
		lua_pushnumber(L, (lua_Number)st->st_size);
	} else if (!strcmp(f, "atime")) {
		lua_pushnumber(L, (lua_Number)st->st_atime);
	} else if (!strcmp(f, "mtime")) {
		lua_pushnumber(L, (lua_Number)st->st_mtime);
	} else if (!strcmp(f, "ctime")) {
		lua_pushnumber(L, (lua_Number)st->st_ctime);
	} else {
		lua_pushnil(L);
	}
}

static int px_stat(lua_State *L)
{
	static const char *const fields[] = {"mode", "ino",   "dev",   "nlink", "uid", "gid",
	                                     "size", "atime", "mtime", "ctime", "type"};
	const char *path = luaL_checkstring(L, 1);
	struct stat st;
	size_t i;

	struct kiln_buf scratch = KILN_BUF_INIT(KILN_LIMIT_PATH);
	int r = stat(macro_path_host(upv(L)->ctx, path, &scratch), &st);

	kiln_buf_release(&scratch);
	if (r < 0)
		return px_result(L, -1, path);
	if (!lua_isnoneornil(L, 2)) {
		stat_push_field(L, &st, luaL_checkstring(L, 2));
		return 1;
	}
	lua_newtable(L);
	for (i = 0; i < KILN_ARRAY_SIZE(fields); i++) {
		stat_push_field(L, &st, fields[i]);
		lua_setfield(L, -2, fields[i]);
	}
	return 1;
}

static int px_dir(lua_State *L)
{
	const char *path = luaL_optstring(L, 1, ".");
	struct dirent *de;
	DIR *d = opendir(path);
	lua_Integer i = 0;

	if (!d)
		return px_result(L, -1, path);
	lua_newtable(L);
	while ((de = readdir(d))) {
		lua_pushstring(L, de->d_name);
		lua_rawseti(L, -2, ++i);
	}
	closedir(d);
	return 1;
}

static int px_files_iter(lua_State *L)
{
	DIR **d = lua_touserdata(L, lua_upvalueindex(1));
	struct dirent *de;

	if (!*d)
		return 0;
	de = readdir(*d);
	if (!de) {
		closedir(*d);
		*d = NULL;
		return 0;
	}
	lua_pushstring(L, de->d_name);
	return 1;
}

static int px_files_gc(lua_State *L)
{
	DIR **d = lua_touserdata(L, 1);

	if (*d)
		closedir(*d);
	*d = NULL;
	return 0;
}

static int px_files(lua_State *L)
{
	const char *path = luaL_optstring(L, 1, ".");
	DIR **d = lua_newuserdatauv(L, sizeof(*d), 0);

	*d = opendir(path);
	if (!*d)
		return px_result(L, -1, path);
	if (luaL_newmetatable(L, "kiln.posix.dir")) {
		lua_pushcfunction(L, px_files_gc);
		lua_setfield(L, -2, "__gc");
	}
	lua_setmetatable(L, -2);
	lua_pushcclosure(L, px_files_iter, 1);
	return 1;
}

static int px_umask(lua_State *L)
{
	mode_t old;
	char mode[10];

	if (lua_isnoneornil(L, 1)) {
		old = umask(0);
		umask(old);
	} else {
		old = umask((mode_t)luaL_checkinteger(L, 1));
	}
	mode_string((~old) & 0777, mode);
	lua_pushstring(L, mode);
	return 1;
}

static int px_uname(lua_State *L)
{
	const char *fmt = luaL_optstring(L, 1, "%s %n %r %v %m");
	struct utsname u;
	luaL_Buffer b;

	if (uname(&u) < 0)
		return px_result(L, -1, NULL);
	luaL_buffinit(L, &b);
	for (; *fmt; fmt++) {
		if (*fmt != '%' || !fmt[1]) {
			luaL_addchar(&b, *fmt);
			continue;
		}
		switch (*++fmt) {
		case 'm':
			luaL_addstring(&b, u.machine);
			break;
		case 'n':
			luaL_addstring(&b, u.nodename);
			break;
		case 'r':
			luaL_addstring(&b, u.release);
			break;
		case 's':
			luaL_addstring(&b, u.sysname);
			break;
		case 'v':
			luaL_addstring(&b, u.version);
			break;
		default:
			luaL_addchar(&b, *fmt);
		}
	}
	luaL_pushresult(&b);
	return 1;
}

static int px_getprocessid(lua_State *L)
{
	const char *what = luaL_optstring(L, 1, "pid");

	if (!strcmp(what, "ppid"))
		lua_pushnumber(L, getppid());
	else if (!strcmp(what, "pgrp"))
		lua_pushnumber(L, getpgrp());
	else
		lua_pushnumber(L, getpid());
	return 1;
}

static int px_sleep(lua_State *L)
{
	lua_pushnumber(L, sleep((unsigned)luaL_checkinteger(L, 1)));
	return 1;
}

static int px_errno(lua_State *L)
{
	int e = errno;

	lua_pushstring(L, strerror(e));
	lua_pushnumber(L, e);
	return 2;
}

static const luaL_Reg posix_funcs[] = {
    {"access", px_access},
    {"chdir", px_chdir},
    {"chmod", px_chmod},
    {"dir", px_dir},
    {"errno", px_errno},
    {"files", px_files},
    {"getcwd", px_getcwd},
    {"getenv", px_getenv},
    {"getprocessid", px_getprocessid},
    {"link", px_link},
    {"mkdir", px_mkdir},
    {"putenv", px_putenv},
    {"readlink", px_readlink},
    {"rmdir", px_rmdir},
    {"setenv", px_setenv},
    {"sleep", px_sleep},
    {"stat", px_stat},
    {"symlink", px_symlink},
    {"umask", px_umask},
    {"uname", px_uname},
    {"unsetenv", px_unsetenv},
    {NULL, NULL},
};

/* ---------------------------------------------------------------------------------------- */
/* State. */

static void register_lib(lua_State *L, struct macro_lua *ml, const char *name,
                         const luaL_Reg *funcs)
{
	lua_newtable(L);
	lua_pushlightuserdata(L, ml);
	luaL_setfuncs(L, funcs, 1);
	lua_setglobal(L, name);
}

static void register_all(lua_State *L, struct macro_lua *ml)
{
	static const luaL_Reg ver_meta[] = {
	    {"__tostring", ver_tostring},
	    {"__eq", ver_eq},
	    {"__lt", ver_lt},
	    {"__le", ver_le},
	    {NULL, NULL},
	};
	static const luaL_Reg macros_meta[] = {
	    {"__index", macros_index}, {"__newindex", macros_newindex}, {NULL, NULL}};

	lua_pushlightuserdata(L, ml);
	lua_pushcclosure(L, l_print, 1);
	lua_setglobal(L, "print");
	register_lib(L, ml, "rpm", ml->ctx->restricted ? rpm_pure_funcs : rpm_funcs);
	if (!ml->ctx->restricted)
		register_lib(L, ml, "posix", posix_funcs);
	luaL_newmetatable(L, "rpm.ver");
	luaL_setfuncs(L, ver_meta, 0);
	lua_pop(L, 1);
	lua_newtable(L);
	lua_newtable(L);
	lua_pushlightuserdata(L, ml);
	luaL_setfuncs(L, macros_meta, 1);
	lua_setmetatable(L, -2);
	lua_setglobal(L, "macros");
}

/* Only the libraries without side effects on the host, for restricted contexts. */
static void open_pure_libs(lua_State *L)
{
	static const luaL_Reg libs[] = {
	    {LUA_GNAME, luaopen_base},        {LUA_TABLIBNAME, luaopen_table},
	    {LUA_STRLIBNAME, luaopen_string}, {LUA_MATHLIBNAME, luaopen_math},
	    {LUA_UTF8LIBNAME, luaopen_utf8},  {NULL, NULL},
	};
	static const char *const unsafe[] = {"dofile", "loadfile", "require", "collectgarbage"};
	const luaL_Reg *l;
	size_t i;

	for (l = libs; l->func; l++) {
		luaL_requiref(L, l->name, l->func, 1);
		lua_pop(L, 1);
	}
	for (i = 0; i < KILN_ARRAY_SIZE(unsafe); i++) {
		lua_pushnil(L);
		lua_setglobal(L, unsafe[i]);
	}
}

/* ---------------------------------------------------------------------------------------- */
/* Global arrays for the spec parser (sources, patches, source_nums, patch_nums). Most specs
 * never run Lua, and a Lua state costs more to create than a short spec costs to parse, so
 * until one exists the arrays are kept here and handed to the state when it is created. */

struct lua_array_val {
	char *str; /* owned; NULL for a number */
	long long num;
};

struct lua_array {
	char *name; /* owned */
	struct lua_array_val *vals;
	size_t n, cap;
};

struct macro_lua_arrays {
	struct lua_array *arr;
	size_t n, cap;
};

static void array_clear(struct lua_array *a)
{
	size_t i;

	for (i = 0; i < a->n; i++)
		free(a->vals[i].str);
	a->n = 0;
}

void macro_lua_arrays_free(struct macro_lua_arrays *arrays)
{
	size_t i;

	if (!arrays)
		return;
	for (i = 0; i < arrays->n; i++) {
		array_clear(&arrays->arr[i]);
		free(arrays->arr[i].vals);
		free(arrays->arr[i].name);
	}
	free(arrays->arr);
	free(arrays);
}

/* The pending array NAME, created empty when missing; NULL when out of memory. */
static struct lua_array *array_get(struct macro_ctx *ctx, const char *name)
{
	struct macro_lua_arrays *as = ctx->lua_arrays;
	struct lua_array *a;
	size_t i;

	if (!as && !(as = ctx->lua_arrays = kiln_calloc(1, sizeof(*as))))
		return NULL;
	for (i = 0; i < as->n; i++) {
		if (!strcmp(as->arr[i].name, name))
			return &as->arr[i];
	}
	if (as->n == as->cap) {
		size_t cap = as->cap ? as->cap * 2 : 4;
		struct lua_array *p = kiln_reallocarray(as->arr, cap, sizeof(*p));

		if (!p)
			return NULL;
		as->arr = p;
		as->cap = cap;
	}
	a = &as->arr[as->n];
	memset(a, 0, sizeof(*a));
	if (!(a->name = kiln_strdup(name)))
		return NULL;
	as->n++;
	return a;
}

static kiln_rc array_append(struct macro_ctx *ctx, const char *name, const char *str, long long num,
                            struct kiln_err *err)
{
	struct lua_array *a = array_get(ctx, name);
	struct lua_array_val *v;

	if (!a)
		return kiln_err_set(err, KILN_ENOMEM, "out of memory");
	if (a->n == a->cap) {
		size_t cap = a->cap ? a->cap * 2 : 8;
		struct lua_array_val *p = kiln_reallocarray(a->vals, cap, sizeof(*p));

		if (!p)
			return kiln_err_set(err, KILN_ENOMEM, "out of memory");
		a->vals = p;
		a->cap = cap;
	}
	v = &a->vals[a->n];
	v->num = num;
	v->str = NULL;
	if (str && !(v->str = kiln_strdup(str)))
		return kiln_err_set(err, KILN_ENOMEM, "out of memory");
	a->n++;
	return KILN_OK;
}

/* Give the new state the arrays kept so far (each one a global table). */
static void arrays_to_lua(lua_State *L, const struct macro_lua_arrays *as)
{
	size_t i, j;

	for (i = 0; as && i < as->n; i++) {
		const struct lua_array *a = &as->arr[i];

		lua_createtable(L, (int)a->n, 0);
		for (j = 0; j < a->n; j++) {
			if (a->vals[j].str)
				lua_pushstring(L, a->vals[j].str);
			else
				lua_pushinteger(L, (lua_Integer)a->vals[j].num);
			lua_rawseti(L, -2, (lua_Integer)j + 1);
		}
		lua_setglobal(L, a->name);
	}
}

/* ---------------------------------------------------------------------------------------- */
/* The Lua state's allocator. */

static size_t pool_class(size_t size)
{
	return (size + LUA_POOL_STEP - 1) / LUA_POOL_STEP;
}

static bool pool_owns(const struct lua_pool *pl, const void *p)
{
	return pl->base && (const char *)p >= pl->base && (const char *)p < pl->end;
}

static void *pool_get(struct lua_pool *pl, size_t size)
{
	size_t c = pool_class(size);
	void *p = pl->free[c];

	if (p) {
		memcpy(&pl->free[c], p, sizeof(void *));
		return p;
	}
	if ((size_t)(pl->end - pl->next) < c * LUA_POOL_STEP)
		return NULL;
	p = pl->next;
	pl->next += c * LUA_POOL_STEP;
	return p;
}

static void pool_put(struct lua_pool *pl, void *p, size_t size)
{
	size_t c = pool_class(size);

	memcpy(p, &pl->free[c], sizeof(void *));
	pl->free[c] = p;
}

/* lua_Alloc: osize is the block's size when ptr is set (its kind when ptr is NULL). */
static void *pool_alloc(void *ud, void *ptr, size_t osize, size_t nsize)
{
	struct lua_pool *pl = ud;
	void *p = NULL;

	if (ptr && !pool_owns(pl, ptr))
		return pl->prev(pl->prev_ud, ptr, osize, nsize);
	if (!nsize) {
		if (ptr)
			pool_put(pl, ptr, osize);
		return NULL;
	}
	if (ptr && pool_class(osize) == pool_class(nsize))
		return ptr;
	if (nsize <= LUA_POOL_MAX)
		p = pool_get(pl, nsize);
	if (!p)
		p = pl->prev(pl->prev_ud, NULL, ptr ? 0 : osize, nsize);
	if (p && ptr) {
		memcpy(p, ptr, osize < nsize ? osize : nsize);
		pool_put(pl, ptr, osize);
	}
	return p;
}

/* Switch a new state to the pool (blocks it already has stay with the old allocator).
 * Sanitizer builds keep malloc, so that they still see every block. */
static void pool_start(struct lua_pool *pl, lua_State *L)
{
#if !LUA_POOL_ENABLED
	(void)pl;
	(void)L;
	(void)pool_alloc; /* kept compiled (and checked) in sanitizer builds too */
#else
	pl->base = kiln_malloc(LUA_POOL_SIZE);
	if (!pl->base)
		return;
	pl->next = pl->base;
	pl->end = pl->base + LUA_POOL_SIZE;
	pl->prev = lua_getallocf(L, &pl->prev_ud);
	lua_setallocf(L, pool_alloc, pl);
#endif
}

static struct macro_lua *lua_get(struct macro_ctx *ctx, struct kiln_err *err)
{
	struct macro_lua *ml = ctx->lua;

	if (ml)
		return ml;
	ml = kiln_calloc(1, sizeof(*ml));
	if (!ml || !(ml->L = luaL_newstate())) {
		free(ml);
		kiln_err_set(err, KILN_ENOMEM, "cannot create the Lua state");
		return NULL;
	}
	ml->ctx = ctx;
	pool_start(&ml->pool, ml->L);
	if (ctx->restricted)
		open_pure_libs(ml->L);
	else
		luaL_openlibs(ml->L);
	register_all(ml->L, ml);
	arrays_to_lua(ml->L, ctx->lua_arrays);
	macro_lua_arrays_free(ctx->lua_arrays);
	ctx->lua_arrays = NULL;
	ctx->lua = ml;
	return ml;
}

void macro_lua_free(struct macro_lua *ml)
{
	if (!ml)
		return;
	lua_close(ml->L);
	free(ml->pool.base);
	free(ml);
}

/* opt and arg for a chunk run inside a parametric macro (rpm re-parses the call's
 * arguments with the macro's options). */
static void push_opt_arg(lua_State *L, const struct mbuf *mb)
{
	const char *opts = mb->call_opts;
	lua_Integer nargs = 0;
	int i;

	lua_newtable(L); /* opt */
	lua_newtable(L); /* arg */
	if (!mb->call_argv)
		return;
	for (i = 1; i < mb->call_argc; i++) {
		const char *a = mb->call_argv[i];
		const char *p;

		if (opts && strcmp(opts, "-") && !strcmp(a, "--")) {
			while (++i < mb->call_argc) {
				lua_pushstring(L, mb->call_argv[i]);
				lua_rawseti(L, -2, ++nargs);
			}
			break;
		}
		if (!opts || !strcmp(opts, "-") || a[0] != '-' || !a[1]) {
			lua_pushstring(L, a);
			lua_rawseti(L, -2, ++nargs);
			continue;
		}
		for (p = a + 1; *p; p++) {
			const char *spec = strchr(opts, *p);
			char key[2] = {*p, '\0'};

			if (spec && spec[1] == ':') {
				const char *v =
				    p[1] ? p + 1
				         : (i + 1 < mb->call_argc ? mb->call_argv[++i] : "");

				lua_pushstring(L, v);
				lua_setfield(L, -3, key);
				break;
			}
			lua_pushstring(L, "");
			lua_setfield(L, -3, key);
		}
	}
}

/* Whether a chunk must be compiled with the "local opt, arg = ..." prologue, or can be
 * compiled as written. The prologue costs a third of compiling a short chunk, and most
 * %{lua:} never name opt or arg. Without it the chunk still receives opt and arg as its
 * varargs (... is the same), so it differs only where the two locals could be seen:
 *  - by name: a chunk that contains "opt" or "arg" anywhere keeps the prologue;
 *  - through the debug library (debug.getlocal): a chunk that could reach it at all, by
 *    name, through the global table or by loading code, keeps the prologue;
 *  - through the limits on locals and registers (200 and 255), which a chunk of at most
 *    LUA_SHORT_MAX bytes cannot come near, and the stack depth at which endless recursion
 *    stops (the main frame is two slots smaller), which needs a function: a chunk that
 *    defines one keeps the prologue.
 * A chunk that does not compile as written is compiled again with the prologue, so that
 * its syntax error is the one it always was. */
#define LUA_SHORT_MAX 256

static bool has_word_at(const char *s, size_t left, const char *word)
{
	size_t n = strlen(word);

	return left >= n && !memcmp(s, word, n);
}

static bool needs_prologue(const char *code, size_t len)
{
	size_t i;

	if (len > LUA_SHORT_MAX)
		return true;
	/* One pass over the chunk; a name is compared only where its first letter is. */
	for (i = 0; i < len; i++) {
		const char *s = code + i;
		size_t left = len - i;
		bool hit;

		switch (*s) {
		case 'o':
			hit = has_word_at(s, left, "opt");
			break;
		case 'a':
			hit = has_word_at(s, left, "arg");
			break;
		case 'd':
			hit = has_word_at(s, left, "debug") || has_word_at(s, left, "dofile");
			break;
		case 'l':
			hit = has_word_at(s, left, "load");
			break;
		case 'r':
			hit = has_word_at(s, left, "require");
			break;
		case 'p':
			hit = has_word_at(s, left, "package");
			break;
		case '_':
			hit = has_word_at(s, left, "_G") || has_word_at(s, left, "_ENV");
			break;
		case 'f':
			hit = has_word_at(s, left, "function");
			break;
		default:
			hit = false;
			break;
		}
		if (hit)
			return true;
	}
	return false;
}

/* Compile code into a function on top of L's stack; false with the message there. */
static bool load_chunk(lua_State *L, const char *code, size_t len, struct kiln_buf *chunk)
{
	static const char prologue[] = "local opt, arg = ... ";

	if (!needs_prologue(code, len)) {
		if (luaL_loadbuffer(L, code, len, "<lua>") == LUA_OK)
			return true;
		lua_pop(L, 1);
	}
	kiln_buf_addstr(chunk, prologue);
	kiln_buf_add(chunk, code, len);
	return luaL_loadbuffer(L, chunk->ptr, chunk->len, "<lua>") == LUA_OK;
}

void macro_lua_run(struct mbuf *mb, const char *code, size_t len)
{
	struct kiln_buf chunk = KILN_BUF_INIT(mb->ctx->max_expansion);
	struct kiln_buf printed = KILN_BUF_INIT(mb->ctx->max_expansion);
	struct macro_lua *ml = lua_get(mb->ctx, mb->err);
	struct mbuf *saved;
	lua_State *L;
	int top;
	int n;
	int i;

	if (!ml) {
		mb->error = true;
		return;
	}
	if (ml->nprints >= LUA_PRINT_DEPTH) {
		macro_mb_error(mb, KILN_ELIMIT, "lua scripts nested too deeply");
		return;
	}
	L = ml->L;
	top = lua_gettop(L);
	if (!load_chunk(L, code, len, &chunk)) {
		macro_mb_error(mb, KILN_ESYNTAX, "invalid syntax in lua script: %s",
		               lua_tostring(L, -1));
		goto out;
	}
	push_opt_arg(L, mb);
	saved = ml->mb;
	ml->mb = mb;
	ml->prints[ml->nprints++] = &printed;
	if (lua_pcall(L, 2, LUA_MULTRET, 0) != LUA_OK) {
		ml->nprints--;
		ml->mb = saved;
		macro_mb_error(mb, KILN_EMACRO, "lua script failed: %s", lua_tostring(L, -1));
		goto out;
	}
	n = lua_gettop(L) - top;
	for (i = 1; i <= n; i++) {
		size_t l;
		const char *s = luaL_tolstring(L, top + i, &l);

		if (i > 1)
			kiln_buf_addch(&printed, '\t');
		kiln_buf_add(&printed, s, l);
		lua_pop(L, 1);
	}
	ml->nprints--;
	ml->mb = saved;
	kiln_buf_add(mb->out, printed.ptr, printed.len);
out:
	lua_settop(L, top);
	kiln_buf_release(&chunk);
	kiln_buf_release(&printed);
}

/* Protected part of macro_lua_call: look the dotted name up (which may run metamethods
 * and raise) and call it. Stack: name, args...; leaves the result as a string or nil. */
static int call_path(lua_State *L)
{
	const char *name = lua_tostring(L, 1);
	const char *p = name;
	int nargs = lua_gettop(L) - 1;

	lua_pushglobaltable(L);
	while (*p) {
		const char *dot = strchr(p, '.');
		size_t n = dot ? (size_t)(dot - p) : strlen(p);

		if (!lua_istable(L, -1))
			return luaL_error(L, "lua function '%s' not found", name);
		lua_pushlstring(L, p, n);
		lua_gettable(L, -2);
		lua_remove(L, -2);
		p += n + (dot ? 1 : 0);
	}
	if (!lua_isfunction(L, -1))
		return luaL_error(L, "lua function '%s' not found", name);
	lua_insert(L, 2);
	lua_call(L, nargs, 1);
	if (!lua_isnil(L, -1))
		luaL_tolstring(L, -1, NULL);
	return 1;
}

kiln_rc macro_lua_call(struct macro_ctx *ctx, const char *name, int argc, const char *const *argv,
                       struct kiln_buf *out, struct kiln_err *err)
{
	struct macro_lua *ml = lua_get(ctx, err);
	lua_State *L;
	kiln_rc rc = KILN_OK;
	int top;
	int i;

	if (!ml)
		return err ? err->code : KILN_ENOMEM;
	L = ml->L;
	top = lua_gettop(L);
	if (!lua_checkstack(L, argc + 4)) {
		rc = kiln_err_set(err, KILN_ELIMIT, "too many arguments for lua function '%s'",
		                  name);
		goto out;
	}
	lua_pushcfunction(L, call_path);
	lua_pushstring(L, name);
	for (i = 0; i < argc; i++)
		lua_pushstring(L, argv[i]);
	if (lua_pcall(L, argc + 1, 1, 0) != LUA_OK) {
		rc = kiln_err_set(err, KILN_EMACRO, "lua script failed: %s", lua_tostring(L, -1));
		goto out;
	}
	if (lua_type(L, -1) == LUA_TSTRING)
		kiln_buf_add(out, lua_tostring(L, -1), lua_rawlen(L, -1));
out:
	lua_settop(L, top);
	return rc;
}

/* ---------------------------------------------------------------------------------------- */
/* Global arrays for the spec parser, once the Lua state exists. */

static void table_push(lua_State *L, const char *name)
{
	if (lua_getglobal(L, name) != LUA_TTABLE) {
		lua_pop(L, 1);
		lua_newtable(L);
		lua_pushvalue(L, -1);
		lua_setglobal(L, name);
	}
}

kiln_rc macro_lua_append_str(struct macro_ctx *ctx, const char *name, const char *value,
                             struct kiln_err *err)
{
	lua_State *L;

	if (!ctx->lua)
		return array_append(ctx, name, value, 0, err);
	L = ctx->lua->L;
	table_push(L, name);
	lua_pushstring(L, value);
	lua_rawseti(L, -2, (lua_Integer)lua_rawlen(L, -2) + 1);
	lua_pop(L, 1);
	return KILN_OK;
}

kiln_rc macro_lua_append_num(struct macro_ctx *ctx, const char *name, long long value,
                             struct kiln_err *err)
{
	lua_State *L;

	if (!ctx->lua)
		return array_append(ctx, name, NULL, value, err);
	L = ctx->lua->L;
	table_push(L, name);
	lua_pushinteger(L, (lua_Integer)value);
	lua_rawseti(L, -2, (lua_Integer)lua_rawlen(L, -2) + 1);
	lua_pop(L, 1);
	return KILN_OK;
}

kiln_rc macro_lua_reset(struct macro_ctx *ctx, const char *name, struct kiln_err *err)
{
	struct lua_array *a;

	if (ctx->lua) {
		lua_newtable(ctx->lua->L);
		lua_setglobal(ctx->lua->L, name);
		return KILN_OK;
	}
	a = array_get(ctx, name);
	if (!a)
		return kiln_err_set(err, KILN_ENOMEM, "out of memory");
	array_clear(a);
	return KILN_OK;
}
