/*
 * rpmtag.h - rpm's header tags and what rpm shows of them: the tag table (numbers, names,
 * types), typed tag sets held in memory, and the query-format engine shared by
 * `kiln spec -q` and `kiln query`.
 *
 * rpmtag/ knows nothing about how a header is stored or where its tags come from: the
 * query-format engine reads tags through a small callback struct (struct rpmtag_qf_source),
 * which pack/ implements over a package header and spec/ over a parsed spec. It depends on
 * util/ only. Facts about rpm's tags and formats come from shared/rpm-reference.md
 * (Appendix A, section 9).
 */
#ifndef KILN_RPMTAG_H
#define KILN_RPMTAG_H

#include "util/util.h"
/* ======================================================================================== */
/* Tags and query formats                                                                   */
/* ======================================================================================== */

/* Header data types; the numbers are rpm's on-disk type ids. */
enum rpmtag_type {
	RPMTAG_TYPE_NULL = 0,
	RPMTAG_TYPE_CHAR = 1,
	RPMTAG_TYPE_INT8 = 2,
	RPMTAG_TYPE_INT16 = 3,
	RPMTAG_TYPE_INT32 = 4,
	RPMTAG_TYPE_INT64 = 5,
	RPMTAG_TYPE_STRING = 6,
	RPMTAG_TYPE_BIN = 7,
	RPMTAG_TYPE_STRING_ARRAY = 8,
	RPMTAG_TYPE_I18NSTRING = 9,
};
#define RPMTAG_TYPE_MAX 9

enum rpmtag_flags {
	RPMTAG_F_ARRAY = 1 << 0, /* rpm's table marks it as an array (s[], i[], ...) */
	RPMTAG_F_EXT = 1 << 1,   /* computed at query time; never stored in a package */
	RPMTAG_F_NEW = 1 << 2,   /* added after rpm 4.18 (unknown to rpm 4.18's table) */
};

struct rpmtag_info {
	const char *name; /* static: rpm's name without RPMTAG_, upper case ("NAME") */
	uint32_t num;
	enum rpmtag_type type; /* the stored type rpm's table expects */
	unsigned flags;        /* enum rpmtag_flags */
};

/* Tag numbers kiln's code refers to by name (main-header numbering; see rpm-reference.md
 * Appendix A). The signature header's own numbering is in pack/pack.h. */
