#!/usr/bin/env bash
# Make (once) a Debian 13 "trixie" root under .build/trixie-<arch> with Debian's swiftlang and the -dev packages
# Hark builds against, so the project can be built and tested on trixie from a Debian 12 host (docs/debian13.md).
# Cached: debootstrap runs only when the root has no base stamp, and apt only when TRIXIE_PACKAGES changed.
# TRIXIE_ARCH=arm64 makes an arm64 root (needs qemu-user-static and binfmt on an amd64 host).
set -euo pipefail
source "$(dirname "$0")/lib.sh"

command -v debootstrap >/dev/null || die "debootstrap is not installed (apt-get install debootstrap)"

base_stamp="$ROOT/.hark-base"
pkg_stamp="$ROOT/.hark-packages"
wanted="$SUITE $ARCH $MIRROR ${TRIXIE_PACKAGES[*]}"

# The stamps alone are not enough: a root half removed (an interrupted rm -rf) can still have them.
intact() { [ -f "$base_stamp" ] && [ -x "$ROOT/usr/bin/apt-get" ] && [ -d "$ROOT/proc" ] && [ -d "$ROOT/dev" ]; }

if intact && [ -f "$pkg_stamp" ] && [ "$(cat "$pkg_stamp")" = "$wanted" ]; then
    say "root $ROOT is up to date"
    exit 0
fi

start=$(date +%s)
if ! intact; then
    # A half-made root (an interrupted debootstrap) is not worth repairing: start again.
    if [ -e "$ROOT" ]; then
        for m in "$ROOT/shared/benchmarks" "$ROOT/dev/shm" "$ROOT/dev" "$ROOT/proc"; do
            if mountpoint -q "$m"; then umount "$m"; fi
        done
        rm -f "$base_stamp" "$pkg_stamp"
        rm -rf --one-file-system "$ROOT"
    fi
    say "debootstrap $SUITE ($ARCH) from $MIRROR into $ROOT"
    # A mirror hiccup should not fail CI: three attempts, each from an empty directory.
    for attempt in 1 2 3; do
        mkdir -p "$ROOT"
        if debootstrap --arch="$ARCH" --variant=minbase "$SUITE" "$ROOT" "$MIRROR"; then break; fi
        [ "$attempt" -lt 3 ] || die "debootstrap $SUITE failed three times (its log: $ROOT/debootstrap/debootstrap.log)"
        say "debootstrap failed (attempt $attempt of 3); trying again"
        rm -rf --one-file-system "$ROOT"
        sleep $((attempt * 15))
    done
    echo "$SUITE $ARCH $MIRROR" >"$base_stamp"
    say "base system in $(( $(date +%s) - start )) s"
fi

enter_mounts
# Each download step three times, apt retrying single files five times within each.
apt_retry() {
    local attempt
    for attempt in 1 2 3; do
        if in_root apt-get -o Acquire::Retries=5 "$@"; then return 0; fi
        say "apt-get $1 failed (attempt $attempt of 3)"
        sleep $((attempt * 15))
    done
    die "apt-get $* failed three times in $ROOT"
}
apt_retry update -qq
apt_retry install -y --no-install-recommends "${TRIXIE_PACKAGES[@]}"
in_root apt-get clean
echo "$wanted" >"$pkg_stamp"
say "root ready in $(( $(date +%s) - start )) s: $(in_root swift --version 2>&1 | head -n 1)"
