"""Fixtures for the Wyoming tests: `hark wyoming` started on an ephemeral port, speech from flite.

The client side is the real `wyoming` package from PyPI (its AsyncTcpClient and event classes), the one Home
Assistant's Wyoming integration is built on; scripts/wyoming-test.sh installs it in .build/wyoming-venv.
"""

import asyncio
import os
import random
import shutil
import subprocess
import tempfile
import time
import wave
from pathlib import Path

import pytest

REPO = Path(__file__).resolve().parents[2]
HARK = Path(os.environ.get("HARK", REPO / ".build/debug/hark"))
FLITE = shutil.which("flite")


class Server:
    def __init__(self, args, name):
        self.data = tempfile.mkdtemp(prefix="hark-wyoming-data.")
        self.log_path = Path(self.data) / "server.log"
        self.log = open(self.log_path, "wb")
        command = [str(HARK), "wyoming", "--uri", "tcp://127.0.0.1:0", "--print-port", "--simulate",
                   "--data", self.data, "--seed", "7", *args]
        self.process = subprocess.Popen(command, cwd=REPO, stdout=subprocess.PIPE, stderr=self.log)
        line = self.process.stdout.readline().decode().strip()
        if not line.isdigit():
            self.stop()
            raise RuntimeError(f"{name}: no port printed; log:\n{self.log_path.read_text()}")
        self.port = int(line)
        self.name = name

    def alive(self):
        return self.process.poll() is None

    def stop(self):
        """SIGTERM, as systemd stops it; the exit code (None if it had to be killed)."""
        code = self.process.poll()
        if code is None:
            self.process.terminate()
            try:
                code = self.process.wait(timeout=20)
            except subprocess.TimeoutExpired:
                self.process.kill()
                self.process.wait()
        self.log.close()
        shutil.rmtree(self.data, ignore_errors=True)
        return code


@pytest.fixture(scope="session")
def server():
    assert HARK.exists(), f"no {HARK}: build it first (swift build)"
    s = Server([], "hark wyoming")
    yield s
    code = s.process.poll()
    assert code is None, f"hark wyoming exited during the tests with {code}"
    assert s.stop() == 0, "hark wyoming did not stop cleanly on SIGTERM"


@pytest.fixture(scope="session")
def small_server():
    """Text intents only, at most two clients and small frames: the limits are hit quickly."""
    s = Server(["--services", "intent", "--max-clients", "2", "--max-header-bytes", "1024",
                "--max-data-bytes", "4096", "--max-payload-bytes", "8192", "--idle-timeout", "3"], "small hark wyoming")
    yield s
    s.stop()


def floor(samples, seed):
    """A faint noise floor, as a microphone has: digital silence is not what the recogniser hears."""
    rng = random.Random(seed)
    return [int(rng.gauss(0, 30)) for _ in range(samples)]


def flite(text, voice="slt"):
    """(rate, samples) of `text` spoken by flite, 16-bit mono."""
    assert FLITE, "flite is missing (scripts/wyoming-test.sh installs it)"
    with tempfile.TemporaryDirectory() as tmp:
        path = Path(tmp) / "speech.wav"
        subprocess.run([FLITE, "-voice", voice, "-t", text, "-o", str(path)], check=True)
        with wave.open(str(path), "rb") as w:
            assert w.getsampwidth() == 2 and w.getnchannels() == 1
            rate = w.getframerate()
            frames = w.readframes(w.getnframes())
    samples = [int.from_bytes(frames[i:i + 2], "little", signed=True) for i in range(0, len(frames), 2)]
    return rate, samples


def utterance(text, voice="slt", before=0.5, after=0.5, seed=1):
    """16-bit mono samples of `text` with quiet before and after, and its rate."""
    rate, speech = flite(text, voice)
    quiet = lambda seconds, s: floor(int(rate * seconds), s)
    mixed = quiet(before, seed) + [max(-32768, min(32767, x + n)) for x, n in zip(speech, floor(len(speech), seed + 1))] + quiet(after, seed + 2)
    return rate, mixed


def pcm16(samples):
    return b"".join(int(s).to_bytes(2, "little", signed=True) for s in samples)


def run(coroutine, timeout=120):
    return asyncio.run(asyncio.wait_for(coroutine, timeout))
