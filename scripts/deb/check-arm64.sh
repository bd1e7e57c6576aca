#!/usr/bin/env bash
# Check the arm64 package against the Debian 13 amd64 one and against the arm64 sysroot it was made for
# (docs/packaging.md, "The arm64 package"):
#   1. its control: Package hark, Architecture arm64, the same Version as the amd64 package, and Depends naming
#      the same packages (both are the same sources linked against Debian 13's same libraries);
#   2. its contents: the same paths, modes and owners as the amd64 package, and the same sizes for everything
#      but the binary (dpkg-deb -c of both);
#   3. its binary: an AArch64 ELF64 executable for Linux, loaded by /lib/ld-linux-aarch64.so.1, with full
#      RELRO and BIND_NOW and no RUNPATH;
#   4. its Depends against what the binary really loads: check-depends.sh with the sysroot, where "ldd" is the
#      arm64 loader's --list under qemu-user and dpkg reads the sysroot's database.
# Usage: check-arm64.sh ARM64_DEB AMD64_DEB SYSROOT
set -euo pipefail
source "$(dirname "$0")/lib.sh"

[ $# -eq 3 ] || deb_die "usage: check-arm64.sh ARM64_DEB AMD64_DEB SYSROOT"
arm=$1 amd=$2 sysroot=$3
for f in "$arm" "$amd"; do [ -f "$f" ] || deb_die "'$f' does not exist (make deb)"; done
[ -d "$sysroot/var/lib/dpkg/info" ] || deb_die "'$sysroot' has no dpkg database (scripts/arm64/sysroot.sh makes it)"
fail() { deb_die "arm64 package $(basename "$arm"): $*"; }

# 1. Control fields.
field() { dpkg-deb -f "$1" "$2"; }
[ "$(field "$arm" Package)" = hark ] || fail "Package: is '$(field "$arm" Package)', not hark"
[ "$(field "$arm" Architecture)" = arm64 ] || fail "Architecture: is '$(field "$arm" Architecture)', not arm64"
[ "$(field "$amd" Architecture)" = amd64 ] || deb_die "$(basename "$amd"): Architecture: is '$(field "$amd" Architecture)', not amd64"
[ "$(field "$arm" Version)" = "$(field "$amd" Version)" ] \
    || fail "Version: $(field "$arm" Version), but the amd64 package has $(field "$amd" Version)"
[[ $(field "$arm" Version) == *+deb13 ]] || fail "Version: $(field "$arm" Version) is not a Debian 13 (+deb13) one"
names() { field "$1" Depends | tr ',' '\n' | sed 's/^ *//; s/ .*//' | sort; }
if [ "$(names "$arm")" != "$(names "$amd")" ]; then
    fail "Depends names other packages than the amd64 package's (< arm64 only, > amd64 only):"$'\n'"$(diff <(names "$arm") <(names "$amd") | grep '^[<>]')"
fi
for f in Maintainer Section Priority Description; do
    [ "$(field "$arm" "$f")" = "$(field "$amd" "$f")" ] || fail "its $f: differs from the amd64 package's"
done

# 2. Contents: "mode owner/group size path" per entry (dpkg-deb -c; the date column left out).
contents() { dpkg-deb -c "$1" | awk '{ size = $3; if ($6 == "./usr/bin/hark") size = "-"; print $1, $2, size, $6 }'; }
if ! diff <(contents "$amd") <(contents "$arm") >/dev/null; then
    fail "its contents differ from the amd64 package's (< amd64, > arm64):"$'\n'"$(diff <(contents "$amd") <(contents "$arm") | grep '^[<>]' | head -n 20)"
fi
entries=$(contents "$arm" | wc -l)

# 3. The binary.
tmp=$(mktemp -d)
trap 'rm -rf "$tmp"' EXIT
dpkg-deb --fsys-tarfile "$arm" | tar -C "$tmp" -x ./usr/bin/hark
bin=$tmp/usr/bin/hark
header=$(LC_ALL=C readelf -h "$bin") || fail "usr/bin/hark is not an ELF file"
grep -q '^ *Class: *ELF64$' <<<"$header" || fail "usr/bin/hark is not ELF64"
grep -q '^ *Machine: *AArch64$' <<<"$header" || fail "usr/bin/hark is for $(sed -n 's/^ *Machine: *//p' <<<"$header"), not AArch64"
grep -q '^ *OS/ABI: *UNIX - \(System V\|GNU\)$' <<<"$header" || fail "usr/bin/hark has OS/ABI $(sed -n 's/^ *OS\/ABI: *//p' <<<"$header")"
interp=$(LC_ALL=C readelf -l "$bin" | sed -n 's/.*\[Requesting program interpreter: \(.*\)\]/\1/p')
[ "$interp" = /lib/ld-linux-aarch64.so.1 ] || fail "usr/bin/hark's interpreter is '${interp:-none}', not /lib/ld-linux-aarch64.so.1"
LC_ALL=C readelf -l "$bin" | grep -q 'GNU_RELRO' || fail "usr/bin/hark has no GNU_RELRO segment"
dynamic=$(LC_ALL=C readelf -d "$bin")
grep -Eq '\(FLAGS\).*BIND_NOW|\(FLAGS_1\).*NOW' <<<"$dynamic" || fail "usr/bin/hark is not linked with BIND_NOW (-z now)"
if grep -Eq '\((RUNPATH|RPATH)\)' <<<"$dynamic"; then fail "usr/bin/hark has a RUNPATH: $(grep -E '\((RUNPATH|RPATH)\)' <<<"$dynamic")"; fi
deb_say "$(basename "$arm"): Version $(field "$arm" Version), the amd64 package's $entries paths, modes and sizes; usr/bin/hark AArch64, $interp, RELRO, BIND_NOW, no RUNPATH"

# 4. Depends against the loader's answer in the sysroot.
bash "$DEB_REPO/scripts/deb/check-depends.sh" "$arm" "$sysroot"
