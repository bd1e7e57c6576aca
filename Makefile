# Hark: the two commands that matter are `make test` and `make run`; see bench/README.md for `make bench`.
SHELL := /bin/bash
.SHELLFLAGS := -euo pipefail -c
.DEFAULT_GOAL := test

SWIFT ?= swift
export SWIFT
# Warnings are bugs (docs/STYLE.md): fail the build on any, in our own targets (there are no outside packages).
STRICT := -Xswiftc -warnings-as-errors
HARK ?= .build/release/hark
WORKSPACE ?= Intents/home.json

.PHONY: setup build intents check-intents test browser-test hwtest run release bench bench-speech bench-speech-all bench-server bench-setup clean

## setup: install the Debian packages the project needs (idempotent) and check the Swift toolchain
setup:
	bash scripts/setup.sh </dev/null

## build: debug build, warnings are errors
build: setup
	$(SWIFT) build $(STRICT)

## check-intents: the shipped workspaces are well-formed Watson v1 exports (python3, standard library)
check-intents: intents
	python3 scripts/check-workspace.py Intents/*.json

## intents: generate Intents/barista.json from the shared benchmark's domain files (not committed: 2.8k examples)
intents:
	python3 scripts/make-barista.py

## test: setup, build and run every test; any compiler warning fails it
test: build check-intents
	$(SWIFT) test $(STRICT)
	$(MAKE) browser-test
	$(MAKE) wyoming-test
	$(MAKE) rooms-test
	$(MAKE) hwtest
	$(MAKE) trixie-test
	$(MAKE) trixie-hwtest
	$(MAKE) deb-test
	$(MAKE) arm64-test

## browser-test: the web page in Debian's chromium driven by Playwright, against `hark serve` (installs chromium
##               and a Playwright venv under .build/ the first time; screenshots in .build/browser-artifacts/)
browser-test: build
	bash scripts/browser-test.sh

## wyoming-test: `hark wyoming` driven by the real Wyoming client (PyPI `wyoming`, in a venv under .build/): every
##               service, the streaming forms, bad input, 20 clients at once; docs/wyoming.md
.PHONY: wyoming-test
wyoming-test: build
	bash scripts/wyoming-test.sh

## rooms-test: live audio in drop-in rooms: three scripted members (PyPI websockets + opuslib, in a venv under
##             .build/) against `hark serve`: mix-minus, leave events, 401/403, bad frames, a vanished member,
##             30% packet loss; docs/rooms.md
.PHONY: rooms-test
rooms-test: build
	bash scripts/rooms-test.sh

## hwtest: the hardware lane: Hark's GPIO, ALSA and V4L2 backends against gpio-sim, snd-aloop and vivid in
##         Debian's kernel under qemu (TCG); ONLY=gpio.,alsa.speech runs some checks; docs/hardware-testing.md
hwtest:
	bash scripts/hwlane/run.sh $(if $(ONLY),--only $(ONLY))

## trixie-test: Debian 13 lane: a cached trixie root (debootstrap, Debian's swiftlang 6.0.3 and -dev packages)
##              under .build/trixie-amd64, then the build with tests and `swift test` in it; needs root (chroot).
##              Part of `make test`; timings in docs/debian13.md
.PHONY: trixie-test
trixie-test:
	bash scripts/trixie/root.sh </dev/null
	bash scripts/trixie/build.sh --test </dev/null

## deb: the installable packages (docs/packaging.md) in .build/deb: hark_<v>+deb12_amd64.deb from this host's
##      release build (Swift runtime linked in), hark_<v>+deb13_amd64.deb built in the trixie root with Debian's
##      swiftlang, hark_<v>+deb13_arm64.deb from `make arm64`'s cross build, its Depends computed against the
##      arm64 sysroot's dpkg database. ARM64_BINARY=path packages an arm64 binary built elsewhere instead
##      (ARM64_ROOT=dir: the arm64 Debian 13 system it was built for, with a dpkg database; default the sysroot).
##      DEB_OVERLAY=1 builds the trixie binary in an overlay of TRIXIE_ROOT (a shared root stays untouched).
##      Every package must pass lintian without errors.  Needs root (chroot).
.PHONY: deb deb-test
# The Swift runtime linked in (no swift.org library outside Debian's packages), no RUNPATH (SwiftPM's $ORIGIN:
# lintian's custom-library-search-path), full RELRO and BIND_NOW (lintian's hardening checks).
DEB_SWIFT_FLAGS := --static-swift-stdlib --disable-local-rpath -Xlinker -z -Xlinker relro -Xlinker -z -Xlinker now
DEB_VERSION = $(shell sed -n 's/^ *static let version = "\(.*\)".*/\1/p' Sources/HarkCLI/HarkMain.swift)
ARM64_ROOT ?= .build/arm64/sysroot
deb: setup
	$(SWIFT) build -c release $(DEB_SWIFT_FLAGS) $(STRICT) --product hark </dev/null
	bash scripts/deb/build.sh --binary .build/release/hark --distro bookworm
	bash scripts/deb/trixie-binary.sh $(if $(DEB_OVERLAY),--overlay) </dev/null
	bash scripts/deb/build.sh --binary .build/deb/bin/hark-trixie-amd64 --distro trixie
	$(if $(ARM64_BINARY),,bash scripts/arm64/build.sh </dev/null)
	bash scripts/deb/build.sh --binary $(or $(ARM64_BINARY),.build/arm64/hark) --distro trixie --root $(ARM64_ROOT)
	bash scripts/deb/lint.sh .build/deb/hark_$(DEB_VERSION)+deb12_amd64.deb .build/deb/hark_$(DEB_VERSION)+deb13_amd64.deb \
	    .build/deb/hark_$(DEB_VERSION)+deb13_arm64.deb

