"""Announcements (`POST /api/announce`, issue 14 item 5): the text, spoken by eSpeak NG on the server, is mixed
into every room that has its sound open, for every member, the one who asked included; bad requests are
refused with the field named; with nobody to hear it the server says so instead of pretending.
"""

import asyncio

import numpy as np

from roomclient import BLOCK, RATE, Member, aligned_correlation, silence

ANNOUNCEMENT = "dinner is ready, come to the kitchen"


def loud_seconds(pcm, threshold=300):
    """How much of `pcm` is sound rather than silence: the 20 ms blocks whose RMS passes `threshold`."""
    n = len(pcm) // BLOCK
    if n == 0:
        return 0.0
    blocks = pcm[: n * BLOCK].astype(np.float64).reshape(n, BLOCK)
    return float((np.sqrt((blocks ** 2).mean(axis=1)) > threshold).sum()) * BLOCK / RATE


def loud_span(pcm, threshold=300):
    """`pcm` from its first loud 20 ms block to its last: the announcement without the silence around it."""
    n = len(pcm) // BLOCK
    blocks = pcm[: n * BLOCK].astype(np.float64).reshape(n, BLOCK)
    loud = np.flatnonzero(np.sqrt((blocks ** 2).mean(axis=1)) > threshold)
    return pcm[loud[0] * BLOCK:(loud[-1] + 1) * BLOCK] if len(loud) else pcm[:0]


def test_an_announcement_reaches_every_member_of_every_open_room(people, run):
    room, ada, ben, cy = people

    async def scenario():
        members = [await Member(p, room).open() for p in (ada, ben, cy)]
        await asyncio.sleep(0.3)
        sending = [asyncio.create_task(m.send_blocks(silence(250))) for m in members]  # 5 s of each saying nothing
        await asyncio.sleep(0.5)
        answer = await asyncio.to_thread(ada.call, "POST", "/api/announce", {"text": ANNOUNCEMENT})
        await asyncio.gather(*sending)
        await asyncio.sleep(0.3)
        for m in members:
            await m.close()
        return answer, members

    (status, body), members = run(scenario())
    assert status == 202, body
    assert body["announced"] is True and room in body["rooms"], body
    heard = [m.heard() for m in members]
    for member, pcm in zip(members, heard):
        # eSpeak takes about two seconds over the sentence; everyone else is silent, so all of it is the announcement.
        assert loud_seconds(pcm) >= 1.0, f"{member.person.name} heard {loud_seconds(pcm):.2f} s of it"
    # The same announcement for all three, the one who asked included (it is nobody's own voice).
    for other in heard[1:]:
        correlation, _ = aligned_correlation(loud_span(heard[0]), other)
        assert correlation >= 0.9, f"the members heard different things (correlation {correlation:.3f})"


def test_bad_announcements_are_refused_with_the_field_named(server, device):
    for body, needle in (({}, '"text"'), ({"text": "   "}, '"text"'), ({"text": "x" * 501}, "500")):
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
