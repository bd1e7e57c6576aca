#!/usr/bin/env bash
# Package a Hark binary as a .deb with dpkg-deb (docs/packaging.md): the binary as /usr/bin/hark, the shipped
# files (Intents/, Models/, web/, docs/openapi.json) in /usr/share/hark, the configuration /etc/hark/hark.json
# (a conffile), the systemd unit, and the maintainer scripts that make the system user hark and /var/lib/hark.
# Depends: is computed from what the binary links (scripts/deb/depends.sh against ROOT), plus the data packages
# it reads and passwd for the postinst's useradd (NON_LIBRARY_DEPENDS below). The binary may come from anywhere
# (this host, the trixie root, the arm64 cross build, an arm64 build elsewhere): its architecture is read from
# its ELF header.
# Usage: build.sh --binary FILE --distro bookworm|trixie [--root DIR] [--out DIR]
#   --root  the Debian system the package is for, whose dpkg database says which package owns each library
#           (default / for bookworm; for trixie the trixie root, $TRIXIE_ROOT or .build/trixie-amd64, and for
#           an arm64 binary the arm64 sysroot, .build/arm64/sysroot, whose dpkg database sysroot.sh writes)
#   --out   where the .deb goes (default .build/deb)
set -euo pipefail

REPO=$(cd "$(dirname "$0")/../.." && pwd)
die() { echo "deb: error: $*" >&2; exit 1; }
say() { echo "deb: $*" >&2; }

binary= distro= root= out=$REPO/.build/deb
while [ $# -gt 0 ]; do
    case "$1" in
        --binary) binary=${2:?--binary needs a file}; shift ;;
        --distro) distro=${2:?--distro needs bookworm or trixie}; shift ;;
        --root) root=${2:?--root needs a directory}; shift ;;
        --out) out=${2:?--out needs a directory}; shift ;;
        *) die "unknown argument '$1' (usage: build.sh --binary FILE --distro bookworm|trixie [--root DIR] [--out DIR])" ;;
    esac
    shift
done
[ -n "$binary" ] || die "--binary FILE is required"
[ -f "$binary" ] || die "--binary: '$binary' does not exist"
command -v dpkg-deb >/dev/null || die "dpkg-deb is not installed"

case $(readelf -h "$binary" 2>/dev/null | sed -n 's/^ *Machine: *//p') in
    *X86-64*) arch=amd64 ;;
    *AArch64*) arch=arm64 ;;
    "") die "--binary: '$binary' is not an ELF executable" ;;
    *) die "--binary: '$binary' is neither x86-64 nor AArch64" ;;
esac
case $distro in
    bookworm) tag=deb12; unit_dir=lib/systemd/system; root=${root:-/} ;;
    trixie) tag=deb13; unit_dir=usr/lib/systemd/system
        if [ "$arch" = arm64 ]; then root=${root:-${ARM64_DIR:-$REPO/.build/arm64}/sysroot}; else root=${root:-${TRIXIE_ROOT:-$REPO/.build/trixie-$arch}}; fi ;;
    *) die "--distro must be bookworm or trixie (got '${distro}')" ;;
esac
[ -d "$root/var/lib/dpkg" ] || die "--root: '$root' is not a Debian system (no var/lib/dpkg)"

upstream=$(sed -n 's/^ *static let version = "\([0-9][0-9.]*\)".*/\1/p' "$REPO/Sources/HarkCLI/HarkMain.swift")
[ -n "$upstream" ] || die "no 'static let version = \"X.Y.Z\"' in Sources/HarkCLI/HarkMain.swift"
version=$upstream+$tag

# Besides the libraries it links, hark reads three packages' data at run time (the acoustic model and
# pronunciation dictionary, eSpeak NG's voices, the word list the matcher weighs unknown words by), and the
# postinst needs useradd. Both distributions have these under the same names.
NON_LIBRARY_DEPENDS="espeak-ng-data, passwd, pocketsphinx-en-us, wamerican-small"
depends=$(bash "$REPO/scripts/deb/depends.sh" "$binary" "$root")
depends="$depends, $NON_LIBRARY_DEPENDS"

stage=$out/stage-$distro-$arch
rm -rf "$stage"
mkdir -p "$stage/DEBIAN" "$stage/usr/bin" "$stage/usr/share/hark" "$stage/usr/share/doc/hark" "$stage/etc/hark" "$stage/$unit_dir"

# The binary, stripped by a strip that knows its architecture (the Swift toolchain's llvm-strip knows both).
stripper=
for s in llvm-strip "$( [ $arch = arm64 ] && echo aarch64-linux-gnu-strip || echo strip)"; do
    if command -v "$s" >/dev/null; then stripper=$s; break; fi
done
[ -n "$stripper" ] || die "no strip for $arch (llvm-strip or binutils)"
"$stripper" --strip-unneeded -o "$stage/usr/bin/hark" "$binary"
chmod 0755 "$stage/usr/bin/hark"

