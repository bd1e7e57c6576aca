#!/usr/bin/env bash
# Print the Depends: a Hark binary needs, computed from what it links: every DT_NEEDED soname (readelf -d, which
# reads any architecture's ELF), found the way the dynamic loader finds it in ROOT (the binary's RUNPATH, then
# the multiarch and plain library directories), then the package that owns that file (dpkg --root ROOT -S) and
# the version: the library package's own shlibs line for that soname if it ships one, else ">= the installed
# upstream version". ROOT is the system the package is for: / for this host's Debian 12, the trixie root for
# Debian 13, an arm64 root for arm64; nothing is executed in it, so a foreign architecture works.
# Usage: depends.sh BINARY ROOT        prints "pkg (>= v), pkg (>= v), ..." sorted by package name
#        depends.sh --table BINARY ROOT  prints "soname file package dependency" per line (for tests and docs)
set -euo pipefail

die() { echo "deb: error: $*" >&2; exit 1; }

table=0
if [ "${1:-}" = --table ]; then table=1; shift; fi
[ $# -eq 2 ] || die "usage: depends.sh [--table] BINARY ROOT"
binary=$1
root=${2%/}
[ -f "$binary" ] || die "binary '$binary' does not exist"
[ -d "$root/var/lib/dpkg" ] || die "root '${root:-/}' has no /var/lib/dpkg (not a Debian system)"
dynamic=$(readelf -d "$binary" 2>/dev/null) || die "'$binary' is not an ELF file readelf can read"

machine=$(readelf -h "$binary" | sed -n 's/^ *Machine: *//p')
case $machine in
    *X86-64*) triplet=x86_64-linux-gnu ;;
    *AArch64*) triplet=aarch64-linux-gnu ;;
    *) die "'$binary' is for '$machine'; only x86-64 and AArch64 are packaged" ;;
esac

runpath=$(printf '%s\n' "$dynamic" | sed -n 's/.*(\(RUNPATH\|RPATH\)).*\[\(.*\)\]/\2/p' | tr ':' ' ')
sonames=$(printf '%s\n' "$dynamic" | sed -n 's/.*(NEEDED).*\[\(.*\)\]/\1/p')
[ -n "$sonames" ] || die "'$binary' links no shared library (is it static?)"

# dpkg records /usr/lib or /lib as the package shipped it; with merged /usr either may be the one it knows.
owner() {
    local path=$1 alt out
    case $path in /usr/lib/*) alt=${path#/usr} ;; /lib/*) alt=/usr$path ;; *) alt= ;; esac
    for p in "$path" $alt; do
        # dpkg -S also prints "diversion by libc6 from: …" lines (trixie's /lib64 loader): not owners.
        out=$(dpkg --root="$root/" -S "$p" 2>/dev/null | grep -v '^diversion by' | head -n 1 | sed 's/:.*//; s/,.*//') || true
        if [ -n "$out" ]; then echo "$out"; return 0; fi
    done
    return 1
}

lines=()
for soname in $sonames; do
    file=
    for dir in $runpath /lib/$triplet /usr/lib/$triplet /lib /usr/lib; do
        dir=${dir//\$ORIGIN/$(dirname "$binary")}
        if [ -e "$root$dir/$soname" ]; then file=$dir/$soname; break; fi
    done
    [ -n "$file" ] || die "$soname (needed by $binary) is in none of ${runpath:+$runpath }/lib/$triplet /usr/lib/$triplet /lib /usr/lib under '${root:-/}'"
    package=$(owner "$file") || die "$soname: no installed package in '${root:-/}' owns $file"
    # shlibs: "libname soversion dependency", e.g. "libasound 2 libasound2t64 (>= 1.0.16)".
    base=${soname%%.so*}
    sover=${soname#*.so.}
    [ "$sover" = "$soname" ] && sover=
    dep=
    for f in "$root/var/lib/dpkg/info/$package.shlibs" "$root/var/lib/dpkg/info/$package:"*.shlibs; do
        [ -f "$f" ] || continue
        dep=$(awk -v n="$base" -v v="$sover" '$1 == n && $2 == v && $0 !~ /^udeb:/ { $1 = ""; $2 = ""; sub(/^ +/, ""); print; exit }' "$f")
        [ -n "$dep" ] && break
    done
    if [ -z "$dep" ]; then
        version=$(dpkg-query --root="$root/" -W -f='${Version}' "$package" 2>/dev/null | head -n 1)
        [ -n "$version" ] || die "$soname: cannot read the version of $package in '${root:-/}'"
        upstream=${version%-*}   # the Debian revision dropped, the epoch kept
        dep="$package (>= $upstream)"
    fi
    lines+=("$soname $file $package $dep")
done

if [ $table -eq 1 ]; then
    printf '%s\n' "${lines[@]}"
else
    # One entry per package; if two sonames of one package give different constraints, keep the first sorted.
    printf '%s\n' "${lines[@]}" | awk '{ $1 = ""; $2 = ""; $3 = ""; sub(/^ +/, ""); print }' | sort -u \
        | awk '{ if (!seen[$1]++) print }' | paste -sd, | sed 's/,/, /g'
fi