## deb-test: `make deb`, then the Debian 12 package's Depends against ldd and dpkg-shlibdeps on this host, the
##           arm64 package against the amd64 Debian 13 one and its Depends against the arm64 loader under
##           qemu-user in the sysroot (scripts/deb/check-arm64.sh), and each package installed in an overlay
##           of a root (a minimal bookworm root and a minimal arm64 trixie root made once, the trixie root; the
##           arm64 one under qemu-user through binfmt_misc), run as the user hark and purged without a trace
##           (scripts/deb/test.sh)
deb-test: deb
	bash scripts/deb/check-depends.sh .build/deb/hark_$(DEB_VERSION)+deb12_amd64.deb /
	bash scripts/deb/check-arm64.sh .build/deb/hark_$(DEB_VERSION)+deb13_arm64.deb .build/deb/hark_$(DEB_VERSION)+deb13_amd64.deb \
	    $(ARM64_ROOT)
	bash scripts/deb/bookworm-root.sh </dev/null
	bash scripts/deb/test.sh --distro bookworm </dev/null
	bash scripts/deb/test.sh --distro trixie </dev/null
	bash scripts/deb/arm64-root.sh </dev/null
	bash scripts/deb/test.sh --distro trixie --arch arm64 </dev/null

## trixie-hwtest: the hardware lane's GPIO (libgpiod 2), ALSA and V4L2 checks built in the trixie root and run in
##                `make hwtest`'s VM with the root's libraries and data (needs both; scripts/trixie/hwlane.sh)
.PHONY: trixie-hwtest
trixie-hwtest:
	bash scripts/trixie/hwlane.sh </dev/null

## arm64: hark for arm64 Debian 13 (a Raspberry Pi), cross-compiled with Debian's swiftlang 6.0.3 in the trixie
##        root against an arm64 sysroot of Debian packages (both cached under .build/); needs root (chroot).
##        Output: .build/arm64/hark (stripped) and .build/arm64/hark.unstripped; docs/debian13.md, "arm64"
.PHONY: arm64 arm64-test
arm64: setup
	bash scripts/arm64/build.sh </dev/null