enum rpmtag_num {
	RPMTAG_HEADERIMAGE = 61,
	RPMTAG_HEADERSIGNATURES = 62,
	RPMTAG_HEADERIMMUTABLE = 63,
	RPMTAG_HEADERREGIONS = 64,
	RPMTAG_HEADERI18NTABLE = 100,
	RPMTAG_SIGSIZE = 257,
	RPMTAG_SIGPGP = 259,
	RPMTAG_SIGMD5 = 261,
	RPMTAG_SIGGPG = 262,
	RPMTAG_PUBKEYS = 266,
	RPMTAG_DSAHEADER = 267,
	RPMTAG_RSAHEADER = 268,
	RPMTAG_SHA1HEADER = 269,
	RPMTAG_LONGSIGSIZE = 270,
	RPMTAG_LONGARCHIVESIZE = 271,
	RPMTAG_SHA256HEADER = 273,
	RPMTAG_VERITYSIGNATURES = 276,
	RPMTAG_VERITYSIGNATUREALGO = 277,
	RPMTAG_OPENPGP = 278,
	RPMTAG_SHA3_256HEADER = 279,
	RPMTAG_NAME = 1000,
	RPMTAG_VERSION = 1001,
	RPMTAG_RELEASE = 1002,
	RPMTAG_EPOCH = 1003,
	RPMTAG_SUMMARY = 1004,
	RPMTAG_DESCRIPTION = 1005,
	RPMTAG_BUILDTIME = 1006,
	RPMTAG_BUILDHOST = 1007,
	RPMTAG_INSTALLTIME = 1008,
	RPMTAG_SIZE = 1009,
	RPMTAG_DISTRIBUTION = 1010,
	RPMTAG_VENDOR = 1011,
	RPMTAG_LICENSE = 1014,
	RPMTAG_PACKAGER = 1015,
	RPMTAG_GROUP = 1016,
	RPMTAG_SOURCE = 1018,
	RPMTAG_PATCH = 1019,
	RPMTAG_URL = 1020,
	RPMTAG_OS = 1021,
	RPMTAG_ARCH = 1022,
	RPMTAG_PREIN = 1023,
	RPMTAG_POSTIN = 1024,
	RPMTAG_PREUN = 1025,
	RPMTAG_POSTUN = 1026,
	RPMTAG_OLDFILENAMES = 1027,
	RPMTAG_FILESIZES = 1028,
	RPMTAG_FILESTATES = 1029,
	RPMTAG_FILEMODES = 1030,
	RPMTAG_FILERDEVS = 1033,
	RPMTAG_FILEMTIMES = 1034,
	RPMTAG_FILEDIGESTS = 1035,
	RPMTAG_FILELINKTOS = 1036,
	RPMTAG_FILEFLAGS = 1037,
	RPMTAG_FILEUSERNAME = 1039,
	RPMTAG_FILEGROUPNAME = 1040,
	RPMTAG_SOURCERPM = 1044,
	RPMTAG_FILEVERIFYFLAGS = 1045,
	RPMTAG_ARCHIVESIZE = 1046,
	RPMTAG_PROVIDENAME = 1047,
	RPMTAG_REQUIREFLAGS = 1048,
	RPMTAG_REQUIRENAME = 1049,
	RPMTAG_REQUIREVERSION = 1050,
	RPMTAG_CONFLICTFLAGS = 1053,
	RPMTAG_CONFLICTNAME = 1054,
	RPMTAG_CONFLICTVERSION = 1055,
	RPMTAG_RPMVERSION = 1064,
	RPMTAG_TRIGGERSCRIPTS = 1065,
	RPMTAG_TRIGGERNAME = 1066,
	RPMTAG_TRIGGERVERSION = 1067,
	RPMTAG_TRIGGERFLAGS = 1068,
	RPMTAG_TRIGGERINDEX = 1069,
	RPMTAG_VERIFYSCRIPT = 1079,
	RPMTAG_CHANGELOGTIME = 1080,
	RPMTAG_CHANGELOGNAME = 1081,
	RPMTAG_CHANGELOGTEXT = 1082,
	RPMTAG_PREINPROG = 1085,
	RPMTAG_POSTINPROG = 1086,
	RPMTAG_PREUNPROG = 1087,
	RPMTAG_POSTUNPROG = 1088,
	RPMTAG_BUILDARCHS = 1089,
	RPMTAG_OBSOLETENAME = 1090,
	RPMTAG_VERIFYSCRIPTPROG = 1091,
	RPMTAG_TRIGGERSCRIPTPROG = 1092,
	RPMTAG_COOKIE = 1094,
	RPMTAG_FILEDEVICES = 1095,
	RPMTAG_FILEINODES = 1096,
	RPMTAG_FILELANGS = 1097,
	RPMTAG_PREFIXES = 1098,
	RPMTAG_SOURCEPACKAGE = 1106,
	RPMTAG_PROVIDEFLAGS = 1112,
	RPMTAG_PROVIDEVERSION = 1113,
	RPMTAG_OBSOLETEFLAGS = 1114,
	RPMTAG_OBSOLETEVERSION = 1115,
	RPMTAG_DIRINDEXES = 1116,
	RPMTAG_BASENAMES = 1117,
	RPMTAG_DIRNAMES = 1118,
	RPMTAG_ORIGDIRINDEXES = 1119,
	RPMTAG_ORIGBASENAMES = 1120,
	RPMTAG_ORIGDIRNAMES = 1121,
	RPMTAG_OPTFLAGS = 1122,
	RPMTAG_PAYLOADFORMAT = 1124,
	RPMTAG_PAYLOADCOMPRESSOR = 1125,
	RPMTAG_PAYLOADFLAGS = 1126,
	RPMTAG_PLATFORM = 1132,
	RPMTAG_FILECOLORS = 1140,
	RPMTAG_FILECLASS = 1141,
	RPMTAG_CLASSDICT = 1142,
	RPMTAG_FILEDEPENDSX = 1143,
	RPMTAG_FILEDEPENDSN = 1144,
	RPMTAG_DEPENDSDICT = 1145,
	RPMTAG_SOURCESIGMD5 = 1146,
	RPMTAG_PRETRANS = 1151,
	RPMTAG_POSTTRANS = 1152,
	RPMTAG_PRETRANSPROG = 1153,
	RPMTAG_POSTTRANSPROG = 1154,
	RPMTAG_DISTTAG = 1155,
	RPMTAG_DBINSTANCE = 1195,
	RPMTAG_NVRA = 1196,
	RPMTAG_FILENAMES = 5000,
	RPMTAG_FILEPROVIDE = 5001,
	RPMTAG_FILEREQUIRE = 5002,
	RPMTAG_TRIGGERCONDS = 5005,
	RPMTAG_TRIGGERTYPE = 5006,
	RPMTAG_ORIGFILENAMES = 5007,
	RPMTAG_LONGFILESIZES = 5008,
	RPMTAG_LONGSIZE = 5009,
	RPMTAG_FILECAPS = 5010,
	RPMTAG_FILEDIGESTALGO = 5011,
	RPMTAG_BUGURL = 5012,
	RPMTAG_EVR = 5013,
	RPMTAG_NVR = 5014,
	RPMTAG_NEVR = 5015,
	RPMTAG_NEVRA = 5016,
	RPMTAG_HEADERCOLOR = 5017,
	RPMTAG_VERBOSE = 5018,
	RPMTAG_EPOCHNUM = 5019,
	RPMTAG_PREINFLAGS = 5020,
	RPMTAG_POSTINFLAGS = 5021,
	RPMTAG_PREUNFLAGS = 5022,
	RPMTAG_POSTUNFLAGS = 5023,
	RPMTAG_PRETRANSFLAGS = 5024,
	RPMTAG_POSTTRANSFLAGS = 5025,
	RPMTAG_VERIFYSCRIPTFLAGS = 5026,
	RPMTAG_TRIGGERSCRIPTFLAGS = 5027,
	RPMTAG_INSTFILENAMES = 5040,
	RPMTAG_REQUIRENEVRS = 5041,
	RPMTAG_PROVIDENEVRS = 5042,
	RPMTAG_OBSOLETENEVRS = 5043,
	RPMTAG_CONFLICTNEVRS = 5044,
	RPMTAG_FILENLINKS = 5045,
	RPMTAG_RECOMMENDNAME = 5046,
	RPMTAG_RECOMMENDVERSION = 5047,
	RPMTAG_RECOMMENDFLAGS = 5048,
	RPMTAG_SUGGESTNAME = 5049,
	RPMTAG_SUGGESTVERSION = 5050,
	RPMTAG_SUGGESTFLAGS = 5051,
	RPMTAG_SUPPLEMENTNAME = 5052,
	RPMTAG_SUPPLEMENTVERSION = 5053,
	RPMTAG_SUPPLEMENTFLAGS = 5054,
	RPMTAG_ENHANCENAME = 5055,
	RPMTAG_ENHANCEVERSION = 5056,
	RPMTAG_ENHANCEFLAGS = 5057,
	RPMTAG_RECOMMENDNEVRS = 5058,
	RPMTAG_SUGGESTNEVRS = 5059,
	RPMTAG_SUPPLEMENTNEVRS = 5060,
	RPMTAG_ENHANCENEVRS = 5061,
	RPMTAG_ENCODING = 5062,
	RPMTAG_FILETRIGGERSCRIPTS = 5066,
	RPMTAG_FILETRIGGERSCRIPTPROG = 5067,
	RPMTAG_FILETRIGGERSCRIPTFLAGS = 5068,
	RPMTAG_FILETRIGGERNAME = 5069,
	RPMTAG_FILETRIGGERINDEX = 5070,
	RPMTAG_FILETRIGGERVERSION = 5071,
	RPMTAG_FILETRIGGERFLAGS = 5072,
	RPMTAG_TRANSFILETRIGGERSCRIPTS = 5076,
	RPMTAG_TRANSFILETRIGGERSCRIPTPROG = 5077,
	RPMTAG_TRANSFILETRIGGERSCRIPTFLAGS = 5078,
	RPMTAG_TRANSFILETRIGGERNAME = 5079,
	RPMTAG_TRANSFILETRIGGERINDEX = 5080,
	RPMTAG_TRANSFILETRIGGERVERSION = 5081,
	RPMTAG_TRANSFILETRIGGERFLAGS = 5082,
	RPMTAG_FILETRIGGERPRIORITIES = 5084,
	RPMTAG_TRANSFILETRIGGERPRIORITIES = 5085,
	RPMTAG_FILETRIGGERCONDS = 5086,
	RPMTAG_FILETRIGGERTYPE = 5087,
	RPMTAG_TRANSFILETRIGGERCONDS = 5088,
	RPMTAG_TRANSFILETRIGGERTYPE = 5089,
	RPMTAG_FILESIGNATURES = 5090,
	RPMTAG_FILESIGNATURELENGTH = 5091,
	RPMTAG_PAYLOADSHA256 = 5092, /* 4.18 name PAYLOADDIGEST */
	RPMTAG_PAYLOADSHA256ALGO = 5093,
	RPMTAG_PAYLOADSHA256ALT = 5097,
	RPMTAG_ARCHSUFFIX = 5098,
	RPMTAG_SPEC = 5099,
	RPMTAG_PREUNTRANS = 5103,
	RPMTAG_POSTUNTRANS = 5104,
	RPMTAG_PREUNTRANSPROG = 5105,
	RPMTAG_POSTUNTRANSPROG = 5106,
	RPMTAG_PREUNTRANSFLAGS = 5107,
	RPMTAG_POSTUNTRANSFLAGS = 5108,
	RPMTAG_PAYLOADSIZE = 5112,
	RPMTAG_PAYLOADSIZEALT = 5113,
	RPMTAG_RPMFORMAT = 5114,
	RPMTAG_FILEMIMEINDEX = 5115,
	RPMTAG_MIMEDICT = 5116,
	RPMTAG_FILEMIMES = 5117,
	RPMTAG_SOURCENEVR = 5120,
	RPMTAG_PAYLOADSHA512 = 5121,
	RPMTAG_PAYLOADSHA512ALT = 5122,
	RPMTAG_PAYLOADSHA3_256 = 5123,
	RPMTAG_PAYLOADSHA3_256ALT = 5124,
};

