#!/bin/bash
# Regenerate the OpenPGP test vectors in this directory with GnuPG (an implementation
# independent of kiln). Not run by make check: the outputs are committed, and the unit
# tests pin the fingerprints gpg reported here. Test-only keys: never use them for anything.
# data.{rsa,ed}.kiln.{sig,asc} are kiln's own signatures of data.txt at 1704067200 (kiln sign
# --detached [--armor] --time 1704067200), checked with gpg --verify and sq verify when they
# were made; the unit tests require kiln to reproduce them byte for byte.
# usage: tests/data/sign/make-vectors.sh   (from the repository root)
set -eu
out=$(cd "$(dirname "$0")" && pwd)
export GNUPGHOME=$(mktemp -d)
trap 'gpgconf --kill gpg-agent; rm -rf "$GNUPGHOME"' EXIT
T0=20230101T000000   # keys are made "at" 2023-01-01 (1672531200)
T1=20240101T000000   # signatures "at" 2024-01-01 (1704067200)
g() { gpg --batch --quiet "$@"; }

gen() { # name time batch-lines...
	local name=$1 t=$2
	shift 2
	printf '%s\n' '%no-protection' "$@" "Name-Real: kiln test $name" \
		"Name-Email: $name@kiln.example" '%commit' | g --faked-system-time "$t!" --gen-key
}
gen rsa $T0 'Key-Type: RSA' 'Key-Length: 2048' 'Key-Usage: sign' 'Subkey-Type: RSA' \
	'Subkey-Length: 2048' 'Subkey-Usage: encrypt' 'Expire-Date: 0'
gen ed $T0 'Key-Type: EDDSA' 'Key-Curve: ed25519' 'Key-Usage: sign' 'Subkey-Type: ECDH' \
	'Subkey-Curve: cv25519' 'Subkey-Usage: encrypt' 'Expire-Date: 0'
gen subkey $T0 'Key-Type: EDDSA' 'Key-Curve: ed25519' 'Key-Usage: cert' 'Subkey-Type: EDDSA' \
	'Subkey-Curve: ed25519' 'Subkey-Usage: sign' 'Expire-Date: 0'
gen expired $T0 'Key-Type: EDDSA' 'Key-Curve: ed25519' 'Key-Usage: sign' 'Expire-Date: 30'
gen revoked $T0 'Key-Type: EDDSA' 'Key-Curve: ed25519' 'Key-Usage: sign' 'Expire-Date: 0'
printf '%s\n' 'Key-Type: EDDSA' 'Key-Curve: ed25519' 'Key-Usage: sign' 'Expire-Date: 0' \
	'Passphrase: secret' 'Name-Real: kiln test protected' \
	'Name-Email: protected@kiln.example' '%commit' |
	g --faked-system-time "$T0!" --pinentry-mode loopback --gen-key

printf 'kiln signs this\n' >"$out/data.txt"
# A signature made while the key was good, then revoke the key with the revocation
# certificate gpg made for it.
g --faked-system-time "20230102T000000!" --digest-algo SHA256 -u "<revoked@kiln.example>" \
	--detach-sign -o "$out/data.revoked.gpg.sig" "$out/data.txt"
fpr=$(g --with-colons --list-keys "<revoked@kiln.example>" | awk -F: '/^fpr/ {print $10; exit}')
sed 's/^://' "$GNUPGHOME/openpgp-revocs.d/$fpr.rev" | g --faked-system-time "$T1!" --import

for k in rsa ed subkey expired revoked; do
	g --armor --export "<$k@kiln.example>" >"$out/$k.pub.asc"
	g --armor --export-secret-keys "<$k@kiln.example>" \
		>"$out/$k.sec.asc"
done
g --pinentry-mode loopback --passphrase secret --armor --export-secret-keys \
	"<protected@kiln.example>" >"$out/protected.sec.asc"
# One line per key: name, primary fingerprint, subkey fingerprints (as gpg computes them).
for k in rsa ed subkey expired revoked protected; do
	echo "$k $(g --with-colons --fingerprint --fingerprint "<$k@kiln.example>" |
		awk -F: '/^fpr/ {printf "%s ", $10}')"
done >"$out/fingerprints.txt"

sig() { # output key digest [extra args]
	local o=$1 k=$2 d=$3
	shift 3
	g --faked-system-time "$T1!" --digest-algo "$d" -u "<$k@kiln.example>" "$@" \
		--detach-sign -o "$out/$o" "$out/data.txt"
}
sig data.rsa.gpg.sig rsa SHA256
sig data.rsa-sha512.gpg.sig rsa SHA512
sig data.ed.gpg.sig ed SHA256
sig data.subkey.gpg.sig subkey SHA256
sig data.rsa-sha1.gpg.sig rsa SHA1
sig data.rsa-text.gpg.sig rsa SHA256 --textmode
g --faked-system-time "20230102T000000!" --digest-algo SHA256 -u "<expired@kiln.example>" \
	--detach-sign -o "$out/data.expired.gpg.sig" "$out/data.txt"
ls -l "$out"

# A small unsigned package made by Debian's rpmbuild (reproducibly).
top=$(mktemp -d)
mkdir -p "$top/SPECS"
cat >"$top/SPECS/kt.spec" <<'SPEC'
Name: kt
Version: 1.0
Release: 1
Summary: kiln sign test
License: MIT
BuildArch: noarch
%description
test
%install
mkdir -p %{buildroot}/usr/share/kt
echo hi > %{buildroot}/usr/share/kt/hi
%files
/usr/share/kt/hi
SPEC
SOURCE_DATE_EPOCH=1704067200 rpmbuild -bb --nodeps --quiet --define "_topdir $top" \
	--define "use_source_date_epoch_as_buildtime 1" --define "clamp_mtime_to_source_date_epoch 1" \
	--define "_buildhost kiln.example" "$top/SPECS/kt.spec"
cp "$top/RPMS/noarch/kt-1.0-1.noarch.rpm" "$out/"
rm -rf "$top"
