#!/usr/bin/env python3
"""Side-by-side wake benchmark: `hark wyoming --services wake` vs wyoming-openwakeword 1.8.2 and
wyoming-porcupine1 1.0.1 (models bundled in their PyPI wheels). All audio paced in real time like a
satellite (1,024 samples every 64 ms), the three servers fed concurrently from the same clock.
usage: python wakebench.py --hark BIN --oww PORT:PID --porc PORT:PID [--neg N]
"""
import argparse, asyncio, json, os, random, statistics, subprocess, sys, tempfile, time
from pathlib import Path

ROOT = Path(__file__).resolve().parents[2]  # the repository
OUT = ROOT / "bench" / "out" / "wyoming-peers"
from wyoming.audio import AudioChunk, AudioStart, AudioStop
from wyoming.client import AsyncTcpClient
from wyoming.info import Describe
from wyoming.wake import Detect

CLEAN = ROOT.parent / "shared" / "benchmarks" / "speech-to-intent" / "clean"
TICK = os.sysconf("SC_CLK_TCK")


def cpu(pid):
    f = open(f"/proc/{pid}/stat").read().rsplit(")", 1)[1].split()
    return (int(f[11]) + int(f[12])) / TICK


def sox16(args_in):
    return subprocess.run(["sox", *args_in, "-t", "raw", "-r", "16000", "-b", "16", "-c", "1", "-e", "signed", "-"],
                          check=True, capture_output=True).stdout


def noise(seconds, seed):
    r = random.Random(seed)
    return b"".join(r.randint(-40, 40).to_bytes(2, "little", signed=True) for _ in range(int(16000 * seconds)))


def flite(text, voice):
    with tempfile.NamedTemporaryFile(suffix=".wav") as f:
        subprocess.run(["flite", "-voice", voice, "-t", text, "-o", f.name], check=True)
        return sox16([f.name])


async def stream(port, names, audio, mark_byte=None, tail=2.0):
    """Paced stream; returns (detections [(name, seconds after mark or after start)], not_detected)."""
    events = []
    async with AsyncTcpClient("127.0.0.1", port) as c:
        async def reader():
            while True:
                e = await c.read_event()
                if e is None:
                    return
                events.append((time.perf_counter(), e))
                if e.type in ("not-detected", "error"):
                    return
        task = asyncio.create_task(reader())
        await c.write_event(Detect(names=names).event())
        await c.write_event(AudioStart(rate=16000, width=2, channels=1).event())
        start = time.perf_counter()
        for off in range(0, len(audio), 2048):
            await c.write_event(AudioChunk(rate=16000, width=2, channels=1, audio=audio[off:off + 2048]).event())
            await asyncio.sleep(max(0, start + (off + 2048) / 32000 - time.perf_counter()))
        await asyncio.sleep(0.3)  # let a real-time server finish the last frames before audio-stop
        await c.write_event(AudioStop().event())
        try:
            await asyncio.wait_for(task, tail)
        except asyncio.TimeoutError:
            task.cancel()
    mark = start + (mark_byte if mark_byte is not None else 0) / 32000
    dets = [(e.data.get("name"), t - mark) for t, e in events if e.type == "detection"]
    errs = [e.data for t, e in events if e.type == "error"]
    return dets, any(e.type == "not-detected" for _, e in events), errs


async def describe(port):
    async with AsyncTcpClient("127.0.0.1", port) as c:
        await c.write_event(Describe().event())
        e = await c.read_event()
        return [m["name"] for w in e.data.get("wake", []) for m in w.get("models", [])]


