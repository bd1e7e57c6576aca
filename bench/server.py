#!/usr/bin/env python3
"""The companion server's benchmark (bench/server.sh runs it in bench/.venv-server): on loopback, in one run,

1. throughput and latency of Watson's `POST /v1/workspaces/default/message` under `hark serve`, 50 keep-alive
   clients (wrk, one thread), the 121 home paraphrases round-robin, each with the welcome turn's context;
2. the same load on the peer a user would pick instead: hassil behind aiohttp (bench/server_peer.py), and
   whether each server gives the right intent (a sequential pass over the same sentences);
3. the memory of `hark run --simulate --console` with 20 simulated browsers (page, scripts, /api/devices,
   the welcome message and a live /api/events socket each), from /proc/PID/status;
4. push-to-talk on the same `hark run`: flite's "turn on the light" streamed to WS /api/listen in 20 ms
   frames at real-time pace; time from `{"type": "end"}` to the reply message and to the WAV; partials.

Writes bench/out/server/server.json (every number, the machine, the load) and bench/out/server/report.md (written by this script), and prints the
report. Needs the release binary, wrk, flite, and aiohttp + hassil (this file's own imports).
"""
import argparse
import asyncio
import json
import os
import platform
import resource
import shutil
import signal
import socket
import statistics
import subprocess
import sys
import tempfile
import threading
import time
import urllib.error
import urllib.request
import wave

import aiohttp

sys.path.insert(0, os.path.dirname(os.path.abspath(__file__)))
import harklib  # noqa: E402  (the bench directory is not a package)

OUT = os.path.join(harklib.OUT, "server")
GRAMMAR = os.path.join(harklib.ROOT, "bench", "peers", "home_hassil.yaml")
VENV_PYTHON = sys.executable  # server.sh runs this file with bench/.venv-server's python
MESSAGE_PATH = "/v1/workspaces/default/message?version=2021-06-14"
PEER_PATH = "/api/text-to-intent"
# What the page loads (web/index.html and its module imports; pcm-worklet.js only when talking).
PAGE_FILES = ["/", "/web/style.css", "/web/app.js", "/web/api.js", "/web/events.js", "/web/talk.js", "/web/downsampler.js"]
PTT_SENTENCE = "turn on the light"
PTT_INTENT = "OnLight"
FRAME_SAMPLES = 320  # 20 ms at 16 kHz

# wrk's Lua: one pre-formatted request per sentence, round-robin; `done` prints one JSON line.
WRK_SCRIPT = r"""
local reqs = {}
local idx = 0
init = function(args)
  local path, token, file = args[1], args[2], args[3]
  local headers = { ["Content-Type"] = "application/json" }
  if token ~= "-" then headers["Authorization"] = "Bearer " .. token end
  for line in io.lines(file) do
    reqs[#reqs + 1] = wrk.format("POST", path, headers, line)
  end
end
request = function()
  idx = idx % #reqs + 1
  return reqs[idx]
end
done = function(summary, latency, requests)
  local e = summary.errors
  io.write(string.format(
    '{"requests": %d, "duration_us": %d, "bytes": %d, "errors": {"connect": %d, "read": %d, "write": %d, "status": %d, "timeout": %d}, ' ..
    '"latency_us": {"p50": %d, "p90": %d, "p99": %d, "mean": %.1f, "max": %d}}\n',
    summary.requests, summary.duration, summary.bytes, e.connect, e.read, e.write, e.status, e.timeout,
    latency:percentile(50), latency:percentile(90), latency:percentile(99), latency.mean, latency.max))
end
"""


def log(message):
    print(f"server.py: {message}", file=sys.stderr, flush=True)


# ---------------------------------------------------------------------------------------------------------
# The machine: load, per-core busy time, a process's CPU time and memory.

def loadavg():
    with open("/proc/loadavg") as f:
        return [float(x) for x in f.read().split()[:3]]


def core_times():
    """{"cpu0": (busy, total), …} in clock ticks."""
    out = {}
    with open("/proc/stat") as f:
        for line in f:
            name, *fields = line.split()
            if name.startswith("cpu") and name != "cpu":
                v = [int(x) for x in fields]
                idle = v[3] + v[4]
                out[name] = (sum(v[:8]) - idle, sum(v[:8]))
    return out


