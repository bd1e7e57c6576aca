#!/usr/bin/env python3
"""What `hark recognize` should cost on a Raspberry Pi 4, from what it costs here (docs/debian13.md, "arm64").

Measured here, median of --repeat runs each:
  - x86: CPU time (user + system) of the whole `hark recognize --json` process on a flite recording of
    "turn on the light", and the decode time it reports (decode_ms: the PocketSphinx passes only);
  - arm64 under qemu-user (TCG): the same, as an upper bound (emulation is slower than any real A72);
  - `sysbench cpu --threads=1 --events=20000 --time=0 run`: events per CPU second on this machine.
Scaling to a Pi 4: the single-core sysbench 1.0.20 `cpu` result for a Raspberry Pi 4 (Cortex-A72; the page
does not give the clock: 1.5 GHz on early boards, 1.8 GHz on later ones) published at
https://leoncode.co.uk/articles/raspberry-pi-benchmarks, 1477.83 events/s, against this machine's. sysbench's `cpu` test is an integer
prime search (trial division), not PocketSphinx's float and memory work, and the A72's hardware divider suits
it: the scaled figure is an optimistic estimate, the qemu one a loose upper bound.
Writes bench/out/arm64/report.md and prints it. Needs .build/arm64/hark and its sysroot (make arm64), the x86
release build (.build/release/hark), flite, qemu-user-static and sysbench (scripts/setup.sh).
"""
import argparse
import json
import os
import platform
import re
import resource
import shutil
import statistics
import subprocess
import sys
import wave

REPO = os.path.dirname(os.path.dirname(os.path.abspath(__file__)))
OUT = os.path.join(REPO, "bench", "out", "arm64")
PI4_SYSBENCH = 1477.83  # events/s, one core, Raspberry Pi 4, sysbench 1.0.20 (leoncode.co.uk)


def fail(message):
    sys.exit(f"bench/arm64.py: {message}")


def cpu_and_output(cmd):
    """Run cmd; its stdout and the CPU seconds (user + system) it and its children used."""
    before = resource.getrusage(resource.RUSAGE_CHILDREN)
    r = subprocess.run(cmd, capture_output=True, text=True, cwd=REPO)
    after = resource.getrusage(resource.RUSAGE_CHILDREN)
    if r.returncode != 0:
        fail(f"{' '.join(cmd)} exited {r.returncode}: {r.stderr.strip()[-400:]}")
    cpu = (after.ru_utime - before.ru_utime) + (after.ru_stime - before.ru_stime)
    return cpu, r.stdout


def measure(cmd, repeat):
    cpus, decodes = [], []
    result = None
    for _ in range(repeat):
        cpu, out = cpu_and_output(cmd)
        result = json.loads(out)
        cpus.append(cpu)
        decodes.append(result["decode_ms"] / 1000)
    return statistics.median(cpus), statistics.median(decodes), result


def sysbench(repeat):
    """This machine's single-core sysbench `cpu` rate in events per CPU second: a fixed number of events over the
    CPU time they took, so other work sharing the core does not make this machine look slower."""
    if not shutil.which("sysbench"):
        fail("sysbench is not installed (scripts/setup.sh installs it)")
    events = 20000
    rates = []
    for _ in range(repeat):
        cpu, out = cpu_and_output(["sysbench", "cpu", "--threads=1", f"--events={events}", "--time=0", "run"])
        m = re.search(r"total number of events:\s*(\d+)", out)
        if not m or int(m.group(1)) != events:
            fail(f"sysbench did not run {events} events:\n{out}")
        rates.append(events / cpu)
    return statistics.median(rates)


def main():
    p = argparse.ArgumentParser(description=__doc__.split("\n")[0])
    p.add_argument("--repeat", type=int, default=5, help="runs per measurement (default 5; the median is kept)")
    args = p.parse_args()
    if args.repeat < 1:
        fail("--repeat must be at least 1")
    arm = os.path.join(REPO, ".build", "arm64", "hark")
    sysroot = os.path.join(REPO, ".build", "arm64", "sysroot")
    x86 = os.path.join(REPO, ".build", "release", "hark")
    for path, how in ((arm, "make arm64"), (x86, "swift build -c release")):
        if not os.access(path, os.X_OK):
            fail(f"no {path}: run {how}")
    for tool in ("flite", "qemu-aarch64-static"):
        if not shutil.which(tool):
            fail(f"{tool} is not installed (scripts/setup.sh installs it)")
    os.makedirs(OUT, exist_ok=True)
    wav = os.path.join(OUT, "turn-on-the-light.wav")
    subprocess.run(["flite", "-voice", "slt", "-t", "turn on the light", "-o", wav], check=True)
    with wave.open(wav) as w:
        seconds = w.getnframes() / w.getframerate()

    x86_cpu, x86_decode, x86_result = measure([x86, "recognize", "--json", wav], args.repeat)
    arm_cpu, arm_decode, arm_result = measure(["qemu-aarch64-static", "-L", sysroot, arm, "recognize", "--json", wav],
                                              args.repeat)
    if x86_result["transcript"] != arm_result["transcript"]:
        fail(f"x86 heard {x86_result['transcript']!r}, arm64 {arm_result['transcript']!r}")
    here = sysbench(3)
    slower = here / PI4_SYSBENCH
    cpu_name = next((l.split(":", 1)[1].strip() for l in open("/proc/cpuinfo") if l.startswith("model name")), platform.processor())

    def rtf(s):
        return s / seconds

    rows = [
        ("x86, this machine", x86_cpu, x86_decode),
        ("arm64 under qemu-user (upper bound)", arm_cpu, arm_decode),
        (f"Raspberry Pi 4, estimated (x86 × {slower:.2f})", x86_cpu * slower, x86_decode * slower),
    ]
    lines = [
        "# `hark recognize` on a Raspberry Pi 4: expected real-time factor",
        "",
        f"Machine: {cpu_name}, {os.cpu_count()} cores (shared with other work; medians of {args.repeat} runs).",
        f"Input: flite (slt) saying \"turn on the light\", {seconds:.2f} s; heard as {x86_result['transcript']!r} on both.",
        f"Scaling: sysbench 1.0.20 `cpu --threads=1` here {here:.1f} events per CPU second (median of 3) against the "
        f"published {PI4_SYSBENCH} events/s for a Pi 4: the Pi 4 taken as {slower:.2f}× slower per core.",
        "",
        "| where | process CPU s | RTF (CPU / audio) | decode s (wall) | RTF (decode / audio) |",
        "|---|---|---|---|---|",
    ]
    for name, cpu, decode in rows:
        lines.append(f"| {name} | {cpu:.3f} | {rtf(cpu):.3f} | {decode:.3f} | {rtf(decode):.3f} |")
    lines += [
        "",
        "Process CPU includes loading the acoustic model, the dictionary and the workspace's grammar (once per",
        "process; `hark run` pays it once at start); decode is the PocketSphinx passes for this utterance, as",
        "`hark recognize` reports it (wall clock, so other work on the machine inflates it). The Pi 4 rows scale",
        "the x86 rows by sysbench, which flatters the A72 (an integer division loop): read them as optimistic.",
    ]
    report = "\n".join(lines) + "\n"
    with open(os.path.join(REPO, "bench/out/arm64/report.md"), "w", encoding="utf-8") as f:
        f.write(report)
    print(report, end="")


if __name__ == "__main__":
    main()
