#!/usr/bin/env bash
# Make (once) a minimal Debian 12 root, .build/deb/bookworm-root (debootstrap --variant=minbase, ~1 min), in which
# scripts/deb/test.sh installs the Debian 12 package: never on this host, whose packages the test must not change.
# Cached by a stamp; nothing is installed in it beyond minbase (the tests install into overlays of it).
set -euo pipefail
source "$(dirname "$0")/lib.sh"
[ "$(id -u)" -eq 0 ] || deb_die "needs root (debootstrap)"
minbase_root amd64 bookworm "${BOOKWORM_ROOT:-$DEB_REPO/.build/deb/bookworm-root}" "${BOOKWORM_MIRROR:-http://deb.debian.org/debian}" bookworm
