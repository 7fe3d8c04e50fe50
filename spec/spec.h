/*
 * spec.h - spec files and what rpm shows of them: the spec parser (added later) and, below it,
 * rpm's header tag table and query-format engine, shared by `kiln spec -q` and `kiln query`.
 *
 * spec/ knows nothing about how a header is stored: the query-format engine reads tags
 * through a small callback struct (struct spec_qf_source), which pack/ implements over a
 * package header and the spec parser implements over a parsed spec. Facts about rpm's tags
 * and formats come from shared/rpm-reference.md (Appendix A, section 9).
 */
#ifndef KILN_SPEC_H
#define KILN_SPEC_H

#include "util/util.h"

/* ======================================================================================== */
/* Tags and query formats                                                                   */
/* ======================================================================================== */

/* Header data types; the numbers are rpm's on-disk type ids. */
enum spec_tag_type {
	SPEC_TYPE_NULL = 0,
	SPEC_TYPE_CHAR = 1,
	SPEC_TYPE_INT8 = 2,
	SPEC_TYPE_INT16 = 3,
	SPEC_TYPE_INT32 = 4,
	SPEC_TYPE_INT64 = 5,
	SPEC_TYPE_STRING = 6,
	SPEC_TYPE_BIN = 7,
	SPEC_TYPE_STRING_ARRAY = 8,
	SPEC_TYPE_I18NSTRING = 9,
};
#define SPEC_TYPE_MAX 9

enum spec_tag_flags {
	SPEC_TAG_F_ARRAY = 1 << 0, /* rpm's table marks it as an array (s[], i[], ...) */
	SPEC_TAG_F_EXT = 1 << 1,   /* computed at query time; never stored in a package */
	SPEC_TAG_F_NEW = 1 << 2,   /* added after rpm 4.18 (unknown to rpm 4.18's table) */
};

struct spec_tag_info {
	const char *name; /* static: rpm's name without RPMTAG_, upper case ("NAME") */
	uint32_t num;
	enum spec_tag_type type; /* the stored type rpm's table expects */
	unsigned flags;          /* enum spec_tag_flags */
};

/* Tag numbers kiln's code refers to by name (main-header numbering; see rpm-reference.md
 * Appendix A). The signature header's own numbering is in pack/pack.h. */
