#!/usr/bin/env python3
"""`hark wyoming` as Home Assistant uses it, timed with the real `wyoming` client (PyPI).

usage: .build/wyoming-venv/bin/python bench/wyoming-speed.py [--hark PATH] [--clips N] [--half dev|test|all]
                                                       [--tts-rounds N] [--paced N] [--out DIR]

Speech to text: real recorded coffee orders (../shared/benchmarks/speech-to-intent/clean, 16 kHz FLAC decoded
by sox) against Intents/barista.json (made from the domain files by scripts/make-barista.py), each sent as HA
sends it (transcribe, audio-start, 1,024-sample chunks, audio-stop) as fast as the socket takes it. Measured:
the latency from audio-stop to the transcript (the whole utterance is decoded then), its real-time factor
(latency / audio duration), and, through the intent service (`recognize` on the transcript), the benchmark's
command acceptance scored by its own score.py.
Text to speech: time from `synthesize` to the first audio-chunk, and streaming: from the synthesize-chunk that
completes the first sentence to its first audio-chunk.
Writes bench/out/wyoming/results.jsonl and bench/out/wyoming/report.md. Needs .build/wyoming-venv (scripts/wyoming-test.sh).
"""
import argparse
import asyncio
import json
import os
import shutil
import statistics
import subprocess
import sys
import tempfile
import time
from pathlib import Path

from wyoming.asr import Transcribe, Transcript
from wyoming.audio import AudioChunk, AudioStart, AudioStop
from wyoming.client import AsyncTcpClient
from wyoming.intent import Intent, Recognize
from wyoming.tts import Synthesize, SynthesizeChunk, SynthesizeStart, SynthesizeStop

REPO = Path(__file__).resolve().parents[1]
BENCHMARKS = Path(os.environ.get("HARK_BENCHMARKS", REPO.parent / "shared/benchmarks"))
SENTENCES = [
    "Light is on.", "The light is off now.", "It is half past seven in the evening.",
    "I took a picture. You can see it on the web page.", "Sorry, I didn't catch that.",
    "Hello, I'm Hark. I can switch the light, take a picture or tell you the time.",
    "Your large latte with an extra shot is coming right up.", "Good night.",
]


def percentile(values, p):
    values = sorted(values)
    return values[min(len(values) - 1, int(round(p / 100 * (len(values) - 1))))]


def summary(values, unit="ms", scale=1000):
    return (f"{statistics.median(values) * scale:.1f} / {percentile(values, 90) * scale:.1f} / "
            f"{max(values) * scale:.1f} {unit}")


def decode(path):
    raw = subprocess.run(["sox", str(path), "-t", "raw", "-r", "16000", "-b", "16", "-c", "1", "-e", "signed", "-"],
                         check=True, capture_output=True).stdout
    return raw


async def transcribe(port, audio, paced=False):
    """(text, seconds from audio-stop to the transcript, partial chunks received)."""
    async with AsyncTcpClient("127.0.0.1", port, read_timeout=120) as c:
        await c.write_event(Transcribe(language="en").event())
        await c.write_event(AudioStart(rate=16000, width=2, channels=1).event())
        started = time.perf_counter()
        for offset in range(0, len(audio), 2048):
            await c.write_event(AudioChunk(rate=16000, width=2, channels=1, audio=audio[offset:offset + 2048]).event())
            if paced:  # like a microphone: 1,024 samples every 64 ms
                await asyncio.sleep(max(0, started + (offset + 2048) / 32000 - time.perf_counter()))
        await c.write_event(AudioStop().event())
        stopped = time.perf_counter()
        chunks = 0
        while True:
            event = await c.read_event()
            if event.type == "transcript-chunk":
                chunks += 1
            if Transcript.is_type(event.type):
                return Transcript.from_event(event).text, time.perf_counter() - stopped, chunks
            if event.type == "error":
                raise RuntimeError(event.data)


async def recognize(port, text):
    async with AsyncTcpClient("127.0.0.1", port, read_timeout=60) as c:
        await c.write_event(Recognize(text=text).event())
        event = await c.read_event()
        if Intent.is_type(event.type):
            intent = Intent.from_event(event)
            return intent.name, {e.name: e.value for e in intent.entities}
        return None, {}


