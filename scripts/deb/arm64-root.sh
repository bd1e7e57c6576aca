#!/usr/bin/env bash
# Make (once) a minimal arm64 Debian 13 root, .build/deb/trixie-arm64-root (debootstrap --variant=minbase, its
# second stage run under qemu-user), in which scripts/deb/test.sh --arch arm64 installs the arm64 package.
# Cached by a stamp; nothing is installed in it beyond minbase (the tests install into overlays of it).
# Running arm64 programs in a chroot (dpkg, apt, the maintainer scripts, hark) needs the kernel to hand them to
# qemu-aarch64-static: binfmt_misc. When qemu-aarch64 is not registered yet, this mounts binfmt_misc (if it is
# not mounted) and registers it from qemu-user-static's own /usr/lib/binfmt.d/qemu-aarch64.conf, with the F flag
# (the interpreter is opened now, so it works inside any chroot). That registration is the machine's, not this
# root's: it stays after the script (as installing qemu-user-static on a booted Debian makes it).
# Usage: arm64-root.sh [--binfmt-only]
set -euo pipefail
source "$(dirname "$0")/lib.sh"
[ "$(id -u)" -eq 0 ] || deb_die "needs root (debootstrap, binfmt_misc)"

binfmt=/proc/sys/fs/binfmt_misc
conf=/usr/lib/binfmt.d/qemu-aarch64.conf
if [ ! -e "$binfmt/qemu-aarch64" ]; then
    [ -f "$conf" ] || deb_die "no $conf: install qemu-user-static (scripts/setup.sh does)"
    if [ ! -e "$binfmt/register" ]; then
        mount -t binfmt_misc binfmt_misc "$binfmt" || deb_die "cannot mount binfmt_misc at $binfmt (needs root and a kernel with it)"
    fi
    if [ ! -e "$binfmt/qemu-aarch64" ]; then
        grep -v '^#' "$conf" | head -n 1 >"$binfmt/register" || deb_die "the kernel refused $conf's line for $binfmt/register"
    fi
    deb_say "registered qemu-aarch64 with binfmt_misc ($conf)"
fi
[ "$(sed -n 1p "$binfmt/qemu-aarch64")" = enabled ] || deb_die "qemu-aarch64 is registered with binfmt_misc but disabled ($binfmt/qemu-aarch64)"
grep -q '^flags:.*F' "$binfmt/qemu-aarch64" || deb_die "qemu-aarch64's binfmt_misc entry has no F flag, so it cannot run in a chroot ($binfmt/qemu-aarch64)"
[ "${1:-}" = --binfmt-only ] && exit 0
[ $# -eq 0 ] || deb_die "unknown argument '$1' (usage: arm64-root.sh [--binfmt-only])"

# An arm64 program must really run in it (the second stage could not have finished otherwise).
says_arm64() { [ "$(chroot "$1" /usr/bin/dpkg --print-architecture)" = arm64 ]; }
root=${ARM64_INSTALL_ROOT:-$DEB_REPO/.build/deb/trixie-arm64-root}
minbase_root arm64 trixie "$root" "${TRIXIE_MIRROR:-http://deb.debian.org/debian}" trixie-arm64 says_arm64 "$root"
