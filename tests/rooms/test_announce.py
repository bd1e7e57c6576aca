"""Announcements (`POST /api/announce`, issue 14 item 5): the text, spoken by eSpeak NG on the server, is mixed
into every room that has its sound open, for every member, the one who asked included; bad requests are
refused with the field named; with nobody to hear it the server says so instead of pretending.
"""

import asyncio
import base64
import json

import numpy as np
from websockets.asyncio.client import connect

from roomclient import BLOCK, RATE, Member, aligned_correlation, intact_fraction, silence, speech, upgrade_status

ANNOUNCEMENT = "dinner is ready, come to the kitchen"


def loud_blocks(pcm, threshold=300):
    """The indices of `pcm`'s whole 20 ms blocks whose RMS passes `threshold`: sound rather than silence."""
    n = len(pcm) // BLOCK
    blocks = pcm[: n * BLOCK].astype(np.float64).reshape(n, BLOCK)
    return np.flatnonzero(np.sqrt((blocks ** 2).mean(axis=1)) > threshold)


def loud_seconds(pcm):
    """How much of `pcm` is sound rather than silence."""
    return len(loud_blocks(pcm)) * BLOCK / RATE


def loud_span(pcm):
    """`pcm` from its first loud 20 ms block to its last: the announcement without the silence around it."""
    loud = loud_blocks(pcm)
    return pcm[loud[0] * BLOCK:(loud[-1] + 1) * BLOCK] if len(loud) else pcm[:0]


def announce_while_listening(room, asker, listeners, body, quiet_blocks):
    """`listeners` keep their room sockets open saying nothing for `quiet_blocks` × 20 ms while `asker` posts `body`
    to `/api/announce`; returns (status, answer) and the listeners' `Member`s."""
    async def scenario():
        members = [await Member(p, room).open() for p in listeners]
        await asyncio.sleep(0.3)
        sending = [asyncio.create_task(m.send_blocks(silence(quiet_blocks))) for m in members]
        await asyncio.sleep(0.5)
        answer = await asyncio.to_thread(asker.call, "POST", "/api/announce", body)
        await asyncio.gather(*sending)
        await asyncio.sleep(0.3)
        for m in members:
            await m.close()
        return answer, members

    return asyncio.run(scenario())