/* rpm's dependency flags (RPMSENSE_*) and file flags (RPMFILE_*), verify flags
 * (RPMVERIFY_*): rpm-reference.md sections 2.6 and 2.7. */
enum rpmtag_dep_flags {
	RPMTAG_DEP_LESS = 1 << 1,
	RPMTAG_DEP_GREATER = 1 << 2,
	RPMTAG_DEP_EQUAL = 1 << 3,
	RPMTAG_DEP_POSTTRANS = 1 << 5,
	RPMTAG_DEP_PREREQ = 1 << 6,
	RPMTAG_DEP_PRETRANS = 1 << 7,
	RPMTAG_DEP_INTERP = 1 << 8,
	RPMTAG_DEP_SCRIPT_PRE = 1 << 9,
	RPMTAG_DEP_SCRIPT_POST = 1 << 10,
	RPMTAG_DEP_SCRIPT_PREUN = 1 << 11,
	RPMTAG_DEP_SCRIPT_POSTUN = 1 << 12,
	RPMTAG_DEP_SCRIPT_VERIFY = 1 << 13,
	RPMTAG_DEP_FIND_REQUIRES = 1 << 14,
	RPMTAG_DEP_FIND_PROVIDES = 1 << 15,
	RPMTAG_DEP_TRIGGERIN = 1 << 16,
	RPMTAG_DEP_TRIGGERUN = 1 << 17,
	RPMTAG_DEP_TRIGGERPOSTUN = 1 << 18,
	RPMTAG_DEP_MISSINGOK = 1 << 19,
	RPMTAG_DEP_PREUNTRANS = 1 << 20,
	RPMTAG_DEP_POSTUNTRANS = 1 << 21,
	RPMTAG_DEP_RPMLIB = 1 << 24,
	RPMTAG_DEP_TRIGGERPREIN = 1 << 25,
	RPMTAG_DEP_KEYRING = 1 << 26,
	RPMTAG_DEP_CONFIG = 1 << 28,
	RPMTAG_DEP_META = 1 << 29,
};