enum spec_tag_num {
	SPEC_TAG_HEADERIMAGE = 61,
	SPEC_TAG_HEADERSIGNATURES = 62,
	SPEC_TAG_HEADERIMMUTABLE = 63,
	SPEC_TAG_HEADERREGIONS = 64,
	SPEC_TAG_HEADERI18NTABLE = 100,
	SPEC_TAG_SIGSIZE = 257,
	SPEC_TAG_SIGPGP = 259,
	SPEC_TAG_SIGMD5 = 261,
	SPEC_TAG_SIGGPG = 262,
	SPEC_TAG_PUBKEYS = 266,
	SPEC_TAG_DSAHEADER = 267,
	SPEC_TAG_RSAHEADER = 268,
	SPEC_TAG_SHA1HEADER = 269,
	SPEC_TAG_LONGSIGSIZE = 270,
	SPEC_TAG_LONGARCHIVESIZE = 271,
	SPEC_TAG_SHA256HEADER = 273,
	SPEC_TAG_VERITYSIGNATURES = 276,
	SPEC_TAG_VERITYSIGNATUREALGO = 277,
	SPEC_TAG_OPENPGP = 278,
	SPEC_TAG_SHA3_256HEADER = 279,
	SPEC_TAG_NAME = 1000,
	SPEC_TAG_VERSION = 1001,
	SPEC_TAG_RELEASE = 1002,
	SPEC_TAG_EPOCH = 1003,
	SPEC_TAG_SUMMARY = 1004,
	SPEC_TAG_DESCRIPTION = 1005,
	SPEC_TAG_BUILDTIME = 1006,
	SPEC_TAG_BUILDHOST = 1007,
	SPEC_TAG_INSTALLTIME = 1008,
	SPEC_TAG_SIZE = 1009,
	SPEC_TAG_DISTRIBUTION = 1010,
	SPEC_TAG_VENDOR = 1011,
	SPEC_TAG_LICENSE = 1014,
	SPEC_TAG_PACKAGER = 1015,
	SPEC_TAG_GROUP = 1016,
	SPEC_TAG_SOURCE = 1018,
	SPEC_TAG_PATCH = 1019,
	SPEC_TAG_URL = 1020,
	SPEC_TAG_OS = 1021,
	SPEC_TAG_ARCH = 1022,
	SPEC_TAG_PREIN = 1023,
	SPEC_TAG_POSTIN = 1024,
	SPEC_TAG_PREUN = 1025,
	SPEC_TAG_POSTUN = 1026,
	SPEC_TAG_OLDFILENAMES = 1027,
	SPEC_TAG_FILESIZES = 1028,
	SPEC_TAG_FILESTATES = 1029,
	SPEC_TAG_FILEMODES = 1030,
	SPEC_TAG_FILERDEVS = 1033,
	SPEC_TAG_FILEMTIMES = 1034,
	SPEC_TAG_FILEDIGESTS = 1035,
	SPEC_TAG_FILELINKTOS = 1036,
	SPEC_TAG_FILEFLAGS = 1037,
	SPEC_TAG_FILEUSERNAME = 1039,
	SPEC_TAG_FILEGROUPNAME = 1040,
	SPEC_TAG_SOURCERPM = 1044,
	SPEC_TAG_FILEVERIFYFLAGS = 1045,
	SPEC_TAG_ARCHIVESIZE = 1046,
	SPEC_TAG_PROVIDENAME = 1047,
	SPEC_TAG_REQUIREFLAGS = 1048,
	SPEC_TAG_REQUIRENAME = 1049,
	SPEC_TAG_REQUIREVERSION = 1050,
	SPEC_TAG_CONFLICTFLAGS = 1053,
	SPEC_TAG_CONFLICTNAME = 1054,
	SPEC_TAG_CONFLICTVERSION = 1055,
	SPEC_TAG_RPMVERSION = 1064,
	SPEC_TAG_TRIGGERSCRIPTS = 1065,
	SPEC_TAG_TRIGGERNAME = 1066,
	SPEC_TAG_TRIGGERVERSION = 1067,
	SPEC_TAG_TRIGGERFLAGS = 1068,
	SPEC_TAG_TRIGGERINDEX = 1069,
	SPEC_TAG_VERIFYSCRIPT = 1079,
	SPEC_TAG_CHANGELOGTIME = 1080,
	SPEC_TAG_CHANGELOGNAME = 1081,
	SPEC_TAG_CHANGELOGTEXT = 1082,
	SPEC_TAG_PREINPROG = 1085,
	SPEC_TAG_POSTINPROG = 1086,
	SPEC_TAG_PREUNPROG = 1087,
	SPEC_TAG_POSTUNPROG = 1088,
	SPEC_TAG_BUILDARCHS = 1089,
	SPEC_TAG_OBSOLETENAME = 1090,
	SPEC_TAG_VERIFYSCRIPTPROG = 1091,
	SPEC_TAG_TRIGGERSCRIPTPROG = 1092,
	SPEC_TAG_COOKIE = 1094,
	SPEC_TAG_FILEDEVICES = 1095,
	SPEC_TAG_FILEINODES = 1096,
	SPEC_TAG_FILELANGS = 1097,
	SPEC_TAG_PREFIXES = 1098,
	SPEC_TAG_SOURCEPACKAGE = 1106,
	SPEC_TAG_PROVIDEFLAGS = 1112,
	SPEC_TAG_PROVIDEVERSION = 1113,
	SPEC_TAG_OBSOLETEFLAGS = 1114,
	SPEC_TAG_OBSOLETEVERSION = 1115,
	SPEC_TAG_DIRINDEXES = 1116,
	SPEC_TAG_BASENAMES = 1117,
	SPEC_TAG_DIRNAMES = 1118,
	SPEC_TAG_ORIGDIRINDEXES = 1119,
	SPEC_TAG_ORIGBASENAMES = 1120,
	SPEC_TAG_ORIGDIRNAMES = 1121,
	SPEC_TAG_OPTFLAGS = 1122,
	SPEC_TAG_PAYLOADFORMAT = 1124,
	SPEC_TAG_PAYLOADCOMPRESSOR = 1125,
	SPEC_TAG_PAYLOADFLAGS = 1126,
	SPEC_TAG_PLATFORM = 1132,
	SPEC_TAG_FILECOLORS = 1140,
	SPEC_TAG_FILECLASS = 1141,
	SPEC_TAG_CLASSDICT = 1142,
	SPEC_TAG_FILEDEPENDSX = 1143,
	SPEC_TAG_FILEDEPENDSN = 1144,
	SPEC_TAG_DEPENDSDICT = 1145,
	SPEC_TAG_SOURCESIGMD5 = 1146,
	SPEC_TAG_PRETRANS = 1151,
	SPEC_TAG_POSTTRANS = 1152,
	SPEC_TAG_PRETRANSPROG = 1153,
	SPEC_TAG_POSTTRANSPROG = 1154,
	SPEC_TAG_DISTTAG = 1155,
	SPEC_TAG_DBINSTANCE = 1195,
	SPEC_TAG_NVRA = 1196,
	SPEC_TAG_FILENAMES = 5000,
	SPEC_TAG_FILEPROVIDE = 5001,
	SPEC_TAG_FILEREQUIRE = 5002,
	SPEC_TAG_TRIGGERCONDS = 5005,
	SPEC_TAG_TRIGGERTYPE = 5006,
	SPEC_TAG_ORIGFILENAMES = 5007,
	SPEC_TAG_LONGFILESIZES = 5008,
	SPEC_TAG_LONGSIZE = 5009,
	SPEC_TAG_FILECAPS = 5010,
	SPEC_TAG_FILEDIGESTALGO = 5011,
	SPEC_TAG_BUGURL = 5012,
	SPEC_TAG_EVR = 5013,
	SPEC_TAG_NVR = 5014,
	SPEC_TAG_NEVR = 5015,
	SPEC_TAG_NEVRA = 5016,
	SPEC_TAG_HEADERCOLOR = 5017,
	SPEC_TAG_VERBOSE = 5018,
	SPEC_TAG_EPOCHNUM = 5019,
	SPEC_TAG_PREINFLAGS = 5020,
	SPEC_TAG_POSTINFLAGS = 5021,
	SPEC_TAG_PREUNFLAGS = 5022,
	SPEC_TAG_POSTUNFLAGS = 5023,
	SPEC_TAG_PRETRANSFLAGS = 5024,
	SPEC_TAG_POSTTRANSFLAGS = 5025,
	SPEC_TAG_VERIFYSCRIPTFLAGS = 5026,
	SPEC_TAG_TRIGGERSCRIPTFLAGS = 5027,
	SPEC_TAG_INSTFILENAMES = 5040,
	SPEC_TAG_REQUIRENEVRS = 5041,
	SPEC_TAG_PROVIDENEVRS = 5042,
	SPEC_TAG_OBSOLETENEVRS = 5043,
	SPEC_TAG_CONFLICTNEVRS = 5044,
	SPEC_TAG_FILENLINKS = 5045,
	SPEC_TAG_RECOMMENDNAME = 5046,
	SPEC_TAG_RECOMMENDVERSION = 5047,
	SPEC_TAG_RECOMMENDFLAGS = 5048,
	SPEC_TAG_SUGGESTNAME = 5049,
	SPEC_TAG_SUGGESTVERSION = 5050,
	SPEC_TAG_SUGGESTFLAGS = 5051,
	SPEC_TAG_SUPPLEMENTNAME = 5052,
	SPEC_TAG_SUPPLEMENTVERSION = 5053,
	SPEC_TAG_SUPPLEMENTFLAGS = 5054,
	SPEC_TAG_ENHANCENAME = 5055,
	SPEC_TAG_ENHANCEVERSION = 5056,
	SPEC_TAG_ENHANCEFLAGS = 5057,
	SPEC_TAG_RECOMMENDNEVRS = 5058,
	SPEC_TAG_SUGGESTNEVRS = 5059,
	SPEC_TAG_SUPPLEMENTNEVRS = 5060,
	SPEC_TAG_ENHANCENEVRS = 5061,
	SPEC_TAG_ENCODING = 5062,
	SPEC_TAG_FILETRIGGERSCRIPTS = 5066,
	SPEC_TAG_FILETRIGGERSCRIPTPROG = 5067,
	SPEC_TAG_FILETRIGGERSCRIPTFLAGS = 5068,
	SPEC_TAG_FILETRIGGERNAME = 5069,
	SPEC_TAG_FILETRIGGERINDEX = 5070,
	SPEC_TAG_FILETRIGGERVERSION = 5071,
	SPEC_TAG_FILETRIGGERFLAGS = 5072,
	SPEC_TAG_TRANSFILETRIGGERSCRIPTS = 5076,
	SPEC_TAG_TRANSFILETRIGGERSCRIPTPROG = 5077,
	SPEC_TAG_TRANSFILETRIGGERSCRIPTFLAGS = 5078,
	SPEC_TAG_TRANSFILETRIGGERNAME = 5079,
	SPEC_TAG_TRANSFILETRIGGERINDEX = 5080,
	SPEC_TAG_TRANSFILETRIGGERVERSION = 5081,
	SPEC_TAG_TRANSFILETRIGGERFLAGS = 5082,
	SPEC_TAG_FILETRIGGERPRIORITIES = 5084,
	SPEC_TAG_TRANSFILETRIGGERPRIORITIES = 5085,
	SPEC_TAG_FILETRIGGERCONDS = 5086,
	SPEC_TAG_FILETRIGGERTYPE = 5087,
	SPEC_TAG_TRANSFILETRIGGERCONDS = 5088,
	SPEC_TAG_TRANSFILETRIGGERTYPE = 5089,
	SPEC_TAG_FILESIGNATURES = 5090,
	SPEC_TAG_FILESIGNATURELENGTH = 5091,
	SPEC_TAG_PAYLOADSHA256 = 5092, /* 4.18 name PAYLOADDIGEST */
	SPEC_TAG_PAYLOADSHA256ALGO = 5093,
	SPEC_TAG_PAYLOADSHA256ALT = 5097,
	SPEC_TAG_ARCHSUFFIX = 5098,
	SPEC_TAG_SPEC = 5099,
	SPEC_TAG_PREUNTRANS = 5103,
	SPEC_TAG_POSTUNTRANS = 5104,
	SPEC_TAG_PREUNTRANSPROG = 5105,
	SPEC_TAG_POSTUNTRANSPROG = 5106,
	SPEC_TAG_PREUNTRANSFLAGS = 5107,
	SPEC_TAG_POSTUNTRANSFLAGS = 5108,
	SPEC_TAG_PAYLOADSIZE = 5112,
	SPEC_TAG_PAYLOADSIZEALT = 5113,
	SPEC_TAG_RPMFORMAT = 5114,
	SPEC_TAG_FILEMIMEINDEX = 5115,
	SPEC_TAG_MIMEDICT = 5116,
	SPEC_TAG_FILEMIMES = 5117,
	SPEC_TAG_SOURCENEVR = 5120,
	SPEC_TAG_PAYLOADSHA512 = 5121,
	SPEC_TAG_PAYLOADSHA512ALT = 5122,
	SPEC_TAG_PAYLOADSHA3_256 = 5123,
	SPEC_TAG_PAYLOADSHA3_256ALT = 5124,
};

