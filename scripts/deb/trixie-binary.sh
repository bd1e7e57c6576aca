#!/usr/bin/env bash
# Build the optimised `hark` for Debian 13 in the trixie root with Debian's swiftlang (scripts/trixie/build.sh
# --release) and copy it to .build/deb/bin/hark-trixie-<arch>. With --overlay the build runs in an overlayfs view
# of the root (upper directory .build/deb/trixie-build, kept between runs), so a shared cached root is only read;
# root.sh runs first either way (on the overlay with --overlay), so the root has every TRIXIE_PACKAGES entry.
set -euo pipefail
source "$(dirname "$0")/lib.sh"

overlay=0
case "${1:-}" in
    --overlay) overlay=1 ;;
    "") ;;
    *) deb_die "unknown argument '$1' (usage: trixie-binary.sh [--overlay])" ;;
esac
arch=${TRIXIE_ARCH:-amd64}
root=${TRIXIE_ROOT:-$DEB_REPO/.build/trixie-$arch}
[ -f "$root/.hark-packages" ] || deb_die "no trixie root at $root: run scripts/trixie/root.sh (make trixie-test) first"

if [ $overlay -eq 1 ]; then
    trap overlays_down EXIT
    trap 'exit 130' INT TERM
    overlay_up "$root" "$DEB_REPO/.build/deb/trixie-build" keep
    root=$DEB_REPO/.build/deb/trixie-build/merged
    # Whatever TRIXIE_PACKAGES has that the shared root lacks goes into the overlay (root.sh: apt only, cached).
    TRIXIE_ROOT=$root bash "$DEB_REPO/scripts/trixie/root.sh" </dev/null
else
    bash "$DEB_REPO/scripts/trixie/root.sh" </dev/null
fi
TRIXIE_ROOT=$root bash "$DEB_REPO/scripts/trixie/build.sh" --release
mkdir -p "$DEB_REPO/.build/deb/bin"
cp "$root/src/.build/release/hark" "$DEB_REPO/.build/deb/bin/hark-trixie-$arch"
deb_say "Debian 13 binary: .build/deb/bin/hark-trixie-$arch ($(du -k "$DEB_REPO/.build/deb/bin/hark-trixie-$arch" | cut -f1) KiB unstripped)"
