#!/usr/bin/env python3
"""Room audio on loopback (issue 14 item 8): mouth-to-ear latency, the mixing thread's CPU per member,
20 rooms x 5 members for 60 s, and the largest single room that stays real time on the mixer's one core.

Run with `make bench-rooms` (release build, then this in the rooms test venv), or
`bash scripts/rooms-test.sh --bench -- [--quick]`. Writes bench/out/rooms/report.json and prints a summary.

Mouth-to-ear: one member sends a 20 ms burst of noise every 600 ms in otherwise faint noise; another decodes
what it hears and finds each burst's first sample. The mouth time is when that sample was "captured" (the start
of the 20 ms block whose frame was then sent), the ear time is when the listener got the frame holding it plus
the sample's place in it. It counts the capture block, both Opus passes, the network, the jitter buffer and the
wait for the mixer's tick; it does not count a client's own playout buffer or audio device latency.
"""

import argparse
import asyncio
import json
import multiprocessing
import os
import sys
import time
from pathlib import Path

import numpy as np

sys.path.insert(0, str(Path(__file__).resolve().parents[1] / "tests" / "rooms"))
from roomclient import BLOCK, HARK, RATE, Member, Person, Server, encoder, frame  # noqa: E402

OUT = Path(__file__).resolve().parent / "out" / "rooms"
BURST_EVERY = 30  # blocks: a burst every 600 ms, so a late burst is never taken for an early next one


def burst_stream(blocks, seed):
    """Faint noise with a loud 20 ms noise burst every BURST_EVERY blocks (the burst fills its whole block)."""
    rng = np.random.default_rng(seed)
    out = []
    for i in range(blocks):
        if i % BURST_EVERY == BURST_EVERY // 2:
            out.append(np.clip(rng.normal(0, 8000, BLOCK), -32768, 32767).astype(np.int16))
        else:
            out.append(rng.normal(0, 20, BLOCK).astype(np.int16))
    return out


