#!/usr/bin/env bash
# The hardware lane (issue 6, docs/hardware-testing.md): Hark's real backends against real kernel drivers —
# gpio-sim (GPIO), snd-aloop (ALSA) and vivid (V4L2) — inside Debian's own kernel booted under qemu (TCG).
#
# Everything comes from Debian packages: the kernel image, headers, kbuild and source are fetched with
# `apt-get download` and unpacked with `dpkg -x` under .build/hwlane/ (nothing is installed into /boot);
# gpio-sim, which Debian does not build, is compiled out of tree from the kernel source. The initramfs holds
# busybox, the modules, `hark-hwcheck` and the data it needs. Exits non-zero unless every check passed.
#
#   scripts/hwlane/run.sh            build what is missing (cached in .build/hwlane/), boot, run every check
#   scripts/hwlane/run.sh --only gpio.button,camera.   only these checks (a name ending in . is a group)
#   scripts/hwlane/run.sh --list     the checks and what each proves (no VM)
#   HWLANE_TIMEOUT=900               seconds the VM may run before it is killed (a failure)
#   HWLANE_SMP=2 HWLANE_MEMORY=1536  the VM's CPUs and memory (MB)
#   HWLANE_ACCEL=tcg                 qemu's accelerator (kvm where /dev/kvm works; it does not on the project's machines)
set -euo pipefail

ROOT=$(cd "$(dirname "${BASH_SOURCE[0]}")/../.." && pwd)
WORK=$ROOT/.build/hwlane
SWIFT=${SWIFT:-swift}
TIMEOUT=${HWLANE_TIMEOUT:-900}
SMP=${HWLANE_SMP:-2}
MEMORY=${HWLANE_MEMORY:-1536}
ACCEL=${HWLANE_ACCEL:-tcg}
start_time=$(date +%s)
ONLY=
LIST=
while [ $# -gt 0 ]; do
    case $1 in
        --only) [ $# -ge 2 ] || { echo "hwlane: --only needs check names" >&2; exit 64; }; ONLY=$2; shift 2 ;;
        --list) LIST=1; shift ;;
        *) echo "hwlane: unknown argument $1 (use --only NAME[,NAME…] or --list)" >&2; exit 64 ;;
    esac
done
case $ONLY in *[!a-z0-9.,]*) echo "hwlane: --only takes check names such as gpio.output,alsa. (got '$ONLY')" >&2; exit 64 ;; esac

say() { echo "hwlane: $*"; }
die() { echo "hwlane: error: $*" >&2; exit 1; }
step() { echo "hwlane: [$(( $(date +%s) - start_time ))s] $*"; }

# ---------------------------------------------------------------------------------------------------------
# 1. Debian packages: Hark's own (scripts/setup.sh), then the lane's tools.
# ---------------------------------------------------------------------------------------------------------
LANE_PACKAGES=(qemu-system-x86 busybox-static cpio kmod gcc make libc6-dev xz-utils binutils libelf-dev)
installed() { [ "$(dpkg-query -W -f='${db:Status-Status}' "$1" 2>/dev/null)" = "installed" ]; }
# Root (or sudo) only for apt-get update/install; downloads, unpacking and module builds stay in .build/hwlane/.
if [ "$(id -u)" -eq 0 ]; then
    SUDO=
else
    command -v sudo >/dev/null || die "need root or sudo for apt-get update and install (nothing is installed into /boot)"
    SUDO=sudo
fi

step "Hark's packages (scripts/setup.sh)"
bash "$ROOT/scripts/setup.sh"

