#!/usr/bin/env bash
# Check a hark .deb's Depends: against what its binary really loads, found another way than build.sh found it:
# the binary is run through `ldd` in ROOT (the dynamic loader's own answer, RUNPATH and all), each library it
# links directly (readelf's NEEDED) is looked up in ldd's answer, `dpkg -S` names the package owning that
# file, and that set of packages must equal the library part of Depends: (everything but NON_LIBRARY_DEPENDS
# in build.sh), each version constraint satisfied by what ROOT has installed, and no library "not found".
# Usage: check-depends.sh DEB ROOT    (ROOT: / for a Debian 12 package on this host, else a root with /proc
#                                      mounted, e.g. scripts/deb/test.sh's overlay; the binary's arch must run)
set -euo pipefail
source "$(dirname "$0")/lib.sh"

[ $# -eq 2 ] || deb_die "usage: check-depends.sh DEB ROOT"
deb=$1 root=${2%/}
[ -f "$deb" ] || deb_die "'$deb' does not exist"
[ -d "$root/var/lib/dpkg" ] || deb_die "'${root:-/}' is not a Debian root"

tmp=$(mktemp -d "${root:-}/tmp/hark-depends.XXXXXX")
trap 'rm -rf "$tmp"' EXIT
dpkg-deb -x "$deb" "$tmp/x"
binary=$tmp/x/usr/bin/hark
[ -x "$binary" ] || deb_die "$deb has no usr/bin/hark"
inside=${binary#"$root"}

run() { if [ -z "$root" ]; then "$@"; else chroot "$root" /usr/bin/env -i PATH=/usr/bin:/bin:/usr/sbin:/sbin LANG=C.UTF-8 "$@"; fi; }

ldd_out=$(run ldd "$inside") || deb_die "ldd $inside failed in '${root:-/}': $ldd_out"
if grep -q 'not found' <<<"$ldd_out"; then deb_die "libraries not found in '${root:-/}':"$'\n'"$(grep 'not found' <<<"$ldd_out")"; fi

found=()
for soname in $(readelf -d "$binary" | sed -n 's/.*(NEEDED).*\[\(.*\)\]/\1/p'); do
    path=$(awk -v s="$soname" '$1 == s && $2 == "=>" { print $3 } $1 ~ "/" s "$" { print $1 }' <<<"$ldd_out" | head -n 1)
    [ -n "$path" ] || deb_die "ldd does not list $soname, which $binary needs"
    real=$(run readlink -f "$path")
    package=
    for p in "$path" "$real" "/usr$path" "/usr$real" "${path#/usr}" "${real#/usr}"; do
        if package=$(run dpkg -S "$p" 2>/dev/null | grep -v "^diversion by" | head -n 1 | sed 's/:.*//; s/,.*//') && [ -n "$package" ]; then break; fi
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
    installed=$(run dpkg-query -W -f='${Version}' "$name" 2>/dev/null | head -n 1) || installed=
    if [[ $entry =~ \(([<>=]+)\ ([^\)]+)\) ]]; then
        op=${BASH_REMATCH[1]} want=${BASH_REMATCH[2]}
        [ -n "$installed" ] || deb_die "$name (in Depends) is not installed in '${root:-/}'"
        case $op in '>=') dop=ge ;; '>>') dop=gt ;; '=') dop=eq ;; '<=') dop=le ;; '<<') dop=lt ;; *) deb_die "odd relation '$op' in '$entry'" ;; esac
        dpkg --compare-versions "$installed" "$dop" "$want" || deb_die "$entry: '${root:-/}' has $installed"
    fi
done
deb_say "Depends of $(basename "$deb") match ldd in '${root:-/}': $(wc -l <<<"$found_set") library packages + $(echo $non_library | tr ' ' ',')"
