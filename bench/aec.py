#!/usr/bin/env python3
"""Echo return loss enhancement (ERLE) of Hark's echo canceller (`hark echo-cancel`, speexdsp) beside Debian's
WebRTC echo canceller (libwebrtc-audio-processing 0.3, through the bench-only bench/aec_webrtc.cc) on real speech
through simulated echo paths, for issue 14's appliance-as-a-room-member (goal: >= 25 dB after convergence,
converged within 2 s).

usage: python3 bench/aec.py [--out bench/out/aec] [--seed 20261201]
Needs numpy, sox, g++, pkg-config and libwebrtc-audio-processing-dev (scripts/setup-bench.sh) and a built hark
($HARK, default .build/release/hark, else .build/debug/hark). It compiles bench/aec_webrtc.cc into --out itself.

The far end is real read speech: the LibriVox clips in ../shared/benchmarks/recorded-speech, one after the
other (about 25 s). The echo path from the loudspeaker to the microphone is simulated, one per row:
a delay (the audio buffers and the air), a room impulse response (exponentially decaying noise with a seeded
shape: the reflections), a level (how loud the echo is at the microphone), optionally a loudspeaker that
distorts (tanh saturation, which no linear filter can model), plus microphone noise at -90 dBFS. For double
talk, a near-end voice (clean clips of the speech-to-intent benchmark, other speakers) talks over the second
half. Every engine setting (ENGINES) gets exactly the same far end, microphone signal and echo for each path.
ERLE = 10 log10(echo energy / residual energy) in 0.5 s windows where the far end talks and the near end
does not; reported: the median and 10th percentile after 2 s, when the first window reaches 25 dB and the
share of windows after 2 s at 25 dB or more. Near-end preservation in double talk: correlation of the output with the clean
near-end voice over the double-talk half (1 = untouched). CPU: the engine process's user + system time per
second of audio, less what the same process spends on a 0.5 s input (start-up, reading and writing files), and
as a ratio to Hark's default (speexdsp with its residual suppressor).
Writes aec.json (every row) and aec.md (the tables bench/README.md quotes) into --out.
"""
import argparse
import glob
import io
import json
import os
import re
import resource
import shutil
import subprocess
import sys
import wave

import numpy as np

ROOT = os.path.dirname(os.path.dirname(os.path.abspath(__file__)))
SHARED = os.path.join(os.path.dirname(ROOT), "shared", "benchmarks")
RATE = 16000
# The microphone's own noise. Near the 16-bit floor, so the residual echo is measured, not the noise: with the
# residual suppressor (whose denoiser is on, mildly) the noise does not pass unchanged and cannot be subtracted.
NOISE_DBFS = -90
GOAL_DB = 25


def hark_binary():
    if os.environ.get("HARK"):
        return os.environ["HARK"]
    for config in ("release", "debug"):
        path = os.path.join(ROOT, ".build", config, "hark")
        if os.path.exists(path):
            return path
    sys.exit("aec: no hark binary: swift build -c release --product hark (or set HARK)")


