#!/usr/bin/env bash
# Install what Hark needs to build, test and run: Debian's C libraries and data, and a Swift toolchain check.
# Idempotent: when every package is already installed it touches nothing (no apt-get update, no root needed).
set -euo pipefail

# Every Debian package the project needs. Keep in step with the `.systemLibrary` providers in Package.swift.
PACKAGES=(
    libpocketsphinx-dev libsphinxbase-dev pocketsphinx-en-us   # speech recognition (the 5prealpha API)
    libespeak-ng-dev espeak-ng-data espeak-ng                  # speech synthesis (the command: test clips made in a fresh process)
    libasound2-dev                                             # ALSA capture and playback
    libgpiod-dev                                               # GPIO light, LED and button (libgpiod 1.6 here, 2.x on Debian 13)
    libsndfile1-dev libspeexdsp-dev                            # audio files, resampling
    libsqlite3-dev                                             # event store
    libsodium-dev libwebsockets-dev libssl-dev libopus-dev     # server: auth, HTTP/WebSocket/TLS (certificates), room audio
    libturbojpeg0-dev                                          # camera frames to JPEG (TurboJPEG API)
    wamerican-small                                            # the English word list the matcher weighs unknown words by
    flite                                                      # a second synthetic voice for wake-phrase and rejection tests
    chromium python3-venv                                      # the web page's browser test (Playwright from PyPI drives chromium)
    pkg-config                                                 # SwiftPM finds the C libraries through it
    debootstrap rsync lintian                                  # the Debian 13 roots and copy of the tree (trixie lane, make arm64), the .deb checks
    binutils-aarch64-linux-gnu qemu-user-static sysbench       # make arm64: strip and run the arm64 binary; bench/arm64.py scales to a Pi
)

installed() { [ "$(dpkg-query -W -f='${db:Status-Status}' "$1" 2>/dev/null)" = "installed" ]; }

missing=()
for p in "${PACKAGES[@]}"; do installed "$p" || missing+=("$p"); done

if [ ${#missing[@]} -gt 0 ]; then
    echo "setup: installing ${missing[*]}"
    if [ "$(id -u)" -ne 0 ]; then
        SUDO=sudo
        command -v sudo >/dev/null || { echo "setup: error: need root (or sudo) to install: ${missing[*]}" >&2; exit 1; }
    else
        SUDO=
    fi
    $SUDO apt-get -o DPkg::Lock::Timeout=600 update -qq
    # Drop (loudly) any name this Debian does not know, rather than failing the whole install on it.
    available=()
    for p in "${missing[@]}"; do
        # Capture first: with pipefail, `grep -q` closing the pipe early would fail apt-cache with SIGPIPE.
        policy=$(apt-cache policy "$p" 2>/dev/null || true)
        if [[ "$policy" =~ Candidate:\ [^\(] ]]; then
            available+=("$p")
        else
            echo "setup: warning: package '$p' is not available from the configured apt sources; skipped" >&2
        fi
    done
    if [ ${#available[@]} -gt 0 ]; then
        $SUDO env DEBIAN_FRONTEND=noninteractive \
            apt-get -o DPkg::Lock::Timeout=600 install -y --no-install-recommends "${available[@]}"
    fi
else
    echo "setup: all ${#PACKAGES[@]} Debian packages present"
fi

SWIFT=${SWIFT:-swift}
if ! command -v "$SWIFT" >/dev/null 2>&1; then
    echo "setup: error: '$SWIFT' is not on PATH. Install a Swift 6 toolchain (https://www.swift.org/install/linux/)" >&2
    echo "       and put its usr/bin on PATH, then run this again." >&2
    exit 1
fi
if ! version=$("$SWIFT" --version 2>&1); then
    echo "setup: error: '$SWIFT --version' failed:" >&2
    echo "$version" >&2
    exit 1
fi
echo "setup: $(printf '%s\n' "$version" | head -n 1)"