/* rpm's dependency flags (RPMSENSE_*) and file flags (RPMFILE_*), verify flags
 * (RPMVERIFY_*): rpm-reference.md sections 2.6 and 2.7. */
enum spec_dep_flags {
	SPEC_DEP_LESS = 1 << 1,
	SPEC_DEP_GREATER = 1 << 2,
	SPEC_DEP_EQUAL = 1 << 3,
	SPEC_DEP_POSTTRANS = 1 << 5,
	SPEC_DEP_PREREQ = 1 << 6,
	SPEC_DEP_PRETRANS = 1 << 7,
	SPEC_DEP_INTERP = 1 << 8,
	SPEC_DEP_SCRIPT_PRE = 1 << 9,
	SPEC_DEP_SCRIPT_POST = 1 << 10,
	SPEC_DEP_SCRIPT_PREUN = 1 << 11,
	SPEC_DEP_SCRIPT_POSTUN = 1 << 12,
	SPEC_DEP_SCRIPT_VERIFY = 1 << 13,
	SPEC_DEP_FIND_REQUIRES = 1 << 14,
	SPEC_DEP_FIND_PROVIDES = 1 << 15,
	SPEC_DEP_TRIGGERIN = 1 << 16,
	SPEC_DEP_TRIGGERUN = 1 << 17,
	SPEC_DEP_TRIGGERPOSTUN = 1 << 18,
	SPEC_DEP_MISSINGOK = 1 << 19,
	SPEC_DEP_PREUNTRANS = 1 << 20,
	SPEC_DEP_POSTUNTRANS = 1 << 21,
	SPEC_DEP_RPMLIB = 1 << 24,
	SPEC_DEP_TRIGGERPREIN = 1 << 25,
	SPEC_DEP_KEYRING = 1 << 26,
	SPEC_DEP_CONFIG = 1 << 28,
	SPEC_DEP_META = 1 << 29,
};

