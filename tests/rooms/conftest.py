"""Fixtures for the rooms' audio tests: one `hark serve --simulate` for the session, and three people in a room.

scripts/rooms-test.sh makes the venv (websockets, opuslib, numpy, pytest) and runs these.
"""

import asyncio
import itertools

import pytest

from roomclient import HARK, Server

_names = itertools.count(1)


@pytest.fixture(scope="session")
def server():
    assert HARK.exists(), f"no {HARK}: build it first (swift build)"
    s = Server()
    yield s
    code = s.process.poll()
    assert code is None, f"hark serve exited during the tests with {code}"
    assert s.stop() == 0, "hark serve did not stop cleanly on SIGTERM"


@pytest.fixture(scope="session")
def device(server):
    return server.device_token()


@pytest.fixture
def people(server):
    """Three new people (Ada, Ben, Cy and a number) on a newly paired phone, and a room Ada made that all three
    joined. A phone of their own per test: a device may carry at most 32 names (`Rooms.maximumPeoplePerDevice`),
    and the session's `device` would run out of them as tests are added."""
    n = next(_names)
    phone = server.device_token()
    a, b, c = (server.person(phone, f"{name} {n}") for name in ("Ada", "Ben", "Cy"))
    room = a.create_room(f"Porch {n}")
    for p in (a, b, c):
        p.join(room)
    return room, a, b, c


@pytest.fixture
def run():
    """Runs a coroutine to the end on a fresh event loop."""
    return lambda coroutine: asyncio.run(coroutine)
