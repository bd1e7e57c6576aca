#!/usr/bin/env bash
# A package's install test (docs/packaging.md): the Debian 13 one in an overlayfs view of the cached trixie root,
# the Debian 12 one in one of a minimal bookworm root (scripts/deb/bookworm-root.sh), the Debian 13 arm64 one
# in one of a minimal arm64 trixie root (scripts/deb/arm64-root.sh: every arm64 program, apt and dpkg included,
# runs under qemu-user through binfmt_misc); the upper directory, .build/deb/install-test-<distro>[-arm64], is
# emptied first, so every run starts from the same root and the root itself is never changed:
#   1. trixie amd64: purge swiftlang, every -dev package and the data packages hark needs, so only Depends: can
#      bring back what hark needs (the bookworm and arm64 roots are minbase already); apt-get update (retries)
#   2. `apt-get satisfy` the package's Depends: (from the Debian 13 mirror), then snapshot the root's files
#   3. `apt-get install ./hark_*.deb`; check the user, groups, /var/lib/hark, the conffile, and Depends against
#      ldd (check-depends.sh)
#   4. as the user hark (setpriv): `hark --version` (finds /usr/share/hark), `hark devices`, a typed turn through
#      `hark run` with /etc/hark/hark.json, `hark say` to a WAV and `hark recognize` of it
#   5. `apt-get purge hark`: the snapshot again must be identical (no file left or changed, no user hark,
#      no /var/lib/hark)
# Usage: test.sh [--distro trixie|bookworm] [--arch amd64|arm64] [DEB]
#        (default: trixie amd64, the newest .build/deb/hark_*+<deb13|deb12>_<arch>.deb; arm64: trixie only)
# Needs root (mount, chroot; for arm64 binfmt_misc, which arm64-root.sh registers).
set -euo pipefail
source "$(dirname "$0")/lib.sh"
source "$DEB_REPO/scripts/trixie/lib.sh"

distro=trixie
if [ "${1:-}" = --distro ]; then distro=${2:?--distro needs trixie or bookworm}; shift 2; fi
if [ "${1:-}" = --arch ]; then ARCH=${2:?--arch needs amd64 or arm64}; shift 2; fi
case $distro/$ARCH in
    trixie/amd64) tag=deb13; unit=/usr/lib/systemd/system/hark.service; upper=install-test-trixie
        [ -f "$ROOT/.hark-packages" ] || deb_die "no trixie root at $ROOT: run scripts/trixie/root.sh first" ;;
    trixie/arm64) tag=deb13; unit=/usr/lib/systemd/system/hark.service; upper=install-test-trixie-arm64
        ROOT=${ARM64_INSTALL_ROOT:-$DEB_REPO/.build/deb/trixie-arm64-root}
        [ -f "$ROOT/.hark-base" ] || deb_die "no arm64 trixie root at $ROOT: run scripts/deb/arm64-root.sh first"
        bash "$DEB_REPO/scripts/deb/arm64-root.sh" --binfmt-only ;;
    bookworm/amd64) tag=deb12; unit=/lib/systemd/system/hark.service; upper=install-test-bookworm
        ROOT=${BOOKWORM_ROOT:-$DEB_REPO/.build/deb/bookworm-root}
        [ -f "$ROOT/.hark-base" ] || deb_die "no bookworm root at $ROOT: run scripts/deb/bookworm-root.sh first" ;;
    */amd64 | */arm64) deb_die "--distro must be trixie or bookworm, and arm64 is trixie only (got '$distro' '$ARCH')" ;;
    *) deb_die "--arch must be amd64 or arm64 (got '$ARCH')" ;;
esac
deb=${1:-}
if [ -z "$deb" ]; then
    deb=$(ls -t "$DEB_REPO"/.build/deb/hark_*+"$tag"_"$ARCH".deb 2>/dev/null | head -n 1)
    [ -n "$deb" ] || deb_die "no .build/deb/hark_*+${tag}_$ARCH.deb: run 'make deb' first"
fi
[ -f "$deb" ] || deb_die "'$deb' does not exist"
deb=$(cd "$(dirname "$deb")" && pwd)/$(basename "$deb")
version=$(dpkg-deb -f "$deb" Version)
upstream=${version%%+*}

start=$(date +%s)
step() { deb_say "[$(( $(date +%s) - start )) s] $*"; }
fail() { deb_die "install test: $*"; }