enum spec_file_flags {
	SPEC_FILE_CONFIG = 1 << 0,
	SPEC_FILE_DOC = 1 << 1,
	SPEC_FILE_ICON = 1 << 2,
	SPEC_FILE_MISSINGOK = 1 << 3,
	SPEC_FILE_NOREPLACE = 1 << 4,
	SPEC_FILE_SPECFILE = 1 << 5,
	SPEC_FILE_GHOST = 1 << 6,
	SPEC_FILE_LICENSE = 1 << 7,
	SPEC_FILE_README = 1 << 8,
	SPEC_FILE_PUBKEY = 1 << 11,
	SPEC_FILE_ARTIFACT = 1 << 12,
};

enum spec_verify_flags {
	SPEC_VERIFY_FILEDIGEST = 1 << 0,
	SPEC_VERIFY_FILESIZE = 1 << 1,
	SPEC_VERIFY_LINKTO = 1 << 2,
	SPEC_VERIFY_USER = 1 << 3,
	SPEC_VERIFY_GROUP = 1 << 4,
	SPEC_VERIFY_MTIME = 1 << 5,
	SPEC_VERIFY_MODE = 1 << 6,
	SPEC_VERIFY_RDEV = 1 << 7,
	SPEC_VERIFY_CAPS = 1 << 8,
	SPEC_VERIFY_ALL = ~0,
};

/* Look a tag up by number; NULL when rpm's table does not know it. */
const struct spec_tag_info *spec_tag_by_num(uint32_t num);
/* Look a tag up by name: case-insensitive, an optional "RPMTAG_" prefix, old names
 * (PAYLOADDIGEST, SOURCEPKGID, ...) accepted. NULL when unknown. */
