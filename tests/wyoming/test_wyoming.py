"""`hark wyoming` driven by the real `wyoming` client (PyPI): every service's round trip, the streaming
forms, and the ways a client can go wrong. Speech comes from flite (eSpeak NG's voice is one the acoustic
model hears poorly: docs/speech.md)."""

import asyncio
import json
import math
import socket
import time
import warnings

with warnings.catch_warnings():
    warnings.simplefilter("ignore", DeprecationWarning)  # audioop: still in 3.11, the venv's Python here
    import audioop

import pytest
from wyoming.asr import Transcribe, Transcript
from wyoming.audio import AudioChunk, AudioStart, AudioStop
from wyoming.client import AsyncTcpClient
from wyoming.error import Error
from wyoming.event import Event, read_event
from wyoming.handle import Handled, NotHandled
from wyoming.info import Describe, Info
from wyoming.intent import Intent, NotRecognized, Recognize
from wyoming.ping import Ping, Pong
from wyoming.tts import Synthesize, SynthesizeChunk, SynthesizeStart, SynthesizeStop, SynthesizeVoice
from wyoming.wake import Detect, Detection, NotDetected

from conftest import floor, pcm16, run, utterance

TIMEOUT = 60


def client(port):
    return AsyncTcpClient("127.0.0.1", port, connect_timeout=10, read_timeout=TIMEOUT)


async def read_until(c, *types):
    """Every event up to and including the first of `types`."""
    events = []
    while True:
        event = await c.read_event()
        assert event is not None, f"connection closed before {types}; got {[e.type for e in events]}"
        events.append(event)
        if event.type in types:
            return events


async def send_audio(c, audio, rate, width=2, channels=1, chunk_frames=1024, paced=False, clock=None):
    """The stream as fast as the socket takes it, or `paced` like a microphone (HA's satellites). With `clock`
    (ms), chunks carry timestamps from it and audio-start none, as HA's wake word stage sends them."""
    await c.write_event(AudioStart(rate=rate, width=width, channels=channels, timestamp=None if clock is not None else 0).event())
    step = chunk_frames * width * channels
    started = time.monotonic()
    for offset in range(0, len(audio), step):
        stamp = None if clock is None else clock + offset // (width * channels) * 1000 // rate
        await c.write_event(AudioChunk(rate=rate, width=width, channels=channels, audio=audio[offset:offset + step], timestamp=stamp).event())
        if paced:
            await asyncio.sleep(max(0, started + (offset + step) / (rate * width * channels) - time.monotonic()))
    await c.write_event(AudioStop().event())


async def transcribe(port, audio, rate, width=2, channels=1, context=None, paced=False):
    async with client(port) as c:
        await c.write_event(Transcribe(language="en", context=context).event())
        await send_audio(c, audio, rate, width, channels, paced=paced)
        return await read_until(c, "transcript-stop", "error")


def final_text(events):
    finals = [e for e in events if Transcript.is_type(e.type)]
    assert len(finals) == 1, [e.type for e in events]
    return Transcript.from_event(finals[0]).text


# --- info and ping --------------------------------------------------------------------------------------

def test_describe_gives_every_service(server):
    async def go():
        async with client(server.port) as c:
            await c.write_event(Describe().event())
            return await c.read_event()
    event = run(go())
    info = Info.from_event(event)
    assert [p.name for p in info.asr] == ["hark-asr"]
    assert info.asr[0].supports_transcript_streaming is True
    assert info.asr[0].models[0].languages == ["en"] and info.asr[0].models[0].installed
    assert info.tts[0].supports_synthesize_streaming is True
    assert "en-us" in [v.name for v in info.tts[0].voices]
    assert info.wake[0].models[0].name == "hey_hark" and info.wake[0].models[0].phrase == "hey hark"
    assert info.intent[0].models[0].languages == ["en"]
    assert info.handle[0].supports_handled_streaming is False and info.handle[0].supports_home_control is True
    assert event.data["mic"] == [] and event.data["snd"] == []


def test_ping_pong(server):
    async def go():
        async with client(server.port) as c:
            await c.write_event(Ping(text="hello").event())
            return await c.read_event()
    event = run(go())
    assert Pong.is_type(event.type) and Pong.from_event(event).text == "hello"