def busy_percent(before, after):
    return {name: round(100 * (after[name][0] - before[name][0]) / max(1, after[name][1] - before[name][1]), 1)
            for name in after}


def process_ticks(pid):
    with open(f"/proc/{pid}/stat") as f:
        fields = f.read().rsplit(")", 1)[1].split()
    return int(fields[11]) + int(fields[12])  # utime + stime


def memory(pid):
    """VmRSS, VmHWM (KiB) and the thread count from /proc/PID/status."""
    values = {}
    with open(f"/proc/{pid}/status") as f:
        for line in f:
            key, _, rest = line.partition(":")
            if key in ("VmRSS", "VmHWM"):
                values[key] = int(rest.split()[0])
            elif key == "Threads":
                values["threads"] = int(rest)
    return values


def machine():
    model = ""
    with open("/proc/cpuinfo") as f:
        for line in f:
            if line.startswith("model name"):
                model = line.split(":", 1)[1].strip()
                break
    uptime = subprocess.run(["uptime"], capture_output=True, text=True).stdout.strip()
    top = subprocess.run(["ps", "-eo", "pcpu,comm", "--sort=-pcpu", "--no-headers"], capture_output=True, text=True).stdout
    return {"nproc": os.cpu_count(), "cpu_model": model, "kernel": platform.release(), "uptime_before": uptime,
            "busiest_processes_before": [" ".join(l.split()) for l in top.splitlines()[:6]]}


# ---------------------------------------------------------------------------------------------------------
# Processes.

def free_port():
    with socket.socket() as s:
        s.bind(("127.0.0.1", 0))
        return s.getsockname()[1]


def wait_http(url, timeout=60, process=None):
    deadline = time.monotonic() + timeout
    while time.monotonic() < deadline:
        if process is not None and process.poll() is not None:
            raise RuntimeError(f"{url}: the server exited with status {process.returncode} before answering")
        try:
            with urllib.request.urlopen(url, timeout=2) as r:
                r.read()
                return
        except (urllib.error.URLError, ConnectionError, OSError):
            time.sleep(0.1)
    raise RuntimeError(f"{url}: no answer within {timeout} s")


def stop(process, name):
    if process is None or process.poll() is not None:
        return
    process.send_signal(signal.SIGTERM)
    try:
        process.wait(timeout=10)
    except subprocess.TimeoutExpired:
        log(f"{name} did not stop on SIGTERM; killing it")
        process.kill()
        process.wait()


def read_port(process):
    """The bound port, alone on the first line; the rest of stdout is drained so the pipe never fills."""
    line = process.stdout.readline()
    if not line.strip().isdigit():
        raise RuntimeError(f"expected a port on the first line, got {line!r} (see bench/out/server/*.log)")
    threading.Thread(target=process.stdout.read, daemon=True).start()
    return int(line)


def pair(hark, data, port):
    """A token the way a user gets one: `hark pair` prints a code, POST /api/pair trades it."""
    code = subprocess.run([hark, "pair", "--data", data], capture_output=True, text=True, check=True).stdout.split()[0]
    body = json.dumps({"code": code}).encode()
    request = urllib.request.Request(f"http://127.0.0.1:{port}/api/pair", data=body, headers={"Content-Type": "application/json"})
    with urllib.request.urlopen(request, timeout=10) as r:
        return json.load(r)["token"]


def post_json(url, body, token=None):
    headers = {"Content-Type": "application/json"}
    if token:
        headers["Authorization"] = f"Bearer {token}"
    request = urllib.request.Request(url, data=json.dumps(body).encode(), headers=headers)
    with urllib.request.urlopen(request, timeout=30) as r:
        return json.load(r)


# ---------------------------------------------------------------------------------------------------------
# 1 + 2: load on /message and on the peer.

