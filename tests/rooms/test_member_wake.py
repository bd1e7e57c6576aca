"""The wake phrase in a room member's stream (issue 14 item 5, docs/rooms.md "The wake phrase in a room"): a member
says "hey hark", a pause, "turn on the light" into the room; the server spots the phrase with the microphone's
spotter and settings, hears the command with the push-to-talk recogniser and thresholds, switches the light on,
logs the turn as coming from the room, and says its reply into the room for everyone. Without the phrase the same
command does nothing, and with `rooms.wake: false` neither does the phrase.

The speech is flite's kal16 voice, made here and never committed: of flite's voices, kal16 and rms are the ones
whose "hey hark" said alone (not run into the command) the shipped spotter hears (kal, slt and awb: missed, also
through `hark run --input --wake`, the microphone's path).
"""

import asyncio
import json
import os
import tempfile
import time

import numpy as np
import pytest

from roomclient import BLOCK, RATE, Member, Server, intact_fraction, speech

from test_announce import loud_blocks, loud_seconds

VOICE = "kal16"
REPLY_SECONDS = 20  # the longest the test waits for the turn after the speech (about 3 s measured)
QUIET_SECONDS = 6  # how long it waits for nothing to happen
AFTER_REPLY_SECONDS = 3  # the reply is about a second of speech, queued behind the earcon


def floor(seconds, seed):
    """A faint noise floor (±20 LSB) rather than digital silence, as a phone's microphone gives."""
    return np.random.default_rng(seed).normal(0, 20, int(seconds * RATE)).astype(np.int16)


def utterance(*parts):
    """Text parts spoken by flite and float seconds of floor between them, as 20 ms blocks."""
    pieces = []
    for i, part in enumerate(parts):
        pieces.append(floor(part, seed=i) if isinstance(part, (int, float)) else speech(part, seed=i, voice=VOICE))
    pcm = np.concatenate(pieces)
    pcm = np.concatenate([pcm, np.zeros((-len(pcm)) % BLOCK, dtype=np.int16)])
    return [pcm[i:i + BLOCK] for i in range(0, len(pcm), BLOCK)]


def quiet(seconds):
    return utterance(seconds)


def light(person):
    status, body = person.call("GET", "/api/devices")
    assert status == 200, body
    return next(d["state"] for d in body["devices"] if d["name"] == "light")


def switch_light_off(person):
    status, body = person.call("POST", "/api/devices/light", {"command": "off"})
    assert status == 200 and body["state"] == "off", body


def events_since(person, since):
    status, body = person.call("GET", f"/api/events?since={since}&limit=1000")
    assert status == 200, body
    return body["events"]


def last_event_id(person):
    status, body = person.call("GET", "/api/events?limit=1")
    assert status == 200, body
    return body["events"][-1]["id"] if body["events"] else 0


def room_reply(person, since):
    """The reply of a turn from a room logged after event `since`, or None."""
    events = events_since(person, since)
    turns = {e["turn"] for e in events if e["kind"] == "transcript" and e.get("source") == "room"}
    return next((e for e in events if e["kind"] == "reply" and e.get("turn") in turns), None)


def say_in_room(room, speaker, listeners, blocks, since, expect_reply=True):
    """`speaker` streams `blocks`, then everyone streams the floor until the room's reply has been logged (at
    most `REPLY_SECONDS`; without `expect_reply`, for `QUIET_SECONDS`) and `AFTER_REPLY_SECONDS` more for it to
    be heard. Returns each one's Member."""

    async def scenario():
        members = [await Member(p, room).open() for p in (speaker, *listeners)]
        await asyncio.sleep(0.3)
        stop = asyncio.Event()

        async def stream(member, first):
            sequence = await member.send_blocks(first)
            while not stop.is_set():
                sequence = await member.send_blocks(quiet(0.5), start_sequence=sequence)

        tasks = [asyncio.create_task(stream(m, blocks if i == 0 else [])) for i, m in enumerate(members)]
        # The speaker's blocks take their time to send; then the reply is waited for.
        await asyncio.sleep(len(blocks) * BLOCK / RATE)
        deadline = time.monotonic() + (REPLY_SECONDS if expect_reply else QUIET_SECONDS)
        while time.monotonic() < deadline:
            if expect_reply and await asyncio.to_thread(room_reply, speaker, since):
                break
            await asyncio.sleep(0.5)
        await asyncio.sleep(AFTER_REPLY_SECONDS)
        stop.set()
        await asyncio.gather(*tasks)
        await asyncio.sleep(0.3)
        for m in members:
            await m.close()
        return members

    return asyncio.run(scenario())