# Unmount on every exit; an interrupt ends the script (a trap alone would let it carry on).
cleanup() { leave_mounts; overlays_down; }
trap cleanup EXIT
trap 'exit 130' INT TERM
overlay_up "$ROOT" "$DEB_REPO/.build/deb/$upper" fresh
ROOT=$DEB_REPO/.build/deb/$upper/merged
enter_mounts
trap cleanup EXIT
trap 'exit 130' INT TERM

APT=(apt-get -q -o Acquire::Retries=5 -o DPkg::Lock::Timeout=600 -y --no-install-recommends)
# A network hiccup should not fail the lane: each apt step that downloads is tried three times.
apt_retry() {
    local i
    for i in 1 2 3; do
        if in_root "${APT[@]}" "$@" >"$DEB_REPO/.build/deb/apt.log" 2>&1; then return 0; fi
        deb_say "apt-get $* failed (attempt $i of 3): $(tail -n 3 "$DEB_REPO/.build/deb/apt.log" | tr '\n' ' ')"
        sleep $((i * 10))
    done
    fail "apt-get $* failed three times; log in .build/deb/apt.log"
}
as_hark() { in_root setpriv --reuid=hark --regid=hark --init-groups --reset-env "$@"; }

if [ "$distro/$ARCH" = trixie/arm64 ]; then
    step "1. the minimal arm64 trixie root (apt, dpkg and everything below run under qemu-user)"
elif [ "$distro" = trixie ]; then
    step "1. lean root: purging the toolchain, the -dev packages and hark's data packages"
    lean=$(in_root dpkg-query -W -f='${Package}\n' | grep -E -- '-dev$|^swiftlang$|^libswiftlang$|^pkg-config$|^pocketsphinx-en-us$|^wamerican-small$|^espeak-ng-data$' || true)
    in_root "${APT[@]}" purge $lean >"$DEB_REPO/.build/deb/apt.log" 2>&1 || fail "purging the build packages failed (.build/deb/apt.log)"
    in_root "${APT[@]}" autoremove --purge >>"$DEB_REPO/.build/deb/apt.log" 2>&1 || fail "autoremove failed (.build/deb/apt.log)"
    for p in libswiftlang pocketsphinx-en-us wamerican-small; do
        if in_root dpkg-query -W -f='${db:Status-Status}' "$p" 2>/dev/null | grep -q '^installed'; then fail "$p is still installed in the lean root"; fi
    done
