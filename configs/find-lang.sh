#!/bin/sh
# find-lang.sh - kiln's %find_lang: list a package's translations for %files -f.
#
#   find-lang.sh TOP_DIR NAME [NAME...] [OPTIONS] [OUTPUT]
#
# TOP_DIR is the buildroot (stripped from the listed paths). NAME is the text domain (the
# .mo files' basename); more positional words are more names, the last of them being the
# output file when there are two or more (default NAME.lang, written in the current
# directory, the build directory when rpmbuild runs %install). Options, as rpm's script:
#   --with-gnome  GNOME help (share/help, gnome/help, omf)   --with-mate  MATE help
#   --with-kde    KDE HTML help (where kde-config & co are installed)
#   --with-qt     Qt .qm files     --with-html  doc/HTML trees   --with-man  localised manuals
#   --all-name    any domain or document name, not just NAME
#   --without-mo  leave gettext .mo files out
# Each line is "%lang(xx) PATH" ("PATH" alone for the C locale, "%dir PATH" for help
# directories), in the order rpm's script writes them. Exit status 1, with "No
# translations found for NAME in TOP_DIR", when nothing was found.
set -u

usage() {
	echo "Usage: $0 TOP_DIR PACKAGE_NAME [prefix] [--with-gnome] [--with-mate]" \
		"[--with-kde] [--with-qt] [--with-html] [--with-man] [--all-name]" \
		"[--without-mo]" >&2
	exit 1
}

[ $# -ge 1 ] || usage
if [ "$1" = / ]; then
	echo "$0: expects non-/ argument for '\$1'" >&2
	exit 1
fi
if [ ! -d "$1" ]; then
	echo "$0: $1: no such directory"
	exit 1
fi
TOP=$(printf '%s' "$1" | sed 's:/*$::')
shift
[ $# -ge 1 ] || usage

GNOME=0 MATE=0 KDE=0 QT=0 HTML=0 MAN=0 MO=1 ALL=0
NAMES=""
OUT=""
npos=0
for a in "$@"; do
	case "$a" in
	--with-gnome) GNOME=1 ;;
	--with-mate) MATE=1 ;;
	--with-kde) KDE=1 ;;
	--with-qt) QT=1 ;;
	--with-html) HTML=1 ;;
	--with-man) MAN=1 ;;
	--without-mo) MO=0 ;;
	--all-name) ALL=1 ;;
	*)
		# Every positional word but the last is a name; the last one, when there are
		# two or more, names the output.
		npos=$((npos + 1))
		if [ -n "$OUT" ]; then
			NAMES="$NAMES
$OUT"
		fi
		if [ "$npos" -eq 1 ]; then
			NAMES=$a
		else
			OUT=$a
		fi
		;;
	esac
done
[ -n "$OUT" ] || OUT="$(printf '%s\n' "$NAMES" | head -n 1).lang"
rm -f "$OUT"

