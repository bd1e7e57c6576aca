#!/usr/bin/env bash
# lintian (Debian 12's, from scripts/setup.sh) on hark .deb files: any error fails; warnings and the rest are
# printed (docs/packaging.md lists them and why they stay).
# Usage: lint.sh DEB...
set -euo pipefail
source "$(dirname "$0")/lib.sh"
[ $# -gt 0 ] || deb_die "usage: lint.sh DEB..."
command -v lintian >/dev/null || deb_die "lintian is not installed (scripts/setup.sh installs it)"
status=0
for deb in "$@"; do
    [ -f "$deb" ] || deb_die "'$deb' does not exist"
    # lintian refuses to run as root unless told; it only reads the package.
    out=$(lintian --allow-root --fail-on error --display-level '>=info' --tag-display-limit 0 "$deb" 2>&1) || status=1
    deb_say "lintian $(basename "$deb"): $(grep -c '^E: ' <<<"$out" || true) errors, $(grep -c '^W: ' <<<"$out" || true) warnings, $(grep -c '^I: ' <<<"$out" || true) notes"
    [ -z "$out" ] || printf '%s\n' "$out" >&2
done
[ $status -eq 0 ] || deb_die "lintian reported errors"