const struct spec_tag_info *spec_tag_by_name(const char *name, size_t len);
/* All tags of the table, in ascending number order: *count gets the number. */
const struct spec_tag_info *spec_tag_table(size_t *count);
/* rpm's "short name" of a tag as --xml, --json and :tagname print it: the name with only
 * the first letter upper case ("Name", "Sha256header"), "[NNNN]" for unknown numbers.
 * Writes into dst (at least 64 bytes); returns dst. */
const char *spec_tag_shortname(uint32_t num, char *dst, size_t size);
/* The class of a type: numbers, strings (STRING, STRING_ARRAY, I18NSTRING) or binary. */
bool spec_type_is_number(enum spec_tag_type t);
bool spec_type_is_string(enum spec_tag_type t);

/* ---------------------------------------------------------------------------------------- */
/* Query formats (rpm-reference.md section 9).
 *
 * A value handed to the engine: count elements of type. data layout by type:
 *   CHAR, INT8: uint8_t[count]; INT16: uint16_t[count]; INT32: uint32_t[count];
 *   INT64: uint64_t[count] (host byte order);
 *   STRING, STRING_ARRAY, I18NSTRING: const char *[count] (NUL-terminated strings);
 *   BIN: count bytes. */
struct spec_qf_value {
	enum spec_tag_type type;
	uint32_t count;
	const void *data; /* borrowed from the source (or from the engine's scratch arena) */
};

/* Where the engine reads tags. get and the %{*} iteration are required; expand is optional
 * (without it :expand prints the string unchanged). The engine never keeps a pointer past
 * one spec_qf_render() call. */
struct spec_qf_source_ops {
	/* Fetch a stored tag: true with *v filled (data valid while the source lives), false
	 * when absent. Extension tags (FILENAMES, NEVRA, ...) are computed by the engine from
	 * stored tags, so sources only answer for what they store. */
	bool (*get)(void *ctx, uint32_t tag, struct spec_qf_value *v);
	/* The stored tags in header order, for %{*:xml} / %{*:json}. */
	size_t (*tag_count)(void *ctx);
	uint32_t (*tag_at)(void *ctx, size_t i);
	/* Macro expansion for :expand (may be NULL). Appends to out. */
	kiln_rc (*expand)(void *ctx, const char *in, struct kiln_buf *out, struct kiln_err *err);
};

enum spec_qf_source_flags {
	SPEC_QF_F_VERBOSE = 1 << 0, /* the VERBOSE extension tag is present (rpm -v) */
};

struct spec_qf_source {
	const struct spec_qf_source_ops *ops; /* borrowed, usually a static const table */
	void *ctx;                            /* borrowed */
	unsigned flags;                       /* enum spec_qf_source_flags */
};

/* A compiled query format. */
struct spec_qf;

/* Compile fmt[0..len). KILN_ESYNTAX with rpm's wording ("missing } after %{", "unknown tag:
 * \"X\"", ...) on a bad format. *out: caller frees with spec_qf_free(). */
KILN_MUST_CHECK kiln_rc spec_qf_compile(const char *fmt, size_t len, struct spec_qf **out,
                                        struct kiln_err *err);
void spec_qf_free(struct spec_qf *qf);
/* Render qf over src, appending to out (whose max bounds the output: KILN_ELIMIT). Errors:
 * KILN_ESYNTAX for "array iterator used with different sized arrays"; whatever the expand
 * hook returns. Thread-safe for concurrent renders of one compiled format. */
KILN_MUST_CHECK kiln_rc spec_qf_render(const struct spec_qf *qf, const struct spec_qf_source *src,
                                       struct kiln_buf *out, struct kiln_err *err);
/* Compile and render in one call. */
KILN_MUST_CHECK kiln_rc spec_qf_format(const char *fmt, const struct spec_qf_source *src,
                                       struct kiln_buf *out, struct kiln_err *err);

/* The query formats behind rpm's popt aliases (--info, --changelog, --requires, ...), as
 * rpm 4.18's rpmpopt defines them; NULL for an unknown name. name is the option without
 * "--" ("info", "requires", "xml", "json", "scripts", "triggers", "changelog", ...). */
const char *spec_qf_alias(const char *name);

/* ======================================================================================== */
/* Spec files                                                                               */
/* ======================================================================================== */

/* The parser reads a spec the way rpmbuild 4.20 does: line by line, each logical line
 * macro-expanded once in the caller's macro context (which the parse changes: tags define
 * %name and friends, %define/%global persist), with conditionals, %include, sections,
 * BuildSystem synthesis and -a/-p hooks. The result is a model of the spec plus the
 * "parsed" text `rpmspec -P` prints. Everything hangs off one struct spec and lives in its
 * arena until spec_free(). */

struct macro_ctx;