else
    step "1. the minimal bookworm root, with bookworm-updates and bookworm-security as an installed Debian 12 has"
    # The host's libraries (whose versions the computed Depends may name) come from those suites too.
    mirror=${BOOKWORM_MIRROR:-http://deb.debian.org/debian}
    printf '%s\n' "deb $mirror bookworm main" "deb $mirror bookworm-updates main" \
        "deb ${BOOKWORM_SECURITY:-http://deb.debian.org/debian-security} bookworm-security main" >"$ROOT/etc/apt/sources.list"
fi
apt_retry update

step "2. apt-get satisfy the package's Depends from the $distro mirror"
apt_retry satisfy "$(dpkg-deb -f "$deb" Depends)"

# Every path outside the volatile places, and the content of every file in /etc (passwd, group, shadow...).
# Left out: apt's and dpkg's own state and caches, logs, /tmp, and shadow-utils' backups (/etc/passwd- etc.).
snapshot() {
    (cd "$ROOT" && find . -xdev \( -path ./proc -o -path ./dev -o -path ./tmp -o -path ./run -o -path ./var/cache \
        -o -path ./var/lib/apt -o -path ./var/lib/dpkg -o -path ./var/log -o -path ./src -o -path ./shared \
        -o -path './etc/*-' -o -path ./etc/.pwd.lock \) -prune -o -print | sort)
    (cd "$ROOT" && find ./etc -xdev -type f ! -name '*-' ! -name .pwd.lock -print0 | sort -z | xargs -0 sha256sum)
}
snapshot >"$DEB_REPO/.build/deb/before.txt"

step "3. apt-get install $(basename "$deb")"
cp "$deb" "$ROOT/tmp/$(basename "$deb")"
apt_retry install "/tmp/$(basename "$deb")"
in_root dpkg-query -W -f='${db:Status-Status} ${Version}\n' hark | grep -qx "installed $version" || fail "hark $version is not installed"
in_root dpkg-query -W -f='${Conffiles}\n' hark | grep -q '^ /etc/hark/hark.json ' || fail "/etc/hark/hark.json is not a conffile"
in_root getent passwd hark | grep -q ':/var/lib/hark:/usr/sbin/nologin$' || fail "no system user hark with home /var/lib/hark"
groups=$(in_root id -nG hark)
for g in hark audio video; do [[ " $groups " == *" $g "* ]] || fail "hark is not in group $g (groups: $groups)"; done
if in_root getent group gpio >/dev/null; then [[ " $groups " == *" gpio "* ]] || fail "hark is not in group gpio"; fi
[ "$(in_root stat -c '%U:%G %a' /var/lib/hark)" = "hark:hark 750" ] || fail "/var/lib/hark is not hark:hark 750"
[ -f "$ROOT$unit" ] || fail "no $unit"
bash "$DEB_REPO/scripts/deb/check-depends.sh" "$deb" "$ROOT"

step "4. hark as the user hark"
out=$(as_hark hark --version) || fail "hark --version failed: $out"
[ "$out" = "hark $upstream"$'\n'"shipped files: /usr/share/hark" ] || fail "hark --version printed: $out"
out=$(as_hark hark devices --config /etc/hark/hark.json) || fail "hark devices failed: $out"
grep -q '^Configuration (/etc/hark/hark.json):' <<<"$out" || fail "hark devices did not read /etc/hark/hark.json: $out"
grep -q 'simulated: .*light' <<<"$out" || fail "hark devices did not report the simulated light: $out"
out=$(printf 'turn on the light\nis the light on?\n' | as_hark hark run --config /etc/hark/hark.json --simulate --no-server --events 2>&1) \
    || fail "hark run with typed turns failed: $out"
grep -q '"kind":"reply","turn":1,"text":"Light is on"' <<<"$out" || fail "the typed turn did not switch the light on: $out"
grep -q '"kind":"reply","turn":2,"text":"The light is on."' <<<"$out" || fail "the second typed turn did not see the light on: $out"
[ "$(in_root stat -c %U /var/lib/hark/events.sqlite3)" = hark ] || fail "the event log is not /var/lib/hark/events.sqlite3 owned by hark"
out=$(as_hark hark events --data /var/lib/hark) || fail "hark events failed: $out"
grep -q 'Light is on' <<<"$out" || fail "hark events does not show the turn: $out"
out=$(as_hark sh -c 'cd /tmp && hark say --output /tmp/on.wav "turn on the light" && hark recognize /tmp/on.wav' 2>&1) \
    || fail "hark say / recognize failed: $out"
grep -q 'on.wav: "turn on the light"' <<<"$out" && grep -q '#OnLight' <<<"$out" && grep -q '^  accepted' <<<"$out" \
    || fail "the WAV was not recognised as #OnLight: $out"
deb_say "  as hark: $(as_hark hark --version | tr '\n' ' ')| devices: simulated light | typed turns: 'Light is on', 'The light is on.' | $(grep 'on.wav:' <<<"$out") $(grep -o '#OnLight [0-9.]*' <<<"$out")"

step "5. apt-get purge hark"
in_root "${APT[@]}" purge hark >"$DEB_REPO/.build/deb/apt.log" 2>&1 || fail "purge failed (.build/deb/apt.log)"
rm -f "$ROOT/tmp/$(basename "$deb")" "$ROOT/tmp/on.wav"
in_root getent passwd hark >/dev/null && fail "the user hark is still there after purge"
in_root getent group hark >/dev/null && fail "the group hark is still there after purge"
[ ! -e "$ROOT/var/lib/hark" ] || fail "/var/lib/hark is still there after purge"
snapshot >"$DEB_REPO/.build/deb/after.txt"
if ! diff -u "$DEB_REPO/.build/deb/before.txt" "$DEB_REPO/.build/deb/after.txt" >"$DEB_REPO/.build/deb/left.diff"; then
    fail "purge left or changed files (.build/deb/left.diff):"$'\n'"$(grep '^[-+][^-+]' "$DEB_REPO/.build/deb/left.diff" | head -n 20)"
fi
step "passed: installed, ran as hark, purged without a trace ($(basename "$deb"))"