def read(path):
    if not path.endswith(".wav"):  # FLAC: sox (bench/setup-bench.sh installs it) to 16 kHz mono WAV
        converted = subprocess.run(["sox", path, "-t", "wav", "-r", str(RATE), "-c", "1", "-b", "16", "-"], check=True, capture_output=True).stdout
        path = io.BytesIO(converted)
    with wave.open(path, "rb") as w:
        assert w.getnchannels() == 1 and w.getsampwidth() == 2, path
        pcm = np.frombuffer(w.readframes(w.getnframes()), dtype=np.int16).astype(np.float64)
        rate = w.getframerate()
    if rate != RATE:  # linear interpolation is enough for a far-end test signal
        t = np.arange(0, len(pcm) * RATE // rate) * rate / RATE
        pcm = np.interp(t, np.arange(len(pcm)), pcm)
    return pcm


def write(path, pcm):
    with wave.open(path, "wb") as w:
        w.setnchannels(1)
        w.setsampwidth(2)
        w.setframerate(RATE)
        w.writeframes(np.clip(np.round(pcm), -32768, 32767).astype(np.int16).tobytes())


def room_response(rng, delay_ms, rt60_ms, length_ms=150):
    """A delay, a direct path, then reflections: noise decaying by 60 dB over rt60, low-passed a little."""
    n = int(RATE * length_ms / 1000)
    t = np.arange(n) / RATE
    tail = rng.standard_normal(n) * 10 ** (-3 * t / (rt60_ms / 1000)) * 0.3
    tail[0] = 1.0
    tail = np.convolve(tail, np.ones(4) / 4)[:n]
    return np.concatenate([np.zeros(int(RATE * delay_ms / 1000)), tail])


def erle_windows(echo, output, noise, active, window=RATE // 2):
    """(start s, ERLE dB) of each window where `active`: the echo's energy over the residual's, the residual being
    the output's energy less the microphone noise's (uncorrelated with the echo, it passes the canceller). A
    residual below a hundredth of the noise energy counts as that: the measurement's ceiling is ERLE_CEILING_DB
    above the noise."""
    out = []
    for start in range(0, len(echo) - window + 1, window):
        if active[start:start + window].mean() < 0.5:
            continue
        e = np.sum(echo[start:start + window] ** 2)
        n = np.sum(noise[start:start + window] ** 2)
        r = max(np.sum(output[start:start + window] ** 2) - n, 0.01 * n, 1e-9)
        out.append((start / RATE, 10 * np.log10(e / r)))
    return out


def best_correlation(a, b, max_lag=RATE // 50):
    """The normalised correlation of `b` with `a` at the best lag of b behind a (0 to 20 ms), and that lag."""
    best = (-1.0, 0)
    for lag in range(0, max_lag + 1, 8):
        x, y = a[: len(a) - lag], b[lag:]
        c = float(np.dot(x, y) / np.sqrt(np.dot(x, x) * np.dot(y, y) + 1e-9))
        best = max(best, (c, lag))
    return best


def activity(pcm, window=RATE // 50):
    """1.0 for each sample of a 20 ms block with sound in it, else 0.0 (the last partial block counts as silent)."""
    n = len(pcm) // window
    level = np.sqrt((pcm[: n * window].reshape(n, window) ** 2).mean(axis=1))
    on = level > max(100.0, 0.05 * level.max())
    return np.concatenate([np.repeat(on, window).astype(float), np.zeros(len(pcm) - n * window)])


WEBRTC_SOURCE = os.path.join(ROOT, "bench", "aec_webrtc.cc")

# Every engine setting measured, in table order: (key, what it is, its arguments after the three files; `delay`
# is the path's delay in ms, which the WebRTC canceller can be told: an appliance knows its own audio buffers'
# latency, which is most of it). Hark's canceller is told nothing: its 200 ms filter covers the delay.
ENGINES = [
    ("hark", "Hark: speexdsp, residual suppressor on, delay measured and aligned (default)", lambda delay: []),
    ("hark-unaligned", "Hark: speexdsp, residual suppressor on, no alignment (--no-align; before 2026-12-04)", lambda delay: ["--no-align"]),
    ("hark-linear", "Hark: speexdsp, linear filter only (--no-residual)", lambda delay: ["--no-residual"]),
    ("webrtc-moderate", "WebRTC AEC, moderate suppression, told the delay",
     lambda delay: ["--suppression", "moderate", "--delay", str(delay)]),
    ("webrtc-high", "WebRTC AEC, high suppression, told the delay",
     lambda delay: ["--suppression", "high", "--delay", str(delay)]),
    ("webrtc-untold", "WebRTC AEC, moderate suppression, told nothing (delay 0)",
     lambda delay: ["--suppression", "moderate", "--delay", "0"]),
    ("webrtc-extended", "WebRTC AEC, extended filter + delay-agnostic, moderate, told nothing",
     lambda delay: ["--suppression", "moderate", "--extended-filter", "--delay-agnostic"]),
    ("webrtc-mobile", "WebRTC AECM (mobile), loud speakerphone, told the delay",
     lambda delay: ["--mobile", "loud-speakerphone", "--delay", str(delay)]),
]
# The side-by-side table: Hark's default against WebRTC's usual desktop setting (moderate suppression, the
# delay reported, as an application using the library does).
SIDE_BY_SIDE = ("hark", "webrtc-moderate")


def build_webrtc(out_dir, source=WEBRTC_SOURCE, program="aec"):
    """`source` (bench/aec_webrtc.cc by default; bench/speech_ns_webrtc.py builds bench/ns_webrtc.cc with it)
    compiled against Debian's libwebrtc-audio-processing-dev into out_dir (again when the source or
    bench/webrtc_wav.h is newer). Exits with what to install when the compiler or the library is missing;
    `program` names the caller in those messages."""
    binary = os.path.join(out_dir, os.path.splitext(os.path.basename(source))[0])
    sources = (source, os.path.join(ROOT, "bench", "webrtc_wav.h"))
    if os.path.exists(binary) and os.path.getmtime(binary) >= max(os.path.getmtime(s) for s in sources):
        return binary
    for tool in ("g++", "pkg-config"):
        if not shutil.which(tool):
            sys.exit(f"{program}: {tool} not found: bash scripts/setup-bench.sh installs it")
    package = "webrtc-audio-processing"
    cflags = subprocess.run(["pkg-config", "--cflags", package], capture_output=True, text=True)
    libs = subprocess.run(["pkg-config", "--libs", package], capture_output=True, text=True)
    if cflags.returncode != 0 or libs.returncode != 0:
        sys.exit(f"{program}: pkg-config does not know {package}: install libwebrtc-audio-processing-dev "
                 f"(bash scripts/setup-bench.sh): {(cflags.stderr or libs.stderr).strip()}")
    # The library's own headers as system headers: they have unused parameters that -Wextra would flag.
    includes = []
    for flag in cflags.stdout.split():
        includes += ["-isystem", flag[2:]] if flag.startswith("-I") else [flag]
    command = (["g++", "-O2", "-std=c++14", "-Wall", "-Wextra", "-Werror"] + includes
               + [source, "-o", binary] + libs.stdout.split())
    if subprocess.run(command).returncode != 0:
        sys.exit(f"{program}: compiling {source} failed (g++ says why above): {' '.join(command)}")
    return binary


def child_cpu():
    usage = resource.getrusage(resource.RUSAGE_CHILDREN)
    return usage.ru_utime + usage.ru_stime


ALIGNED = re.compile(r"delayed by (\d+) ms .* set after ([\d.]+) s")


def run(command):
    """Runs an engine; returns the CPU seconds (user + system) its process took and, for Hark's aligned settings,
    (delay ms, when it was set in s) from its stderr (None when it found no delay)."""
    before = child_cpu()
    done = subprocess.run(command, stderr=subprocess.PIPE, text=True)
    if done.returncode != 0:
        sys.stderr.write(done.stderr)
        sys.exit(f"aec: this failed (it says why above): {' '.join(command)}")
    found = ALIGNED.search(done.stderr)
    return child_cpu() - before, (int(found.group(1)), float(found.group(2))) if found else None


def main():
    parser = argparse.ArgumentParser(description=__doc__.split("\n")[0])
    parser.add_argument("--out", default=os.path.join(ROOT, "bench", "out", "aec"))
    parser.add_argument("--seed", type=int, default=20261201)
    args = parser.parse_args()
    os.makedirs(args.out, exist_ok=True)
    hark = hark_binary()
    webrtc = build_webrtc(args.out)
    rng = np.random.default_rng(args.seed)

    far = np.concatenate([read(p) for p in sorted(glob.glob(os.path.join(SHARED, "recorded-speech", "*.wav")))])
    far *= 12000 / np.max(np.abs(far))
    near_clips = sorted(glob.glob(os.path.join(SHARED, "speech-to-intent", "clean", "*.flac")))[:12]
    near = np.concatenate([read(p) for p in near_clips])
    half = len(far) // 2
    near_track = np.zeros(len(far))
    take = min(len(far) - half, len(near))
    near_track[half:half + take] = near[:take] * (8000 / max(1.0, np.max(np.abs(near[:take]))))

    paths = [
        ("living room: 40 ms, RT60 150 ms, echo -6 dB", dict(delay_ms=40, rt60_ms=150, gain_db=-6, distortion=0)),
        ("kitchen: 60 ms, RT60 300 ms, echo 0 dB", dict(delay_ms=60, rt60_ms=300, gain_db=0, distortion=0)),
        ("small speaker driven hard: 40 ms, RT60 150 ms, -6 dB, saturating", dict(delay_ms=40, rt60_ms=150, gain_db=-6, distortion=1)),
        # Audio buffers that hold 150 ms between what the loop hands the speaker and what it plays (an ALSA
        # buffer of a few periods): the echo starts late, and an unaligned 200 ms filter keeps 50 ms for the room.
        ("deep buffers: 150 ms, RT60 300 ms, echo -6 dB", dict(delay_ms=150, rt60_ms=300, gain_db=-6, distortion=0)),
    ]
    far_path = os.path.join(args.out, "far.wav")
    mic_path = os.path.join(args.out, "mic.wav")
    out_path = os.path.join(args.out, "out.wav")

    def command(key, delay_ms, played, microphone):
        extra = dict((k, f) for k, _, f in ENGINES)[key](delay_ms)
        if key.startswith("hark"):
            return [hark, "echo-cancel", "--played", played, "--microphone", microphone, "--output", out_path] + extra
        return [webrtc, "--played", played, "--microphone", microphone, "--output", out_path] + extra

    # Each engine's fixed cost (start-up, reading and writing the files): the least of three runs on 0.5 s.
    short_far, short_mic = os.path.join(args.out, "short-far.wav"), os.path.join(args.out, "short-mic.wav")
    write(short_far, far[: RATE // 2])
    write(short_mic, 0.5 * far[: RATE // 2])
    overhead = {key: min(run(command(key, 40, short_far, short_mic))[0] for _ in range(3)) for key, _, _ in ENGINES}

    write(far_path, far)
    far_on = activity(far)
    near_on = activity(near_track)
    seconds = len(far) / RATE
    rows = []
    for label, p in paths:
        h = room_response(rng, p["delay_ms"], p["rt60_ms"])
        speaker = far if not p["distortion"] else 12000 * np.tanh(far / 9000)
        echo = np.convolve(speaker, h)[: len(far)]
        echo *= 10 ** (p["gain_db"] / 20) * np.sqrt(np.sum(far ** 2) / max(np.sum(echo ** 2), 1e-9))
        noise = rng.standard_normal(len(far)) * 32768 * 10 ** (NOISE_DBFS / 20)
        for double_talk in (False, True):
            mic = echo + noise + (near_track if double_talk else 0)
            write(mic_path, mic)
            # ERLE where the far end talks and the near end does not (the output there is residual echo and noise).
            mask = far_on * (1 - near_on) if double_talk else far_on
            for key, description, _ in ENGINES:
                cpu, alignment = run(command(key, p["delay_ms"], far_path, mic_path))
                out = read(out_path)[: len(far)]
                windows = erle_windows(echo, out, noise, mask)
                after = [e for t, e in windows if t >= 2.0]
                median_after = float(np.median(after)) if after else float("nan")
                # Converged: the first window that reaches the goal; and how often the windows after 2 s stay there.
                converged = next((t for t, e in windows if e >= GOAL_DB), None)
                held = float(np.mean([e >= GOAL_DB for e in after])) if after else 0.0
                row = {"path": label, "double_talk": double_talk, "engine": key, "setting": description,
                       "erle_median_after_2s_db": round(median_after, 1),
                       "erle_p10_after_2s_db": round(float(np.percentile(after, 10)), 1) if after else None,
                       f"first_window_at_{GOAL_DB}_db_s": converged, f"windows_after_2s_at_{GOAL_DB}_db": round(held, 2),
                       "cpu_s_per_audio_s": round(max(cpu - overhead[key], 0.0) / (seconds - 0.5), 5)}
                if key.startswith("hark"):
                    row["residual_suppression"] = key != "hark-linear"
                    if key != "hark-unaligned":
                        # The far end's delay the canceller set (its estimate of the echo's onset less 10 ms).
                        row["aligned_delay_ms"], row["aligned_after_s"] = alignment or (None, None)
                if double_talk:
                    # The near-end voice as it comes out: its correlation with the clean voice over the double-talk
                    # half (the far end's residual echo and the noise lower it too), at the best lag (the residual
                    # suppressor delays its output by one 10 ms frame).
                    seg = slice(half, half + take)
                    correlation, lag = best_correlation(near_track[seg], out[seg])
                    row["near_end_correlation"] = round(correlation, 3)
                    row["output_delay_ms"] = round(lag * 1000 / RATE, 1)
                rows.append(row)
                print(json.dumps(row), flush=True)
    reference = {(r["path"], r["double_talk"]): r["cpu_s_per_audio_s"] for r in rows if r["engine"] == "hark"}
    for r in rows:
        base = reference[(r["path"], r["double_talk"])]
        r["cpu_vs_hark"] = round(r["cpu_s_per_audio_s"] / base, 2) if base > 0 else None
    with open(os.path.join(args.out, "aec.json"), "w") as f:
        json.dump({"seed": args.seed, "noise_dbfs": NOISE_DBFS, "far_seconds": round(seconds, 1),
                   "engines": {k: d for k, d, _ in ENGINES}, "overhead_cpu_s": overhead, "rows": rows}, f, indent=1)
    with open(os.path.join(args.out, "aec.md"), "w") as f:
        f.write(tables(rows))
    print(f"aec: wrote {os.path.join(args.out, 'aec.json')} and aec.md")


def tables(rows):
    """The markdown tables for bench/README.md: every row, the side-by-side one, and CPU per engine."""
    goal = f"first_window_at_{GOAL_DB}_db_s"
    held = f"windows_after_2s_at_{GOAL_DB}_db"

    def cells(r):
        first = "never" if r[goal] is None else f"{r[goal]} s"
        near = f"{r['near_end_correlation']}" if "near_end_correlation" in r else "–"
        return [f"{r['erle_median_after_2s_db']} dB", f"{r['erle_p10_after_2s_db']} dB", first,
                f"{round(100 * r[held])}%", near, f"{1000 * r['cpu_s_per_audio_s']:.1f} ms",
                "–" if r["cpu_vs_hark"] is None else f"{r['cpu_vs_hark']}×"]

    header = ["ERLE median after 2 s", "10th pct", f"first 0.5 s window ≥ {GOAL_DB} dB",
              f"windows after 2 s ≥ {GOAL_DB} dB", "near-end voice (correlation)", "CPU per audio s", "CPU vs Hark"]
    lines = ["| echo path | double talk | engine | " + " | ".join(header) + " |", "|---" * (3 + len(header)) + "|"]
    for r in rows:
        lines.append(f"| {r['path']} | {'yes' if r['double_talk'] else 'no'} | {r['engine']} | " + " | ".join(cells(r)) + " |")
    a, b = SIDE_BY_SIDE
    lines += ["", f"Side by side, {a} / {b}:", "",
              "| echo path | double talk | " + " | ".join(header[:5]) + " | CPU per audio s |", "|---" * 8 + "|"]
    by = {(r["path"], r["double_talk"], r["engine"]): r for r in rows}
    for r in rows:
        if r["engine"] != a:
            continue
        x, y = cells(r), cells(by[(r["path"], r["double_talk"], b)])
        lines.append(f"| {r['path']} | {'yes' if r['double_talk'] else 'no'} | "
                     + " | ".join(f"{x[i]} / {y[i]}" for i in range(6)) + " |")
    lines += ["", "| engine | setting | CPU per audio s (median of its rows) | vs Hark |", "|---|---|---|---|"]
    median = {k: float(np.median([r["cpu_s_per_audio_s"] for r in rows if r["engine"] == k])) for k, _, _ in ENGINES}
    for k, d, _ in ENGINES:
        ratio = f"{median[k] / median['hark']:.2f}×" if median["hark"] > 0 else "–"
        lines.append(f"| {k} | {d} | {1000 * median[k]:.1f} ms | {ratio} |")
    return "\n".join(lines) + "\n"

if __name__ == "__main__":
    main()