WAKE_AND_COMMAND = ("hey hark", 0.6, "turn on the light")


@pytest.fixture(scope="module")
def device(server):
    """A device of this module's own: a device may name at most 32 people, and the other modules name many."""
    return server.device_token()


def test_the_wake_phrase_in_a_members_stream_runs_the_command_and_the_room_hears_the_reply(people, server):
    room, ada, ben, cy = people
    switch_light_off(ada)
    since = last_event_id(ada)
    blocks = utterance(0.6, *WAKE_AND_COMMAND, 0.3)
    cpu_before = server.thread_cpu_seconds("hark-room-wake") or 0.0
    started = time.monotonic()
    members = say_in_room(room, ada, (ben, cy), blocks, since)
    cpu = (server.thread_cpu_seconds("hark-room-wake") or 0.0) - cpu_before
    # Not asserted (the machine is shared): the worker's CPU over the time Ada's stream was open.
    print(f"\nhark-room-wake: {cpu:.2f} s CPU over {time.monotonic() - started:.1f} s of Ada's stream "
          f"({len(blocks) * BLOCK / RATE:.1f} s of it speech and pauses)")

    assert light(ada) == "on"
    events = events_since(ada, since)
    wakes = [e for e in events if e["kind"] == "wake" and e.get("source") == "room"]
    assert [(e["room"], e["member"]) for e in wakes] == [(room, ada.id)], wakes
    transcripts = [e for e in events if e["kind"] == "transcript" and e.get("source") == "room"]
    assert len(transcripts) == 1 and transcripts[0]["transcript"] == "turn on the light", transcripts
    assert transcripts[0]["accepted"] is True, transcripts
    replies = [e for e in events if e["kind"] == "reply" and e.get("turn") == transcripts[0]["turn"]]
    assert [e["text"] for e in replies] == ["Light is on"], replies
    # Everyone in the room heard the reply, Ada included (an announcement is nobody's own voice). Ben and Cy sent
    # only the floor, so Ada hears nothing but the earcon and the reply: their last stretch of sound is the reply.
    # (Not compared with a fresh eSpeak NG rendering: two syntheses of one text differ, and in this server they
    # correlated 0.98, 0.70 or 0.47 depending on what it had synthesised before.)
    reply = last_sound(members[0].heard())
    assert len(reply) >= 0.5 * RATE, f"Ada heard {len(reply) / RATE:.2f} s of reply"
    for member in members[1:]:
        intact, _, _ = intact_fraction(reply, member.heard())
        assert intact >= 0.9, f"{member.person.name} did not hear the reply Ada heard ({intact:.0%} of it intact)"
    # And more than Ada's own speech: the rest is the earcon and the reply.
    ada_loud = loud_seconds(np.concatenate(blocks))
    for member in members[1:]:
        heard = loud_seconds(member.heard())
        assert heard >= ada_loud + 0.6, f"{member.person.name} heard {heard:.2f} s loud, Ada said {ada_loud:.2f} s"


def last_sound(pcm, gap_blocks=15):
    """`pcm`'s last stretch of sound: its loud 20 ms blocks after the last quiet gap of `gap_blocks` or more."""
    loud = loud_blocks(pcm)
    if not len(loud):
        return pcm[:0]
    start = loud[0]
    for previous, block in zip(loud, loud[1:]):
        if block - previous > gap_blocks:
            start = block
    return pcm[start * BLOCK:(loud[-1] + 1) * BLOCK]