async def synthesize(port, text):
    async with AsyncTcpClient("127.0.0.1", port, read_timeout=60) as c:
        sent = time.perf_counter()
        await c.write_event(Synthesize(text=text).event())
        first, samples = None, 0
        while True:
            event = await c.read_event()
            if AudioChunk.is_type(event.type):
                first = first or time.perf_counter() - sent
                samples += len(event.payload) // 2
            elif event.type == "audio-stop":
                return first, time.perf_counter() - sent, samples / 22050


async def synthesize_streaming(port, text):
    """Words sent one at a time, as an LLM streams them; timed from the chunk that ends the first sentence."""
    words = text.split(" ")
    first_end = next(i for i, w in enumerate(words) if w.endswith((".", "!", "?")))
    async with AsyncTcpClient("127.0.0.1", port, read_timeout=60) as c:
        await c.write_event(SynthesizeStart().event())
        sentence_done = None
        for i, word in enumerate(words):
            # The sentence is complete once the next word's leading space arrives.
            await c.write_event(SynthesizeChunk(text=("" if i == 0 else " ") + word).event())
            if i == first_end + 1:
                sentence_done = time.perf_counter()
        await c.write_event(SynthesizeChunk(text=" ").event())
        if sentence_done is None:
            sentence_done = time.perf_counter()
        await c.write_event(SynthesizeStop().event())
        first = None
        while True:
            event = await c.read_event()
            if AudioChunk.is_type(event.type) and first is None:
                first = time.perf_counter() - sentence_done
            elif event.type == "synthesize-stopped":
                return first


def start(hark, workspace, data, extra):
    server = subprocess.Popen(
        [hark, "wyoming", "--services", "asr,tts,intent", "--workspace", str(workspace), "--simulate", "--data", data,
         "--uri", "tcp://127.0.0.1:0", "--print-port", *extra], stdout=subprocess.PIPE, stderr=subprocess.DEVNULL)
    return server, int(server.stdout.readline())


