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

.PHONY: setup build intents check-intents test browser-test hwtest run release bench bench-speech bench-server bench-setup clean

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
##              Not part of `make test`; timings in docs/debian13.md
.PHONY: trixie-test
trixie-test:
	bash scripts/trixie/root.sh </dev/null
	bash scripts/trixie/build.sh --test </dev/null

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

## bench-aec: the echo canceller's ERLE on real speech through simulated echo paths (bench/aec.py; ~10 s)
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

clean:
	rm -rf .build bench/out
