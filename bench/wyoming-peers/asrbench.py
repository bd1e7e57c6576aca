#!/usr/bin/env python3
"""Side-by-side ASR: `hark wyoming --services asr` (barista grammar) vs wyoming-ovos-stt 0.2.0 +
ovos-stt-plugin-pocketsphinx 0.1.1 (SpeechRecognition 3.17's bundled en-US PocketSphinx model, open vocabulary).
Same dev-half coffee orders, sent as HA sends them (transcribe, audio-start, 1,024-sample chunks as fast as the
socket takes them, audio-stop), one server after the other on each clip, order alternating.
usage: python asrbench.py --peer PORT:PID [--clips N]
"""
import argparse, asyncio, json, os, statistics, subprocess, tempfile, time
from pathlib import Path

ROOT = Path(__file__).resolve().parents[2]  # the repository
OUT = ROOT / "bench" / "out" / "wyoming-peers"
from wyoming.asr import Transcribe, Transcript
from wyoming.audio import AudioChunk, AudioStart, AudioStop
from wyoming.client import AsyncTcpClient

BENCH = ROOT.parent / "shared" / "benchmarks" / "speech-to-intent"
TICK = os.sysconf("SC_CLK_TCK")


def cpu(pid):
    f = open(f"/proc/{pid}/stat").read().rsplit(")", 1)[1].split()
    return (int(f[11]) + int(f[12])) / TICK


def pct(v, p):
    v = sorted(v)
    return v[min(len(v) - 1, int(round(p / 100 * (len(v) - 1))))]


async def transcribe(port, audio):
    async with AsyncTcpClient("127.0.0.1", port) as c:
        await c.write_event(Transcribe(language="en").event())
        await c.write_event(AudioStart(rate=16000, width=2, channels=1).event())
        for o in range(0, len(audio), 2048):
            await c.write_event(AudioChunk(rate=16000, width=2, channels=1, audio=audio[o:o + 2048]).event())
        await c.write_event(AudioStop().event())
        t = time.perf_counter()
        while True:
            e = await asyncio.wait_for(c.read_event(), 120)
            if e is None:
                return None, time.perf_counter() - t
            if Transcript.is_type(e.type):
                return Transcript.from_event(e).text, time.perf_counter() - t
            if e.type == "error":
                return "ERROR " + json.dumps(e.data), time.perf_counter() - t


def main():
    ap = argparse.ArgumentParser()
    ap.add_argument("--hark", default=str(ROOT / ".build" / "release" / "hark"))
    ap.add_argument("--peer", required=True)
    ap.add_argument("--clips", type=int, default=80)
    a = ap.parse_args()
    labels = json.load(open(BENCH / "labels.json"))
    data = tempfile.mkdtemp(prefix="asrbench.")
    hark = subprocess.Popen([a.hark, "wyoming", "--services", "asr", "--workspace", str(ROOT / "Intents" / "barista.json"),
                             "--simulate", "--data", data, "--uri", "tcp://127.0.0.1:0", "--print-port"],
                            stdout=subprocess.PIPE, stderr=subprocess.DEVNULL)
    hport = int(hark.stdout.readline())
    pport, ppid = map(int, a.peer.split(":"))
    servers = {"hark": (hport, hark.pid), "ovos-pocketsphinx": (pport, ppid)}
    clips = sorted(p for p in (BENCH / "clean").glob("*.flac") if p.name[0] in "01234567")[:a.clips]
    res = {s: {"lat": [], "rtf": [], "slots_all": 0, "empty": 0} for s in servers}
    rows = []
    load0 = os.getloadavg()
    c0 = {s: cpu(pid) for s, (_, pid) in servers.items()}
    audio_total = 0.0
    try:
        for i, clip in enumerate(clips):
            audio = subprocess.run(["sox", str(clip), "-t", "raw", "-r", "16000", "-b", "16", "-c", "1", "-e", "signed", "-"],
                                   check=True, capture_output=True).stdout
            secs = len(audio) / 32000
            audio_total += secs
            slots = [v.lower() for v in labels[clip.with_suffix(".wav").name]["slots"].values()]
            order = list(servers) if i % 2 == 0 else list(reversed(servers))
            row = {"clip": clip.name, "secs": round(secs, 2), "slots": slots}
            for s in order:
                text, lat = asyncio.run(transcribe(servers[s][0], audio))
                text = text or ""
                res[s]["lat"].append(lat)
                res[s]["rtf"].append(lat / secs)
                res[s]["empty"] += text == ""
                res[s]["slots_all"] += all(v in text.lower() for v in slots)
                row[s] = {"text": text, "lat": round(lat, 3)}
            rows.append(row)
            if i % 10 == 9:
                print(i + 1, {s: round(statistics.median(res[s]["lat"]), 3) for s in servers}, os.getloadavg(), flush=True)
        c1 = {s: cpu(pid) for s, (_, pid) in servers.items()}
        out = {"clips": len(clips), "audio_s": audio_total, "load_start": load0, "load_end": os.getloadavg()}
        for s in servers:
            r = res[s]
            out[s] = {"lat_med_p90_max": [statistics.median(r["lat"]), pct(r["lat"], 90), max(r["lat"])],
                      "rtf_med_p90": [statistics.median(r["rtf"]), pct(r["rtf"], 90)],
                      "all_slot_values_in_transcript": r["slots_all"], "empty": r["empty"],
                      "cpu_s": c1[s] - c0[s], "vmhwm": [l for l in open(f"/proc/{servers[s][1]}/status") if l.startswith("VmHWM")][0].strip(), "cpu_per_audio_s": (c1[s] - c0[s]) / audio_total}
        print(json.dumps(out, indent=1))
        OUT.mkdir(parents=True, exist_ok=True)
        (OUT / "asrbench.json").write_text(json.dumps(out, indent=1))
        (OUT / "asrbench-rows.jsonl").write_text("\n".join(json.dumps(r) for r in rows) + "\n")
    finally:
        hark.terminate()
        hark.wait(timeout=30)


if __name__ == "__main__":
    main()
