#!/usr/bin/env bash
# Check a hark .deb's Depends: against what its binary really loads, found another way than build.sh found it:
# the binary is run through `ldd` in ROOT (the dynamic loader's own answer, RUNPATH and all), each library it
# links directly (readelf's NEEDED) is looked up in ldd's answer, `dpkg -S` names the package owning that
# file, and that set of packages must equal the library part of Depends: (everything but NON_LIBRARY_DEPENDS
# in build.sh), each version constraint satisfied by what ROOT has installed, and no library "not found".
# An arm64 package (its Architecture: is not this host's) is checked the same way in an installed arm64 root
# (scripts/deb/test.sh --arch arm64: binfmt_misc runs its programs, ldd included, under qemu-user). Against the
# arm64 sysroot (scripts/arm64/sysroot.sh: files and a dpkg database, no ldd, no shell) nothing can be run
# inside, so "ldd" is the sysroot's arm64 dynamic loader's own --list (what ldd runs) under
# qemu-aarch64-static -L ROOT, and dpkg and dpkg-query read ROOT with --root.
# Usage: check-depends.sh DEB ROOT    (ROOT: / for a Debian 12 package on this host, else a root with /proc
#                                      mounted, e.g. scripts/deb/test.sh's overlay, or for arm64 the sysroot)
set -euo pipefail
source "$(dirname "$0")/lib.sh"

