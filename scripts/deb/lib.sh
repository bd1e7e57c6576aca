# Shared by scripts/deb/*.sh: an overlayfs view of the cached trixie root, so a build or an install test writes
# only to an upper directory under this worktree's .build and the cached root itself never changes.
# Sourced, not run. Needs root (mount).

DEB_REPO=$(cd "$(dirname "${BASH_SOURCE[0]}")/../.." && pwd)
deb_die() { echo "deb: error: $*" >&2; exit 1; }
deb_say() { echo "deb: $*" >&2; }

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