def main():
    parser = argparse.ArgumentParser(description=__doc__.split("\n")[0])
    release = REPO / ".build/release/hark"
    parser.add_argument("--hark", default=str(release if release.exists() else REPO / ".build/debug/hark"))
    parser.add_argument("--clips", type=int, default=80)
    parser.add_argument("--half", default="dev", choices=["dev", "test", "all"])
    parser.add_argument("--tts-rounds", type=int, default=3)
    parser.add_argument("--paced", type=int, default=10, help="clips also sent in real time (partials on)")
    parser.add_argument("--out", default=str(REPO / "bench/out/wyoming"))
    args = parser.parse_args()
    out = Path(args.out)
    out.mkdir(parents=True, exist_ok=True)
    if not shutil.which("sox"):
        sys.exit("wyoming bench: needs sox (apt-get install sox) to decode the FLAC clips")
    barista = REPO / "Intents/barista.json"
    if not barista.exists():
        subprocess.run([sys.executable, str(REPO / "scripts/make-barista.py")], check=True)

    clean = BENCHMARKS / "speech-to-intent/clean"
    halves = {"dev": "01234567", "test": "89abcdef", "all": "0123456789abcdef"}[args.half]
    clips = sorted(p for p in clean.glob("*.flac") if p.name[0].lower() in halves)[:args.clips]
    if not clips:
        sys.exit(f"wyoming bench: no clips under {clean}")

    data = tempfile.mkdtemp(prefix="hark-wyoming-bench.")
    server, port = start(args.hark, barista, data, [])
    try:
        latencies, factors, empty = [], [], 0
        with open(out / "results.jsonl", "w") as results:
            for clip in clips:
                audio = decode(clip)
                text, latency, _ = asyncio.run(transcribe(port, audio))
                seconds = len(audio) / 2 / 16000
                latencies.append(latency)
                factors.append(latency / seconds)
                empty += text == ""
                intent, slots = asyncio.run(recognize(port, text)) if text else (None, {})
                results.write(json.dumps({"file": clip.with_suffix(".wav").name, "transcript": text, "intent": intent,
                                          "slots": slots, "latency_ms": round(latency * 1000, 1)}) + "\n")
        score = subprocess.run([sys.executable, str(BENCHMARKS / "speech-to-intent/score.py"), str(out / "results.jsonl"),
                                "--half", args.half], capture_output=True, text=True).stdout.strip().splitlines()
        # score.py counts the half's clips that were not sent as errors: the figure is over the clips sent.
        ok = sum(int(line.split("'ok': ")[1].split(",")[0]) for line in score if "'ok': " in line)
        scored = [f"{ok}/{len(clips)} = {ok / len(clips):.3f}"]

        # Paced like a microphone, as a satellite streams to HA: partials run while the audio arrives; the same
        # clips again against a server without partials, alternating, for their cost in latency.
        paced, unpaced_partials, paced_chunks = [], [], 0
        quiet = start(args.hark, barista, data, ["--no-partials"]) if args.paced else None
        try:
            for clip in clips[:args.paced]:
                audio = decode(clip)
                _, latency, chunks = asyncio.run(transcribe(port, audio, paced=True))
                paced.append(latency)
                paced_chunks += chunks > 0
                _, latency, _ = asyncio.run(transcribe(quiet[1], audio, paced=True))
                unpaced_partials.append(latency)
        finally:
            if quiet:
                quiet[0].terminate()
                quiet[0].wait(timeout=30)

        ttfa, totals, factors_tts, streamed = [], [], [], []
        for _ in range(args.tts_rounds):
            for sentence in SENTENCES:
                first, total, duration = asyncio.run(synthesize(port, sentence))
                ttfa.append(first)
                totals.append(total)
                factors_tts.append(total / duration)
                if any(sentence.rstrip(".!?").count(p) for p in ".!?") or sentence.count(". "):
                    streamed.append(asyncio.run(synthesize_streaming(port, sentence)))
        with open(f"/proc/{server.pid}/status") as status:
            peak = next(line.split()[1] for line in status if line.startswith("VmHWM"))
    finally:
        server.terminate()
        server.wait(timeout=30)
        shutil.rmtree(data, ignore_errors=True)

    binary = "release" if "/release/" in args.hark else "debug"
    report = [
        f"# hark wyoming ({binary} build, {os.cpu_count()} cores shared)", "",
        f"Speech to text: {len(clips)} real coffee orders ({args.half} half), Intents/barista.json, sent as fast as the socket takes them.", "",
        "| measure | median / p90 / max |", "|---|---|",
        f"| audio-stop → transcript | {summary(latencies)} |",
        f"| real-time factor (latency / audio) | {summary(factors, unit='', scale=1)} |",
        f"| empty transcripts (rejected) | {empty}/{len(clips)} |",
        f"| command acceptance through the intent service (score.py) | {' '.join(scored)} |",
        *([f"| paced in real time ({len(paced)} clips): audio-stop → transcript | {summary(paced)} |",
           f"| paced, server with --no-partials (same clips, alternating) | {summary(unpaced_partials)} |",
           f"| paced: clips with at least one transcript-chunk | {paced_chunks}/{len(paced)} |"] if paced else []), "",
        f"Text to speech: {len(SENTENCES)} replies × {args.tts_rounds}.", "",
        "| measure | median / p90 / max |", "|---|---|",
        f"| synthesize → first audio-chunk | {summary(ttfa)} |",
        f"| synthesize → audio-stop | {summary(totals)} |",
        f"| real-time factor | {summary(factors_tts, unit='', scale=1)} |",
        f"| streaming: first sentence complete → its first audio-chunk | {summary(streamed)} |", "",
        f"Server peak memory (VmHWM): {int(peak) / 1024:.0f} MiB.",
    ]
    # In --out (bench/out/wyoming by default).
    written = out / "report.md"
    written.write_text("\n".join(report) + "\n")
    print("\n".join(report))
    print(f"\n(written to {written})")


if __name__ == "__main__":
    main()
