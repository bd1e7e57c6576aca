"""A scripted room member for the audio tests (tests/rooms) and the benchmark (bench/rooms.py).

It speaks the audio socket's frame format (docs/rooms.md, "The audio socket") with the PyPI `websockets` client
and libopus through `opuslib`: sends 20 ms Opus frames on a steady 20 ms schedule, and records and decodes what
the server mixes for it.
"""

import asyncio
import base64
import http.client
import json
import os
import random
import re
import shutil
import struct
import ssl
import subprocess
import tempfile
import time
import urllib.error
import urllib.parse
import urllib.request
import wave
from pathlib import Path

import numpy as np
import opuslib
import opuslib.api.ctl
import opuslib.api.encoder
from websockets.asyncio.client import connect

REPO = Path(__file__).resolve().parents[2]
HARK = Path(os.environ.get("HARK", REPO / ".build/debug/hark"))
RATE = 16_000
BLOCK = RATE // 50
HEADER = struct.Struct(">BBII")


def frame(sequence, timestamp, packet, version=1, codec=1):
    return HEADER.pack(version, codec, sequence & 0xFFFFFFFF, timestamp & 0xFFFFFFFF) + packet


def parse(message):
    version, codec, sequence, timestamp = HEADER.unpack_from(message)
    return sequence, timestamp, message[HEADER.size:]


class Server:
    """`hark serve --simulate` on an ephemeral port with its own data directory."""

    def __init__(self, extra=(), env=None):
        self.data = tempfile.mkdtemp(prefix="hark-rooms-data.")
        self.log_path = Path(self.data) / "server.log"
        self.log = open(self.log_path, "wb")
        command = [str(HARK), "serve", "--simulate", "--port", "0", "--print-port", "--data", self.data, *extra]
        self.process = subprocess.Popen(command, cwd=REPO, stdout=subprocess.PIPE, stderr=self.log, env=env)
        line = self.process.stdout.readline().decode().strip()
        if not line.isdigit():
            self.stop()
            raise RuntimeError(f"hark serve printed no port; log:\n{self.log_path.read_text()}")
        self.port = int(line)
        self.base = f"http://127.0.0.1:{self.port}"

    def pairing_code(self):
        done = subprocess.run([str(HARK), "pair", "--data", self.data], capture_output=True, text=True, timeout=60, cwd=REPO)
        codes = re.findall(r"(?<!\d)\d{6}(?!\d)", done.stdout)
        if done.returncode != 0 or not codes:
            raise RuntimeError(f"hark pair failed ({done.returncode}): {done.stdout}{done.stderr}")
        return codes[-1]

    def device_token(self):
        status, body = self.call("POST", "/api/pair", {"code": self.pairing_code()})
        assert status == 200, body
        return body["token"]

    def call(self, method, path, body=None, token=None):
        data = None if body is None else json.dumps(body).encode()
        request = urllib.request.Request(self.base + path, data=data, method=method)
        if data is not None:
            request.add_header("Content-Type", "application/json")
        if token:
            request.add_header("Authorization", f"Bearer {token}")
        try:
            # A LAN server's certificate is self-signed: these tests talk to their own server on loopback.
            context = ssl._create_unverified_context() if self.base.startswith("https") else None
            with urllib.request.urlopen(request, timeout=30, context=context) as response:
                return response.status, json.loads(response.read() or b"null")
        except urllib.error.HTTPError as error:
            return error.code, json.loads(error.read() or b"null")

    def person(self, device, name):
        status, body = self.call("POST", "/auth", {"name": name}, device)
        assert status == 200, body
        return Person(self, body["id"], name, body["jwt"])

    def pid_cpu_seconds(self):
        fields = Path(f"/proc/{self.process.pid}/stat").read_text().rsplit(")", 1)[1].split()
        return (int(fields[11]) + int(fields[12])) / os.sysconf("SC_CLK_TCK")

    def thread_names(self):
        """The names of the server's threads now (what `top -H` shows)."""
        names = set()
        for task in Path(f"/proc/{self.process.pid}/task").iterdir():
            try:
                names.add((task / "comm").read_text().strip())
            except FileNotFoundError:
                continue
        return names

    def thread_cpu_seconds(self, name):
        """CPU of the server's threads called `name` (from /proc), summed; None if there is none."""
        total, found = 0.0, False
        for task in Path(f"/proc/{self.process.pid}/task").iterdir():
            try:
                if (task / "comm").read_text().strip() == name:
                    fields = (task / "stat").read_text().rsplit(")", 1)[1].split()
                    total += (int(fields[11]) + int(fields[12])) / os.sysconf("SC_CLK_TCK")
                    found = True
            except FileNotFoundError:
                continue
        return total if found else None

    def mixer_cpu_seconds(self):
        """CPU of the mixing thread (named hark-rooms-mix), summed over its runs; None if it never ran."""
        return self.thread_cpu_seconds("hark-rooms-mix")

    def rss_bytes(self):
        for line in Path(f"/proc/{self.process.pid}/status").read_text().splitlines():
            if line.startswith("VmRSS:"):
                return int(line.split()[1]) * 1024
        return 0

    def stop(self):
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


