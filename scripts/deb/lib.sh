# Shared by scripts/deb/*.sh: an overlayfs view of the cached trixie root, so a build or an install test writes
# only to an upper directory under this worktree's .build and the cached root itself never changes.
# Sourced, not run. Needs root (mount).

DEB_REPO=$(cd "$(dirname "${BASH_SOURCE[0]}")/../.." && pwd)
deb_die() { echo "deb: error: $*" >&2; exit 1; }
deb_say() { echo "deb: $*" >&2; }

# minbase_root ARCH SUITE ROOT MIRROR NAME [CHECK...]: make (once) a minimal Debian root at ROOT with
# debootstrap --variant=minbase, cached by a stamp naming suite, architecture and mirror; a stale or half-made
# root is removed first. Three attempts (a mirror can fail for a moment), its log in .build/deb/debootstrap-NAME.log.
# CHECK, when given, is a command that must succeed once the root is made (e.g. that its programs run).
minbase_root() {
    local arch=$1 suite=$2 root=$3 mirror=$4 name=$5 start attempt m
    shift 5
    local stamp="$suite $arch $mirror minbase" log="$DEB_REPO/.build/deb/debootstrap-$name.log"
    if [ -f "$root/.hark-base" ] && [ "$(cat "$root/.hark-base")" = "$stamp" ] && [ -x "$root/usr/bin/apt-get" ]; then
        deb_say "$name root $root is up to date"
        return 0
    fi
    command -v debootstrap >/dev/null || deb_die "debootstrap is not installed (scripts/setup.sh installs it)"
    for m in $(findmnt -rn -o TARGET | grep "^$root/" | sort -r); do umount "$m"; done
    rm -rf --one-file-system "$root"
    mkdir -p "$DEB_REPO/.build/deb"
    start=$(date +%s)
    for attempt in 1 2 3; do
        mkdir -p "$root"
        if debootstrap --arch="$arch" --variant=minbase "$suite" "$root" "$mirror" >"$log" 2>&1; then
            if [ $# -gt 0 ]; then "$@" || deb_die "the $name root at $root was made but does not work ($*)"; fi
            echo "$stamp" >"$root/.hark-base"
            deb_say "$name root made in $(( $(date +%s) - start )) s"
            return 0
        fi
        deb_say "debootstrap failed (attempt $attempt of 3): $(tail -n 2 "$log" | tr '\n' ' ')"
        rm -rf --one-file-system "$root"
        sleep $((attempt * 15))
    done
    deb_die "debootstrap $suite $arch failed three times; log in $log"
}

OVERLAYS=()
# overlay_up LOWER DIR fresh|keep: mount LOWER with DIR/upper and DIR/work at DIR/merged; "fresh" empties the
# upper first (every install test starts from the cached root), "keep" keeps it (an incremental build).
overlay_up() {
    local lower=$1 dir=$2 mode=$3
    [ -d "$lower/var/lib/dpkg" ] || deb_die "'$lower' is not a Debian root (make it with scripts/trixie/root.sh)"
    if mountpoint -q "$dir/merged"; then deb_die "$dir/merged is already mounted (another run, or a stale mount: umount -R $dir/merged)"; fi
    if [ "$mode" = fresh ]; then rm -rf --one-file-system "$dir"; fi
    mkdir -p "$dir/upper" "$dir/work" "$dir/merged"
    mount -t overlay overlay -o "lowerdir=$lower,upperdir=$dir/upper,workdir=$dir/work" "$dir/merged" \
        || deb_die "cannot mount an overlay of $lower at $dir/merged (overlayfs needs a kernel with it and root)"
    OVERLAYS+=("$dir/merged")
}

# Unmount every overlay this script mounted, and anything still mounted below one (lib.sh's /proc and /dev).
overlays_down() {
    local i m
    for ((i = ${#OVERLAYS[@]} - 1; i >= 0; i--)); do
        m=${OVERLAYS[i]}
        for sub in $(findmnt -rn -o TARGET | grep "^$m/" | sort -r); do umount "$sub" 2>/dev/null || umount -l "$sub"; done
        umount "$m" 2>/dev/null || umount -l "$m" || echo "deb: warning: could not unmount $m" >&2
    done
    OVERLAYS=()
}
