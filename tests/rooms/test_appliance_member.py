"""Issue 14's appliance as a member of a drop-in room, end to end (docs/rooms.md, "The appliance in a room").

A real `hark run` whose microphone and speaker are ALSA file-plugin devices (a raw file read as the microphone,
a raw file written as the speaker, both on alsa-lib's null device) joins the room its configuration names
(`rooms.join`); a scripted person joins the same room over the audio socket. What the appliance's microphone
says reaches the person (at least 90% of it intact: `intact_fraction`), what the person says comes out of the
appliance's speaker, and the appliance's own speech does not come back to its speaker (mix-minus).
"""

import asyncio
import json
import re
import subprocess
import tempfile
import time
from pathlib import Path

import numpy as np
import pytest

from roomclient import BLOCK, HARK, REPO, RATE, Events, Member, Server, aligned_correlation, intact_fraction, silence, speech

SPEAKER_RATE = 22_050  # the appliance's playback format (SpeechSynthesizer.playbackFormat)
LEAD_SECONDS = 10  # microphone silence before its sentence: time for the person to pair, join and connect
APPLIANCE_SAYS = "the kettle has boiled"
PERSON_SAYS = "dinner is ready in five minutes"


class ApplianceRun(Server):
    """`hark run --simulate` with an ALSA file-plugin microphone and speaker and `rooms.join` set; its server on
    an ephemeral port (read from its log). Typed lines go to its standard input."""

    def __init__(self, microphone_pcm, rooms=None, data=None, server=None):
        self.data = data or tempfile.mkdtemp(prefix="hark-appliance-member.")
        base = Path(self.data)
        self.microphone = base / "mic.raw"
        self.microphone.write_bytes(np.asarray(microphone_pcm, dtype=np.int16).tobytes())
        self.speaker = base / "speaker.raw"
        (base / "asoundrc").write_text(
            f'pcm.hark_member_mic {{ type file slave.pcm {{ type null }} file "/dev/null" infile "{self.microphone}" format "raw" }}\n'
            f'pcm.hark_member_spk {{ type file slave.pcm {{ type null }} file "{self.speaker}" format "raw" }}\n')
        config = {
            "audio": {"capture": "hark_member_mic", "playback": "hark_member_spk", "alsa_config": "asoundrc", "earcon": False},
            "wake": {"enabled": False},
            "rooms": rooms if rooms is not None else {"name": "Kitchen Hark", "join": "Kitchen"},
        }
        if server is not None:
            config["server"] = server
        (base / "hark.json").write_text(json.dumps(config))
        self.log_path = base / "run.log"
        self.log = open(self.log_path, "wb")
        self.events_path = base / "events.jsonl"
        self.events_file = open(self.events_path, "wb")
        command = [str(HARK), "run", "--simulate", "--events", "--config", str(base / "hark.json"), "--data", self.data, "--port", "0"]
        self.process = subprocess.Popen(command, cwd=REPO, stdin=subprocess.PIPE, stdout=self.events_file, stderr=self.log)
        self.scheme, self.port = self._port()
        self.base = f"{self.scheme}://127.0.0.1:{self.port}"

    def _port(self):
        deadline = time.monotonic() + 60
        while time.monotonic() < deadline:
            found = re.search(r"web page and API at (https?)://[^:]+:(\d+)/", self.log_path.read_text())
            if found:
                return found.group(1), int(found.group(2))
            if self.process.poll() is not None:
                break
            time.sleep(0.1)
        log = self.log_path.read_text()
        self.stop()
        raise RuntimeError(f"hark run started no server; log:\n{log}")

    def type(self, line):
        self.process.stdin.write(line.encode() + b"\n")
        self.process.stdin.flush()

    def events(self):
        return [json.loads(line) for line in self.events_path.read_text().splitlines() if line.startswith("{")]

    def wait_for_event(self, predicate, timeout=30):
        deadline = time.monotonic() + timeout
        while time.monotonic() < deadline:
            found = [e for e in self.events() if predicate(e)]
            if found:
                return found[0]
            time.sleep(0.1)
        raise AssertionError(f"no such event in {timeout} s; events: {self.events()[-10:]}")

    def speaker_pcm(self):
        """What the appliance played, at 16 kHz (resampled by FFT from the speaker's 22.05 kHz)."""
        played = np.frombuffer(self.speaker.read_bytes(), dtype=np.int16).astype(np.float64)
        n = len(played) * RATE // SPEAKER_RATE
        return np.fft.irfft(np.fft.rfft(played), n) * (n / max(1, len(played)))

    def stop(self):
        try:
            self.process.stdin.close()
        except Exception:
            pass
        code = super().stop()
        self.events_file.close()
        return code


