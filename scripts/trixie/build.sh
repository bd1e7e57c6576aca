#!/usr/bin/env bash
# Build Hark inside the Debian 13 root (scripts/trixie/root.sh makes it) with Debian's swiftlang, warnings as
# errors, tests included (`--no-tests`: the products only); `--test` then runs `swift test` there too, and
# `--filter X` passes a filter to it. `--release` builds only the optimised `hark` for the .deb (scripts/deb/,
# docs/packaging.md): Swift's runtime linked in, no RUNPATH, full RELRO; `--release-dynamic` the same linked to
# Debian's libswiftlang instead (its RUNPATH is /usr/libexec/swift/lib/swift/linux).
# The source tree is copied to <root>/src (not bind-mounted: a bind mount of the worktree inside its own
# .build would let `rm -rf .build` reach the sources); <root>/src/.build keeps the build between runs.
set -euo pipefail
source "$(dirname "$0")/lib.sh"

run_tests=0
release=
build_tests=--build-tests
filter=()
while [ $# -gt 0 ]; do
    case "$1" in
        --test) run_tests=1 ;;
        --no-tests) build_tests= ;;
        --release) release=static ;;
        --release-dynamic) release=dynamic ;;
        --filter) shift; filter=(--filter "${1:?--filter needs a pattern}") ;;
        *) die "unknown argument '$1' (usage: build.sh [--no-tests | --release | --release-dynamic | --test [--filter PATTERN]])" ;;
    esac
    shift
done

[ -f "$ROOT/.hark-packages" ] || die "no trixie root at $ROOT: run scripts/trixie/root.sh first"

# Make everything but the build directory the worktree as it is now (uncommitted changes included). rsync
# rewrites only files that changed: a file written again, even unchanged, has a new inode, and SwiftPM's build
# system then recompiles its whole module, which in a release build is every module, minutes, on each call.
command -v rsync >/dev/null || die "rsync is not installed (scripts/setup.sh installs it)"
mkdir -p "$ROOT/src"
rsync -a --delete --exclude=/.build --exclude=/.git --exclude=/.swiftpm --exclude=/bench/out --exclude='/bench/.venv*' \
    "$REPO/" "$ROOT/src/"

enter_mounts
start=$(date +%s)
say "building in $ROOT with $(in_root swift --version 2>&1 | head -n 1)"
if [ "$release" = static ]; then
    in_root sh -c "cd /src && exec nice -n 10 swift build $RELEASE_FLAGS --product hark" </dev/null
elif [ "$release" = dynamic ]; then
    in_root sh -c 'cd /src && exec nice -n 10 swift build -c release -Xlinker -z -Xlinker relro -Xlinker -z -Xlinker now \
        -Xswiftc -warnings-as-errors --product hark' </dev/null
else
    in_root sh -c 'cd /src && exec nice -n 10 swift build $0 -Xswiftc -warnings-as-errors' "$build_tests" </dev/null
fi
say "build done in $(( $(date +%s) - start )) s"
if [ "$run_tests" -eq 1 ]; then
    # The recogniser's tests read the shared benchmark recordings (../shared/benchmarks, found by walking up from
    # the worktree as the tests do); inside the root they look for /shared/benchmarks. Read-only, so nothing
    # run in the root (or a rm -rf of .build while it is mounted) can change them.
    benchmarks=
    for dir in "$REPO/.." "$REPO/../.." "$REPO/../../.."; do
        if [ -d "$dir/shared/benchmarks" ]; then benchmarks=$(cd "$dir/shared/benchmarks" && pwd); break; fi
    done
    if [ -n "$benchmarks" ]; then
        mkdir -p "$ROOT/shared/benchmarks"
        if ! mountpoint -q "$ROOT/shared/benchmarks"; then
            mount --bind "$benchmarks" "$ROOT/shared/benchmarks"; MOUNTED+=("$ROOT/shared/benchmarks")
            mount -o remount,bind,ro "$ROOT/shared/benchmarks"
        fi
    else
        say "warning: no shared/benchmarks above $REPO: the tests that need the recordings will fail"
    fi
    start=$(date +%s)
    in_root sh -c 'cd /src && exec nice -n 10 swift test --skip-build "$@"' sh "${filter[@]}" </dev/null
    say "tests done in $(( $(date +%s) - start )) s"
fi