def run_wrk(port, path, token, bodies_file, script, seconds, connections, core, server_pid):
    """One wrk run; returns its JSON summary with requests/s, the CPU it and the server used, the cores' load."""
    argv = ["wrk", "-t1", f"-c{connections}", f"-d{seconds}s", "--timeout", "10s", "-s", script,
            f"http://127.0.0.1:{port}", "--", path, token or "-", bodies_file]
    if core is not None:
        argv = ["taskset", "-c", str(core)] + argv
    usage_before = resource.getrusage(resource.RUSAGE_CHILDREN)
    cores_before, server_before, load_before = core_times(), process_ticks(server_pid), loadavg()
    started = time.monotonic()
    done = subprocess.run(argv, capture_output=True, text=True)
    wall = time.monotonic() - started
    cores_after, server_after = core_times(), process_ticks(server_pid)
    usage_after = resource.getrusage(resource.RUSAGE_CHILDREN)
    if done.returncode != 0:
        raise RuntimeError(f"wrk failed ({done.returncode}): {done.stderr.strip() or done.stdout.strip()}")
    summary = json.loads(done.stdout.strip().splitlines()[-1])
    ticks = os.sysconf("SC_CLK_TCK")
    summary["rps"] = round(summary["requests"] / (summary["duration_us"] / 1e6), 1)
    summary["wrk_cpu_percent"] = round(100 * ((usage_after.ru_utime - usage_before.ru_utime) + (usage_after.ru_stime - usage_before.ru_stime)) / wall, 1)
    summary["server_cpu_percent"] = round(100 * (server_after - server_before) / ticks / wall, 1)
    # CPU time per answered request: the figure the other processes on this shared machine disturb least.
    summary["server_cpu_ms_per_request"] = round(1000 * (server_after - server_before) / ticks / max(1, summary["requests"]), 3)
    summary["core_busy_percent"] = busy_percent(cores_before, cores_after)
    summary["loadavg_before"] = load_before
    summary["loadavg_after"] = loadavg()
    return summary


def load_test(name, port, path, token, bodies_file, script, args, server_core, client_core, server_pid):
    log(f"{name}: {args.warmup} s warm-up, then {args.duration} s with {args.connections} connections")
    run_wrk(port, path, token, bodies_file, script, args.warmup, args.connections, client_core, server_pid)
    result = run_wrk(port, path, token, bodies_file, script, args.duration, args.connections, client_core, server_pid)
    result["server_core"] = "0" if server_core == 0 else "0-1"
    result["client_core"] = "1" if client_core == 1 else "0-1"
    lat = result["latency_us"]
    log(f"{name}: {result['rps']} req/s, p50 {lat['p50'] / 1000:.2f} ms, p99 {lat['p99'] / 1000:.2f} ms, "
        f"non-2xx {result['errors']['status']}, server {result['server_cpu_percent']}% CPU "
        f"({result['server_cpu_ms_per_request']} ms/request), wrk {result['wrk_cpu_percent']}%")
    return result


def check_intents(cases, port, path, token, context, read_intent):
    """One request per sentence, in order; the right intent or not."""
    correct, wrong = 0, []
    for case in cases:
        answer = post_json(f"http://127.0.0.1:{port}{path}", {"input": {"text": case["text"]}, "context": context}, token)
        got = read_intent(answer)
        if got == case["intent"]:
            correct += 1
        else:
            wrong.append({"text": case["text"], "expected": case["intent"], "got": got})
    return {"cases": len(cases), "correct": correct, "wrong": wrong}


def hark_intent(answer):
    intents = answer.get("intents") or []
    return intents[0]["intent"] if intents else None


def peer_intent(answer):
    return answer["intent"]["name"] or None