# --- asr -------------------------------------------------------------------------------------------------

def test_transcribe_a_command(server):
    rate, samples = utterance("turn on the light", voice="rms")
    events = run(transcribe(server.port, pcm16(samples), rate, context={"conversation": "a"}))
    types = [e.type for e in events]
    assert types[0] == "transcript-start" and types[-2:] == ["transcript", "transcript-stop"], types
    transcript = Transcript.from_event(events[-2])
    assert transcript.text == "turn on the light"
    assert transcript.language == "en" and transcript.context == {"conversation": "a"}


def test_transcribe_converts_any_format(server):
    # 8 kHz flite, widened to 32-bit stereo at 44.1 kHz: the server narrows, downmixes and resamples.
    rate, samples = utterance("take a picture", voice="kal")
    audio, _ = audioop.ratecv(pcm16(samples), 2, 1, rate, 44_100, None)
    audio = audioop.tostereo(audioop.lin2lin(audio, 2, 4), 4, 1, 1)
    assert final_text(run(transcribe(server.port, audio, 44_100, width=4, channels=2))) == "take a picture"


def test_out_of_grammar_speech_is_an_empty_transcript(server):
    # The grammar forces any audio into one of its sentences; the acoustic confidence rejects the misfit.
    rate, samples = utterance("the quick brown fox jumps over the lazy dog")
    assert final_text(run(transcribe(server.port, pcm16(samples), rate))) == ""