# apt's lists decide the kernel version: refresh them once per run, then install what the lane lacks.
step "apt-get update"
$SUDO apt-get -o DPkg::Lock::Timeout=600 update -qq
missing=()
for p in "${LANE_PACKAGES[@]}"; do installed "$p" || missing+=("$p"); done
if [ ${#missing[@]} -gt 0 ]; then
    step "installing ${missing[*]}"
    $SUDO env DEBIAN_FRONTEND=noninteractive apt-get -o DPkg::Lock::Timeout=600 install -y --no-install-recommends "${missing[@]}"
fi
command -v qemu-system-x86_64 >/dev/null || die "qemu-system-x86_64 is missing after installing qemu-system-x86"

# ---------------------------------------------------------------------------------------------------------
# 2. The kernel: image, headers (+common, kbuild) and source of one version, as apt offers them now.
# ---------------------------------------------------------------------------------------------------------
# linux-image-amd64 depends on exactly one versioned image, linux-image-<ABI>; its version names the source.
image_pkg=$(apt-cache depends linux-image-amd64 | sed -n 's/^ *Depends: \(linux-image-[0-9][^ ]*\)$/\1/p' | head -n 1)
[ -n "$image_pkg" ] || die "apt-cache depends linux-image-amd64 named no linux-image-<version> package"
ABI=${image_pkg#linux-image-}
VERSION=$(apt-cache policy "$image_pkg" | sed -n 's/^ *Candidate: //p')
[ -n "$VERSION" ] && [ "$VERSION" != "(none)" ] || die "apt has no candidate for $image_pkg"
# The kbuild package is versioned by the kernel's major.minor (linux-kbuild-6.1), the source likewise.
SERIES=$(echo "$ABI" | sed -n 's/^\([0-9]*\.[0-9]*\)\..*/\1/p')
[ -n "$SERIES" ] || die "cannot read the kernel series from ABI $ABI"
KPACKAGES=("$image_pkg" "linux-headers-$ABI" "linux-headers-${ABI%-amd64}-common" "linux-kbuild-$SERIES" "linux-source-$SERIES")
say "kernel $ABI, Debian version $VERSION"

# A newer kernel in apt replaces the cached one: drop the other versions' downloads and builds (~400 MB each).
for dir in "$WORK"/debs/* "$WORK"/kernel/* "$WORK"/gpio-sim/*; do
    if [ -d "$dir" ] && [ "$(basename "$dir")" != "$VERSION" ]; then step "removing the stale $dir"; rm -rf "$dir"; fi
done
DEBS=$WORK/debs/$VERSION
mkdir -p "$DEBS"
for p in "${KPACKAGES[@]}"; do
    if ! ls "$DEBS/${p}_"*.deb >/dev/null 2>&1; then
        step "apt-get download $p=$VERSION"
        (cd "$DEBS" && apt-get download "$p=$VERSION" 2>&1 | grep -v "unsandboxed as root" || true)
        ls "$DEBS/${p}_"*.deb >/dev/null 2>&1 || die "apt-get download $p=$VERSION produced no .deb in $DEBS"
    fi
done

KROOT=$WORK/kernel/$VERSION
if [ ! -e "$KROOT/.unpacked" ]; then
    step "dpkg -x the kernel packages into $KROOT"
    rm -rf "$KROOT"
    mkdir -p "$KROOT"
    for p in "${KPACKAGES[@]}"; do dpkg -x "$DEBS/${p}_"*.deb "$KROOT"; done
    touch "$KROOT/.unpacked"
fi
VMLINUZ=$KROOT/boot/vmlinuz-$ABI
MODULES=$KROOT/lib/modules/$ABI
HEADERS=$KROOT/usr/src/linux-headers-$ABI
[ -f "$VMLINUZ" ] || die "$image_pkg has no /boot/vmlinuz-$ABI"
[ -d "$HEADERS" ] || die "linux-headers-$ABI has no /usr/src/linux-headers-$ABI"
# The headers' Makefile includes the -common tree by its absolute /usr/src path: point it at the unpacked one.
sed -i "s|^include /usr/src/|include $KROOT/usr/src/|" "$HEADERS/Makefile"

# ---------------------------------------------------------------------------------------------------------
# 3. gpio-sim, out of tree: Debian builds neither it nor the irq_sim library it needs.
# ---------------------------------------------------------------------------------------------------------
GPIOSIM=$WORK/gpio-sim/$VERSION
EXTRA=$MODULES/updates/hwlane
if [ ! -f "$EXTRA/gpio-sim.ko" ] || [ ! -f "$EXTRA/irq_sim.ko" ]; then
    step "building gpio-sim and irq_sim from linux-source-$SERIES"
    rm -rf "$GPIOSIM"
    mkdir -p "$GPIOSIM"
    # One pass over the 138 MB tarball (~13 s of xz); all three files sit three directories deep.
    tar -xJf "$KROOT/usr/src/linux-source-$SERIES.tar.xz" -C "$GPIOSIM" --strip-components=3 \
        "linux-source-$SERIES/drivers/gpio/gpio-sim.c" "linux-source-$SERIES/drivers/gpio/gpiolib.h" \
        "linux-source-$SERIES/kernel/irq/irq_sim.c"
    # irq_to_desc is not exported to modules; generic_handle_irq(n) runs the same handle_simple_irq the
    # domain installed for n (irq_sim_domain_map), through the descriptor it looks up itself.
    sed -i 's/handle_simple_irq(irq_to_desc(irqnum));/generic_handle_irq(irqnum);/' "$GPIOSIM/irq_sim.c"
    grep -q 'generic_handle_irq(irqnum);' "$GPIOSIM/irq_sim.c" \
        || die "irq_sim.c from linux-source-$SERIES changed: the irq_to_desc → generic_handle_irq edit no longer applies"
    # Built in, irq_sim.c needs no module licence; as a module of its own, modpost refuses it without one.
    printf '#include <linux/module.h>\nMODULE_LICENSE("GPL");\n' >> "$GPIOSIM/irq_sim.c"
    printf 'obj-m := irq_sim.o gpio-sim.o\n' > "$GPIOSIM/Kbuild"
    make -C "$HEADERS" M="$GPIOSIM" -j"$(nproc)" modules > "$GPIOSIM/build.log" 2>&1 \
        || { cat "$GPIOSIM/build.log" >&2; die "building gpio-sim failed (log above, also in $GPIOSIM/build.log)"; }
    mkdir -p "$EXTRA"
    cp "$GPIOSIM/irq_sim.ko" "$GPIOSIM/gpio-sim.ko" "$EXTRA/"
    depmod -b "$KROOT" "$ABI"
fi
[ -f "$MODULES/modules.dep" ] || depmod -b "$KROOT" "$ABI"

# ---------------------------------------------------------------------------------------------------------
# 4. hark-hwcheck, with the Swift runtime linked in (inside it needs only glibc and the C libraries).
# ---------------------------------------------------------------------------------------------------------
step "swift build -c release --static-swift-stdlib --product hark-hwcheck"
(cd "$ROOT" && "$SWIFT" build -c release --static-swift-stdlib -Xswiftc -warnings-as-errors --product hark-hwcheck)
HWCHECK=$ROOT/.build/release/hark-hwcheck
[ -x "$HWCHECK" ] || die "swift build produced no $HWCHECK"
if [ -n "$LIST" ]; then "$HWCHECK" --list; exit 0; fi

# ---------------------------------------------------------------------------------------------------------
# 5. The initramfs: busybox, modules in load order, the checks, their libraries and data.
# ---------------------------------------------------------------------------------------------------------
step "initramfs"
STAGE=$WORK/initramfs
INITRD=$WORK/initramfs-$ABI.cpio.gz
rm -rf "$STAGE"
mkdir -p "$STAGE"/{bin,sbin,proc,sys,dev,tmp,run,root,etc,hwlane,hark}
cp /bin/busybox "$STAGE/bin/busybox"
for applet in $("$STAGE/bin/busybox" --list); do
    [ -e "$STAGE/bin/$applet" ] || ln -s busybox "$STAGE/bin/$applet"
done

# Modules: each asked-for module after its dependencies, as modprobe would load them (configfs first:
# Debian builds it as a module and gpio-sim's configuration lives in it).
: > "$STAGE/hwlane/modules"
for m in configfs gpio-sim snd-aloop vivid; do
    deps=$(modprobe -d "$KROOT" -S "$ABI" --show-depends "$m") || die "modprobe --show-depends $m failed for $ABI"
    while read -r kind path _; do
        [ "$kind" = insmod ] || continue
        rel=${path#"$KROOT"}
        if ! grep -qx "$rel" "$STAGE/hwlane/modules"; then
            mkdir -p "$STAGE$(dirname "$rel")"
            cp "$path" "$STAGE$rel"
            echo "$rel" >> "$STAGE/hwlane/modules"
        fi
    done <<< "$deps"
done

# The checks and every shared object they (and the loader) need, at the same paths as on this machine.
strip -o "$STAGE/hark/hark-hwcheck" "$HWCHECK"
copy_with_libraries() {
    local binary=$1 lib
    for lib in $(ldd "$binary" | grep -o '/[^ ]*'); do
        [ -e "$STAGE$lib" ] && continue
        mkdir -p "$STAGE$(dirname "$lib")"
        cp -L "$lib" "$STAGE$lib"
    done
}
copy_with_libraries "$HWCHECK"
# Debian's glibc resolves /lib64 and /lib through the merged-/usr symlinks: keep them.
for link in lib lib64; do
    if [ -L "/$link" ] && [ ! -e "$STAGE/$link" ]; then ln -s "$(readlink "/$link")" "$STAGE/$link"; fi
done

# Data: alsa-lib's configuration (even hw: names go through it), eSpeak NG (English only), the PocketSphinx
# model without the 26 MB general language model (the checks use the workspace grammar and the phone loop, not the
# judge against any English),
# and the repository's workspace and pronunciations.
mkdir -p "$STAGE/usr/share" "$STAGE/usr/lib/x86_64-linux-gnu" "$STAGE/usr/share/pocketsphinx/model/en-us"
cp -a /usr/share/alsa "$STAGE/usr/share/alsa"
ESPEAK=/usr/lib/x86_64-linux-gnu/espeak-ng-data
mkdir -p "$STAGE$ESPEAK"
for f in "$ESPEAK"/*; do
    case $(basename "$f") in *_dict) [ "$(basename "$f")" = en_dict ] || continue ;; esac
    cp -a "$f" "$STAGE$ESPEAK/"
done
MODEL=/usr/share/pocketsphinx/model/en-us
cp -a "$MODEL/en-us" "$MODEL/cmudict-en-us.dict" "$MODEL/en-us-phone.lm.bin" "$STAGE$MODEL/"
mkdir -p "$STAGE/hark/Intents" "$STAGE/hark/Models"
cp "$ROOT/Intents/home.json" "$STAGE/hark/Intents/"
cp "$ROOT/Models/pronunciations.dict" "$STAGE/hark/Models/"
cp "$ROOT/scripts/hwlane/init" "$STAGE/init"
chmod +x "$STAGE/init"
(cd "$STAGE" && find . -print0 | cpio --null -o -H newc --quiet | gzip -1 > "$INITRD")
say "initramfs $(du -h "$INITRD" | cut -f1) ($(du -sh "$STAGE" | cut -f1) unpacked), kernel $(du -h "$VMLINUZ" | cut -f1)"

# ---------------------------------------------------------------------------------------------------------
# 6. Boot under TCG, run the checks, read the verdict the VM prints last.
# ---------------------------------------------------------------------------------------------------------
LOG=$WORK/vm.log
# -no-reboot turns a kernel panic (panic=-1 reboots at once) into qemu exiting, so a crash ends the run too.
QEMU=(qemu-system-x86_64 -accel "$ACCEL" -cpu max -smp "$SMP" -m "$MEMORY" -nographic -no-reboot
      -kernel "$VMLINUZ" -initrd "$INITRD"
      -append "console=ttyS0 panic=-1 loglevel=4 rdinit=/init${ONLY:+ hwlane.only=$ONLY}")
step "booting: ${QEMU[*]}"
boot_time=$(date +%s)
set +e
timeout --foreground -k 10 "$TIMEOUT" "${QEMU[@]}" < /dev/null 2>&1 | tee "$LOG"
statuses=("${PIPESTATUS[@]}")
set -e
qemu_status=${statuses[0]}
if [ "$qemu_status" -eq 124 ]; then die "the VM did not finish within ${TIMEOUT}s (HWLANE_TIMEOUT); its output is in $LOG"; fi
if [ "$qemu_status" -ne 0 ]; then
    die "qemu-system-x86_64 could not run the VM (status $qemu_status): $(tr -d '\r' < "$LOG" | grep -v '^\s*$' | tail -n 3 | tr '\n' ' ')(full output in $LOG)"
fi
verdict=$(tr -d '\r' < "$LOG" | sed -n 's/^hwlane-verdict: //p' | tail -n 1)
elapsed=$(( $(date +%s) - start_time ))
say "the VM ran $(( $(date +%s) - boot_time ))s (boot, checks, power-off)"
case $verdict in
    pass) say "every check passed (${elapsed}s in all)"; exit 0 ;;
    fail*) die "checks failed: ${verdict#fail } (${elapsed}s in all; VM output in $LOG)" ;;
    *) die "the VM stopped without a verdict (crash, panic or early power-off; ${elapsed}s; VM output in $LOG)" ;;
esac
