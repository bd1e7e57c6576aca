#!/usr/bin/env python3
"""Echo return loss enhancement (ERLE) of Hark's echo canceller (`hark echo-cancel`, speexdsp) on real speech
through simulated echo paths, for issue 14's appliance-as-a-room-member (goal: >= 25 dB after convergence,
converged within 2 s).

usage: python3 bench/aec.py [--out bench/out/aec] [--seed 20261201]
Needs numpy, sox (scripts/setup-bench.sh) and a built hark ($HARK, default .build/release/hark, else .build/debug/hark).

The far end is real read speech: the LibriVox clips in ../shared/benchmarks/recorded-speech, one after the
other (about 25 s). The echo path from the loudspeaker to the microphone is simulated, one per row:
a delay (the audio buffers and the air), a room impulse response (exponentially decaying noise with a seeded
shape: the reflections), a level (how loud the echo is at the microphone), optionally a loudspeaker that
distorts (tanh saturation, which no linear filter can model), plus microphone noise at -60 dBFS. For double
talk, a near-end voice (clean clips of the speech-to-intent benchmark, other speakers) talks over the second
half. ERLE = 10 log10(echo energy / residual energy) in 0.5 s windows where the far end talks and the near end
does not; reported: the median and 10th percentile after 2 s, when the first window reaches 25 dB and the
share of windows after 2 s at 25 dB or more. Near-end preservation in double talk: correlation of the output with the clean
near-end voice over the double-talk half (1 = untouched).
"""
import argparse
import glob
import io
import json
import os
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


def main():
    parser = argparse.ArgumentParser(description=__doc__.split("\n")[0])
    parser.add_argument("--out", default=os.path.join(ROOT, "bench", "out", "aec"))
    parser.add_argument("--seed", type=int, default=20261201)
    args = parser.parse_args()
    os.makedirs(args.out, exist_ok=True)
    hark = hark_binary()
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
    ]
    far_path = os.path.join(args.out, "far.wav")
    mic_path = os.path.join(args.out, "mic.wav")
    out_path = os.path.join(args.out, "out.wav")
    write(far_path, far)
    far_on = activity(far)
    near_on = activity(near_track)
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
            for residual in (True, False):
                command = [hark, "echo-cancel", "--played", far_path, "--microphone", mic_path, "--output", out_path]
                if not residual:
                    command.append("--no-residual")
                subprocess.run(command, check=True)
                out = read(out_path)[: len(far)]
                windows = erle_windows(echo, out, noise, mask)
                after = [e for t, e in windows if t >= 2.0]
                median_after = float(np.median(after)) if after else float("nan")
                # Converged: the first window that reaches the goal; and how often the windows after 2 s stay there.
                converged = next((t for t, e in windows if e >= GOAL_DB), None)
                held = float(np.mean([e >= GOAL_DB for e in after])) if after else 0.0
                row = {"path": label, "double_talk": double_talk, "residual_suppression": residual,
                       "erle_median_after_2s_db": round(median_after, 1),
                       "erle_p10_after_2s_db": round(float(np.percentile(after, 10)), 1) if after else None,
                       f"first_window_at_{GOAL_DB}_db_s": converged, f"windows_after_2s_at_{GOAL_DB}_db": round(held, 2)}
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
    with open(os.path.join(args.out, "aec.json"), "w") as f:
        json.dump({"seed": args.seed, "noise_dbfs": NOISE_DBFS, "far_seconds": round(len(far) / RATE, 1), "rows": rows}, f, indent=1)
    print(f"aec: wrote {os.path.join(args.out, 'aec.json')}")


if __name__ == "__main__":
    main()