def test_the_command_without_the_wake_phrase_does_nothing(people):
    room, ada, ben, cy = people
    switch_light_off(ada)
    since = last_event_id(ada)
    blocks = utterance(0.6, "turn on the light", 0.3)
    members = say_in_room(room, ada, (ben,), blocks, since, expect_reply=False)
    assert light(ada) == "off"
    events = events_since(ada, since)
    assert not [e for e in events if e.get("source") == "room"], events
    # Ben heard Ada, and nothing else: no earcon, no reply was said into the room.
    assert loud_seconds(members[1].heard()) <= loud_seconds(np.concatenate(blocks)) + 0.1


@pytest.fixture(scope="module")
def quiet_server():
    """A second server with `rooms.wake: false`."""
    with tempfile.NamedTemporaryFile("w", suffix=".json", delete=False) as f:
        json.dump({"rooms": {"wake": False}}, f)
        config = f.name
    s = Server(extra=["--config", config])
    yield s
    assert s.stop() == 0
    os.unlink(config)


def test_with_rooms_wake_off_the_wake_phrase_is_not_listened_for(quiet_server):
    device = quiet_server.device_token()
    ada, ben = (quiet_server.person(device, name) for name in ("Ada", "Ben"))
    room = ada.create_room("Porch")
    for p in (ada, ben):
        p.join(room)
    switch_light_off(ada)
    since = last_event_id(ada)
    say_in_room(room, ada, (ben,), utterance(0.6, *WAKE_AND_COMMAND, 0.3), since, expect_reply=False)
    assert light(ada) == "off"
    assert not [e for e in events_since(ada, since) if e.get("source") == "room"]
    assert "hark-room-wake" not in quiet_server.thread_names(), "the spotting worker runs although rooms.wake is false"


# Chit-chat without the phrase (the wake-phrase spotter's own test sentences, docs/wake-phrase.md's sound-alike
# "we parked the car in the dark" among them).
CHAT = ["the weather was lovely this afternoon", "did you remember to buy some milk", "my sister is coming over on sunday",
        "we parked the car in the dark", "this book is far too long", "could you pass me the salt please"]


def test_three_members_talking_cost_two_streams_of_spotting_and_wake_nothing(people, server):
    """The spotting worker keeps up with talking members, at most two of them at once (the cap), and chit-chat
    does not wake it. The CPU figure is printed for docs/rooms.md; the bound asserted is loose (a shared machine)."""
    room, ada, ben, cy = people
    since = last_event_id(ada)
    talks = [utterance(*[x for c in CHAT[i:] + CHAT[:i] for x in (c, 0.3)]) for i in (0, 2, 4)]
    seconds = max(len(t) for t in talks) * BLOCK / RATE

    async def scenario():
        members = [await Member(p, room).open() for p in (ada, ben, cy)]
        await asyncio.sleep(0.3)
        await asyncio.gather(*(m.send_blocks(t + quiet(1)) for m, t in zip(members, talks)))
        for m in members:
            await m.close()

    before = server.thread_cpu_seconds("hark-room-wake") or 0.0
    asyncio.run(scenario())
    cpu = (server.thread_cpu_seconds("hark-room-wake") or 0.0) - before
    print(f"\nhark-room-wake: {cpu:.2f} s CPU for three members talking {seconds:.1f} s "
          f"({cpu / seconds / 2:.3f} CPU s per second of each of the two watched streams)")
    # Two watched streams at about 0.04 each measured; three unbounded would be half as much again.
    assert cpu / seconds < 0.3, f"the spotting worker used {cpu:.2f} s of CPU for {seconds:.1f} s of talk"
    assert not [e for e in events_since(ada, since) if e.get("source") == "room"]
