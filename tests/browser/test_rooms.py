"""Drop-in rooms in the page (web/rooms.js): two people on two paired browsers pick names, one creates a room,
the other finds it in the list and joins, each sees the other's circle appear, they hear each other through the
appliance's mix (WebCodecs Opus both ways, a fake microphone each), "Bring Hark in" says when the server has no
appliance to bring (`hark serve`), muting silences one side for the other,
asking the assistant from the room puts its reply in the room, and leaving takes the circle away. Runs against the real server only (the mock server has no rooms).
"""

import os

import pytest
from playwright.sync_api import expect, sync_playwright

from conftest import pages, setting
from test_web import pair


@pytest.fixture(scope="module")
def looping_browser(speech_wav):
    """Chromium whose fake microphone plays the speech clip over and over: both members keep talking."""
    with sync_playwright() as playwright:
        browser = playwright.chromium.launch(
            executable_path=setting("HARK_CHROMIUM", "/usr/bin/chromium"),
            args=[
                "--no-sandbox",
                "--use-fake-ui-for-media-stream",
                "--use-fake-device-for-media-stream",
                f"--use-file-for-fake-audio-capture={speech_wav}",
                "--autoplay-policy=no-user-gesture-required",
            ],
        )
        yield browser
        browser.close()


@pytest.fixture
def member_page(looping_browser, base_url, artifacts, request):
    """A phone-sized page of the looping browser (see `conftest.pages`)."""
    yield from pages(looping_browser, base_url, artifacts, request, viewport={"width": 390, "height": 844}, is_mobile=True, has_touch=True)


def open_rooms(page, name):
    page.get_by_role("button", name="Rooms").click()
    page.get_by_label("Your name in rooms").fill(name)
    page.get_by_role("button", name="Continue").click()
    expect(page.locator("#room-who")).to_have_text(name)


def heard(page):
    return page.evaluate("() => window.harkRoomAudio ? {...window.harkRoomAudio.stats} : null")


def test_two_people_meet_in_a_room(member_page, pairing_code, artifacts, base_url):
    if os.environ.get("HARK_MOCK"):
        pytest.skip("the mock server has no rooms")
    ada, ada_watch = member_page("ada")
    pair(ada, pairing_code())
    open_rooms(ada, "Ada Lovelace")
    ada.get_by_role("button", name="New room").click()
    ada.get_by_label("Name", exact=True).fill("Kitchen chat")
    ada.get_by_role("button", name="Create and join").click()
    expect(ada.locator("#room-title")).to_have_text("Kitchen chat")
    members = ada.get_by_role("list", name="In the room")
    expect(members.locator("li.member.me .name")).to_have_text("Ada Lovelace")
    expect(members.locator("li.member.me .circle")).to_have_text("AL")
    # `hark serve` has no microphone or speaker of its own to bring in: the page says so and the button stays.
    bring = ada.locator("#room-appliance")
    expect(bring).to_have_text("Bring Hark in")
    bring.click()
    expect(ada.locator("#error")).to_contain_text("no appliance to bring in")
    expect(bring).to_have_attribute("aria-pressed", "false")
    expect(bring).to_be_enabled()

    bob, bob_watch = member_page("bob")
    pair(bob, pairing_code())
    open_rooms(bob, "Bob")
    bob.get_by_role("button", name="Refresh").click()
    bob.get_by_role("button", name="Kitchen chat").click()
    expect(bob.locator("#room-title")).to_have_text("Kitchen chat")
    expect(bob.locator("li.member")).to_have_count(2)
    # Ada's page learns of Bob from the events socket, without a refresh.
    expect(ada.locator("li.member", has_text="Bob")).to_be_visible()

    # Both sockets live, and each hears the other: decoded sound with a real level.
    for page in (ada, bob):
        expect(page.locator("#room-view")).to_have_attribute("data-audio", "live", timeout=20000)
    for page in (ada, bob):
        # Sending and hearing both under way: more than a second of frames each way, and a real level heard.
        page.wait_for_function("() => { const s = window.harkRoomAudio?.stats; return s && s.sent > 50 && s.decoded > 50 && s.heardPeak > 0.05; }", timeout=30000)
        stats = heard(page)
        assert stats["badFrames"] == 0, stats
    # The one who talks gets the ring: Bob's circle lights on Ada's page while his microphone plays speech.
    bob_id = bob.evaluate("() => JSON.parse(localStorage.getItem('hark.person')).id")
    ada.wait_for_function(f"() => document.querySelector('li.member[data-member=\"{bob_id}\"]')?.dataset.speaking === 'true'", timeout=20000, polling=50)
    ada.screenshot(path=str(artifacts / "rooms-01-two-members.png"))

    # Muted, Ada sends silence: what Bob hears (Ada alone, mix-minus) falls quiet.
    ada.get_by_role("button", name="Mute").click()
    expect(ada.locator("#room-mute")).to_have_attribute("aria-pressed", "true")
    bob.wait_for_timeout(1500)  # the frames already in flight and the jitter buffer drain
    quiet = bob.evaluate("""() => new Promise((done) => {
        const levels = [];
        const timer = setInterval(() => levels.push(window.harkRoomAudio.stats.heardRMS), 50);
        setTimeout(() => { clearInterval(timer); done(Math.max(...levels)); }, 1500);
    })""")
    assert quiet < 0.01, f"Bob still hears Ada after she muted (RMS {quiet})"

    # Ada, still muted, holds "Hold to ask Hark" through the looping clip ("take a picture"): the reply is said
    # into the room, so Bob, who hears nothing of Ada now, hears the assistant.
    ask = ada.locator("#room-ask")
    expect(ask).to_have_text("Hold to ask Hark")
    box = ask.bounding_box()
    ada.mouse.move(box["x"] + box["width"] / 2, box["y"] + box["height"] / 2)
    ada.mouse.down()
    expect(ask).to_have_attribute("aria-pressed", "true")
    ada.wait_for_timeout(4000)
    ada.mouse.up()
    expect(ada.locator("#room-assistant")).to_contain_text("Hark:", timeout=30000)
    bob.wait_for_function("() => window.harkRoomAudio.stats.heardRMS > 0.02", timeout=15000, polling=20)
    # The looping clip may be heard as any command; the tests after this one start from a light that is off.
    switched = ada.evaluate("""async () => (await fetch('/api/devices/light', {method: 'POST',
        headers: {'Content-Type': 'application/json', Authorization: `Bearer ${localStorage.getItem('hark.token')}`},
        body: JSON.stringify({command: 'off'})})).status""")
    assert switched == 200, switched

    # Bob leaves: his circle goes from Ada's page, and he is back at the list.
    bob.get_by_role("button", name="Leave").click()
    expect(bob.get_by_role("button", name="New room")).to_be_visible()
    expect(ada.locator("li.member", has_text="Bob")).to_have_count(0)
    ada_watch.assert_clean()
    bob_watch.assert_clean()