def test_a_chime_is_an_empty_transcript(server):
    # 880 Hz and its octave, decaying, in a quiet room: the grammar would hear "ta" in it with a confident margin, but
    # its pitch holds as no voice's does, so it is no command (docs/speech.md, "An utterance needs a voice").
    rate = 16_000
    chime = [(math.sin(2 * math.pi * 880 * i / rate) + 0.5 * math.sin(2 * math.pi * 1760 * i / rate))
             * 9000 * math.exp(-i / rate / 0.3) for i in range(rate // 2)]
    room = floor(rate * 2, 5)
    samples = [max(-32768, min(32767, round(x + n))) for x, n in zip([0.0] * (rate // 2) + chime + [0.0] * rate, room)]
    assert final_text(run(transcribe(server.port, pcm16(samples), rate))) == ""


def test_streaming_partials_arrive_while_audio_does(server):
    # Paced like a microphone: a client sending faster than real time gets no partials (they would only
    # delay its transcript).
    rate, samples = utterance("turn off the light", voice="rms", before=0.3, after=2.0)
    events = run(transcribe(server.port, pcm16(samples), rate, paced=True))
    chunks = [e.data["text"] for e in events if e.type == "transcript-chunk"]
    assert chunks, [e.type for e in events]
    final = final_text(events)
    assert final == "turn off the light"
    assert final.startswith("".join(chunks))


# --- tts -------------------------------------------------------------------------------------------------

async def synthesize_events(port, *events):
    async with client(port) as c:
        for e in events:
            await c.write_event(e)
        return await read_until(c, "audio-stop" if events[-1].type == "synthesize" else "synthesize-stopped", "error")


def audio_streams(events):
    """[(rate, width, channels, bytes)] per audio-start … audio-stop."""
    streams = []
    for e in events:
        if AudioStart.is_type(e.type):
            start = AudioStart.from_event(e)
            streams.append([start.rate, start.width, start.channels, b""])
        elif AudioChunk.is_type(e.type):
            streams[-1][3] += AudioChunk.from_event(e).audio
    return streams


def test_synthesize(server):
    events = run(synthesize_events(server.port, Synthesize(text="The light is on.").event()))
    assert [e.type for e in events][0] == "audio-start" and events[-1].type == "audio-stop"
    [(rate, width, channels, audio)] = audio_streams(events)
    assert (rate, width, channels) == (22_050, 2, 1)
    assert 0.5 < len(audio) / 2 / rate < 3, len(audio)
    assert audioop.rms(audio, 2) > 300  # speech, not silence


def test_synthesize_with_a_voice_and_speaker(server):
    voice = SynthesizeVoice(name="en-us", speaker="f3")
    events = run(synthesize_events(server.port, Synthesize(text="Hello.", voice=voice).event()))
    assert len(audio_streams(events)) == 1 and len(audio_streams(events)[0][3]) > 4000


def test_synthesize_unknown_voice_is_an_error(server):
    events = run(synthesize_events(server.port, Synthesize(text="Hello.", voice=SynthesizeVoice(name="xx-nope")).event()))
    error = Error.from_event(events[-1])
    assert error.code == "unknown-voice" and "xx-nope" in error.text


def test_streaming_synthesis_speaks_each_sentence(server):
    events = run(synthesize_events(
        server.port,
        SynthesizeStart().event(),
        SynthesizeChunk(text="Hello there. How").event(),
        SynthesizeChunk(text=" are you? I am").event(),
        # Sent by streaming clients for servers that cannot stream: this server ignores it.
        Synthesize(text="Hello there. How are you? I am fine").event(),
        SynthesizeChunk(text=" fine").event(),
        SynthesizeStop().event(),
    ))
    assert events[-1].type == "synthesize-stopped"
    streams = audio_streams(events)
    assert len(streams) == 3, [e.type for e in events if e.type != "audio-chunk"]
    assert all(len(s[3]) > 4000 for s in streams)


# --- wake ------------------------------------------------------------------------------------------------

async def detect(port, audio, rate, names=None, clock=None):
    async with client(port) as c:
        await c.write_event(Detect(names=names).event())
        await send_audio(c, audio, rate, clock=clock)
        return await read_until(c, "detection", "not-detected", "error")


def test_wake_phrase_is_detected(server):
    rate, chat = utterance("the weather was lovely this afternoon", voice="kal16", before=1, after=1, seed=3)
    _, wake = utterance("hey hark, turn on the light", voice="kal16", before=0, after=1.5, seed=5)
    events = run(detect(server.port, pcm16(chat + wake), rate, names=["hey_hark"]))
    detection = Detection.from_event(events[-1])
    assert events[-1].type == "detection" and detection.name == "hey_hark"
    # The phrase is said after the chit-chat: the timestamp (ms) falls inside the wake clip.
    assert len(chat) / rate * 1000 < detection.timestamp < (len(chat) + len(wake)) / rate * 1000
    # As HA streams: no timestamp at audio-start, chunks timed on the pipeline's clock; the detection is on it too.
    events = run(detect(server.port, pcm16(chat + wake), rate, names=["hey_hark"], clock=50_000))
    assert events[-1].type == "detection"
    assert 50_000 + len(chat) / rate * 1000 < Detection.from_event(events[-1]).timestamp < 50_000 + (len(chat) + len(wake)) / rate * 1000


def test_no_wake_phrase_is_not_detected(server):
    rate, chat = utterance("could you pass me the salt please", voice="kal16", before=1, after=1, seed=9)
    events = run(detect(server.port, pcm16(chat), rate))
    assert NotDetected.is_type(events[-1].type), [e.type for e in events]


def test_unknown_wake_word_is_an_error(server):
    async def go():
        async with client(server.port) as c:
            await c.write_event(Detect(names=["ok_nabu"]).event())
            return await c.read_event()
    error = Error.from_event(run(go()))
    assert error.code == "unknown-wake-word" and "ok_nabu" in error.text and "hey_hark" in error.text


# --- intent and handle -----------------------------------------------------------------------------------

async def ask(port, event, *ends):
    async with client(port) as c:
        await c.write_event(event)
        return (await read_until(c, *ends))[-1]


def test_recognize_an_intent_with_entities(server):
    event = run(ask(server.port, Recognize(text="switch the light on", context={"k": 1}).event(), "intent", "not-recognized", "error"))
    intent = Intent.from_event(event)
    assert intent.name == "OnLight" and intent.text == "switch the light on" and intent.context == {"k": 1}
    assert {(e.name, e.value) for e in intent.entities} == {("device", "light")}


def test_unrelated_text_is_not_recognized(server):
    event = run(ask(server.port, Recognize(text="where is my phone").event(), "intent", "not-recognized", "error"))
    assert NotRecognized.is_type(event.type) and NotRecognized.from_event(event).text == "where is my phone"


def test_handle_runs_the_dialog_and_carries_the_context(server):
    async def go():
        async with client(server.port) as c:
            await c.write_event(Transcript(text="turn on the light", context={"satellite": "kitchen"}).event())
            first = (await read_until(c, "handled", "not-handled", "error"))[-1]
        # A new connection continues the conversation through the context it was given back.
        async with client(server.port) as c:
            await c.write_event(Transcript(text="turn off the light", context=Handled.from_event(first).context).event())
            second = (await read_until(c, "handled", "not-handled", "error"))[-1]
        return first, second
    first, second = run(go())
    assert first.type == "handled", first
    handled = Handled.from_event(first)
    assert "light" in handled.text.lower()
    assert handled.context["satellite"] == "kitchen"
    assert handled.context["hark"]["light"] == "on"  # the simulated light's real state, read back
    assert second.type == "handled" and Handled.from_event(second).context["hark"]["light"] == "off"
    turns = handled.context["hark"]["system"]["dialog_turn_counter"]
    assert Handled.from_event(second).context["hark"]["system"]["dialog_turn_counter"] == turns + 1


def test_handle_empty_text_is_not_handled(server):
    event = run(ask(server.port, Transcript(text=" ").event(), "handled", "not-handled", "error"))
    assert NotHandled.is_type(event.type)


# --- robustness: raw bytes -------------------------------------------------------------------------------

class Raw:
    """A plain socket, for what the wyoming client would never send."""

    def __init__(self, port):
        self.sock = socket.create_connection(("127.0.0.1", port), timeout=TIMEOUT)
        self.file = self.sock.makefile("rb")

    def send(self, data: bytes):
        self.sock.sendall(data)

    def event(self, type_, data=None, payload=b""):
        header = {"type": type_}
        body = json.dumps(data).encode() if data else b""
        if body:
            header["data_length"] = len(body)
        if payload:
            header["payload_length"] = len(payload)
        self.send(json.dumps(header).encode() + b"\n" + body + payload)

    def read(self):
        return read_event(self.file)

    def closed_by_server(self):
        self.sock.settimeout(10)
        try:
            return self.sock.recv(1) == b""
        except ConnectionResetError:
            return True

    def close(self):
        self.file.close()
        self.sock.close()


@pytest.fixture
def raw(server):
    r = Raw(server.port)
    yield r
    r.close()


def test_a_header_that_is_not_json_is_an_error_and_closes(raw):
    raw.send(b"hello there\n")
    error = Error.from_event(raw.read())
    assert error.code == "bad-header" and "not JSON" in error.text
    assert raw.closed_by_server()


def test_a_header_without_a_type_names_the_field(raw):
    raw.send(b'{"data": {}}\n')
    error = Error.from_event(raw.read())
    assert error.code == "bad-header" and '"type"' in error.text


def test_unknown_event_is_an_error_and_the_connection_goes_on(raw):
    raw.event("make-coffee", {"strength": 3})
    error = Error.from_event(raw.read())
    assert error.code == "unknown-event" and "make-coffee" in error.text
    raw.event("ping")
    assert raw.read().type == "pong"


def test_inline_data_is_merged_with_data_after_the_header(raw):
    body = json.dumps({"text": "turn on the light"}).encode()
    raw.send(json.dumps({"type": "recognize", "data": {"text": "ignored", "context": {"a": 1}}, "data_length": len(body)}).encode() + b"\n" + body)
    intent = Intent.from_event(raw.read())
    assert intent.name == "OnLight" and intent.context == {"a": 1}


def test_audio_without_audio_start_is_an_error(raw):
    raw.event("audio-chunk", {"rate": 16000, "width": 2, "channels": 1}, b"\0" * 640)
    raw.event("audio-chunk", {"rate": 16000, "width": 2, "channels": 1}, b"\0" * 640)
    error = Error.from_event(raw.read())
    assert error.code == "no-audio-start" and "audio-start" in error.text
    raw.event("audio-stop")
    assert Error.from_event(raw.read()).code == "no-audio-start"
    raw.event("ping")
    assert raw.read().type == "pong"  # one error for the run of chunks, then the connection carries on


def test_bad_audio_format_names_the_field(raw):
    raw.event("audio-start", {"rate": 16000, "width": 7, "channels": 1})
    error = Error.from_event(raw.read())
    assert error.code == "bad-request" and "audio-start.data.width" in error.text


def test_a_missing_field_names_it(raw):
    raw.event("recognize", {"context": {}})
    error = Error.from_event(raw.read())
    assert "recognize.data.text" in error.text and "missing" in error.text


def test_limits_on_header_data_and_payload(small_server):
    cases = [
        (b'{"type": "ping", "pad": "' + b"x" * 2000 + b'"}\n', "header-too-long"),
        (b"x" * 3000, "header-too-long"),  # no newline at all
        (b'{"type": "recognize", "data_length": 100000}\n', "data-too-large"),
        (b'{"type": "audio-chunk", "payload_length": 999999999}\n', "payload-too-large"),
        (b'{"type": "ping", "payload_length": -4}\n', "bad-header"),
    ]
    for data, code in cases:
        r = Raw(small_server.port)
        try:
            r.send(data)
            error = Error.from_event(r.read())
            assert error.code == code, (data[:40], error)
            assert r.closed_by_server()
        finally:
            r.close()
    assert small_server.alive()


def test_clients_over_the_limit_are_told_so(small_server):
    first, second = Raw(small_server.port), Raw(small_server.port)
    try:
        for r in (first, second):
            r.event("ping")
            assert r.read().type == "pong"
        third = Raw(small_server.port)
        error = Error.from_event(third.read())
        assert error.code == "too-many-clients" and "2" in error.text
        third.close()
    finally:
        first.close()
        second.close()
    # The places free up once the clients leave.
    deadline = time.time() + 10
    while True:
        r = Raw(small_server.port)
        r.event("ping")
        event = r.read()
        r.close()
        if event.type == "pong" or time.time() > deadline:
            break
        time.sleep(0.1)
    assert event.type == "pong"


def test_services_not_offered_are_named(small_server):
    async def go():
        async with client(small_server.port) as c:
            await c.write_event(Synthesize(text="hello").event())
            return await c.read_event()
    error = Error.from_event(run(go()))
    assert error.code == "service-unavailable" and "tts" in error.text and "intent" in error.text


def test_clients_vanishing_mid_stream_give_their_spotters_back(server):
    # Four spotters (WyomingLimits.wakeSpotters): six clients each take one and vanish mid-stream...
    rate, chat = utterance("the weather was lovely", voice="kal16", seed=11)
    audio = pcm16(chat)
    for _ in range(6):
        r = Raw(server.port)
        r.event("detect", {"names": ["hey_hark"]})
        r.event("audio-start", {"rate": rate, "width": 2, "channels": 1})
        r.event("audio-chunk", {"rate": rate, "width": 2, "channels": 1}, audio[:8000])
        r.send(b'{"type": "audio-chunk", "payload_length": 6400}\n' + b"\0" * 100)  # cut off inside a payload
        r.close()
        time.sleep(0.2)
    # ...and a seventh still gets a spotter (a server that leaked them would answer "busy").
    events = run(detect(server.port, audio, rate))
    assert NotDetected.is_type(events[-1].type), events[-1]
    # A transcription abandoned half-way does not disturb the next one either.
    r = Raw(server.port)
    r.event("transcribe", {"language": "en"})
    r.event("audio-start", {"rate": rate, "width": 2, "channels": 1})
    r.event("audio-chunk", {"rate": rate, "width": 2, "channels": 1}, audio)
    r.close()
    rate, samples = utterance("turn on the light", voice="rms", seed=13)
    assert final_text(run(transcribe(server.port, pcm16(samples), rate))) == "turn on the light"
    assert server.alive()


def test_twenty_clients_at_once(server):
    rate, samples = utterance("take a picture", seed=17)
    audio = pcm16(samples)

    async def one(i):
        try:
            if i % 4 == 0:
                return ("tts", [e.type for e in await synthesize_events(server.port, Synthesize(text=f"Client {i}.").event())][-1])
            if i % 4 == 1:
                return ("intent", (await ask(server.port, Recognize(text="take a picture").event(), "intent", "not-recognized", "error")).type)
            events = await transcribe(server.port, audio, rate)
            return ("asr", events[-1].type if events[-1].type == "error" else final_text(events))
        except Exception as e:  # noqa: BLE001 - reported below with the client's number
            return ("exception", f"{i}: {e!r}")

    async def all_of_them():
        return await asyncio.gather(*(one(i) for i in range(20)))

    results = run(all_of_them(), timeout=240)
    assert not [r for r in results if r[0] == "exception"], results
    expected = {"tts": "audio-stop", "intent": "intent", "asr": "take a picture"}
    # Each gets its answer, or (if the server is saturated) an error event: never silence or a crash.
    assert all(value in (expected[kind], "error") for kind, value in results), results
    assert sum(value == expected[kind] for kind, value in results) >= 18, results
    assert run(ask(server.port, Ping().event(), "pong")).type == "pong"
    assert server.alive()


# --- the command line ------------------------------------------------------------------------------------

@pytest.mark.parametrize("args, status, message", [
    (["--uri", "unix:///tmp/x"], 64, "--uri \"unix:///tmp/x\": expected tcp://HOST:PORT"),
    (["--uri", "tcp://127.0.0.1:70000"], 64, "port must be a number"),
    (["--services", "asr,coffee"], 64, "unknown service \"coffee\""),
    (["--max-clients", "0"], 64, "--max-clients: expected a whole number 1…10000"),
    (["--workspace", "/nonexistent/ws.json", "--services", "intent"], 65, "/nonexistent/ws.json"),
])
def test_bad_command_lines_are_named(args, status, message):
    import subprocess
    from conftest import HARK
    r = subprocess.run([str(HARK), "wyoming", *args], capture_output=True, text=True, timeout=60)
    assert r.returncode == status, r.stderr
    assert message in r.stderr, r.stderr


def test_a_taken_port_is_unavailable(small_server):
    import subprocess
    from conftest import HARK
    r = subprocess.run([str(HARK), "wyoming", "--services", "intent", "--uri", f"tcp://127.0.0.1:{small_server.port}"],
                       capture_output=True, text=True, timeout=60)
    assert r.returncode == 69 and "Address already in use" in r.stderr, r.stderr


def test_absurd_numbers_do_not_crash_the_server(raw, server):
    raw.event("detect", {})
    raw.event("audio-start", {"rate": 16000, "width": 2, "channels": 1, "timestamp": 1e300})
    raw.event("audio-chunk", {"rate": 16000.0, "width": 2, "channels": 1, "timestamp": -1e300}, b"\1\0" * 1600)
    raw.event("audio-stop", {"timestamp": 1e308})
    assert raw.read().type == "not-detected"
    raw.event("audio-start", {"rate": 1e300, "width": 2, "channels": 1})
    assert "audio-start.data.rate" in Error.from_event(raw.read()).text
    raw.send(b'{"type": "ping", "payload_length": 1e300}\n')
    assert Error.from_event(raw.read()).code == "bad-header"
    assert server.alive()


def test_select_program_takes_a_program_of_info_and_names_the_others(raw):
    raw.event("select-program", {"name": "hark-asr"})
    raw.event("ping", {"text": "after"})
    assert raw.read().type == "pong"  # a known program is selected silently, as wyoming/info.py describes
    raw.event("select-program", {"name": "faster-whisper"})
    error = Error.from_event(raw.read())
    assert "faster-whisper" in error.text and "hark-asr" in error.text and "hark-dialog" in error.text


def test_text_limits(raw):
    raw.event("synthesize", {"text": "la " * 10_000})
    error = Error.from_event(raw.read())
    assert error.code == "text-too-long" and "20000" in error.text
    # Streamed text that never ends a sentence is still spoken, in pieces, as it arrives.
    raw.event("synthesize-start", {})
    raw.event("synthesize-chunk", {"text": "la " * 400})
    assert raw.read().type == "audio-start"


# --- inside hark run -------------------------------------------------------------------------------------

def test_hark_run_serves_wyoming_when_configured(tmp_path):
    import re
    import subprocess
    from conftest import HARK, REPO
    config = tmp_path / "hark.json"
    config.write_text(json.dumps({"wyoming": "tcp://127.0.0.1:0", "server": {"enabled": False}, "simulate": True,
                                  "workspace": str(REPO / "Intents/home.json")}))
    run_ = subprocess.Popen([str(HARK), "run", "--config", str(config), "--data", str(tmp_path / "data"), "--events"],
                            stdin=subprocess.PIPE, stdout=subprocess.PIPE, stderr=subprocess.PIPE, text=True)
    try:
        port = None
        deadline = time.time() + 120
        while port is None and time.time() < deadline:
            line = run_.stderr.readline()
            assert line, "hark run ended before serving Wyoming"
            found = re.search(r"Wyoming services for Home Assistant at tcp://127\.0\.0\.1:(\d+)", line)
            port = found and int(found.group(1))
        event = run(ask(port, Transcript(text="turn on the light").event(), "handled", "not-handled", "error"))
        assert event.type == "handled" and Handled.from_event(event).context["hark"]["light"] == "on"
    finally:
        run_.stdin.close()  # typed input ends: the run ends with it
        out = run_.stdout.read()
        assert run_.wait(timeout=60) == 0
    # The loop's own event log has HA's turn: one appliance, one set of devices.
    kinds = [json.loads(line)["kind"] for line in out.splitlines() if line.startswith("{")]
    assert "action" in kinds and "reply" in kinds, out


def test_hark_run_names_a_bad_wyoming_address(tmp_path):
    import subprocess
    from conftest import HARK
    config = tmp_path / "hark.json"
    config.write_text(json.dumps({"wyoming": "udp://x", "server": {"enabled": False}, "simulate": True}))
    r = subprocess.run([str(HARK), "run", "--config", str(config), "--data", str(tmp_path / "data")],
                       stdin=subprocess.DEVNULL, capture_output=True, text=True, timeout=60)
    assert r.returncode == 65 and "wyoming: \"udp://x\": expected tcp://HOST:PORT" in r.stderr, r.stderr


def test_handle_continues_a_conversation_by_its_id_as_home_assistant_sends_it(server):
    # HA's Wyoming conversation agent opens a connection per turn and sends only context.conversation_id.
    def turn(text, conversation):
        event = run(ask(server.port, Transcript(text=text, context={"conversation_id": conversation}).event(), "handled", "not-handled", "error"))
        assert event.type == "handled", event
        return Handled.from_event(event).context

    first = turn("turn on the light", "ha-1")
    second = turn("turn off the light", "ha-1")
    other = turn("turn on the light", "ha-2")
    counter = lambda c: c["hark"]["system"]["dialog_turn_counter"]
    assert second["conversation_id"] == "ha-1"
    assert counter(second) == counter(first) + 1
    assert counter(other) == counter(first)  # another conversation starts afresh


def test_an_intent_only_server_answers_home_assistants_transcript_with_the_intent(small_server):
    # HA's conversation agent sends `transcript` to an intent service too, and handles the intent itself.
    event = run(ask(small_server.port, Transcript(text="take a picture", context={"conversation_id": "x"}).event(), "intent", "not-recognized", "error"))
    assert Intent.from_event(event).name == "TakePicture" and Intent.from_event(event).context == {"conversation_id": "x"}


def test_docs_show_the_exact_info(server):
    # docs/wyoming.md shows the info HA sees, with the voices cut to en-us: it must stay the real one.
    from conftest import REPO
    doc = (REPO / "docs/wyoming.md").read_text()
    shown = json.loads(doc.split("## The `info` HA sees", 1)[1].split("```json", 1)[1].split("```", 1)[0])

    async def go():
        async with client(server.port) as c:
            await c.write_event(Describe().event())
            return await c.read_event()
    actual = run(go()).data
    actual["tts"][0]["voices"] = [v for v in actual["tts"][0]["voices"] if v["name"] == "en-us"]
    assert shown == actual


def test_a_silent_client_is_closed_after_the_idle_timeout(small_server):
    r = Raw(small_server.port)
    try:
        r.event("ping")
        assert r.read().type == "pong"
        started = time.time()
        error = Error.from_event(r.read())  # nothing sent: after 3 s the server gives up
        assert error.code == "idle-timeout" and "3 s" in error.text
        assert 2.5 < time.time() - started < 15
        assert r.closed_by_server()
    finally:
        r.close()