def speech_loop(seconds, seed):
    """Something to talk with: band-limited noise bursts of syllable length, so every member's stream is busy."""
    rng = np.random.default_rng(seed)
    blocks = []
    for i in range(int(seconds * 50)):
        loud = (i // 10) % 3 != 2
        blocks.append(np.clip(rng.normal(0, 3000 if loud else 30, BLOCK), -32768, 32767).astype(np.int16))
    return blocks


def mouth_to_ear(speaker, listener, threshold=2000):
    """Latency of every burst the listener heard, in ms."""
    bursts = sorted(seq for seq in speaker.sent if seq % BURST_EVERY == BURST_EVERY // 2)
    heard = []  # (time of the first loud sample)
    previous_loud = False
    for arrival, pcm in zip(listener.pcm_arrivals, listener.pcm):
        loud = np.nonzero(np.abs(pcm.astype(np.int32)) > threshold)[0]
        if len(loud) and not previous_loud:
            heard.append(arrival + loud[0] / RATE)
        previous_loud = len(loud) > 0 and loud[-1] > BLOCK - 40
    latencies = []
    for seq in bursts:
        mouth = speaker.sent[seq] - 0.020
        after = [t for t in heard if mouth < t < mouth + BURST_EVERY * 0.020]
        if after:
            latencies.append((after[0] - mouth) * 1000)
    return latencies


def percentiles(values):
    if not values:
        return None
    a = np.array(values)
    return {"count": len(a), "p50": round(float(np.percentile(a, 50)), 1), "p99": round(float(np.percentile(a, 99)), 1),
            "max": round(float(a.max()), 1)}


class Replayer:
    """Sends pre-encoded frames for many members from one task: one wake-up per 20 ms for all of them."""

    def __init__(self, members, packets):
        self.members, self.packets = members, packets
        self.late = []

    async def run(self, seconds):
        loop = asyncio.get_running_loop()
        start = loop.time()
        for i in range(int(seconds * 50)):
            delay = start + (i + 1) * 0.020 - loop.time()
            if delay > 0:
                await asyncio.sleep(delay)
            else:
                self.late.append(-delay)
            for n, m in enumerate(self.members):
                packet = self.packets[(i + 37 * n) % len(self.packets)]
                m.sent[i] = time.monotonic()
                try:
                    await m.socket.send(frame(i, int(time.monotonic() * 1000), packet))
                except Exception:
                    pass


def stream_quality(members, seconds):
    """Frames each listener got against the 50 a second it should, sequence gaps (frames the server skipped for
    a slow listener), and the longest silence between two frames."""
    expected = seconds * 50
    got, gaps, longest = [], 0, 0.0
    for m in members:
        window = [r for r in m.received if r[0] >= m.window_start]
        got.append(len(window) / expected)
        sequences = [r[1] for r in window]
        gaps += sum(max(0, b - a - 1) for a, b in zip(sequences, sequences[1:]))
        times = [r[0] for r in window]
        if len(times) > 1:
            longest = max(longest, float(np.max(np.diff(times))))
    lateness = []
    for m in members:
        window = [r for r in m.received if r[0] >= m.window_start]
        if len(window) > 1:
            # The server stamps each frame with its mixing thread's clock (ms) when it mixes that room: against
            # the schedule of 20 ms per sequence number, how far behind its best tick of the second before the
            # thread ran (after a stall it starts a new schedule, so the whole run has no one reference).
            seq0, ts0 = window[0][1], window[0][2]
            offsets = np.array([((ts - ts0) - 20 * (seq - seq0) + 2**31) % 2**32 - 2**31 for _, seq, ts, _ in window])
            for i in range(len(offsets)):
                lateness.append(offsets[i] - offsets[max(0, i - 50):i + 1].min())
    late = np.array(lateness) if lateness else np.zeros(1)
    return {"mixer_tick_lateness_ms_p99": round(float(np.percentile(late, 99)), 1),
            "mixer_tick_lateness_ms_max": round(float(late.max()), 1),
            "frames_received_of_expected_min": round(min(got), 4), "frames_received_of_expected_mean": round(float(np.mean(got)), 4),
            "frames_skipped_by_server": gaps, "longest_gap_ms": round(longest * 1000, 1)}


class People:
    """Names on paired devices: a device may have 32, so a new device is paired every 30."""

    def __init__(self, server):
        self.server, self.count, self.device = server, 0, None

    def next(self, label):
        if self.count % 30 == 0:
            self.device = self.server.device_token()
        self.count += 1
        return self.server.person(self.device, f"{label} #{self.count}")


async def make_room(pool, index, size):
    people = [pool.next(f"m{index}-{k}") for k in range(size)]
    room = people[0].create_room(f"bench {index}")
    for p in people:
        p.join(room)
    return room, people


def loopback_address(n):
    """Loopback has a whole /8: member n's socket comes from 127.0.x.y, 8 to an address, as phones each have
    their own (the server allows 16 WebSockets per address)."""
    k = n // 8
    return f"127.0.{k // 250}.{k % 250 + 2}"


async def open_members(room, people, addresses):
    members = []
    for p, address in zip(people, addresses):
        m = Member(p, room, local_addr=address)
        m.decode = False
        members.append(await m.open())
    return members


async def latency_phase(pool, seconds):
    room, people = await make_room(pool, 900, 3)
    members = await open_members(room, people, [loopback_address(n) for n in range(3)])
    speaker, listener, third = members
    listener.decode = True
    enc = encoder()
    silence = [enc.encode(np.zeros(BLOCK, dtype=np.int16).tobytes(), BLOCK)]
    await asyncio.gather(speaker.send_blocks(burst_stream(int(seconds * 50), 1)), Replayer([third], silence).run(seconds))
    await asyncio.sleep(0.5)
    for m in members:
        await m.close()
    return mouth_to_ear(speaker, listener)


class Remote:
    """Just enough of `Server` for a `Person` in a worker process: the port."""

    def __init__(self, port):
        self.port = port


def worker(port, rooms, seconds, packets, silence, probe, ready, go, results):
    """One load-generating process: opens its rooms' sockets, waits for `go`, streams for `seconds`, reports."""

    async def run():
        members = []
        for index, room, people in rooms:
            persons = [Person(Remote(port), id, "", token) for id, token, _ in people]
            members.append((index, await open_members(room, persons, [address for _, _, address in people])))
        probe_speaker = probe_listener = None
        talkers, quiet = [], []
        for index, room_members in members:
            if probe and index == 0:
                probe_speaker, probe_listener = room_members[0], room_members[1]
                probe_listener.decode = True
                quiet.extend(room_members[1:])
            else:
                talkers.extend(room_members)
        # One task sends every member's frames of this process: one wake-up per 20 ms, not one per room.
        replayers = [r for r in (Replayer(talkers, packets), Replayer(quiet, silence)) if r.members]
        ready.set()
        await asyncio.get_running_loop().run_in_executor(None, go.wait)
        t0 = time.monotonic()
        cpu0 = time.process_time()
        everyone = [m for _, room_members in members for m in room_members]
        for m in everyone:
            m.window_start = t0
        tasks = [r.run(seconds) for r in replayers]
        if probe_speaker:
            tasks.append(probe_speaker.send_blocks(burst_stream(int(seconds * 50), 2)))
        await asyncio.gather(*tasks)
        cpu = time.process_time() - cpu0
        await asyncio.sleep(0.3)
        quality = stream_quality(everyone, seconds)
        latency = mouth_to_ear(probe_speaker, probe_listener) if probe_speaker else []
        for m in everyone:
            await m.close()
        results.put({"quality": quality, "latency": latency, "late": sum(len(r.late) for r in replayers),
                     "cpu": cpu, "listeners": len(everyone)})

    asyncio.run(run())


async def load_phase(server, pool, rooms, size, seconds, packets, silence, label, processes, probe=True):
    """`rooms` rooms of `size` members, their clients spread over `processes` processes (one Python process
    cannot keep 100 sockets at 50 frames a second each way)."""
    rss_before = server.rss_bytes()
    made = [(i, *(await make_room(pool, i, size))) for i in range(rooms)]
    # Each room's members are cut into one contiguous share per process. With a probe, room 0 (a speaker of
    # bursts, a listener, the rest silent) has a process of its own, so the latency it measures is the
    # server's and the network's, not the wait of a busy load generator's event loop.
    shares = [[] for _ in range(processes + (1 if probe else 0))]
    n = 0
    for i, room, people in made:
        entries = []
        for p in people:
            entries.append((p.id, p.token, loopback_address(n)))
            n += 1
        if probe and i == 0:
            shares[0].append((i, room, entries))
            continue
        per = -(-len(entries) // processes)
        for w in range(processes):
            if entries[w * per:(w + 1) * per]:
                shares[w + (1 if probe else 0)].append((i, room, entries[w * per:(w + 1) * per]))
    context = multiprocessing.get_context("fork")
    results = context.Queue()
    go = context.Event()
    workers = []
    for w in range(len(shares)):
        ready = context.Event()
        share = shares[w]
        if not share:
            continue
        process = context.Process(target=worker, args=(server.port, share, seconds, packets, silence, probe and w == 0, ready, go, results))
        process.start()
        workers.append((process, ready))
    for _, ready in workers:
        ready.wait(120)
    load_before = os.getloadavg()[0]
    await asyncio.sleep(1.0)
    cpu0, mix0, t0 = server.pid_cpu_seconds(), server.mixer_cpu_seconds() or 0.0, time.monotonic()
    go.set()
    rss = []
    while time.monotonic() - t0 < seconds - 0.5:
        rss.append(server.rss_bytes())
        await asyncio.sleep(min(1.0, max(0.0, seconds - 0.5 - (time.monotonic() - t0))))
    # Read while every socket is still open: the mixing thread ends with the last one, and its CPU with it.
    elapsed = time.monotonic() - t0
    cpu, mix = server.pid_cpu_seconds() - cpu0, (server.mixer_cpu_seconds() or 0.0) - mix0
    reports = [results.get(timeout=60) for _ in workers]
    for p, _ in workers:
        p.join(30)
    latency = [x for r in reports for x in r["latency"]]
    total = rooms * size
    qualities = [r["quality"] for r in reports]
    result = {
        "label": label, "rooms": rooms, "members_per_room": size, "members": total, "seconds": seconds,
        "server_cpu_cores": round(cpu / elapsed, 3), "mixer_cpu_cores": round(mix / elapsed, 3),
        "mixer_cpu_us_per_member_per_20ms": round(mix / elapsed / 50 / total * 1e6, 1),
        "rss_mib_before": round(rss_before / 2**20, 1),
        "rss_mib_max": round(max(rss) / 2**20, 1) if rss else None,
        "mouth_to_ear_ms": percentiles(latency),
        "mixer_tick_lateness_ms_p99": max(q["mixer_tick_lateness_ms_p99"] for q in qualities),
        "mixer_tick_lateness_ms_max": max(q["mixer_tick_lateness_ms_max"] for q in qualities),
        "frames_received_of_expected_min": min(q["frames_received_of_expected_min"] for q in qualities),
        "frames_skipped_by_server": sum(q["frames_skipped_by_server"] for q in qualities),
        "longest_gap_ms": max(q["longest_gap_ms"] for q in qualities),
        "client_processes": len(workers),
        "client_cpu_cores": round(sum(r["cpu"] for r in reports) / seconds, 3),
        "client_late_ticks": sum(r["late"] for r in reports),
        "machine_load_average_1min": round(load_before, 2),
    }
    print(json.dumps(result), flush=True)
    return result


async def main(args):
    server = Server(extra=["--room-idle", "1h"])
    try:
        pool = People(server)
        report = {"hark": str(HARK), "date": time.strftime("%Y-%m-%d %H:%M UTC", time.gmtime()),
                  "machine": f"{os.cpu_count()} cores, " + Path("/proc/cpuinfo").read_text().split("model name")[1].split("\n")[0].strip(" :\t")}
        idle = await latency_phase(pool, args.latency_seconds)
        report["mouth_to_ear_ms_one_room"] = percentiles(idle)
        print(json.dumps({"mouth_to_ear_ms_one_room": report["mouth_to_ear_ms_one_room"]}), flush=True)
        enc = encoder()
        packets = [enc.encode(b.tobytes(), BLOCK) for b in speech_loop(10, 9)]
        # Silence from an encoder of its own: the first packet after loud audio still rings with it.
        silence = [encoder().encode(np.zeros(BLOCK, dtype=np.int16).tobytes(), BLOCK)]
        report["load"] = await load_phase(server, pool, 20, 5, args.load_seconds, packets, silence, "20 rooms x 5", args.processes)
        report["one_room"] = []
        for size in args.room_sizes:
            report["one_room"].append(await load_phase(server, pool, 1, size, args.room_seconds, packets, silence, f"1 room x {size}", args.processes, probe=False))
        OUT.mkdir(parents=True, exist_ok=True)
        (OUT / "report.json").write_text(json.dumps(report, indent=2) + "\n")
        print(f"report: {OUT / 'report.json'}")
    finally:
        code = server.stop()
        if code != 0:
            print(f"hark serve exited with {code}", file=sys.stderr)


if __name__ == "__main__":
    parser = argparse.ArgumentParser(description=__doc__.split("\n\n")[0])
    parser.add_argument("--latency-seconds", type=float, default=60)
    parser.add_argument("--load-seconds", type=float, default=60)
    parser.add_argument("--room-seconds", type=float, default=15)
    parser.add_argument("--room-sizes", type=int, nargs="*", default=[10, 25, 50, 100])
    parser.add_argument("--processes", type=int, default=2, help="load-generating client processes")
    parser.add_argument("--quick", action="store_true", help="short runs, to try the script")
    args = parser.parse_args()
    if args.quick:
        args.latency_seconds, args.load_seconds, args.room_seconds, args.room_sizes = 8, 10, 5, [10]
    asyncio.run(main(args))
