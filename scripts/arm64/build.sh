#!/usr/bin/env bash
# Cross-compile `hark` for arm64 Debian 13 (a Raspberry Pi 4 or 5 on Debian's or Raspberry Pi OS's trixie):
# Debian's swiftlang 6.0.3 compiler and lld from the amd64 trixie root (scripts/trixie/root.sh), against the arm64
# sysroot of Debian packages (scripts/arm64/sysroot.sh). Release build, Swift runtime linked in statically (as
# `make release`), warnings are errors. docs/debian13.md, section "arm64".
#   .build/arm64/hark             the stripped binary (what a package ships)
#   .build/arm64/hark.unstripped  the same with its symbols and debug info
# Needs root (chroot into the trixie root). Incremental: <root>/src-arm64/.build is kept between runs.
set -euo pipefail
export TRIXIE_ARCH=amd64          # the compiler runs on this machine; the target is given by --triple
source "$(dirname "$0")/../trixie/lib.sh"
say() { echo "arm64: $*" >&2; }

OUT=${ARM64_DIR:-$REPO/.build/arm64}
start=$(date +%s)
bash "$REPO/scripts/trixie/root.sh" </dev/null
bash "$REPO/scripts/arm64/sysroot.sh" </dev/null
command -v aarch64-linux-gnu-strip >/dev/null || die "no aarch64-linux-gnu-strip: run scripts/setup.sh (binutils-aarch64-linux-gnu)"
prepared=$(date +%s)

# The sources as they are now (uncommitted changes included), copied, not bind-mounted (scripts/trixie/build.sh
# says why), to their own directory: the amd64 lane's /src and its .build stay untouched.
mkdir -p "$ROOT/src-arm64" "$ROOT/arm64-sysroot"
find "$ROOT/src-arm64" -mindepth 1 -maxdepth 1 ! -name .build -exec rm -rf --one-file-system {} +
tar -C "$REPO" --exclude=./.build --exclude=./.git --exclude=./.swiftpm --exclude=./bench/out --exclude='./bench/.venv*' -cf - . \
    | tar -C "$ROOT/src-arm64" -xf -

enter_mounts
if ! mountpoint -q "$ROOT/arm64-sysroot"; then
    mount --bind "$OUT/sysroot" "$ROOT/arm64-sysroot"; MOUNTED+=("$ROOT/arm64-sysroot")
    mount -o remount,bind,ro "$ROOT/arm64-sysroot"
fi

# SwiftPM passes --sdk to clang only, so swiftc gets -sdk too; -resource-dir points it at the arm64 stdlib
# (swift_static: the static runtime and its modules) instead of the amd64 one next to the compiler.
# SwiftPM's own pkg-config reader searches PKG_CONFIG_PATH first and prefixes PKG_CONFIG_SYSROOT_DIR, so the
# C libraries' flags are the arm64 sysroot's, not the root's amd64 .pc files.
S=/arm64-sysroot
flags=(
    -c release --product hark --static-swift-stdlib
    --triple aarch64-unknown-linux-gnu --sdk "$S"
    -Xswiftc -sdk -Xswiftc "$S"
    -Xswiftc -resource-dir -Xswiftc "$S/usr/libexec/swift/lib/swift_static"
    -Xswiftc -use-ld=lld -Xswiftc -no-toolchain-stdlib-rpath
    -Xswiftc -warnings-as-errors
    # What the .deb needs (the Makefile's DEB_SWIFT_FLAGS, docs/packaging.md): no RUNPATH $ORIGIN (lintian's
    # custom-library-search-path), full RELRO and BIND_NOW (its hardening checks).
    --disable-local-rpath -Xlinker -z -Xlinker relro -Xlinker -z -Xlinker now
)
say "cross-compiling for aarch64 with $(in_root swift --version 2>&1 | head -n 1)"
in_root sh -c 'cd /src-arm64 && exec env PKG_CONFIG_SYSROOT_DIR="$0" \
    PKG_CONFIG_PATH="$0/usr/lib/aarch64-linux-gnu/pkgconfig:$0/usr/share/pkgconfig" nice -n 10 swift build "$@"' \
    "$S" "${flags[@]}" </dev/null
built=$(date +%s)

binary=$ROOT/src-arm64/.build/aarch64-unknown-linux-gnu/release/hark
mkdir -p "$OUT"
cp "$binary" "$OUT/hark.unstripped"
aarch64-linux-gnu-strip -o "$OUT/hark" "$OUT/hark.unstripped"
file_type=$(LC_ALL=C readelf -h "$OUT/hark" | sed -n 's/^ *Machine: *//p')
[ "$file_type" = "AArch64" ] || die "$binary is not an AArch64 executable (readelf says '$file_type')"
say "root and sysroot $((prepared - start)) s, build $((built - prepared)) s"
say "$OUT/hark: $(stat -c %s "$OUT/hark") bytes stripped, $(stat -c %s "$OUT/hark.unstripped") bytes unstripped ($file_type)"