class Person:
    def __init__(self, server, id, name, token):
        self.server, self.id, self.name, self.token = server, id, name, token

    def call(self, method, path, body=None):
        return self.server.call(method, path, body, self.token)

    def create_room(self, name):
        status, body = self.call("POST", "/rooms", {"display_name": name})
        assert status == 201, body
        return body["id"]

    def join(self, room):
        status, body = self.call("POST", f"/rooms/{room}/join")
        assert status == 200, body

    def leave(self, room):
        status, body = self.call("POST", f"/rooms/{room}/leave")
        assert status == 200, body

    def audio_url(self, room, token=None):
        token = self.token if token is None else token
        query = f"?access_token={token}" if token else ""
        return f"ws://127.0.0.1:{self.server.port}/rooms/{room}/audio{query}"

    def events_url(self):
        return f"ws://127.0.0.1:{self.server.port}/api/events?access_token={self.token}"


def encoder(bitrate=32_000, fec_loss_percent=0):
    """Opus in the server's (and WebCodecs' default) mode, or, for a lossy uplink, SILK with in-band FEC sized
    for `fec_loss_percent` (WebCodecs: `opus: {useinbandfec: true, packetlossperc}`)."""
    if fec_loss_percent:
        e = opuslib.Encoder(RATE, 1, opuslib.APPLICATION_VOIP)
        opuslib.api.encoder.encoder_ctl(e.encoder_state, opuslib.api.ctl.set_inband_fec, 1)
        opuslib.api.encoder.encoder_ctl(e.encoder_state, opuslib.api.ctl.set_packet_loss_perc, fec_loss_percent)
    else:
        e = opuslib.Encoder(RATE, 1, opuslib.APPLICATION_AUDIO)
    e.bitrate = bitrate
    return e