enum rpmtag_file_flags {
	RPMTAG_FILE_CONFIG = 1 << 0,
	RPMTAG_FILE_DOC = 1 << 1,
	RPMTAG_FILE_ICON = 1 << 2,
	RPMTAG_FILE_MISSINGOK = 1 << 3,
	RPMTAG_FILE_NOREPLACE = 1 << 4,
	RPMTAG_FILE_SPECFILE = 1 << 5,
	RPMTAG_FILE_GHOST = 1 << 6,
	RPMTAG_FILE_LICENSE = 1 << 7,
	RPMTAG_FILE_README = 1 << 8,
	RPMTAG_FILE_PUBKEY = 1 << 11,
	RPMTAG_FILE_ARTIFACT = 1 << 12,
};

enum rpmtag_verify_flags {
	RPMTAG_VERIFY_FILEDIGEST = 1 << 0,
	RPMTAG_VERIFY_FILESIZE = 1 << 1,
	RPMTAG_VERIFY_LINKTO = 1 << 2,
	RPMTAG_VERIFY_USER = 1 << 3,
	RPMTAG_VERIFY_GROUP = 1 << 4,
	RPMTAG_VERIFY_MTIME = 1 << 5,
	RPMTAG_VERIFY_MODE = 1 << 6,
	RPMTAG_VERIFY_RDEV = 1 << 7,
	RPMTAG_VERIFY_CAPS = 1 << 8,
	RPMTAG_VERIFY_ALL = ~0,
};

