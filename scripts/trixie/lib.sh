# Shared by scripts/trixie/*.sh: where the Debian 13 root lives and how to enter it safely.
# Sourced, not run. Needs root (debootstrap, mount, chroot).

ARCH=${TRIXIE_ARCH:-amd64}
SUITE=trixie
MIRROR=${TRIXIE_MIRROR:-http://deb.debian.org/debian}
REPO=$(cd "$(dirname "${BASH_SOURCE[0]}")/../.." && pwd)
ROOT=${TRIXIE_ROOT:-$REPO/.build/trixie-$ARCH}

# Every Debian 13 package the build and the tests need: scripts/setup.sh's PACKAGES under trixie's names, minus
# the browser test's (chromium, python3-venv). Trixie still ships PocketSphinx 5prealpha with sphinxbase
# (0.8+5prealpha+1-15, the same API as Debian 12's), not 5.0: docs/debian13.md.
TRIXIE_PACKAGES=(
    swiftlang pkg-config ca-certificates
    libpocketsphinx-dev libsphinxbase-dev pocketsphinx-en-us
    libespeak-ng-dev espeak-ng-data espeak-ng
    libasound2-dev
    libgpiod-dev
    libsndfile1-dev libspeexdsp-dev
    libsqlite3-dev
    libsodium-dev libwebsockets-dev libssl-dev libopus-dev
    libturbojpeg0-dev
    wamerican-small flite python3
    libstdc++-14-dev    # Swift's runtime linked in (--static-swift-stdlib, the .deb's build) links -lstdc++
)

# The optimised builds in the root (build.sh --release for the .deb, hwlane.sh's checks): one set of flags, so
# the two share their compiled modules. Swift's runtime linked in, no RUNPATH, full RELRO (docs/packaging.md).
# lld (shipped with swiftlang): with Swift's runtime linked in, the default ld.bfd 2.44 writes no GNU_RELRO segment
# even when given -z relro (a hello world shows it; lld does), and lintian warns hardening-no-relro.
RELEASE_FLAGS="-c release --static-swift-stdlib --disable-local-rpath -Xswiftc -use-ld=lld -Xlinker -z -Xlinker relro -Xlinker -z -Xlinker now -Xswiftc -warnings-as-errors"

say() { echo "trixie: $*" >&2; }
die() { echo "trixie: error: $*" >&2; exit 1; }

[ "$(id -u)" -eq 0 ] || die "needs root (debootstrap, mount and chroot)"

MOUNTED=()
# /proc is a fresh procfs and /dev a fresh tmpfs with the few nodes a build needs, never bind mounts of the
# host's: a `rm -rf .build` that runs while the root is entered then deletes nothing of the host's.
enter_mounts() {
    mountpoint -q "$ROOT/proc" || { mount -t proc proc "$ROOT/proc"; MOUNTED+=("$ROOT/proc"); }
    if ! mountpoint -q "$ROOT/dev"; then
        mount -t tmpfs -o mode=755,size=64k devtmp "$ROOT/dev"; MOUNTED+=("$ROOT/dev")
        mknod -m 666 "$ROOT/dev/null" c 1 3
        mknod -m 666 "$ROOT/dev/zero" c 1 5
        mknod -m 666 "$ROOT/dev/full" c 1 7
        mknod -m 666 "$ROOT/dev/random" c 1 8
        mknod -m 666 "$ROOT/dev/urandom" c 1 9
        mknod -m 666 "$ROOT/dev/tty" c 5 0
        ln -s /proc/self/fd "$ROOT/dev/fd"
        ln -s /proc/self/fd/0 "$ROOT/dev/stdin"
        ln -s /proc/self/fd/1 "$ROOT/dev/stdout"
        ln -s /proc/self/fd/2 "$ROOT/dev/stderr"
        mkdir -p "$ROOT/dev/shm" "$ROOT/dev/pts"
        mount -t tmpfs -o mode=1777 shm "$ROOT/dev/shm"; MOUNTED+=("$ROOT/dev/shm")
    fi
    trap leave_mounts EXIT INT TERM
}

leave_mounts() {
    local i
    for ((i = ${#MOUNTED[@]} - 1; i >= 0; i--)); do
        umount "${MOUNTED[i]}" 2>/dev/null || umount -l "${MOUNTED[i]}" || echo "trixie: warning: could not unmount ${MOUNTED[i]}" >&2
    done
    MOUNTED=()
}

# Run a command inside the root, as root, with a clean environment.
in_root() {
    chroot "$ROOT" /usr/bin/env -i HOME=/root PATH=/usr/local/bin:/usr/bin:/bin:/usr/sbin:/sbin LANG=C.UTF-8 \
        DEBIAN_FRONTEND=noninteractive "$@"
}