def message_benchmark(args, hark, cases, work):
    results = {}
    data = os.path.join(work, "serve-data")
    os.makedirs(data)
    bodies_file = os.path.join(OUT, "bodies.jsonl")
    # TakePicture's dialog captures, encodes and stores a JPEG per request (the simulated camera): a second
    # run without those sentences shows the cost of the request path itself.
    no_camera_file = os.path.join(OUT, "bodies-no-camera.jsonl")
    script = os.path.join(OUT, "message.lua")
    with open(script, "w") as f:
        f.write(WRK_SCRIPT)

    # wrk's 50 clients all come from 127.0.0.1, where on a LAN they would be 50 addresses: the server's default of
    # 32 connections per client would push out idle ones (read errors in wrk) and refuse with 503 when none is idle.
    # The setting a reverse proxy on the same machine needs (deploy/hark.json, server.connections_per_client).
    serve_config = os.path.join(OUT, "serve.json")
    with open(serve_config, "w") as f:
        json.dump({"server": {"connections_per_client": min(128, args.connections + 16)}}, f)
    serve_log = open(os.path.join(OUT, "hark-serve.log"), "w")
    serve = subprocess.Popen(["taskset", "-c", "0", hark, "serve", "--simulate", "--port", "0", "--print-port",
                              "--config", serve_config, "--data", data, "--workspace", harklib.HOME_WORKSPACE],
                             stdout=subprocess.PIPE, stderr=serve_log, text=True, cwd=harklib.ROOT)
    peer = None
    try:
        port = read_port(serve)
        wait_http(f"http://127.0.0.1:{port}/api/openapi.json", process=serve)
        token = pair(hark, data, port)
        # Watson clients start with an empty message and send back the context they get: every request below
        # carries the welcome turn's context, so each sentence is the conversation's second turn.
        context = post_json(f"http://127.0.0.1:{port}{MESSAGE_PATH}", {}, token)["context"]
        harklib.write_jsonl(bodies_file, [{"input": {"text": c["text"]}, "context": context} for c in cases])
        harklib.write_jsonl(no_camera_file, [{"input": {"text": c["text"]}, "context": context} for c in cases if c["intent"] != "TakePicture"])
        results["hark_intents"] = check_intents(cases, port, MESSAGE_PATH, token, context, hark_intent)
        results["hark_one_core"] = load_test("hark serve, core 0", port, MESSAGE_PATH, token, bodies_file, script, args, 0, 1, serve.pid)
        results["hark_one_core_no_camera"] = load_test("hark serve, core 0, no TakePicture", port, MESSAGE_PATH, token, no_camera_file, script, args, 0, 1, serve.pid)
        results["hark_one_core_no_camera"]["sentences"] = sum(1 for c in cases if c["intent"] != "TakePicture")
        # The same process unpinned: both cores for the server (and wrk, and everything else on the machine).
        subprocess.run(["taskset", "-a", "-p", "-c", "0,1", str(serve.pid)], check=True, capture_output=True)
        results["hark_two_cores"] = load_test("hark serve, cores 0-1", port, MESSAGE_PATH, token, bodies_file, script, args, None, None, serve.pid)
        results["hark_memory_after_load"] = memory(serve.pid)
        results["hark_requests_logged"] = "every /message turn is stored in the event log (SQLite) under --data"
        stop(serve, "hark serve")

        peer_log = open(os.path.join(OUT, "peer.log"), "w")
        peer = subprocess.Popen(["taskset", "-c", "0", VENV_PYTHON, os.path.join(harklib.ROOT, "bench", "server_peer.py"),
                                 "--grammar", GRAMMAR, "--port", "0"], stdout=subprocess.PIPE, stderr=peer_log, text=True)
        peer_port = read_port(peer)
        results["peer_intents"] = check_intents(cases, peer_port, PEER_PATH, None, context, peer_intent)
        results["peer_one_core"] = load_test("hassil + aiohttp, core 0", peer_port, PEER_PATH, None, bodies_file, script, args, 0, 1, peer.pid)
        results["peer_memory_after_load"] = memory(peer.pid)
    finally:
        stop(serve, "hark serve")
        stop(peer, "peer")
    return results


# ---------------------------------------------------------------------------------------------------------
# 3 + 4: hark run with 20 browsers, then push-to-talk.

