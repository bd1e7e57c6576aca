#!/usr/bin/env bash
# Make (once) a minimal Debian 12 root, .build/deb/bookworm-root (debootstrap --variant=minbase, ~1 min), in which
# scripts/deb/test.sh installs the Debian 12 package: never on this host, whose packages the test must not change.
# Cached by a stamp; nothing is installed in it beyond minbase (the tests install into overlays of it).
set -euo pipefail
source "$(dirname "$0")/lib.sh"
[ "$(id -u)" -eq 0 ] || deb_die "needs root (debootstrap)"
command -v debootstrap >/dev/null || deb_die "debootstrap is not installed (scripts/setup.sh installs it)"
root=${BOOKWORM_ROOT:-$DEB_REPO/.build/deb/bookworm-root}
mirror=${BOOKWORM_MIRROR:-http://deb.debian.org/debian}
stamp="bookworm amd64 $mirror minbase"
if [ -f "$root/.hark-base" ] && [ "$(cat "$root/.hark-base")" = "$stamp" ] && [ -x "$root/usr/bin/apt-get" ]; then
    deb_say "bookworm root $root is up to date"
    exit 0
fi
for m in $(findmnt -rn -o TARGET | grep "^$root/" | sort -r); do umount "$m"; done
rm -rf --one-file-system "$root"
start=$(date +%s)
for attempt in 1 2 3; do
    mkdir -p "$root"
    if debootstrap --arch=amd64 --variant=minbase bookworm "$root" "$mirror" >"$DEB_REPO/.build/deb/debootstrap.log" 2>&1; then
        echo "$stamp" >"$root/.hark-base"
        deb_say "bookworm root made in $(( $(date +%s) - start )) s"
        exit 0
    fi
    deb_say "debootstrap failed (attempt $attempt of 3): $(tail -n 2 "$DEB_REPO/.build/deb/debootstrap.log" | tr '\n' ' ')"
    rm -rf --one-file-system "$root"
    sleep $((attempt * 15))
done
deb_die "debootstrap bookworm failed three times; log in .build/deb/debootstrap.log"
