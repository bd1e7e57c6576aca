#!/usr/bin/env bash
# The hardware lane's checks built on Debian 13 (Swift 6.0.3, libgpiod 2.2.1): `hark-hwcheck` is built in the
# trixie root and booted in the same VM as `make hwtest` (Debian 12's kernel, gpio-sim), with the root's shared
# libraries in place of this host's, so the libgpiod v2 side of CGPIOD/shim.h drives real kernel lines.
# Needs a previous `make hwtest` (its kernel, modules and initramfs stage under .build/hwlane) and the root.
# The ALSA and V4L2 checks run with the root's alsa-lib configuration and eSpeak NG data too (trixie's eSpeak NG
# 1.52 reads its own data format), so every backend is the Debian 13 one.
# Usage: scripts/trixie/hwlane.sh [--only NAMES]   (default: gpio.,alsa.,camera.: every check but appliance.loop)
set -euo pipefail
source "$(dirname "$0")/lib.sh"

only=gpio.,alsa.,camera.
case "${1:-}" in
    --only) only=${2:?--only needs check names such as gpio.} ;;
    "") ;;
    *) die "unknown argument '$1' (usage: hwlane.sh [--only NAMES])" ;;
esac
case $only in *[!a-z0-9.,]*) die "--only takes check names such as gpio.,alsa. (got '$only')" ;; esac

HWLANE=$REPO/.build/hwlane
STAGE=$HWLANE/initramfs
[ -x "$STAGE/init" ] || die "no hardware-lane stage at $STAGE: run 'make hwtest ONLY=gpio.' once first"
VMLINUZ=$(ls "$HWLANE"/kernel/*/boot/vmlinuz-* 2>/dev/null | head -n 1)
[ -n "$VMLINUZ" ] || die "no kernel under $HWLANE/kernel: run 'make hwtest ONLY=gpio.' once first"
[ -f "$ROOT/.hark-packages" ] || die "no trixie root at $ROOT: run scripts/trixie/root.sh first"

# The checks, built in the root with the .deb's release flags (as the host lane builds them, Swift's runtime linked
# in), so they share the compiled modules of build.sh --release, which copies the worktree there first.
bash "$(dirname "$0")/build.sh" --release
enter_mounts
say "swift build $RELEASE_FLAGS --product hark-hwcheck in the root"
in_root sh -c "cd /src && exec nice -n 10 swift build $RELEASE_FLAGS --product hark-hwcheck" </dev/null

# The host's stage with the trixie binary and every shared object it needs taken from the root (glibc 2.41,
# libgpiod 2.2.1, alsa-lib 1.2.14, …; the Swift 6.0.3 runtime is linked in); busybox keeps working on the newer glibc.
WORK=$REPO/.build/trixie-hwlane
rm -rf "$WORK" && mkdir -p "$WORK"
cp -a "$STAGE" "$WORK/stage"
strip -o "$WORK/stage/hark/hark-hwcheck" "$ROOT/src/.build/release/hark-hwcheck"
for lib in $(in_root ldd /src/.build/release/hark-hwcheck | grep -o '/[^ ]*'); do
    mkdir -p "$WORK/stage$(dirname "$lib")"
    rm -f "$WORK/stage$lib"
    cp -L "$ROOT$lib" "$WORK/stage$lib"
done
# Data read by the libraries: alsa-lib's configuration and eSpeak NG's data (English only, as run.sh stages
# them) from the root, in place of the host's.
rm -rf "$WORK/stage/usr/share/alsa" && cp -a "$ROOT/usr/share/alsa" "$WORK/stage/usr/share/alsa"
ESPEAK=/usr/lib/x86_64-linux-gnu/espeak-ng-data
rm -rf "$WORK/stage$ESPEAK" && mkdir -p "$WORK/stage$ESPEAK"
for f in "$ROOT$ESPEAK"/*; do
    case $(basename "$f") in *_dict) [ "$(basename "$f")" = en_dict ] || continue ;; esac
    cp -a "$f" "$WORK/stage$ESPEAK/"
done
INITRD=$WORK/initramfs.cpio.gz
(cd "$WORK/stage" && find . -print0 | cpio --null -o -H newc --quiet | gzip -1 > "$INITRD")

LOG=$WORK/vm.log
say "booting $VMLINUZ with the trixie-built checks (--only $only)"
set +e
timeout --foreground -k 10 "${HWLANE_TIMEOUT:-900}" qemu-system-x86_64 -accel tcg -cpu max -smp 2 -m 1536 -nographic -no-reboot \
    -kernel "$VMLINUZ" -initrd "$INITRD" -append "console=ttyS0 panic=-1 loglevel=4 rdinit=/init hwlane.only=$only" \
    </dev/null 2>&1 | tee "$LOG"
set -e
verdict=$(tr -d '\r' < "$LOG" | sed -n 's/^hwlane-verdict: //p' | tail -n 1)
case $verdict in
    pass) say "every check passed with the Debian 13 build" ;;
    fail*) die "checks failed: ${verdict#fail } (VM output in $LOG)" ;;
    *) die "the VM stopped without a verdict (VM output in $LOG)" ;;
esac