## arm64-test: the arm64 hark under qemu-user next to the x86 release build: usage, parse, recognize, say and
##             `hark run --simulate --input … --fast --events`; fails when any result or event differs.
##             Part of `make test` (after deb-test, whose arm64 and x86 builds it reuses: ~2 min); the x86 hark
##             is built with the packages' flags (DEB_SWIFT_FLAGS), so it is the Debian 12 package's binary
arm64-test: arm64
	$(SWIFT) build -c release $(DEB_SWIFT_FLAGS) $(STRICT) --product hark </dev/null
	bash scripts/arm64/test.sh </dev/null

## run: release build, then the appliance with the default workspace (simulated devices and typed input
##      where the machine has no microphone, GPIO or camera; the first line says which). Standard input from
##      a pipe or a file is typed turns, and the run ends with it: printf 'turn on the light\n' | make run
# Only hark reads standard input (setup's apt-get and the build get /dev/null), so piped turns reach it.
run: setup
	$(SWIFT) build -c release $(STRICT) </dev/null
	$(HARK) run --workspace $(WORKSPACE)

## release: optimised binary with the Swift runtime linked in (needs only glibc and the C libraries), stripped
release: setup
	$(SWIFT) build -c release --static-swift-stdlib $(STRICT)
	mkdir -p .build/dist
	strip -o .build/dist/hark .build/release/hark
	@ls -l .build/dist/hark

## bench-server: the companion server under load (Watson /message vs hassil+aiohttp, hark run's memory with
##               20 simulated browsers, push-to-talk latency); ~2 min; results in bench/out/server/
bench-server: setup
	$(SWIFT) build -c release $(STRICT)
	bash bench/server.sh

## bench-rooms: room audio on loopback: mouth-to-ear p50/p99, the mixing thread's CPU per member, 20 rooms x 5
##              members for 60 s (CPU, memory, frame drops), the largest room that stays real time; bench/README.md
.PHONY: bench-rooms
bench-rooms: setup
	$(SWIFT) build -c release $(STRICT)
	bash scripts/rooms-test.sh --bench

## bench-aec: the echo cancellers' ERLE on real speech through simulated echo paths, speexdsp (Hark) beside WebRTC
##            (bench/aec.py; ~20 s)
.PHONY: bench-aec
bench-aec: setup bench-setup
	$(SWIFT) build -c release --product hark $(STRICT)
	python3 bench/aec.py

## bench-setup: Python virtualenvs for the benchmark peers (hassil, rhasspy-nlu); pip only
bench-setup:
	bash scripts/setup-bench.sh || echo "make: a benchmark peer did not install; bench/speed.sh will say which"

## bench: NLU accuracy (bench/nlu.sh), few-shot workspaces and calibration (bench/fewshot.py) and parse speed
##        (bench/speed.sh); results in bench/out/
bench: setup bench-setup
	$(SWIFT) build -c release $(STRICT)
	status=0; bash bench/nlu.sh || status=1; python3 bench/fewshot.py || status=1; bash bench/speed.sh || status=1; exit $$status

## bench-speech: the speech-to-intent benchmark in kitchen noise, Hark next to PocketSphinx 5.1.1 (~40 min on 2 cores);
## add the kitchen-adapted model first with `bash scripts/adapt-model.sh` (docs/model-adaptation.md)
bench-speech: setup bench-setup intents
	$(SWIFT) build -c release $(STRICT)
	bash bench/speech.sh

## bench-speech-all: every speech figure of issue 16 in one run (~2.5 h on 2 cores): the benchmark above, the
## endpointer's cuts, out-of-domain speech in noise, result delay and real-time factor, the wake phrase;
## tables in bench/out/speech-all/report.md, generated (bench/speech-all.sh; --quick there for a smoke run);
## bench/README.md "The first whole run, 2026-12-06" keeps one run's figures
bench-speech-all: setup bench-setup intents
	$(SWIFT) build -c release $(STRICT)
	bash bench/speech-all.sh

clean:
	rm -rf .build bench/out