enum spec_parse_flags {
	/* Do not check ExclusiveArch/ExcludeArch/ExclusiveOS/ExcludeOS (rpmspec); without it
	 * an excluded target fails with KILN_EUNSUPP and rpm's "Architecture is excluded: X",
	 * "Architecture is not included: X", "OS is excluded: X" or "OS is not included: X". */
	SPEC_PARSE_ANYARCH = 1 << 0,
	SPEC_PARSE_FORCE = 1 << 1, /* keep going after %prep errors (rpmspec -P does) */
	/* Read nothing but the spec text: %include and Icon: are errors. For specs from
	 * outside (the API, fuzzing), together with a restricted macro context. */
	SPEC_PARSE_NO_FILES = 1 << 2,
};

/* Build-time sections, in the order rpmbuild runs them. */
enum spec_section {
	SPEC_SEC_PREP,
	SPEC_SEC_BUILDREQUIRES, /* %generate_buildrequires */
	SPEC_SEC_CONF,
	SPEC_SEC_BUILD,
	SPEC_SEC_INSTALL,
	SPEC_SEC_CHECK,
	SPEC_SEC_CLEAN,
	SPEC_SEC_COUNT,
};

/* Runtime scriptlets and triggers. */
enum spec_script_kind {
	SPEC_SCRIPT_PRE,
	SPEC_SCRIPT_POST,
	SPEC_SCRIPT_PREUN,
	SPEC_SCRIPT_POSTUN,
	SPEC_SCRIPT_PRETRANS,
	SPEC_SCRIPT_POSTTRANS,
	SPEC_SCRIPT_PREUNTRANS,
	SPEC_SCRIPT_POSTUNTRANS,
	SPEC_SCRIPT_VERIFY,
	SPEC_SCRIPT_TRIGGERPREIN,
	SPEC_SCRIPT_TRIGGERIN,
	SPEC_SCRIPT_TRIGGERUN,
	SPEC_SCRIPT_TRIGGERPOSTUN,
	SPEC_SCRIPT_FILETRIGGERIN,
	SPEC_SCRIPT_FILETRIGGERUN,
	SPEC_SCRIPT_FILETRIGGERPOSTUN,
	SPEC_SCRIPT_TRANSFILETRIGGERIN,
	SPEC_SCRIPT_TRANSFILETRIGGERUN,
	SPEC_SCRIPT_TRANSFILETRIGGERPOSTUN,
	SPEC_SCRIPT_COUNT,
};

/* Dependency kinds of a package (and the build dependencies of the spec). */
enum spec_dep_kind {
	SPEC_DEPS_REQUIRES,
	SPEC_DEPS_PROVIDES,
	SPEC_DEPS_CONFLICTS,
	SPEC_DEPS_OBSOLETES,
	SPEC_DEPS_RECOMMENDS,
	SPEC_DEPS_SUGGESTS,
	SPEC_DEPS_SUPPLEMENTS,
	SPEC_DEPS_ENHANCES,
	SPEC_DEPS_ORDER,
	SPEC_DEPS_COUNT,
};

/* Script flags as rpm stores them (the *FLAGS tags). */
enum spec_script_flags {
	SPEC_SCRIPT_F_EXPAND = 1 << 0,  /* -e: macro-expand at install time */
	SPEC_SCRIPT_F_QFORMAT = 1 << 1, /* -q: query-format-expand */
	SPEC_SCRIPT_F_CRITICAL = 1 << 2,
};

/* All strings below are borrowed from the spec's arena. */

struct spec_dep {
	const char *name;
	const char *evr; /* "" when unversioned */
	uint32_t flags;  /* enum spec_dep_flags: comparison and qualifiers */
};

struct spec_deps {
	struct spec_dep *v;
	size_t n, cap;
};

struct spec_script {
	enum spec_script_kind kind;
	const char *body;  /* "" when empty */
	const char **prog; /* interpreter argv; NULL when the default /bin/sh */
	size_t nprog;
	unsigned flags;         /* enum spec_script_flags */
	uint32_t priority;      /* file triggers: -P, default 1000000 */
	struct spec_deps conds; /* triggers: the conditions after "--" */
	const char *file;       /* -f FILE, or NULL */
	int line;
};

/* One %files line's worth of metadata for its paths. */
enum spec_attr_fields {
	SPEC_ATTR_MODE = 1 << 0,
	SPEC_ATTR_USER = 1 << 1,
	SPEC_ATTR_GROUP = 1 << 2,
	SPEC_ATTR_DIRMODE = 1 << 3,
};

struct spec_attr {
	unsigned set; /* enum spec_attr_fields: which are given (not "-") */
	uint32_t mode, dirmode;
	const char *user, *group;
	bool given; /* the directive appeared, even as %attr(-,-,-) (rpm ranks duplicates by it) */
};