class Browser:
    """What a paired page does on load: the page and its scripts, the live event socket, /api/devices and the
    welcome message; then it keeps the socket open and counts the events it is sent."""

    def __init__(self, base, token, local_address):
        # Each browser comes from an address of its own (127.0.0.x), as phones on a LAN do: from one address the
        # server's per-address limit (16 WebSockets) would refuse the 17th events socket with 503.
        self.base, self.token, self.local_address = base, token, local_address
        self.events = 0
        self.session = None
        self.socket = None
        self.reader = None

    async def open(self):
        self.session = aiohttp.ClientSession(connector=aiohttp.TCPConnector(local_addr=(self.local_address, 0)))
        for path in PAGE_FILES:
            async with self.session.get(self.base + path) as r:
                await r.read()
                if r.status != 200:
                    raise RuntimeError(f"GET {path}: {r.status}")
        ws_base = self.base.replace("http://", "ws://")
        self.socket = await self.session.ws_connect(f"{ws_base}/api/events?access_token={self.token}", heartbeat=None)
        self.reader = asyncio.create_task(self.read())
        auth = {"Authorization": f"Bearer {self.token}"}
        async with self.session.get(self.base + "/api/devices", headers=auth) as r:
            if r.status != 200:
                raise RuntimeError(f"GET /api/devices: {r.status}")
            await r.json()
        async with self.session.post(self.base + MESSAGE_PATH, json={}, headers=auth) as r:
            if r.status != 200:
                raise RuntimeError(f"POST message: {r.status}")
            await r.json()

    async def read(self):
        async for message in self.socket:
            if message.type == aiohttp.WSMsgType.TEXT:
                self.events += 1

    async def close(self):
        if self.socket is not None:
            await self.socket.close()
        if self.reader is not None:
            self.reader.cancel()
        if self.session is not None:
            await self.session.close()


def speech_pcm(work):
    """flite's slt voice saying the sentence, 16 kHz mono s16le, with 0.25 s of silence either side (the
    button is pressed a moment before speaking and released a moment after)."""
    path = os.path.join(work, "turn-on-the-light.wav")
    subprocess.run(["flite", "-voice", "slt", "-t", PTT_SENTENCE, "-o", path], check=True)
    with wave.open(path) as w:
        if (w.getframerate(), w.getnchannels(), w.getsampwidth()) != (16000, 1, 2):
            raise RuntimeError(f"{path}: flite gave {w.getframerate()} Hz × {w.getnchannels()} × {8 * w.getsampwidth()} bit, expected 16 kHz mono 16-bit")
        pcm = w.readframes(w.getnframes())
    silence = bytes(2 * 4000)
    return silence + pcm + silence


async def talk(base, token, pcm, context):
    """One push-to-talk turn; every time is measured from the first audio frame (partials) or from sending end.
    `end` carries the conversation's context, as the page sends it; the reply's context is returned in the
    turn as "context" for the next one."""
    frames = [pcm[i:i + 2 * FRAME_SAMPLES] for i in range(0, len(pcm), 2 * FRAME_SAMPLES)]
    turn = {"partials": [], "audio_s": len(pcm) / 32000}
    async with aiohttp.ClientSession() as session:
        ws_base = base.replace("http://", "ws://")
        async with session.ws_connect(f"{ws_base}/api/listen?access_token={token}", heartbeat=None) as ws:
            first = await ws.receive_json(timeout=10)
            if first.get("type") != "listening":
                raise RuntimeError(f"/api/listen: expected listening, got {first}")
            done = asyncio.get_running_loop().create_future()
            start = time.perf_counter()
            marks = {}

            async def read():
                async for message in ws:
                    now = time.perf_counter()
                    if message.type == aiohttp.WSMsgType.BINARY:
                        marks["wav"] = now
                        turn["wav_bytes"] = len(message.data)
                        break
                    if message.type != aiohttp.WSMsgType.TEXT:
                        break
                    m = json.loads(message.data)
                    if m["type"] == "partial":
                        turn["partials"].append({"at_s": round(now - start, 3), "text": m["text"]})
                    elif m["type"] in ("transcript", "reply"):
                        marks[m["type"]] = now
                        turn[m["type"]] = m
                    elif m["type"] == "error":
                        turn["error"] = m["error"]
                        break
                if not done.done():
                    done.set_result(None)

            reader = asyncio.create_task(read())
            for k, frame in enumerate(frames):
                delay = start + k * FRAME_SAMPLES / 16000 - time.perf_counter()
                if delay > 0:
                    await asyncio.sleep(delay)
                await ws.send_bytes(frame)
            delay = start + len(frames) * FRAME_SAMPLES / 16000 - time.perf_counter()
            if delay > 0:
                await asyncio.sleep(delay)
            end = time.perf_counter()
            await ws.send_str(json.dumps({"type": "end", "context": context}))
            await asyncio.wait_for(done, timeout=30)
            reader.cancel()
    for key in ("transcript", "reply", "wav"):
        turn[f"{key}_ms"] = round(1000 * (marks[key] - end), 1) if key in marks else None
    reply = turn.get("reply") or {}
    turn["reply_text"] = reply.get("text")
    turn["intent"] = hark_intent(reply.get("response") or {})
    turn["context"] = (reply.get("response") or {}).get("context") or context
    turn["transcript_text"] = (turn.get("transcript") or {}).get("text")
    turn.pop("reply", None)
    turn.pop("transcript", None)
    return turn