[ $# -eq 2 ] || deb_die "usage: check-depends.sh DEB ROOT"
deb=$1 root=${2%/}
[ -f "$deb" ] || deb_die "'$deb' does not exist"
[ -d "$root/var/lib/dpkg" ] || deb_die "'${root:-/}' is not a Debian root"
arch=$(dpkg-deb -f "$deb" Architecture)
foreign=0
if [ "$arch" != "$(dpkg --print-architecture)" ]; then
    [ "$arch" = arm64 ] || deb_die "$deb is for '$arch'; only this host's architecture and arm64 can be checked"
    if [ -x "$root/usr/bin/ldd" ] && [ -x "$root/bin/sh" ] && [ "$(sed -n 1p /proc/sys/fs/binfmt_misc/qemu-aarch64 2>/dev/null)" = enabled ]; then
        : # an arm64 system whose programs binfmt_misc runs: checked from inside, as a native root is
    else
        foreign=1
        command -v qemu-aarch64-static >/dev/null || deb_die "no qemu-aarch64-static: run scripts/setup.sh (qemu-user-static)"
        loader=/lib/ld-linux-aarch64.so.1
        [ -e "$root$loader" ] || deb_die "'$root' has no $loader: not an arm64 root (make it with scripts/arm64/sysroot.sh)"
    fi
fi

# The package is unpacked inside ROOT when the checks run in it (chroot), elsewhere for the sysroot.
if [ $foreign -eq 1 ]; then tmp=$(mktemp -d); else tmp=$(mktemp -d "${root:-}/tmp/hark-depends.XXXXXX"); fi
trap 'rm -rf "$tmp"' EXIT
dpkg-deb -x "$deb" "$tmp/x"
binary=$tmp/x/usr/bin/hark
[ -x "$binary" ] || deb_die "$deb has no usr/bin/hark"
inside=${binary#"$root"}

run() { if [ -z "$root" ]; then "$@"; else chroot "$root" /usr/bin/env -i PATH=/usr/bin:/bin:/usr/sbin:/sbin LANG=C.UTF-8 "$@"; fi; }
if [ $foreign -eq 1 ]; then
    # qemu's -L looks up every absolute path the emulated loader opens in ROOT first, so it finds ROOT's libraries.
    list_libs() { qemu-aarch64-static -L "$root" "$root$loader" --list "$1"; }
    dpkg_S() { dpkg --root="$root/" -S "$1"; }
    query() { dpkg-query --root="$root/" "$@"; }
    real_path() { local r; r=$(readlink -f "$root$1") && echo "${r#"$(readlink -f "$root")"}"; }
    inside=$binary
else
    list_libs() { run ldd "$1"; }
    dpkg_S() { run dpkg -S "$1"; }
    query() { run dpkg-query "$@"; }
    real_path() { run readlink -f "$1"; }
fi

ldd_out=$(list_libs "$inside") || deb_die "ldd $inside failed in '${root:-/}': $ldd_out"
if grep -q 'not found' <<<"$ldd_out"; then deb_die "libraries not found in '${root:-/}':"$'\n'"$(grep 'not found' <<<"$ldd_out")"; fi

found=()
for soname in $(readelf -d "$binary" | sed -n 's/.*(NEEDED).*\[\(.*\)\]/\1/p'); do
    path=$(awk -v s="$soname" '$1 == s && $2 == "=>" { print $3 } $1 ~ "/" s "$" { print $1 }' <<<"$ldd_out" | head -n 1)
    [ -n "$path" ] || deb_die "ldd does not list $soname, which $binary needs"
    real=$(real_path "$path")
    package=
    for p in "$path" "$real" "/usr$path" "/usr$real" "${path#/usr}" "${real#/usr}"; do
        if package=$(dpkg_S "$p" 2>/dev/null | grep -v "^diversion by" | head -n 1 | sed 's/:.*//; s/,.*//') && [ -n "$package" ]; then break; fi
    done
    [ -n "$package" ] || deb_die "no package in '${root:-/}' owns $path ($soname)"
    found+=("$package")
done
found_set=$(printf '%s\n' "${found[@]}" | sort -u)

non_library=$(sed -n 's/^NON_LIBRARY_DEPENDS="\(.*\)"/\1/p' "$DEB_REPO/scripts/deb/build.sh" | tr -d ' ' | tr ',' '\n' | sort)
[ -n "$non_library" ] || deb_die "cannot read NON_LIBRARY_DEPENDS from scripts/deb/build.sh"
depends=$(dpkg-deb -f "$deb" Depends)
declared=$(tr ',' '\n' <<<"$depends" | sed 's/^ *//; s/ .*//' | sort)
declared_libs=$(comm -23 <(echo "$declared") <(echo "$non_library"))
missing_extra=$(comm -13 <(echo "$declared") <(echo "$non_library"))
[ -z "$missing_extra" ] || deb_die "Depends lacks $missing_extra"

if [ "$declared_libs" != "$found_set" ]; then
    deb_die "Depends' libraries differ from what ldd finds (< in Depends only, > found only):"$'\n'"$(diff <(echo "$declared_libs") <(echo "$found_set") | grep '^[<>]')"
fi

# On this host dpkg-shlibdeps itself (dpkg-dev) gives a third answer: the same packages, with minimum versions
# from the libraries' symbols files (build.sh's come from their shlibs files, or the installed version).
if [ -z "$root" ] && command -v dpkg-shlibdeps >/dev/null; then
    mkdir -p "$tmp/src/debian"
    printf 'Source: hark\n\nPackage: hark\nArchitecture: any\n' >"$tmp/src/debian/control"
    shlibdeps=$(cd "$tmp/src" && dpkg-shlibdeps -O "$binary" 2>/dev/null | sed -n 's/^shlibs:Depends=//p')
    shlib_set=$(tr ',' '\n' <<<"$shlibdeps" | sed 's/^ *//; s/ .*//' | sort -u)
    [ "$shlib_set" = "$found_set" ] || deb_die "dpkg-shlibdeps names other packages than ldd: $shlibdeps"
fi

# Every constraint must hold for what ROOT has installed (a constraint too new would make apt refuse it).
IFS=',' read -ra entries <<<"$depends"
for entry in "${entries[@]}"; do
    entry=$(sed 's/^ *//; s/ *$//' <<<"$entry")
    name=${entry%% *}
    installed=$(query -W -f='${Version}' "$name" 2>/dev/null | head -n 1) || installed=
    if [[ $entry =~ \(([<>=]+)\ ([^\)]+)\) ]]; then
        op=${BASH_REMATCH[1]} want=${BASH_REMATCH[2]}
        [ -n "$installed" ] || deb_die "$name (in Depends) is not installed in '${root:-/}'"
        case $op in '>=') dop=ge ;; '>>') dop=gt ;; '=') dop=eq ;; '<=') dop=le ;; '<<') dop=lt ;; *) deb_die "odd relation '$op' in '$entry'" ;; esac
        dpkg --compare-versions "$installed" "$dop" "$want" || deb_die "$entry: '${root:-/}' has $installed"
    fi
done
deb_say "Depends of $(basename "$deb") match ldd in '${root:-/}': $(wc -l <<<"$found_set") library packages + $(echo $non_library | tr ' ' ',')"
