"""wyoming-bench (PyPI), the Wyoming benchmark tool, against `hark wyoming`: a small corpus of home commands
spoken by flite for speech to text, its own texts for text to speech, both in their non-streaming and
streaming forms. A third-party client that knows nothing of Hark must get every answer right."""

import re
import subprocess
import sys
from pathlib import Path

from conftest import FLITE

BENCH = Path(sys.executable).parent / "wyoming-bench"
COMMANDS = ["turn on the light", "turn off the light", "take a picture", "what time is it", "is the light on"]


def bench(*args):
    r = subprocess.run([str(BENCH), *args], capture_output=True, text=True, timeout=300)
    assert r.returncode == 0, r.stdout + r.stderr
    return r.stdout


def test_wyoming_bench_stt(server, tmp_path):
    for i, text in enumerate(COMMANDS):
        subprocess.run([FLITE, "-voice", "slt", "-t", text, "-o", str(tmp_path / f"c{i}.wav")], check=True)
        (tmp_path / f"c{i}.txt").write_text(text + "\n")
    out = bench("stt", f"127.0.0.1:{server.port}", "--corpus", str(tmp_path), "--rounds", "1")
    for mode in ("non_streaming", "streaming"):
        assert f"[{mode}] ok={len(COMMANDS)} fail=0" in out, out
    wers = [float(w) for w in re.findall(r"WER=([0-9.]+)%", out)]
    assert len(wers) == 2 and max(wers) <= 10, out


def test_wyoming_bench_tts(server):
    out = bench("tts", f"127.0.0.1:{server.port}", "--rounds", "1")
    counts = re.findall(r"\[(non_streaming|streaming)\] ok=(\d+) fail=(\d+)", out)
    assert {mode for mode, _, _ in counts} == {"non_streaming", "streaming"}, out
    assert all(int(ok) > 0 and int(fail) == 0 for _, ok, fail in counts), out