async def browsers_and_talk(args, hark, base, token, pid, feed, pcm):
    result = {"browsers": args.browsers}
    result["before"] = memory(pid)
    browsers = [Browser(base, token, f"127.0.0.{10 + i}") for i in range(args.browsers)]
    try:
        started = time.perf_counter()
        await asyncio.gather(*(b.open() for b in browsers))
        result["connect_all_s"] = round(time.perf_counter() - started, 2)
        await asyncio.sleep(2)
        result["connected"] = memory(pid)
        # Three typed turns on the appliance's console: each one's events go out to every browser.
        before = [b.events for b in browsers]
        for line in ("turn on the light", "what time is it", "turn off the light"):
            feed(line)
            await asyncio.sleep(1)
        await asyncio.sleep(1)
        result["events_per_browser_after_3_console_turns"] = sorted({b.events - n for b, n in zip(browsers, before)})
        result["after_console_turns"] = memory(pid)

        log(f"push-to-talk: {args.turns} turns of \"{PTT_SENTENCE}\" ({len(pcm) / 32000:.2f} s) with {args.browsers} browsers connected")
        turns = []
        # The page's conversation: it starts with the welcome message and carries the context on.
        context = post_json(base + MESSAGE_PATH, {}, token)["context"]
        for _ in range(args.turns):
            turn = await talk(base, token, pcm, context)
            context = turn.pop("context")
            turns.append(turn)
            await asyncio.sleep(0.3)
        result["after_talk"] = memory(pid)
    finally:
        await asyncio.gather(*(b.close() for b in browsers), return_exceptions=True)
    await asyncio.sleep(2)
    result["after_browsers_closed"] = memory(pid)
    return result, turns


def summarise_turns(turns):
    def median(key):
        values = [t[key] for t in turns if t.get(key) is not None]
        return round(statistics.median(values), 1) if values else None

    def p99(key):
        values = sorted(t[key] for t in turns if t.get(key) is not None)
        return values[-1] if values else None  # with ≤ 100 turns the p99 is the worst turn

    intervals, firsts, counts = [], [], []
    for t in turns:
        times = [p["at_s"] for p in t["partials"]]
        counts.append(len(times))
        if times:
            firsts.append(times[0])
        intervals += [b - a for a, b in zip(times, times[1:])]
    return {
        "turns": len(turns),
        "right_intent": sum(1 for t in turns if t["intent"] == PTT_INTENT),
        "transcripts": sorted({t["transcript_text"] or "" for t in turns}),
        "replies": sorted({t["reply_text"] or "" for t in turns}),
        "errors": [t["error"] for t in turns if "error" in t],
        "end_to_transcript_ms": {"p50": median("transcript_ms"), "max": p99("transcript_ms")},
        "end_to_reply_ms": {"p50": median("reply_ms"), "max": p99("reply_ms")},
        "end_to_wav_ms": {"p50": median("wav_ms"), "max": p99("wav_ms")},
        "wav_bytes": median("wav_bytes"),
        "partials_per_turn": {"p50": statistics.median(counts) if counts else None, "min": min(counts, default=None), "max": max(counts, default=None)},
        "first_partial_s": round(statistics.median(firsts), 3) if firsts else None,
        "partial_interval_s": {"p50": round(statistics.median(intervals), 3) if intervals else None,
                               "min": round(min(intervals), 3) if intervals else None,
                               "max": round(max(intervals), 3) if intervals else None},
    }


