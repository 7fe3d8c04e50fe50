/*
 * banned.h - libc functions kiln never calls (shared/STYLE.md rule 17).
 *
 * Each is redefined to an undeclared identifier, so a use fails to compile with a name that
 * says why. Use snprintf (checking truncation), strto* through util_parse_*, getrandom, and
 * the util_clock_* helpers instead. Included last by compat.h.
 */
#ifndef KILN_UTIL_BANNED_H
#define KILN_UTIL_BANNED_H

#define KILN_BANNED(func) sorry_##func##_is_banned_in_kiln

#undef strcpy
#define strcpy(...) KILN_BANNED(strcpy)
#undef strcat
#define strcat(...) KILN_BANNED(strcat)
#undef strncpy
#define strncpy(...) KILN_BANNED(strncpy)
#undef strncat
#define strncat(...) KILN_BANNED(strncat)
#undef sprintf
#define sprintf(...) KILN_BANNED(sprintf)
#undef vsprintf
#define vsprintf(...) KILN_BANNED(vsprintf)
#undef strtok
#define strtok(...) KILN_BANNED(strtok)
#undef strtok_r
#define strtok_r(...) KILN_BANNED(strtok_r)
#undef gets
#define gets(...) KILN_BANNED(gets)
#undef atoi
#define atoi(...) KILN_BANNED(atoi)
#undef atol
#define atol(...) KILN_BANNED(atol)
#undef atof
#define atof(...) KILN_BANNED(atof)
#undef gmtime
#define gmtime(...) KILN_BANNED(gmtime)
#undef localtime
#define localtime(...) KILN_BANNED(localtime)
#undef ctime
#define ctime(...) KILN_BANNED(ctime)
#undef asctime
#define asctime(...) KILN_BANNED(asctime)
#undef mktemp
#define mktemp(...) KILN_BANNED(mktemp)
#undef tmpnam
#define tmpnam(...) KILN_BANNED(tmpnam)
#undef rand
#define rand(...) KILN_BANNED(rand)
#undef system
#define system(...) KILN_BANNED(system)
#undef popen
#define popen(...) KILN_BANNED(popen)

#endif
