#!/usr/bin/env bash
# Make (once) the arm64 Debian 13 sysroot Hark is cross-compiled against and run from under qemu-user:
# .build/arm64/sysroot, the files of Debian's arm64 packages unpacked with `dpkg-deb -x` (nothing is run, nothing
# is installed on this machine). docs/debian13.md, section "arm64".
#
# What goes in: libc6-dev, GCC 14's crt files and libstdc++, Debian's Swift runtime (`libswiftlang`), the -dev
# packages Hark links (scripts/trixie/lib.sh's list), their dependencies as apt resolves them for arm64, the
# PocketSphinx model and eSpeak NG's data; and from `swiftlang:arm64` only the aarch64 stdlib and Foundation
# modules, the static runtime (lib/swift_static) and clang's headers: the compiler itself comes from the amd64
# trixie root. apt runs with its own lists, cache and an empty dpkg status under .build/arm64/apt, so nothing
# of this machine's apt state is read or changed.
# A dpkg database is written for what was unpacked (var/lib/dpkg: status, each package's file list, shlibs,
# symbols and md5sums, all from the .deb files themselves), so `dpkg --root SYSROOT -S FILE` names the package
# that owns a library and scripts/deb/depends.sh computes the arm64 package's Depends against the sysroot.
# Cached: a stamp holds the package list and the layout version; a run with the same ones does nothing.
set -euo pipefail