/* Look a tag up by number; NULL when rpm's table does not know it. */
const struct rpmtag_info *rpmtag_by_num(uint32_t num);
/* Look a tag up by name: case-insensitive, an optional "RPMTAG_" prefix, old names
 * (PAYLOADDIGEST, SOURCEPKGID, ...) accepted. NULL when unknown. */
const struct rpmtag_info *rpmtag_by_name(const char *name, size_t len);
/* All tags of the table, in ascending number order: *count gets the number. */
const struct rpmtag_info *rpmtag_table(size_t *count);
/* rpm's "short name" of a tag as --xml, --json and :tagname print it: the name with only
 * the first letter upper case ("Name", "Sha256header"), "[NNNN]" for unknown numbers.
 * Writes into dst (at least 64 bytes); returns dst. */
const char *rpmtag_shortname(uint32_t num, char *dst, size_t size);
/* The class of a type: numbers, strings (STRING, STRING_ARRAY, I18NSTRING) or binary. */
bool rpmtag_type_is_number(enum rpmtag_type t);
bool rpmtag_type_is_string(enum rpmtag_type t);

/* ---------------------------------------------------------------------------------------- */
/* Query formats (rpm-reference.md section 9).
 *
 * A value handed to the engine: count elements of type. data layout by type:
 *   CHAR, INT8: uint8_t[count]; INT16: uint16_t[count]; INT32: uint32_t[count];
 *   INT64: uint64_t[count] (host byte order);
 *   STRING, STRING_ARRAY, I18NSTRING: const char *[count] (NUL-terminated strings);
 *   BIN: count bytes. */
struct rpmtag_qf_value {
	enum rpmtag_type type;
	uint32_t count;
	const void *data; /* borrowed from the source (or from the engine's scratch arena) */
};

/* Where the engine reads tags. get and the %{*} iteration are required; expand is optional
 * (without it :expand prints the string unchanged). The engine never keeps a pointer past
 * one rpmtag_qf_render() call. */
struct rpmtag_qf_source_ops {
	/* Fetch a stored tag: true with *v filled (data valid while the source lives), false
	 * when absent. Extension tags (FILENAMES, NEVRA, ...) are computed by the engine from
	 * stored tags, so sources only answer for what they store. */
	bool (*get)(void *ctx, uint32_t tag, struct rpmtag_qf_value *v);
	/* The stored tags in header order, for %{*:xml} / %{*:json}. */
	size_t (*tag_count)(void *ctx);
	uint32_t (*tag_at)(void *ctx, size_t i);
	/* Macro expansion for :expand (may be NULL). Appends to out. */
	kiln_rc (*expand)(void *ctx, const char *in, struct kiln_buf *out, struct kiln_err *err);
};

