#!/usr/bin/env bash
# Route (b) of docs/debian13.md's "arm64": building natively in an emulated arm64 root. Rather than debootstrap
# a whole arm64 root and wait for a full build under qemu, this measures the one thing that decides it, the
# speed of the arm64 compiler under qemu-user against the amd64 compiler doing the same work:
# both compile HarkCore (-O, whole module, for aarch64) from the same sources, RUNS times each (default 1: the
# emulated compile takes over 13 minutes of CPU), and the medians are compared. The ratio times the cross build's time is the native build's time under emulation.
#
# The arm64 compiler is Debian's swiftlang:arm64 with all its dependencies, unpacked into
# .build/arm64/emulated (a copy of the sysroot plus the toolchain). Its driver starts
# swift-frontend as a child process, so this needs qemu-user-static's binfmt registration (it is, when
# /proc/sys/fs/binfmt_misc is mounted when the package is installed). Needs root (chroot) for the amd64 side.
set -euo pipefail
export TRIXIE_ARCH=amd64
source "$(dirname "$0")/../trixie/lib.sh"
say() { echo "arm64: $*" >&2; }

OUT=${ARM64_DIR:-$REPO/.build/arm64}
EMU=$OUT/emulated
APTDIR=$OUT/apt
RUNS=${RUNS:-1}
[ -f "$OUT/sysroot/.hark-sysroot" ] || die "no arm64 sysroot: run scripts/arm64/sysroot.sh first"
[ -f "$ROOT/.hark-packages" ] || die "no trixie root at $ROOT: run scripts/trixie/root.sh first"
[ -f /proc/sys/fs/binfmt_misc/qemu-aarch64 ] || die "qemu-aarch64 is not registered with binfmt_misc (mount -t binfmt_misc binfmt_misc /proc/sys/fs/binfmt_misc, then reinstall qemu-user-static)"

if [ ! -f "$EMU/.hark-emulated" ]; then
    rm -rf --one-file-system "$EMU"
    cp -a "$OUT/sysroot" "$EMU"
    mkdir -p "$OUT/apt-emulated/archives/partial"
    APT=(
        -o "Dir::Etc::SourceList=$APTDIR/sources.list" -o Dir::Etc::SourceParts=/dev/null
        -o Dir::Etc::Preferences=/dev/null -o Dir::Etc::PreferencesParts=/dev/null
        -o "Dir::State::Lists=$APTDIR/lists" -o "Dir::Cache=$OUT/apt-emulated" -o "Dir::State::status=$APTDIR/status"
        -o APT::Architecture=arm64 -o APT::Architectures::=arm64 -o Debug::NoLocking=1 -o APT::Sandbox::User=root
    )
    apt-get "${APT[@]}" install -qq -y --download-only --no-install-recommends swiftlang >/dev/null
    for deb in "$OUT"/apt-emulated/archives/*.deb; do dpkg-deb -x "$deb" "$EMU"; done
    touch "$EMU/.hark-emulated"
fi

# The same compile on both sides: HarkCore for aarch64, optimised, whole module, one object.
mkdir -p "$ROOT/src-arm64-core" "$ROOT/arm64-sysroot" "$OUT/estimate"
rm -rf "$ROOT/src-arm64-core/HarkCore" "$OUT/estimate/HarkCore"
cp -r "$REPO/Sources/HarkCore" "$ROOT/src-arm64-core/"
cp -r "$REPO/Sources/HarkCore" "$OUT/estimate/"
enter_mounts
if ! mountpoint -q "$ROOT/arm64-sysroot"; then
    mount --bind "$OUT/sysroot" "$ROOT/arm64-sysroot"; MOUNTED+=("$ROOT/arm64-sysroot")
    mount -o remount,bind,ro "$ROOT/arm64-sysroot"
fi
compile='cd "$0" && "$2" -target aarch64-unknown-linux-gnu -sdk "$1" -resource-dir "$1/usr/libexec/swift/lib/swift" \
    -module-name HarkCore -parse-as-library -O -wmo -c $(find HarkCore -name "*.swift" | sort) -o HarkCore.o'

cpu() { # user+system CPU seconds of the command's children
    python3 -c 'import resource, subprocess, sys
subprocess.run(sys.argv[1:], check=True, stdout=subprocess.DEVNULL)
r = resource.getrusage(resource.RUSAGE_CHILDREN); print(f"{r.ru_utime + r.ru_stime:.1f}")' "$@"
}
median() { printf '%s\n' "$@" | sort -n | awk '{a[NR]=$1} END {print a[int((NR+1)/2)]}'; }

native=() emulated=()
for ((i = 1; i <= RUNS; i++)); do
    native+=("$(cpu chroot "$ROOT" /usr/bin/env -i PATH=/usr/bin:/bin HOME=/root sh -c "$compile" /src-arm64-core /arm64-sysroot /usr/bin/swiftc)")
    say "run $i: amd64 compiler ${native[-1]} s CPU; now the arm64 compiler under qemu"
    emulated+=("$(cpu env -i PATH=/usr/bin:/bin HOME=/root QEMU_LD_PREFIX="$EMU" sh -c "$compile" \
        "$OUT/estimate" "$EMU" "$EMU/usr/libexec/swift/bin/swiftc")")
    say "run $i: arm64 compiler under qemu ${emulated[-1]} s CPU"
done
n=$(median "${native[@]}") e=$(median "${emulated[@]}")
say "HarkCore -O -wmo for aarch64, median of $RUNS: amd64 compiler $n s CPU, arm64 compiler under qemu-user $e s CPU: $(python3 -c "print(f'{$e / $n:.1f}')")x"