enum spec_entry_flags {
	SPEC_ENTRY_DIR = 1 << 0,       /* %dir */
	SPEC_ENTRY_DOCDIR = 1 << 1,    /* %docdir */
	SPEC_ENTRY_EXCLUDE = 1 << 2,   /* %exclude */
	SPEC_ENTRY_SPECIAL = 1 << 3,   /* relative %doc/%license: copied from the build dir */
	SPEC_ENTRY_DEV = 1 << 4,       /* %dev(...) */
	SPEC_ENTRY_VERIFY = 1 << 5,    /* %verify(...) on this line */
	SPEC_ENTRY_DEFVERIFY = 1 << 6, /* a %defverify(...) is in force */
};

struct spec_files_entry {
	const char **paths; /* the names or globs on the line, unquoted */
	const char **globs; /* the same as glob patterns: quoted or backslash-escaped glob
	                     * characters ("?*[]{}\\") carry a backslash, as rpm globs them */
	size_t npaths;
	uint32_t fileflags;       /* enum spec_file_flags (CONFIG, DOC, GHOST, LICENSE, ...) */
	uint32_t verifyflags;     /* enum spec_verify_flags */
	unsigned flags;           /* enum spec_entry_flags */
	struct spec_attr attr;    /* %attr on this line */
	struct spec_attr defattr; /* the %defattr in force */
	const char *lang;         /* %lang(...) or NULL */
	const char *caps;         /* %caps(...) or NULL */
	char dev_type;            /* %dev: 'b' or 'c' */
	uint32_t dev_major, dev_minor;
	const char *error; /* what is wrong with the line (reported when packaging), or NULL */
	const char *file;  /* the %files -f list the line came from; NULL for the spec */
	int line;
};

struct spec_changelog {
	int64_t time; /* 12:00 UTC of the date for date-only entries */
	const char *name;
	const char *text;
};

struct spec_package {
	const char *name;
	bool is_main;
	bool has_files; /* a %files section exists (only those are built) */
	bool has_description;
	struct spec_deps deps[SPEC_DEPS_COUNT];
	struct spec_script *scripts; /* every scriptlet and trigger, in spec order */
	size_t nscripts, capscripts;
	struct spec_files_entry *files; /* %files entries in order */
	size_t nfiles, capfiles;
	const char **file_lists; /* %files -f FILE names */
	size_t nfile_lists;
	/* The %defattr and %defverify in force at the end of %files (and of each list added
	 * with spec_files_add_text()): -f lists are read as if appended to the section. */
	struct spec_attr files_defattr;
	uint32_t files_defverify;
	bool files_defverify_given;
	bool autoreq, autoprov;
	const char **remove_postfixes; /* RemovePathPostfixes: entries, in order */
	size_t nremove_postfixes;
	struct spec_tagset *tags; /* the header tags the parser set (qf source, JSON, pack) */
	int line;                 /* where %package was, 0 for the main package */
};

struct spec_source {
	uint32_t num;
	bool is_patch;
	bool nosource;    /* NoSource/NoPatch */
	const char *url;  /* the value as written (after expansion) */
	const char *file; /* its last path component */
	const char *path; /* %{_sourcedir}/file */
};

/* What BuildOption lines gave for each build section. */
struct spec_buildopts {
	const char **v;
	size_t n, cap;
};

struct spec {
	const char *path;               /* the spec file as given */
	struct spec_package **packages; /* [0] is the main package */
	size_t npackages, cappackages;
	struct spec_source *sources; /* sources and patches in declaration order */
	size_t nsources, capsources;
	const char *sections[SPEC_SEC_COUNT]; /* final script text (after BuildSystem and
					       * -a/-p), NULL when the section is absent */
	struct spec_deps buildrequires;
	struct spec_deps buildconflicts;
	const char *buildsystem; /* BuildSystem: name or NULL */
	struct spec_buildopts buildopts[SPEC_SEC_COUNT];
	const char **buildarchs; /* BuildArch: of the main package */
	size_t nbuildarchs;
	const char **exclusivearch, **excludearch, **exclusiveos, **excludeos;
	size_t nexclusivearch, nexcludearch, nexclusiveos, nexcludeos;
	struct spec_changelog *changelog; /* newest first, as written */
	size_t nchangelog, capchangelog;
	struct kiln_buf parsed;       /* what `rpmspec -P` prints (rpm 4.20 form) */
	struct spec_tagset *srctags;  /* the source package's header tags */
	struct macro_ctx *macros;     /* borrowed from the caller */
	struct kiln_arena arena;      /* owns everything above */
	struct spec_parse_priv *priv; /* parser state, freed with the spec */
};

/* Parse path in macro context ctx (configured by the caller; the parse defines macros in
 * it). On error the message uses rpm's wording ("line 12: Unknown tag: Foo: bar") and
 * err->input/err->line name the file and line. OUT: *out, free with spec_free(). */
KILN_MUST_CHECK kiln_rc spec_parse_file(const char *path, struct macro_ctx *ctx, unsigned flags,
                                        struct spec **out, struct kiln_err *err);
/* The same from memory; name is used in messages and %__file_name. */
KILN_MUST_CHECK kiln_rc spec_parse_mem(const char *name, const char *text, size_t len,
                                       struct macro_ctx *ctx, unsigned flags, struct spec **out,
                                       struct kiln_err *err);