REPO=$(cd "$(dirname "$0")/../.." && pwd)
OUT=${ARM64_DIR:-$REPO/.build/arm64}
MIRROR=${TRIXIE_MIRROR:-http://deb.debian.org/debian}
SYSROOT=$OUT/sysroot
APTDIR=$OUT/apt
KEYRING=/usr/share/keyrings/debian-archive-keyring.gpg

say() { echo "arm64: $*" >&2; }
die() { echo "arm64: error: $*" >&2; exit 1; }

# The arm64 packages the build links against and the qemu runs load. swiftlang is fetched on its own below:
# through apt it would pull in the whole arm64 toolchain's dependencies (python3, LLVM's libraries) for nothing.
PACKAGES=(
    libc6-dev libgcc-14-dev libstdc++-14-dev libswiftlang
    libpocketsphinx-dev libsphinxbase-dev pocketsphinx-en-us
    libespeak-ng-dev espeak-ng-data
    libasound2-dev libgpiod-dev libsndfile1-dev libspeexdsp-dev libsqlite3-dev
    libsodium-dev libwebsockets-dev libssl-dev libopus-dev libturbojpeg0-dev
)

stamp=$SYSROOT/.hark-sysroot
# LAYOUT names what the sysroot holds besides the unpacked files; changing it rebuilds older sysroots.
LAYOUT=dpkg-database-1
wanted="trixie arm64 $MIRROR $LAYOUT swiftlang ${PACKAGES[*]}"
if [ -f "$stamp" ] && [ "$(cat "$stamp")" = "$wanted" ]; then
    say "sysroot $SYSROOT is up to date"
    exit 0
fi

command -v apt-get >/dev/null && command -v dpkg-deb >/dev/null || die "needs apt-get and dpkg-deb (a Debian host)"
[ -r "$KEYRING" ] || die "no $KEYRING (apt-get install debian-archive-keyring): needed to check the trixie archive's signature"

start=$(date +%s)
mkdir -p "$APTDIR/lists/partial" "$APTDIR/cache/archives/partial" "$APTDIR/swiftlang"
echo "deb [signed-by=$KEYRING] $MIRROR trixie main" >"$APTDIR/sources.list"
: >"$APTDIR/status"
APT=(
    -o "Dir::Etc::SourceList=$APTDIR/sources.list" -o Dir::Etc::SourceParts=/dev/null
    -o Dir::Etc::Preferences=/dev/null -o Dir::Etc::PreferencesParts=/dev/null
    -o "Dir::State::Lists=$APTDIR/lists" -o "Dir::Cache=$APTDIR/cache" -o "Dir::State::status=$APTDIR/status"
    -o APT::Architecture=arm64 -o APT::Architectures::=arm64 -o Debug::NoLocking=1 -o APT::Sandbox::User=root
)
say "resolving and downloading ${#PACKAGES[@]} arm64 packages and their dependencies from $MIRROR (trixie)"
apt-get "${APT[@]}" update -qq
# With an empty status file apt treats nothing as installed, so the download is the whole dependency closure.
apt-get "${APT[@]}" install -qq -y --download-only --no-install-recommends "${PACKAGES[@]}" >/dev/null
rm -f "$APTDIR"/swiftlang/*.deb
(cd "$APTDIR/swiftlang" && apt-get "${APT[@]}" download -qq swiftlang)

# Unpack from nothing each time the list changes, so a package dropped from the list leaves nothing behind.
rm -rf --one-file-system "$SYSROOT"
mkdir -p "$SYSROOT"
debs=("$APTDIR"/cache/archives/*.deb)
say "unpacking ${#debs[@]} packages into $SYSROOT, with a dpkg database of them"
DB=$SYSROOT/var/lib/dpkg
mkdir -p "$DB/info" "$DB/updates"
ctrl=$APTDIR/control
: >"$DB/status.new"
for deb in "${debs[@]}"; do
    # -X unpacks as -x does and prints each path it unpacks ("./usr/lib/..."): that is the package's file list.
    files=$(dpkg-deb -X "$deb" "$SYSROOT") || die "dpkg-deb could not unpack $deb"
    rm -rf "$ctrl"
    dpkg-deb -e "$deb" "$ctrl" || die "dpkg-deb could not read the control archive of $deb"
    package=$(sed -n 's/^Package: *//p' "$ctrl/control")
    arch=$(sed -n 's/^Architecture: *//p' "$ctrl/control")
    if [ -z "$package" ] || [ -z "$arch" ]; then die "$deb: its control file has no Package: or Architecture: field"; fi
    # dpkg names a Multi-Arch: same package's info files <package>:<arch>.*, every other package's <package>.*
    # (the database layout var/lib/dpkg/info/format 1, as on every current Debian).
    name=$package
    if grep -qx 'Multi-Arch: same' "$ctrl/control"; then name=$package:$arch; fi
    # The list as dpkg writes it: "/." for the root, then every directory and file without "./" or a final "/".
    sed -e 's|^\./$|/.|' -e 's|^\.||' -e 's|\(.\)/$|\1|' <<<"$files" >"$DB/info/$name.list"
    for part in shlibs symbols md5sums triggers; do
        if [ -f "$ctrl/$part" ]; then cp "$ctrl/$part" "$DB/info/$name.$part"; fi
    done
    # The status paragraph: the package's own control fields, marked installed (dpkg writes Status second).
    { sed -n '1p' "$ctrl/control"; echo 'Status: install ok installed'; sed '1d; /^$/d' "$ctrl/control"; echo; } >>"$DB/status.new"
done
rm -rf "$ctrl"
mv "$DB/status.new" "$DB/status"
echo 1 >"$DB/info/format"
# swiftlang:arm64 is not in the database: only three of its directories are taken, not the package.
dpkg-deb --fsys-tarfile "$APTDIR"/swiftlang/swiftlang_*_arm64.deb | tar -C "$SYSROOT" -x --wildcards \
    './usr/libexec/swift/lib/swift/*' './usr/libexec/swift/lib/swift_static/*' './usr/libexec/swift/lib/clang/*'

# What dpkg's maintainer scripts and base-files would have made, and a build or the loader needs:
# the merged-/usr links (the loader is /lib/ld-linux-aarch64.so.1 and libc's linker scripts name /lib/...),
ln -sfn usr/lib "$SYSROOT/lib"
ln -sfn usr/bin "$SYSROOT/bin"
# and the update-alternatives links BLAS and LAPACK are found by (sphinxbase needs liblapack, which needs libblas).
for lib in blas lapack; do
    [ -e "$SYSROOT/usr/lib/aarch64-linux-gnu/$lib/lib$lib.so.3" ] || die "no lib$lib.so.3 in the unpacked packages"
    ln -sfn "$lib/lib$lib.so.3" "$SYSROOT/usr/lib/aarch64-linux-gnu/lib$lib.so.3"
done
# The Swift driver reads SDKSettings.json from the SDK it is given, and warns on every compile when there is none
# or when it lacks a VersionMap (an Apple SDK's field, empty here).
echo '{"CanonicalName": "debian-trixie-arm64", "DisplayName": "Debian 13 arm64", "Version": "13.0",' \
    '"VersionMap": {"macOS_iOSMac": {}, "iOSMac_macOS": {}}}' >"$SYSROOT/SDKSettings.json"

[ -f "$SYSROOT/usr/libexec/swift/lib/swift_static/linux/libswiftCore.a" ] || die "swiftlang:arm64 had no static runtime"
# The database must answer as dpkg would: the C library belongs to libc6.
owner=$(dpkg --root="$SYSROOT" -S /usr/lib/aarch64-linux-gnu/libc.so.6 2>/dev/null | sed 's/:.*//') || true
[ "$owner" = libc6 ] || die "the dpkg database in $DB does not work: dpkg -S libc.so.6 answered '${owner:-nothing}'"
echo "$wanted" >"$stamp"
say "sysroot ready in $(( $(date +%s) - start )) s: $(du -sh "$SYSROOT" | cut -f1), libswiftlang $(cat "$SYSROOT"/usr/share/doc/libswiftlang/changelog.Debian.gz 2>/dev/null | gzip -dc | head -n 1 | cut -d' ' -f2 || true)"