# What the binary reads at run time (SpeechCLI.repositoryFile finds /usr/share/hark from /usr/bin/hark).
install -D -m 0644 "$REPO/Intents/home.json" "$stage/usr/share/hark/Intents/home.json"
for f in wake.json wake-verifier.json pronunciations.dict en-us-noisy.means en-us-moderate.means README.md; do install -D -m 0644 "$REPO/Models/$f" "$stage/usr/share/hark/Models/$f"; done
for f in "$REPO"/web/*; do install -D -m 0644 "$f" "$stage/usr/share/hark/web/$(basename "$f")"; done
install -D -m 0644 "$REPO/docs/openapi.json" "$stage/usr/share/hark/docs/openapi.json"

# The configuration: deploy/hark.json with the installed workspace and data directory.
sed -e 's|^  "workspace": "../Intents/home.json",|  "workspace": "/usr/share/hark/Intents/home.json",|' \
    -e 's|^  "data_directory": null,|  "data_directory": "/var/lib/hark",|' \
    "$REPO/deploy/hark.json" >"$stage/etc/hark/hark.json"
grep -q '"workspace": "/usr/share/hark/Intents/home.json"' "$stage/etc/hark/hark.json" \
    && grep -q '"data_directory": "/var/lib/hark"' "$stage/etc/hark/hark.json" \
    || die "deploy/hark.json changed: its \"workspace\" and \"data_directory\" lines no longer match what build.sh rewrites"
chmod 0644 "$stage/etc/hark/hark.json"
install -m 0644 "$REPO/packaging/hark.service" "$stage/$unit_dir/hark.service"

install -m 0644 "$REPO/packaging/copyright" "$stage/usr/share/doc/hark/copyright"
# The man page names every command the binary has (each Command's `static let name`), so it cannot fall behind.
for name in $(grep -h 'static let name = "' "$REPO"/Sources/HarkCLI/*.swift | sed 's/.*"\(.*\)".*/\1/'); do
    grep -Eq "^\.BR? (.*[ \"])?$name([ \",]|\$)" "$REPO/packaging/hark.1" \
        || die "packaging/hark.1 does not describe the command '$name' (under COMMANDS)"
done
mkdir -p "$stage/usr/share/man/man1"
gzip -9n <"$REPO/packaging/hark.1" >"$stage/usr/share/man/man1/hark.1.gz"
chmod 0644 "$stage/usr/share/man/man1/hark.1.gz"
gzip -9n <"$REPO/README.md" >"$stage/usr/share/doc/hark/README.md.gz"
{
    echo "hark ($version) $distro; urgency=medium"
    echo
    echo "  * Hark $upstream for Debian ${tag#deb} ($distro), built from $(git -C "$REPO" rev-parse --short HEAD 2>/dev/null || echo 'a source tree')."
    echo
    echo " -- ${HARK_MAINTAINER:-Hark developers <hark@example.org>}  $(date -R -d "@${SOURCE_DATE_EPOCH:-$(git -C "$REPO" log -1 --format=%ct 2>/dev/null || date +%s)}")"
} | gzip -9n >"$stage/usr/share/doc/hark/changelog.gz"
chmod 0644 "$stage/usr/share/doc/hark/changelog.gz" "$stage/usr/share/doc/hark/README.md.gz"

install -m 0755 "$REPO/packaging/postinst" "$REPO/packaging/postrm" "$stage/DEBIAN/"
echo /etc/hark/hark.json >"$stage/DEBIAN/conffiles"
(cd "$stage" && find . -path ./DEBIAN -prune -o -type f ! -path './etc/*' -printf '%P\0' | sort -z | xargs -0 md5sum) >"$stage/DEBIAN/md5sums"
chmod 0644 "$stage/DEBIAN/conffiles" "$stage/DEBIAN/md5sums"
cat >"$stage/DEBIAN/control" <<CONTROL
Package: hark
Version: $version
Architecture: $arch
Maintainer: ${HARK_MAINTAINER:-Hark developers <hark@example.org>}
Installed-Size: $(du -sk --exclude=DEBIAN "$stage" | cut -f1)
Depends: $depends
Section: sound
Priority: optional
Description: offline voice assistant for the Raspberry Pi
 Hark waits for "hey hark", a push-to-talk button or a typed line, understands
 the request against an intent workspace in IBM Watson Assistant v1 format,
 answers aloud, switches a light on GPIO and takes pictures with a V4L2 camera,
 with no cloud and no account. It serves its own web page and a
 Watson-compatible API on the LAN.
 .
 The service (hark.service, not enabled on install) runs as the system user
 hark with /etc/hark/hark.json and keeps its data in /var/lib/hark.
CONTROL

mkdir -p "$out"
deb=$out/hark_${version}_$arch.deb
# find/-printf above and these modes make the tree the same whoever built it; files belong to root.
find "$stage" -type d -exec chmod 0755 {} +
dpkg-deb --root-owner-group -Zxz --build "$stage" "$deb" >/dev/null
say "$deb: $(du -k "$deb" | cut -f1) KiB, installed $(grep Installed-Size "$stage/DEBIAN/control" | cut -d' ' -f2) KiB"
say "Depends: $depends"
echo "$deb"