class Member:
    """One member's audio socket: `send_blocks` streams PCM in real time; everything heard is kept."""

    def __init__(self, person, room, local_addr=None):
        self.person, self.room, self.local_addr = person, room, local_addr
        self.received = []  # (monotonic arrival, sequence, timestamp, packet)
        self.errors = []  # the server's text messages (bad_frame errors)
        self.sent = {}  # sequence -> monotonic send time
        self.socket = None
        self.closed_code = None
        self.decode = True
        self._reader = None
        self._decoder = opuslib.Decoder(RATE, 1)
        self.pcm = []  # decoded blocks in arrival order
        self.pcm_arrivals = []  # when each of them arrived

    async def open(self):
        # No client keepalive pings: the server pings (that is how a vanished member is found), as browsers
        # expect. With 100 streaming sockets the server sometimes left a client's ping unanswered for 20 s, and
        # websockets' default keepalive then closed the socket (1011) at about 40 s; see docs/rooms.md.
        kwargs = {"max_size": 1 << 16, "open_timeout": 30, "ping_interval": None}
        if self.local_addr:
            kwargs["local_addr"] = (self.local_addr, 0)
        self.socket = await connect(self.person.audio_url(self.room), **kwargs)
        self._reader = asyncio.create_task(self._read())
        return self

    async def _read(self):
        try:
            async for message in self.socket:
                now = time.monotonic()
                if isinstance(message, str):
                    self.errors.append(json.loads(message))
                    continue
                sequence, timestamp, packet = parse(message)
                self.received.append((now, sequence, timestamp, packet))
                if self.decode:
                    self.pcm.append(np.frombuffer(self._decoder.decode(packet, BLOCK), dtype=np.int16))
                    self.pcm_arrivals.append(now)
        except Exception:
            pass
        finally:
            self.closed_code = self.socket.close_code

    async def send_blocks(self, blocks, loss=0.0, seed=1, start_sequence=0, bitrate=32_000, fec=False):
        """Sends one frame per 20 ms (absolute schedule); `loss` of them, at random, are never sent. With `fec`
        each packet carries in-band FEC for the one before (for `loss`)."""
        enc = encoder(bitrate, fec_loss_percent=round(loss * 100) if fec else 0)
        rng = random.Random(seed)
        loop = asyncio.get_running_loop()
        start = loop.time()
        for i, block in enumerate(blocks):
            packet = enc.encode(np.asarray(block, dtype=np.int16).tobytes(), BLOCK)
            delay = start + (i + 1) * 0.020 - loop.time()
            if delay > 0:
                await asyncio.sleep(delay)
            sequence = start_sequence + i
            if loss and rng.random() < loss:
                continue
            self.sent[sequence] = time.monotonic()
            await self.socket.send(frame(sequence, int(time.monotonic() * 1000), packet))
        return start_sequence + len(blocks)

    def heard(self):
        return np.concatenate(self.pcm) if self.pcm else np.zeros(0, dtype=np.int16)

    async def close(self):
        if self.socket is not None:
            await self.socket.close()
        if self._reader is not None:
            await self._reader


class Events:
    """A member's /api/events socket, keeping the room events."""

    def __init__(self, person):
        self.person = person
        self.events = []

    async def open(self):
        self.socket = await connect(self.person.events_url(), open_timeout=30)
        self._reader = asyncio.create_task(self._read())
        return self

    async def _read(self):
        try:
            async for message in self.socket:
                event = json.loads(message)
                if "room" in event:
                    self.events.append((time.monotonic(), event))
        except Exception:
            pass

    def kinds(self, kind, member=None):
        return [(t, e) for t, e in self.events if e["kind"] == kind and (member is None or e.get("member") == member
                                                                          or (isinstance(e.get("member"), dict) and e["member"]["id"] == member))]

    async def close(self):
        await self.socket.close()
        await self._reader


def speech(text, seed=0, voice=None):
    """`text` spoken by flite (its default voice at 8 kHz, or `voice`), resampled to 16 kHz (band-limited, by FFT),
    with a faint noise floor."""
    with tempfile.TemporaryDirectory() as directory:
        path = Path(directory) / "speech.wav"
        subprocess.run(["flite", *(["-voice", voice] if voice else []), "-t", text, "-o", str(path)], check=True)
        with wave.open(str(path)) as w:
            rate = w.getframerate()
            samples = np.frombuffer(w.readframes(w.getnframes()), dtype=np.int16).astype(np.float64)
    n = len(samples) * RATE // rate
    spectrum = np.fft.rfft(samples)
    out = np.fft.irfft(spectrum, n) * (n / len(samples))
    out += np.random.default_rng(seed).normal(0, 20, len(out))
    return np.clip(out, -32768, 32767).astype(np.int16)


def blocks(pcm, lead_blocks=10, tail_blocks=25):
    """PCM cut into 20 ms blocks, with silence (a faint floor) before and after."""
    rng = np.random.default_rng(3)
    padded = np.concatenate([rng.normal(0, 20, lead_blocks * BLOCK), pcm,
                             rng.normal(0, 20, tail_blocks * BLOCK + (-len(pcm)) % BLOCK)]).astype(np.int16)
    return [padded[i:i + BLOCK] for i in range(0, len(padded), BLOCK)]


def silence(count):
    return [np.zeros(BLOCK, dtype=np.int16)] * count


def cross_correlation(a, b):
    """Σ a[i]·b[lag + i] for every lag at which `a` lies wholly inside `b` (0 … len(b) - len(a)), by FFT."""
    n = 1 << int(np.ceil(np.log2(len(a) + len(b))))
    return np.fft.irfft(np.fft.rfft(b, n) * np.conj(np.fft.rfft(a, n)), n)[: len(b) - len(a) + 1]