enum rpmtag_qf_source_flags {
	RPMTAG_QF_F_VERBOSE = 1 << 0, /* the VERBOSE extension tag is present (rpm -v) */
};

struct rpmtag_qf_source {
	const struct rpmtag_qf_source_ops *ops; /* borrowed, usually a static const table */
	void *ctx;                              /* borrowed */
	unsigned flags;                         /* enum rpmtag_qf_source_flags */
};

/* A compiled query format. */
struct rpmtag_qf;

/* Compile fmt[0..len). KILN_ESYNTAX with rpm's wording ("missing } after %{", "unknown tag:
 * \"X\"", ...) on a bad format. *out: caller frees with rpmtag_qf_free(). */
KILN_MUST_CHECK kiln_rc rpmtag_qf_compile(const char *fmt, size_t len, struct rpmtag_qf **out,
                                          struct kiln_err *err);
void rpmtag_qf_free(struct rpmtag_qf *qf);
/* Render qf over src, appending to out (whose max bounds the output: KILN_ELIMIT). Errors:
 * KILN_ESYNTAX for "array iterator used with different sized arrays"; whatever the expand
 * hook returns. Thread-safe for concurrent renders of one compiled format. */
KILN_MUST_CHECK kiln_rc rpmtag_qf_render(const struct rpmtag_qf *qf,
                                         const struct rpmtag_qf_source *src, struct kiln_buf *out,
                                         struct kiln_err *err);
/* Compile and render in one call. */
KILN_MUST_CHECK kiln_rc rpmtag_qf_format(const char *fmt, const struct rpmtag_qf_source *src,
                                         struct kiln_buf *out, struct kiln_err *err);

/* The query formats behind rpm's popt aliases (--info, --changelog, --requires, ...), as
 * rpm 4.18's rpmpopt defines them; NULL for an unknown name. name is the option without
 * "--" ("info", "requires", "xml", "json", "scripts", "triggers", "changelog", ...). */
const char *rpmtag_qf_alias(const char *name);

/* ---------------------------------------------------------------------------------------- */
/* Tag sets: typed header tags in memory (a spec package's header before pack/ writes it). */

struct rpmtag_set;

/* New empty set in arena a (all memory from a). NULL on ENOMEM (a's sticky error). */
struct rpmtag_set *rpmtag_set_new(struct kiln_arena *a);
/* Replace tag with count elements of type copied from data (layout as in rpmtag_qf_value). */
KILN_MUST_CHECK kiln_rc rpmtag_set_put(struct rpmtag_set *ts, uint32_t tag, enum rpmtag_type type,
                                       const void *data, uint32_t count, struct kiln_err *err);
/* Append elements to an array tag (created when absent; type must match). */
KILN_MUST_CHECK kiln_rc rpmtag_set_append(struct rpmtag_set *ts, uint32_t tag,
                                          enum rpmtag_type type, const void *data, uint32_t count,
                                          struct kiln_err *err);
KILN_MUST_CHECK kiln_rc rpmtag_set_put_str(struct rpmtag_set *ts, uint32_t tag, const char *s,
                                           struct kiln_err *err);
KILN_MUST_CHECK kiln_rc rpmtag_set_put_u32(struct rpmtag_set *ts, uint32_t tag, uint32_t v,
                                           struct kiln_err *err);
bool rpmtag_set_get(const struct rpmtag_set *ts, uint32_t tag, struct rpmtag_qf_value *v);
const char *rpmtag_set_get_str(const struct rpmtag_set *ts, uint32_t tag);
void rpmtag_set_del(struct rpmtag_set *ts, uint32_t tag);
/* Tags in insertion order, or in tag number order after rpmtag_set_sort() (the parser
 * sorts every set it returns). */
void rpmtag_set_sort(struct rpmtag_set *ts);
size_t rpmtag_set_count(const struct rpmtag_set *ts);
uint32_t rpmtag_set_tag_at(const struct rpmtag_set *ts, size_t i);

#endif