void spec_free(struct spec *spec);

/* Add the tags rpm adds only when it packages (rpmbuild, not rpmspec -q): the trigger and
 * file trigger scripts with their programs, flags and priorities, and the changelog in
 * subpackages. Call once per package that gets built, before writing it. Scriptlets read
 * with -f FILE are the build's business (the file exists only after %install). */
KILN_MUST_CHECK kiln_rc spec_package_build_tags(struct spec *spec, struct spec_package *pkg,
                                                struct kiln_err *err);

/* Parse dependency text ("a >= 1, b, (c or d)") the way BuildRequires: reads it and append
 * the result to out (memory from the spec's arena). For what %generate_buildrequires
 * prints. Errors use rpm's wording for BuildRequires. */
KILN_MUST_CHECK kiln_rc spec_deps_add_text(struct spec *spec, struct spec_deps *out,
                                           const char *text, struct kiln_err *err);

/* Parse text (a %files -f list, read after %install) as more lines of pkg's %files
 * section, with the %defattr/%defverify in force at its end, as rpmbuild does: each line is
 * macro-expanded in spec->macros (with %license kept as the directive), lines whose first
 * non-blank character is '#' are comments. name is the list's path, kept in each entry's
 * file for messages. A list with no lines is rpm's "Empty %files file NAME" (KILN_ESYNTAX),
 * a warning through the macro context's diagnostics when %_empty_manifest_terminate_build
 * is 0. Problems of single lines stay in the entries' error, as for the spec's lines;
 * expansion errors fail with err located at name:line. Not thread-safe for one spec. */
KILN_MUST_CHECK kiln_rc spec_files_add_text(struct spec *spec, struct spec_package *pkg,
                                            const char *name, const char *text, size_t len,
                                            struct kiln_err *err);

/* rpm's section names ("prep", "generate_buildrequires", ...) and scriptlet names ("pre",
 * "triggerin", ...). */
const char *spec_section_name(enum spec_section sec);
const char *spec_script_name(enum spec_script_kind kind);
/* The header tags of a scriptlet kind: body, program and flags tags. */
void spec_script_tags(enum spec_script_kind kind, uint32_t *body, uint32_t *prog, uint32_t *flags);

/* A query-format source over tags (a package's, or spec->srctags for the source package),
 * with :expand in the spec's macro context. The source borrows from spec (its context is
 * allocated in spec's arena); valid while spec lives. */
KILN_MUST_CHECK kiln_rc spec_qf_source_make(struct spec *spec, const struct spec_tagset *tags,
                                            struct spec_qf_source *src, struct kiln_err *err);
/* Append the JSON model (packages, tags, dependencies, sections, sources, build system,
 * files entries, changelog) to out. */
KILN_MUST_CHECK kiln_rc spec_json_write(const struct spec *spec, struct kiln_buf *out,
                                        struct kiln_err *err);

/* ---------------------------------------------------------------------------------------- */
/* Tag sets: typed header tags in memory (a spec package's header before pack/ writes it). */

struct spec_tagset;

/* New empty set in arena a (all memory from a). NULL on ENOMEM (a's sticky error). */
struct spec_tagset *spec_tagset_new(struct kiln_arena *a);
/* Replace tag with count elements of type copied from data (layout as in spec_qf_value). */
KILN_MUST_CHECK kiln_rc spec_tagset_put(struct spec_tagset *ts, uint32_t tag,
                                        enum spec_tag_type type, const void *data, uint32_t count,
                                        struct kiln_err *err);
/* Append elements to an array tag (created when absent; type must match). */
KILN_MUST_CHECK kiln_rc spec_tagset_append(struct spec_tagset *ts, uint32_t tag,
                                           enum spec_tag_type type, const void *data,
                                           uint32_t count, struct kiln_err *err);
KILN_MUST_CHECK kiln_rc spec_tagset_put_str(struct spec_tagset *ts, uint32_t tag, const char *s,
                                            struct kiln_err *err);
KILN_MUST_CHECK kiln_rc spec_tagset_put_u32(struct spec_tagset *ts, uint32_t tag, uint32_t v,
                                            struct kiln_err *err);
bool spec_tagset_get(const struct spec_tagset *ts, uint32_t tag, struct spec_qf_value *v);
const char *spec_tagset_get_str(const struct spec_tagset *ts, uint32_t tag);
void spec_tagset_del(struct spec_tagset *ts, uint32_t tag);
/* Tags in insertion order, or in tag number order after spec_tagset_sort() (the parser
 * sorts every set it returns). */
void spec_tagset_sort(struct spec_tagset *ts);
size_t spec_tagset_count(const struct spec_tagset *ts);
uint32_t spec_tagset_tag_at(const struct spec_tagset *ts, size_t i);

#endif