def aligned_correlation(source, heard):
    """The best normalised cross-correlation of `source` inside `heard` (any lag), and that lag in samples."""
    a = source.astype(np.float64)
    b = heard.astype(np.float64)
    if len(b) < len(a):
        b = np.concatenate([b, np.zeros(len(a) - len(b))])
    lag = int(np.argmax(cross_correlation(a, b)))
    segment = b[lag:lag + len(a)]
    denominator = np.sqrt(np.sum(a * a) * np.sum(segment * segment))
    return (float(np.dot(a, segment) / denominator) if denominator else 0.0), lag


def normalised_best(piece, window):
    """The lag at which `piece` correlates best with the stretch of `window` under it (normalised by both
    energies, not only the raw product), and that correlation."""
    xc = cross_correlation(piece, window)
    squares = np.concatenate([[0.0], np.cumsum(window * window)])
    under = squares[len(piece):] - squares[:len(window) - len(piece) + 1]
    scores = xc / np.sqrt(np.maximum(under, 1e-9) * float(np.dot(piece, piece)))
    at = int(np.argmax(scores))
    return float(scores[at]), at


def intact_fraction(source, heard, piece=RATE // 10, slack=RATE * 3 // 10, good=0.9):
    """How much of `source` came through `heard` intact, when the live path between them may slide it as it plays:
    an adaptive jitter buffer (speexdsp's, in the mixer) conceals a frame or two to grow its delay and skips some to
    shrink it, so on a busy machine a stretch of a sentence is concealed and the rest comes 20 ms steps early or
    late (one such skip took a whole-sentence correlation of 0.99 down to 0.54, with 90% of the sentence perfect).
    The whole is aligned first (`aligned_correlation`); then each 100 ms piece of `source` finds its own best lag
    (normalised correlation) within ±0.3 s of the lag the loud pieces before it settled on. Returns the share of
    the source's energy in pieces found with correlation ≥ `good`, and where in `heard` the source starts and ends.
    For "it was heard"; "it was not heard" stays `aligned_correlation`'s (a piece free to move finds some likeness
    in anything, though not 0.9 in unrelated speech)."""
    _, lag = aligned_correlation(source, heard)
    a = np.asarray(source, dtype=np.float64)
    b = np.asarray(heard, dtype=np.float64)
    energies = [float(np.dot(a[i:i + piece], a[i:i + piece])) for i in range(0, len(a) - piece + 1, piece)]
    loud = 0.1 * (sum(energies) / len(energies)) if energies else 0.0
    intact = 0.0
    first = end = None
    for index, energy in enumerate(energies):
        start = index * piece
        low = max(0, lag + start - slack)
        window = b[low:lag + start + piece + slack]
        if len(window) < piece or energy <= 0:
            continue
        correlation, at = normalised_best(a[start:start + piece], window)
        if correlation >= good:
            intact += energy
            # Only a loud piece moves the lag: a quiet one's best lag is the noise floor's.
            if energy >= loud:
                lag = low + at - start
                first = lag + start if first is None else first
                end = lag + start + piece
    total = sum(energies)
    return (intact / total if total else 0.0), (first if first is not None else lag), (end if end is not None else lag + len(a))


def write_wav(path, pcm):
    with wave.open(str(path), "wb") as w:
        w.setnchannels(1)
        w.setsampwidth(2)
        w.setframerate(RATE)
        w.writeframes(np.asarray(pcm, dtype=np.int16).tobytes())


def upgrade_status(url):
    """The answer to a WebSocket upgrade, read with http.client: libwebsockets answers a refused upgrade as
    HTTP/1.0, which the websockets client will not parse (it only says "unsupported protocol")."""
    parts = urllib.parse.urlsplit(url)
    connection = http.client.HTTPConnection(parts.hostname, parts.port, timeout=30)
    connection.request("GET", parts.path + (f"?{parts.query}" if parts.query else ""), headers={
        "Connection": "Upgrade", "Upgrade": "websocket", "Sec-WebSocket-Version": "13",
        "Sec-WebSocket-Key": base64.b64encode(os.urandom(16)).decode()})
    response = connection.getresponse()
    body = response.read() if response.status != 101 else b""
    connection.close()
    return response.status, json.loads(body or b"{}")