def room_named(person, name):
    status, rooms = person.call("GET", "/rooms")
    assert status == 200, rooms
    matching = [r["id"] for r in rooms if r["display_name"] == name]
    assert matching, f"no open room {name!r} in {rooms}"
    return matching[0]


def rms(pcm):
    return float(np.sqrt(np.mean(np.asarray(pcm, dtype=np.float64) ** 2))) if len(pcm) else 0.0


@pytest.fixture(scope="module")
def appliance_pcm():
    return speech(APPLIANCE_SAYS, seed=5)


@pytest.fixture(scope="module")
def person_pcm():
    return speech(PERSON_SAYS, seed=6)


def test_appliance_member_round_trip_through_alsa(run, appliance_pcm, person_pcm):
    floor = np.random.default_rng(9).normal(0, 20, LEAD_SECONDS * RATE)
    microphone = np.concatenate([floor, appliance_pcm, np.zeros(30 * RATE)]).astype(np.int16)
    appliance = ApplianceRun(microphone)
    try:
        device = appliance.device_token()
        ada = appliance.person(device, "Ada")
        room = room_named(ada, "Kitchen")
        ada.join(room)
        status, members = ada.call("GET", f"/rooms/{room}/members")
        assert status == 200, members
        assert {"id": "appliance", "name": "Kitchen Hark", "kind": "appliance", "state": "joined"}.items() <= \
            next(m for m in members if m["id"] == "appliance").items(), members

        async def talk():
            events = await Events(ada).open()
            member = await Member(ada, room).open()
            # Silence while the appliance's microphone says its sentence (it starts LEAD_SECONDS into the run, and
            # the run started before the person paired), then the person's sentence, then silence to hear it out.
            lead = int((LEAD_SECONDS + len(appliance_pcm) / RATE + 3) * 50)
            spoken = [person_pcm[i:i + BLOCK] for i in range(0, len(person_pcm) - BLOCK + 1, BLOCK)]
            await member.send_blocks(silence(lead) + spoken + silence(100))
            await member.close()
            await events.close()
            return member, events

        member, events = run(talk())
        # The person heard the appliance's microphone...
        # (Intact pieces, not one whole-sentence correlation: on a busy machine the mixer's jitter buffer may conceal
        # and skip a few frames mid-sentence, which slides the rest of it; see `intact_fraction`.)
        heard_intact, first, _ = intact_fraction(appliance_pcm, member.heard())
        assert heard_intact >= 0.9, f"the person heard {heard_intact:.0%} of the appliance's microphone intact (from sample {first})"
        speaking = [e for _, e in events.kinds("audio:speaking:on") if e["member"] == "appliance"]
        assert speaking, "no audio:speaking:on for the appliance"
        # ...and the appliance's speaker played the person, not the appliance's own sentence.
        played = appliance.speaker_pcm()
        played_intact, first, end = intact_fraction(person_pcm, played)
        np.savez('/tmp/diag.npz', played=played, person=person_pcm, heard=member.heard(), app=appliance_pcm)
        import shutil; shutil.copy(appliance.events_path, '/tmp/diag-events.jsonl'); shutil.copy(appliance.log_path, '/tmp/diag-log.txt')
        assert played_intact >= 0.9, f"the appliance's speaker played {played_intact:.0%} of the person intact (samples {first}…{end})"
        # Everything else it played is the person's silence: were its own sentence there, it would be loud.
        rest = np.concatenate([played[:max(0, first - RATE // 5)], played[end + RATE // 5:]])
        assert len(rest) > len(appliance_pcm), f"the speaker played only {len(played) / RATE:.1f} s"
        assert rms(rest) < 0.02 * rms(person_pcm), f"besides the person the speaker played {rms(rest):.1f} RMS (the person: {rms(person_pcm):.1f})"
        own, _ = aligned_correlation(appliance_pcm, played)
        print(f"appliance → person {heard_intact:.0%} intact, person → speaker {played_intact:.0%}, own sentence on the speaker "
              f"{own:.3f}, rest {rms(rest):.1f} RMS")
        assert abs(own) < 0.3, f"the appliance's own sentence came back to its speaker (correlation {own:.3f})"
    finally:
        assert appliance.stop() == 0, f"hark run did not stop cleanly; log:\n{appliance.log_path.read_text()}"


def described(value, schema_name):
    """The answer has the fields docs/openapi.json requires of `schema_name`, with its enums' values (the browser
    lane validates the schemas in full against `hark serve`, which has no appliance to bring in)."""
    schema = json.loads((REPO / "docs" / "openapi.json").read_text())["components"]["schemas"][schema_name]
    missing = [field for field in schema["required"] if field not in value]
    assert not missing, f"{schema_name} lacks {missing}: {value}"
    for field, spec in schema["properties"].items():
        if "enum" in spec:
            assert value[field] in spec["enum"], f"{schema_name}.{field} = {value[field]!r}, not one of {spec['enum']}"


def test_joined_and_left_from_the_page_and_by_voice(run):
    microphone = np.random.default_rng(4).normal(0, 20, 2 * RATE).astype(np.int16)
    appliance = ApplianceRun(microphone, rooms={"name": "Den Hark"})
    try:
        device = appliance.device_token()
        ada, ben = appliance.person(device, "Ada"), appliance.person(device, "Ben")
        room = ada.create_room("Den")
        ada.join(room)

        def reply_to(line):
            before = len([e for e in appliance.events() if e["kind"] == "reply"])
            appliance.type(line)
            deadline = time.monotonic() + 30
            while time.monotonic() < deadline:
                replies = [e for e in appliance.events() if e["kind"] == "reply"]
                if len(replies) > before:
                    return replies[before]["text"]
                time.sleep(0.1)
            raise AssertionError(f"no reply to {line!r}; log:\n{appliance.log_path.read_text()}")

        def appliance_state():
            status, members = ada.call("GET", f"/rooms/{room}/members")
            assert status == 200, members
            return next((m["state"] for m in members if m["id"] == "appliance"), None)

        async def scenario():
            events = await Events(ada).open()
            await asyncio.sleep(0.2)
            status, refused = ben.call("POST", f"/rooms/{room}/appliance", {"action": "join"})
            assert status == 403 and refused["error"]["code"] == "forbidden", refused
            status, bad = ada.call("POST", f"/rooms/{room}/appliance", {"action": "come"})
            assert status == 400 and "action" in bad["error"]["message"], bad
            status, not_in = ada.call("POST", f"/rooms/{room}/appliance", {"action": "leave"})
            assert status == 409, not_in

            # From the page: in, again (no change), out, and out again (409).
            status, moved = ada.call("POST", f"/rooms/{room}/appliance", {"action": "join"})
            assert status == 200 and moved["status"] == "joined", moved
            described(moved, "ApplianceMove")
            assert moved["member"] == {"id": "appliance", "name": "Den Hark", "kind": "appliance", "state": "joined",
                                       "speaking": moved["member"]["speaking"]}, moved
            status, again = ada.call("POST", f"/rooms/{room}/appliance", {"action": "join"})
            assert status == 200 and again["status"] == "already", again
            # By voice (typed here: the same turn as a spoken one): hang up, then drop in on the den ("den" is the
            # @room entity's word for an office, so the words said find the room, not the entity's value).
            assert reply_to("hang up") == "Leaving Den."
            assert appliance_state() == "left"
            assert reply_to("hang up") == "You are not in a room."
            assert reply_to("drop in on the den") == "Joining Den."
            assert appliance_state() == "joined"
            assert reply_to("drop in on the attic") == "There is no room called attic."
            assert appliance_state() == "joined", "a failed drop-in must not leave the room it is in"
            status, moved = ada.call("POST", f"/rooms/{room}/appliance", {"action": "leave"})
            assert status == 200 and moved["status"] == "left" and moved["member"]["state"] == "left", moved
            status, again = ada.call("POST", f"/rooms/{room}/appliance", {"action": "leave"})
            assert status == 409, again
            await asyncio.sleep(0.5)
            await events.close()
            return events

        events = run(scenario())
        joins = [e["kind"] for _, e in events.events if e["kind"].startswith("member:") and e["member"]["id"] == "appliance"]
        assert joins == ["member:joined", "member:left", "member:joined", "member:left"], joins
        kinds = {e["member"]["kind"] for _, e in events.events if e["kind"].startswith("member:") and e["member"]["id"] == "appliance"}
        assert kinds == {"appliance"}
    finally:
        assert appliance.stop() == 0, f"hark run did not stop cleanly; log:\n{appliance.log_path.read_text()}"