def run_benchmark(args, hark, work):
    data = os.path.join(work, "run-data")
    os.makedirs(data)
    port = free_port()
    run_log = open(os.path.join(OUT, "hark-run.log"), "w")
    # stdin stays open (a pipe we hold): with --console and no audio input, hark run ends when its input does.
    run = subprocess.Popen([hark, "run", "--simulate", "--console", "--data", data, "--port", str(port),
                            "--workspace", harklib.HOME_WORKSPACE],
                           stdin=subprocess.PIPE, stdout=run_log, stderr=subprocess.STDOUT, cwd=harklib.ROOT)

    def feed(line):
        run.stdin.write((line + "\n").encode())
        run.stdin.flush()

    try:
        base = f"http://127.0.0.1:{port}"
        wait_http(base + "/api/openapi.json", process=run)
        token = pair(hark, data, port)
        time.sleep(2)
        pcm = speech_pcm(work)
        load_before = loadavg()
        memory_result, turns = asyncio.run(browsers_and_talk(args, hark, base, token, run.pid, feed, pcm))
        memory_result["loadavg_before"] = load_before
        memory_result["loadavg_after"] = loadavg()
        return memory_result, turns
    finally:
        if run.poll() is None:
            run.stdin.close()
        stop(run, "hark run")


# ---------------------------------------------------------------------------------------------------------
# The report.

def mib(kib):
    return f"{kib / 1024:.1f}"


def report(results):
    m, p = results["message"], results["push_to_talk"]
    hark, peer = m["hark_one_core"], m["peer_one_core"]
    mem = results["memory"]
    lines = []
    add = lines.append
    add(f"Machine: {results['machine']['nproc']} × {results['machine']['cpu_model']}; before the run: `{results['machine']['uptime_before']}`")
    add(f"Busiest processes before the run (%CPU, command): {'; '.join(results['machine']['busiest_processes_before'][:4])}")
    add("")
    add("| server (50 keep-alive clients, wrk -t1 on core 1) | req/s | p50 ms | p99 ms | non-2xx | right intent | server CPU | CPU ms/req | core 0 busy | load 1 min |")
    add("|---|---|---|---|---|---|---|---|---|---|")

    def row(name, r, intents):
        lat = r["latency_us"]
        right = f"{intents['correct']}/{intents['cases']}" if intents else "–"
        busy = r["core_busy_percent"]
        add(f"| {name} | {r['rps']:.0f} | {lat['p50'] / 1000:.2f} | {lat['p99'] / 1000:.2f} | {r['errors']['status']} | {right} | "
            f"{r['server_cpu_percent']:.0f}% | {r['server_cpu_ms_per_request']:.3f} | {busy.get('cpu0', 0):.0f}% | {r['loadavg_after'][0]:.2f} |")

    row("Hark `hark serve`, Watson /message, pinned to core 0", hark, m["hark_intents"])
    row("hassil 3.13 + aiohttp (one process), pinned to core 0", peer, m["peer_intents"])
    row(f"Hark, the {m['hark_one_core_no_camera']['sentences']} sentences without TakePicture, core 0", m["hark_one_core_no_camera"], None)
    row("Hark `hark serve`, unpinned (cores 0–1, wrk too)", m["hark_two_cores"], None)
    add("")
    add(f"Hark / peer on one core: requests/s × {hark['rps'] / peer['rps']:.2f}; p50 latency × "
        f"{hark['latency_us']['p50'] / peer['latency_us']['p50']:.2f}, p99 × {hark['latency_us']['p99'] / peer['latency_us']['p99']:.2f} "
        f"(below 1: Hark answers sooner); CPU per request × {hark['server_cpu_ms_per_request'] / peer['server_cpu_ms_per_request']:.2f}.")
    add("")
    add(f"`hark run` memory, {mem['browsers']} simulated browsers (MiB; threads):")
    add("")
    add("| moment | VmRSS | VmHWM | threads |")
    add("|---|---|---|---|")
    for key, label in (("before", "idle, before any browser"), ("connected", f"{mem['browsers']} browsers connected"),
                       ("after_console_turns", "after 3 console turns (events fanned out)"),
                       ("after_talk", f"after {p['turns']} push-to-talk turns"), ("after_browsers_closed", "browsers closed")):
        v = mem[key]
        add(f"| {label} | {mib(v['VmRSS'])} | {mib(v['VmHWM'])} | {v['threads']} |")
    add("")
    add(f"Push-to-talk ({p['turns']} turns, \"{PTT_SENTENCE}\", flite slt): end → transcript p50 {p['end_to_transcript_ms']['p50']} ms, "
        f"end → reply p50 {p['end_to_reply_ms']['p50']} ms (max {p['end_to_reply_ms']['max']}), end → WAV p50 {p['end_to_wav_ms']['p50']} ms "
        f"(max {p['end_to_wav_ms']['max']}); right intent {p['right_intent']}/{p['turns']}; partials per turn {p['partials_per_turn']['p50']}, "
        f"first at {p['first_partial_s']} s, interval p50 {p['partial_interval_s']['p50']} s.")
    return "\n".join(lines) + "\n"