# One classifier for every kind of entry: reads paths (TOP already removed) on stdin and
# prints list lines. KIND is the kind of rule; NAME the domain; ALL selects --all-name.
classify() {
	awk -v kind="$1" -v name="$2" -v all="$ALL" '
	function namech(s) { return s ~ /^[a-zA-Z0-9._-]+$/ }
	# Positions of t in s, last first: fills at[], returns their count.
	function occur(s, t, at,   n, i, p) {
		n = 0; p = 0
		while ((i = index(substr(s, p + 1), t)) > 0) { p += i; at[++n] = p }
		return n
	}
	function emit(lang, rest) {
		if (lang == "C") print rest; else print "%lang(" lang ") " rest
	}
	# The longest run of chars other than "/" and "_" at the start of s.
	function run(s) { match(s, /^[^\/_]+/); return RSTART ? substr(s, 1, RLENGTH) : "" }
	# gettext catalogs: .../locale/LANG.../NAME.mo (any *.mo with --all-name).
	function mo(p,   at, n, k, r, l, L, after) {
		n = occur(p, "/locale/", at)
		for (k = n; k >= 1; k--) {
			r = substr(p, at[k] + 8); L = run(r)
			for (l = length(L); l >= 1; l--) {
				after = substr(r, l + 1)
				if (all ? after ~ /\.mo$/ : (length(after) > length(name) + 3 && \
				    substr(after, length(after) - length(name) - 3) == "/" name ".mo"))
					{ emit(substr(r, 1, l), p); return }
			}
		}
	}
	# Help trees: .../share/help/LANG*/NAME (a directory, listed as %doc DIR/).
	function sharehelp(p,   c, n) {
		n = split(p, c, "/")
		if (n < 5 || c[n - 3] != "share" || c[n - 2] != "help") return
		if (!(all ? namech(c[n]) : c[n] == name) || run(c[n - 1]) == "") return
		if (run(c[n - 1]) == "C") print "%doc " p "/"
		else print "%lang(" run(c[n - 1]) ") %doc " p "/"
	}
	# gnome/help and mate/help: the NAME directory and its language directories.
	function apphelp(p, app,   c, n, i) {
		n = split(p, c, "/")
		for (i = n; i >= 3; i--)
			if (c[i - 1] == app && c[i] == "help") break
		if (i < 3 || i + 1 > n || !(all ? namech(c[i + 1]) : c[i + 1] == name)) return
		if (i + 1 == n) { print "%dir " p; return }
		if (i + 2 != n || run(c[i + 2]) == "") return
		emit(run(c[i + 2]), p)
	}
	function omfdir(p,   c, n) {
		n = split(p, c, "/")
		if (n >= 3 && c[n - 1] == "omf" && (all ? namech(c[n]) : c[n] == name))
			print "%dir " p
	}
	# .../omf/NAME/NAME-LANG.omf
	function omffile(p,   at, n, k, r, slash, dir, f, L) {
		n = occur(p, "/omf/", at)
		for (k = n; k >= 1; k--) {
			r = substr(p, at[k] + 5); slash = index(r, "/")
			if (!slash) continue
			dir = substr(r, 1, slash - 1); f = substr(r, slash + 1)
			if (!match(f, /-[^\/.]+\.omf/)) continue
			if (all) {
				if (!namech(dir) || !match(f, /^[a-zA-Z0-9._-]+-[^\/.]+\.omf/)) continue
				L = substr(f, 1, RLENGTH - 4); sub(/^.*-/, "", L)
			} else {
				if (dir != name || substr(f, 1, length(name) + 1) != name "-") continue
				L = substr(f, length(name) + 2)
				if (!match(L, /^[^\/.]+\.omf/)) continue
				L = substr(L, 1, RLENGTH - 4)
			}
			emit(L, p); return
		}
	}
	# doc/HTML (and KDE HTML) trees: .../HTML/LANG.../NAME, not what lies below it.
	function htmlskip(after) {
		return all ? after ~ /\/[a-zA-Z0-9._-]+\// : index(after, "/" name "/") > 0
	}
	function htmltree(p, anchor,   at, n, k, r, L, after, c, m) {
		n = occur(p, anchor, at)
		for (k = n; k >= 1; k--) {
			r = substr(p, at[k] + length(anchor)); L = run(r)
			if (L != "" && htmlskip(substr(r, length(L) + 1))) return
		}
		for (k = n; k >= 1; k--) {
			r = substr(p, at[k] + length(anchor)); L = run(r)
			if (L == "") continue
			after = substr(r, length(L) + 1)
			m = split(after, c, "/")
			if (all ? (m >= 2 && namech(c[m])) : (length(after) > length(name) && \
			    substr(after, length(after) - length(name)) == "/" name))
				{ emit(L, p); return }
		}
	}
	function qm(p,   b, base, L, i, x) {
		if (p !~ /\.qm$/) return
		if (!all) {
			i = occur(p, "/" name "_", x)
			for (; i >= 1; i--) {
				L = substr(p, x[i] + length(name) + 2); L = substr(L, 1, length(L) - 3)
				if (L ~ /^[a-zA-Z]+([_@].*)?$/) { emit(L, p); return }
			}
			return
		}
		b = p; sub(/^.*\//, "", b); base = substr(b, 1, length(b) - 3)
		if (base ~ /^[a-zA-Z]+[_@]/) { emit(base, p); return }
		if (base ~ /^[a-zA-Z]+$/) { emit(base, p); return }
		if (match(base, /^[^_]+_/)) {
			L = substr(base, RLENGTH + 1)
			if (L ~ /^[a-zA-Z]+[_@]/ || L ~ /^[a-zA-Z]+$/) { emit(L, p); return }
		}
		for (i = length(base); i > 1; i--) {
			if (substr(base, i, 1) != "_") continue
			L = substr(base, i + 1)
			if (L ~ /^[a-zA-Z]+[_@]/) { emit(L, p); return }
		}
		for (i = length(base); i > 1; i--) {
			if (substr(base, i, 1) != "_") continue
			L = substr(base, i + 1)
			if (L ~ /^[a-zA-Z]+$/) emit(L, p)
			return
		}
	}
	# Manual trees: .../man/LANG.../manN (directories, --all-name) or
	# .../man/LANG.../manN/NAME.N[.gz] (files).
	function man(p, isdir,   at, n, k, r, L, after, c, m, f) {
		f = p; sub(/\.(bz2|gz|xz|lzma|Z)$/, "", f)
		n = occur(f, "/man/", at)
		for (k = n; k >= 1; k--) {
			r = substr(f, at[k] + 5); L = run(r)
			if (L == "") continue
			after = substr(r, length(L) + 1)
			m = split(after, c, "/")
			if (isdir) {
				if (m >= 2 && c[m] ~ /^man[a-z0-9]+$/) { emit(L, f "*"); return }
				continue
			}
			if (m >= 3 && c[m - 1] ~ /^man[a-z0-9]+$/ && \
			    substr(c[m], 1, length(name) + 1) == name "." && \
			    substr(c[m], length(name) + 2) ~ /^[a-z0-9]/)
				{ emit(L, f "*"); return }
		}
	}
	{
		p = $0
		if (kind == "mo") mo(p)
		else if (kind == "sharehelp") sharehelp(p)
		else if (kind == "gnomehelp") apphelp(p, "gnome")
		else if (kind == "matehelp") apphelp(p, "mate")
		else if (kind == "omfdir") omfdir(p)
		else if (kind == "omffile") omffile(p)
		else if (kind == "kde") htmltree(p, "/HTML/")
		else if (kind == "html") htmltree(p, "/doc/HTML/")
		else if (kind == "qm") qm(p)
		else if (kind == "mandir") { if (all) man(p, 1) }
		else if (kind == "manfile") { if (!all) man(p, 0) }
	}'
}

# find under DIR of TYPES ("f l" or "d"), TOP stripped.
list() {
	if [ "$2" = d ]; then
		find "$1" -type d
	elif [ "$2" = f ]; then
		find "$1" -type f
	else
		find "$1" -type f -o -type l
	fi | awk -v top="$TOP" 'index($0, top) == 1 { print substr($0, length(top) + 1) }'
}

kde_html() {
	for tool in kde-config kde4-config kf5-config; do
		d=$("$tool" --expandvars --install html 2>/dev/null) || continue
		[ -n "$d" ] && [ -d "$TOP$d" ] && list "$TOP$d" d | classify kde "$1"
	done
}

printf '%s\n' "$NAMES" | while IFS= read -r NAME; do
	[ "$MO" = 1 ] && list "$TOP" fl | classify mo "$NAME"
	if [ "$GNOME" = 1 ]; then
		list "$TOP" d | classify sharehelp "$NAME"
		list "$TOP" d | classify gnomehelp "$NAME"
		list "$TOP" d | classify omfdir "$NAME"
		list "$TOP" f | classify omffile "$NAME"
	fi
	if [ "$MATE" = 1 ]; then
		list "$TOP" d | classify matehelp "$NAME"
		list "$TOP" d | classify omfdir "$NAME"
		list "$TOP" f | classify omffile "$NAME"
	fi
	[ "$KDE" = 1 ] && kde_html "$NAME"
	[ "$HTML" = 1 ] && list "$TOP" d | classify html "$NAME"
	[ "$QT" = 1 ] && list "$TOP" fl | classify qm "$NAME"
	if [ "$MAN" = 1 ]; then
		list "$TOP" d | classify mandir "$NAME"
		list "$TOP" fl | classify manfile "$NAME"
	fi
	true
done >>"$OUT"

if ! grep -q / "$OUT" 2>/dev/null; then
	echo "No translations found for $(printf '%s\n' "$NAMES" | tail -n 1) in $TOP"
	exit 1
fi
exit 0