def push_to_talk_in_room(server, room, speaker, listeners, pcm, quiet_blocks):
    """`speaker` says `pcm` by push-to-talk in `room` (`/api/listen?room=ID`, as the page does), as the second turn of
    a conversation, while `listeners` keep their room sockets open saying nothing for `quiet_blocks` × 20 ms.
    Returns the socket's messages (the reply's WAV last) and the listeners' `Member`s."""
    # A conversation begins with an empty message (the dialog's welcome); its context carries the spoken turn.
    status, welcome = speaker.call("POST", "/v1/workspaces/default/message?version=2021-06-14", {})
    assert status == 200, welcome

    async def scenario():
        members = [await Member(p, room).open() for p in listeners]
        await asyncio.sleep(0.3)
        sending = [asyncio.create_task(m.send_blocks(silence(quiet_blocks))) for m in members]
        url = f"ws://127.0.0.1:{server.port}/api/listen?room={room}&access_token={speaker.token}"
        messages = []
        async with connect(url, max_size=1 << 22, open_timeout=30) as socket:
            padded = np.concatenate([np.zeros(RATE // 4, dtype=np.int16), pcm, np.zeros(RATE // 4, dtype=np.int16)])
            for start in range(0, len(padded), 640):
                await socket.send(padded[start:start + 640].tobytes())
            await socket.send(json.dumps({"type": "end", "context": welcome["context"]}))
            while True:
                message = await asyncio.wait_for(socket.recv(), timeout=30)
                messages.append(message)
                if isinstance(message, bytes):
                    break  # the reply's WAV comes last
        await asyncio.gather(*sending)
        await asyncio.sleep(0.3)
        for m in members:
            await m.close()
        return messages, members

    return asyncio.run(scenario())


def test_an_announcement_reaches_every_member_of_every_open_room(people):
    room, ada, ben, cy = people

    # 5 s of each saying nothing around the announcement.
    (status, body), members = announce_while_listening(room, ada, (ada, ben, cy), {"text": ANNOUNCEMENT}, quiet_blocks=250)
    assert status == 202, body
    assert body["announced"] is True and room in body["rooms"], body
    heard = [m.heard() for m in members]
    for member, pcm in zip(members, heard):
        # eSpeak takes about two seconds over the sentence; everyone else is silent, so all of it is the announcement.
        assert loud_seconds(pcm) >= 1.0, f"{member.person.name} heard {loud_seconds(pcm):.2f} s of it"
    # The same announcement for all three, the one who asked included (it is nobody's own voice).
    for other in heard[1:]:
        intact, _, _ = intact_fraction(loud_span(heard[0]), other)
        assert intact >= 0.9, f"the members heard different things ({intact:.0%} of the first one's found intact)"


def test_a_recorded_announcement_is_played_as_recorded(people):
    """`"audio"` (what an appliance linked to this server sends when its owner said the announcement): every member
    hears the recording itself, after eSpeak NG's "Announcement.", not the text read out."""
    room, ada, ben, cy = people
    voice = speech("the plumber will be late today", voice="slt")
    body = {"text": "the plumber will be late today", "audio": base64.b64encode(voice.astype("<i2").tobytes()).decode()}
    (status, body), members = announce_while_listening(room, ada, (ben, cy), body, quiet_blocks=300)  # 6 s
    assert status == 202, body
    assert room in body["rooms"], body
    for member in members:
        heard = member.heard()
        intact, lag, _ = intact_fraction(voice, heard)
        # Through the mix and Opus at 16 kHz; eSpeak NG's "Announcement." (about a second) comes first.
        assert intact >= 0.9, f"{member.person.name}: {intact:.0%} of the recording heard intact"
        assert loud_seconds(heard[:lag]) >= 0.4, f"{member.person.name}: {loud_seconds(heard[:lag]):.2f} s before the recording"


def test_a_spoken_announcement_in_a_room_is_played_in_the_speakers_voice(people, server):
    """"announce that the pizza is here" said by push-to-talk in a room (flite slt): the grammar knows no pizza and
    hears "announce that the car is here", so the room hears the words as they were said, and the reply does not
    repeat the misheard ones."""
    room, ada, ben, cy = people
    said = speech("announce that the pizza is here", voice="slt")
    messages, members = push_to_talk_in_room(server, room, cy, (ada, ben), said, quiet_blocks=350)  # 7 s
    replies = [json.loads(m) for m in messages if isinstance(m, str)]
    reply = next(m for m in replies if m.get("type") == "reply")
    assert reply["text"] == "Announcing your message.", replies
    # The recording of the words after "announce that" reached the others: the end of the utterance is in what
    # they heard (0.99 when this was written), the whole of it is not (0.50: "announce that" was cut off).
    tail = said[len(said) // 2:]
    for member in members:
        intact, _, _ = intact_fraction(tail, member.heard())
        assert intact >= 0.9, f"{member.person.name}: {intact:.0%} of the end of what was said heard intact"
        whole, _ = aligned_correlation(said, member.heard())
        assert whole < 0.8, f"{member.person.name}: the whole utterance was played ({whole:.3f}), \"announce that\" included"
    status, log = server.call("GET", "/api/events?limit=50", token=ada.token)
    assert status == 200, log
    announced = [e for e in log["events"] if e.get("announce") and e.get("source") == "dialog"]
    assert announced and announced[-1].get("voice") is True, announced


def test_announce_said_to_the_assistant_reaches_the_rooms(people, run, server):
    """"announce …" to the assistant (here typed, through Watson's /message) is the same announcement: the dialog's
    #Announce node runs the `room` action's `announce` command with the words after "announce"."""
    room, ada, ben, cy = people
    message = "/v1/workspaces/default/message?version=2021-06-14"

    async def scenario():
        members = [await Member(p, room).open() for p in (ben, cy)]
        await asyncio.sleep(0.3)
        sending = [asyncio.create_task(m.send_blocks(silence(250))) for m in members]
        await asyncio.sleep(0.5)
        # A conversation begins with an empty message (the dialog's welcome); its context carries the turns.
        _, welcome = await asyncio.to_thread(ada.call, "POST", message, {})
        answer = await asyncio.to_thread(ada.call, "POST", message, {"input": {"text": "please announce that " + ANNOUNCEMENT},
                                                                     "context": welcome["context"]})
        nothing = await asyncio.to_thread(ada.call, "POST", message, {"input": {"text": "make an announcement"},
                                                                      "context": answer[1]["context"]})
        await asyncio.gather(*sending)
        await asyncio.sleep(0.3)
        for m in members:
            await m.close()
        return answer, nothing, members

    (status, body), (_, nothing), members = run(scenario())
    assert status == 200, body
    assert body["intents"][0]["intent"] == "Announce", body
    assert body["output"]["text"] == [f"Announcing: {ANNOUNCEMENT}."], body
    assert nothing["output"]["text"][0].startswith("What should I announce?"), nothing
    for member in members:
        assert loud_seconds(member.heard()) >= 1.0, f"{member.person.name} heard {loud_seconds(member.heard()):.2f} s of it"
    # What was announced is the words after "announce that", logged as the announcement.
    status, log = server.call("GET", "/api/events?limit=50", token=ada.token)
    assert status == 200, log
    announced = [e for e in log["events"] if e.get("announce") and e.get("source") == "dialog"]
    assert announced and announced[-1]["text"] == ANNOUNCEMENT, announced


def test_bad_announcements_are_refused_with_the_field_named(server, device):
    short = base64.b64encode(np.zeros(RATE // 10, dtype="<i2").tobytes()).decode()
    for body, needle in (({}, '"text"'), ({"text": "   "}, '"text"'), ({"text": "x" * 501}, "500"),
                         ({"text": "hello", "audio": "not base64!"}, '"audio"'), ({"text": "hello", "audio": short}, '"audio"'),
                         ({"text": "hello", "audio": 42}, '"audio"')):
        status, answer = server.call("POST", "/api/announce", body, device)
        assert status == 400, (body, status, answer)
        assert answer["error"]["code"] == "bad_request" and needle in answer["error"]["message"], answer
    status, _ = server.call("POST", "/api/announce", {"text": "hello"})
    assert status == 401


def test_with_nobody_listening_the_server_says_so(server, device):
    # No room of this test has its sound open now. Without a speaker (a machine with no sound card) nobody
    # would hear it: 409. With one, the appliance says it and no room is listed.
    status, answer = server.call("POST", "/api/announce", {"text": "is anybody there"}, device)
    if status == 202:
        assert answer["appliance"] is True and answer["rooms"] == [], answer
    else:
        assert status == 409 and answer["error"]["code"] == "nobody_listening", (status, answer)


def test_the_assistants_reply_to_a_member_is_said_into_the_room(people, server, device):
    """A member asks by push-to-talk (`/api/listen?room=ID`, as the page does in a room): the appliance acts and
    its reply comes back on that socket as text and WAV, and is mixed into the room for the others too."""
    room, ada, ben, cy = people
    command = speech("turn on the light")
    messages, members = push_to_talk_in_room(server, room, cy, (ada, ben), command, quiet_blocks=300)  # 6 s
    replies = [json.loads(m) for m in messages if isinstance(m, str)]
    reply = next(m for m in replies if m.get("type") == "reply")
    assert reply["text"] == "Light is on", replies
    for member in members:
        assert loud_seconds(member.heard()) >= 0.5, f"{member.person.name} heard {loud_seconds(member.heard()):.2f} s of the reply"
    # Only a joined member may answer into a room.
    outsider = server.person(device, "Eve")
    status, body = upgrade_status(f"ws://127.0.0.1:{server.port}/api/listen?room={room}&access_token={outsider.token}")
    assert status == 403 and "join" in body["error"]["message"], (status, body)
    status, _ = upgrade_status(f"ws://127.0.0.1:{server.port}/api/listen?room={room}&access_token={device}")
    assert status == 403