def main():
    ap = argparse.ArgumentParser(description=__doc__, formatter_class=argparse.RawDescriptionHelpFormatter)
    ap.add_argument("--duration", type=int, default=15, help="seconds of each measured wrk run (default 15)")
    ap.add_argument("--warmup", type=int, default=3, help="seconds of wrk warm-up before each (default 3)")
    ap.add_argument("--connections", type=int, default=50)
    ap.add_argument("--browsers", type=int, default=20)
    ap.add_argument("--turns", type=int, default=12, help="push-to-talk turns (default 12)")
    ap.add_argument("--keep", action="store_true", help="keep the temporary data directories")
    ap.add_argument("--report-only", action="store_true", help="print the report of the last run's server.json")
    args = ap.parse_args()
    if args.report_only:
        with open(os.path.join(OUT, "server.json"), encoding="utf-8") as f:
            print(report(json.load(f)))
        return 0

    hark = harklib.hark_binary()
    for needed, hint in ((hark, "swift build -c release"), (shutil.which("wrk"), "apt-get install wrk"),
                         (shutil.which("flite"), "apt-get install flite"), (shutil.which("taskset"), "util-linux")):
        if not needed or not os.path.exists(needed):
            print(f"server.py: missing {needed or hint}: {hint}", file=sys.stderr)
            return 66
    if (os.cpu_count() or 1) < 2:
        print("server.py: needs 2 cores (server on core 0, wrk on core 1)", file=sys.stderr)
        return 69
    os.makedirs(OUT, exist_ok=True)
    cases = harklib.read_jsonl(harklib.PARAPHRASES)

    from importlib.metadata import version
    results = {"provenance": harklib.provenance(), "machine": machine(),
               "versions": {"wrk": subprocess.run(["wrk", "-v"], capture_output=True, text=True).stdout.split("\n")[0].split(" [")[0],
                            "hassil": version("hassil"), "aiohttp": version("aiohttp"), "python": platform.python_version()},
               "settings": vars(args)}
    log(f"load before: {results['machine']['uptime_before']}")
    work = tempfile.mkdtemp(prefix="hark-serverbench-")
    started = time.monotonic()
    try:
        results["message"] = message_benchmark(args, hark, cases, work)
        memory_result, turns = run_benchmark(args, hark, work)
        results["memory"] = memory_result
        results["push_to_talk"] = summarise_turns(turns)
        results["push_to_talk_turns"] = turns
    finally:
        if not args.keep:
            shutil.rmtree(work, ignore_errors=True)
    results["elapsed_s"] = round(time.monotonic() - started, 1)
    results["loadavg_end"] = loadavg()
    harklib.write_json(os.path.join(OUT, "server.json"), results)
    text = report(results)
    with open(os.path.join(harklib.ROOT, "bench/out/server/report.md"), "w") as f:
        f.write(text)
    print(text)
    log(f"done in {results['elapsed_s']} s; bench/out/server/server.json, bench/out/server/report.md")
    return 0


if __name__ == "__main__":
    sys.exit(main())