def main():
    ap = argparse.ArgumentParser()
    ap.add_argument("--hark", default=str(ROOT / ".build" / "release" / "hark"))
    ap.add_argument("--oww", required=True)
    ap.add_argument("--porc", required=True)
    ap.add_argument("--neg", type=int, default=40)
    ap.add_argument("--voices", default="kal16,slt,rms,awb,kal")
    a = ap.parse_args()
    data = tempfile.mkdtemp(prefix="wakebench.")
    hark = subprocess.Popen([a.hark, "wyoming", "--services", "wake", "--simulate", "--data", data,
                             "--uri", "tcp://127.0.0.1:0", "--print-port"], stdout=subprocess.PIPE, stderr=subprocess.DEVNULL)
    hport = int(hark.stdout.readline())
    oport, opid = map(int, a.oww.split(":"))
    pport, ppid = map(int, a.porc.split(":"))
    servers = {"hark": (hport, hark.pid), "openwakeword": (oport, opid), "porcupine1": (pport, ppid)}
    out = {"load_start": os.getloadavg()}
    try:
        for s, (port, _) in servers.items():
            out[f"models_{s}"] = asyncio.run(describe(port))
        print(json.dumps({k: v for k, v in out.items()}), flush=True)
        names = {"hark": ["hey_hark"], "openwakeword": ["hey_jarvis"], "porcupine1": ["jarvis"]}
        phrase = {"hark": "hey hark", "openwakeword": "hey jarvis", "porcupine1": "hey jarvis"}

        # positives: flite voices, 1 s of floor noise, the phrase (alone, or with a command), 1.5 s of noise
        pos = {s: {"hits": 0, "n": 0, "lat": []} for s in servers}
        c0 = {s: cpu(pid) for s, (_, pid) in servers.items()}
        t0 = time.perf_counter()
        for i, voice in enumerate(a.voices.split(",")):
            for form in ("{}", "{}, turn on the light"):
                clips = {}
                for s in servers:
                    speech = flite(form.format(phrase[s]), voice)
                    clips[s] = (noise(1.0, i) + speech + noise(1.5, i + 1), 32000 + len(speech) if form == "{}" else None)

                async def one():
                    return await asyncio.gather(*(stream(servers[s][0], names[s], clips[s][0], clips[s][1]) for s in servers))
                res = asyncio.run(one())
                for s, (dets, nd, errs) in zip(servers, res):
                    pos[s]["n"] += 1
                    if errs:
                        print(s, "error", errs, flush=True)
                    if dets:
                        pos[s]["hits"] += 1
                        if clips[s][1] is not None:
                            pos[s]["lat"].append(dets[0][1])
                print(voice, form, {s: [round(d[1], 3) for d in r[0]] for s, r in zip(servers, res)}, flush=True)
        pos_secs = time.perf_counter() - t0
        c1 = {s: cpu(pid) for s, (_, pid) in servers.items()}

        # negatives: real recorded coffee orders (dev half), none contains a wake phrase
        clips = sorted(p for p in CLEAN.glob("*.flac") if p.name[0] in "01234567")[:a.neg]
        neg = {s: {"fa": 0, "streams_with_fa": 0} for s in servers}
        audio_secs = 0.0
        t1 = time.perf_counter()
        for k, clip in enumerate(clips):
            audio = sox16([str(clip)])
            audio_secs += len(audio) / 32000

            async def one():
                return await asyncio.gather(*(stream(servers[s][0], names[s], audio) for s in servers))
            res = asyncio.run(one())
            for s, (dets, nd, errs) in zip(servers, res):
                neg[s]["fa"] += len(dets)
                neg[s]["streams_with_fa"] += bool(dets)
            if k % 10 == 9:
                print("neg", k + 1, {s: neg[s]["fa"] for s in servers}, os.getloadavg(), flush=True)
        neg_secs = time.perf_counter() - t1
        c2 = {s: cpu(pid) for s, (_, pid) in servers.items()}
        out.update(positives=pos, negatives=neg, neg_audio_s=audio_secs, neg_wall_s=neg_secs, pos_wall_s=pos_secs,
                   cpu_pos={s: c1[s] - c0[s] for s in servers}, cpu_neg={s: c2[s] - c1[s] for s in servers},
                   load_end=os.getloadavg())
        for s in servers:
            lat = sorted(pos[s]["lat"])
            out[f"lat_{s}"] = (statistics.median(lat), lat[min(len(lat) - 1, round(0.9 * (len(lat) - 1)))]) if lat else None
        print(json.dumps(out, indent=1), flush=True)
        OUT.mkdir(parents=True, exist_ok=True)
        (OUT / "wakebench.json").write_text(json.dumps(out, indent=1))
    finally:
        hark.terminate()
        hark.wait(timeout=30)


if __name__ == "__main__":
    main()
