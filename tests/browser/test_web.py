"""The companion page in a real browser, against a server that follows docs/server-api.md.

What a user does: pair with a code, type "turn on the light" and see the reply and the light come on, then
hold the microphone while saying "take a picture" (a WAV played as Chromium's fake microphone) and see the
transcript, the reply (with its spoken WAV) and the picture. Plus the phone layout, the light switch, and the
way back to the login screen; touch and the space bar hold the microphone too; the event stream resumes
after a dropped connection. Nothing here relies on the mock server's internals: the replies checked are
the home workspace's (Intents/home.json), which the real appliance serves.
"""

import json
import re
import wave

from playwright.sync_api import expect


def pair(page, code):
    expect(page.get_by_label("Pairing code")).to_be_visible()
    page.get_by_label("Pairing code").fill(code)
    page.get_by_role("button", name="Pair", exact=True).click()
    expect(page.get_by_role("log", name="Conversation")).to_be_visible()
    expect(page.locator("#connection")).to_have_attribute("data-state", "live")
    expect(page.get_by_role("switch", name="Light")).to_be_enabled()  # the devices have been read


def wav_seconds(path):
    with wave.open(str(path), "rb") as clip:
        return clip.getnframes() / clip.getframerate()


def test_pair_type_and_talk(open_page, pairing_code, speech_wav, artifacts):
    page, watch = open_page("desktop", viewport={"width": 1100, "height": 800})
    pair(page, pairing_code())
    light = page.get_by_role("switch", name="Light")
    expect(light).to_have_attribute("aria-checked", "false")  # a fresh appliance's light is off
    page.screenshot(path=str(artifacts / "01-paired.png"))

    # A typed turn: Enter sends; the reply bubble and the light follow.
    page.get_by_role("textbox", name="Message").fill("turn on the light")
    page.get_by_role("textbox", name="Message").press("Enter")
    expect(page.locator("li.message.you", has_text="turn on the light")).to_be_visible()
    reply = page.locator("li.message.hark", has_text="Light is on")
    expect(reply).to_be_visible()
    expect(reply.locator(".who")).to_have_text("Hark")
    expect(reply.locator("time")).to_have_attribute("datetime", re.compile(r"^\d{4}-\d\d-\d\dT"))
    expect(light).to_have_attribute("aria-checked", "true")
    expect(light).to_have_attribute("data-state", "on")
    page.screenshot(path=str(artifacts / "02-light-on.png"))

    # A spoken turn: hold the button for the whole clip, then let go.
    mic = page.locator("#mic")
    box = mic.bounding_box()
    page.mouse.move(box["x"] + box["width"] / 2, box["y"] + box["height"] / 2)
    page.mouse.down()
    expect(mic).to_have_attribute("aria-pressed", "true")
    expect(page.locator("#mic-status")).to_have_text("Listening… release to send")
    page.wait_for_timeout(int(wav_seconds(speech_wav) * 1000) + 500)
    page.screenshot(path=str(artifacts / "03-talking.png"))
    page.mouse.up()
    expect(mic).to_have_attribute("aria-pressed", "false")

    transcript = page.locator("li.message.you", has_text="take a picture")
    expect(transcript).to_be_visible(timeout=30000)
    expect(transcript).not_to_have_class("pending")
    spoken_reply = page.locator("li.message.hark", has_text="Picture taken").filter(has=page.get_by_role("button", name="Play the spoken reply"))
    expect(spoken_reply).to_be_visible(timeout=30000)  # the reply's WAV arrived
    page.wait_for_function(
        "() => [...document.querySelectorAll('#messages img[data-picture]')].some((img) => img.complete && img.naturalWidth > 0)",
        timeout=30000,
    )
    picture = page.locator("#messages img[data-picture]").last
    expect(picture).to_have_attribute("alt", re.compile(r"^Picture "))
    page.screenshot(path=str(artifacts / "04-picture.png"), full_page=True)
    watch.assert_clean()


def test_phone_layout_and_light_switch(open_page, pairing_code, artifacts):
    page, watch = open_page("phone", viewport={"width": 390, "height": 844}, device_scale_factor=2, is_mobile=True, has_touch=True)
    pair(page, pairing_code())

    # Touch targets a thumb can hit, and the composer on screen.
    for control in (page.locator("#mic"), page.get_by_role("switch", name="Light"), page.get_by_role("button", name="Log out")):
        box = control.bounding_box()
        assert box and box["width"] >= 44 and box["height"] >= 44, f"{control} is {box}"
    composer = page.locator("footer.composer").bounding_box()
    assert composer["y"] + composer["height"] <= 844 + 1
    assert page.evaluate("document.documentElement.scrollWidth") <= 390, "the page scrolls sideways on a phone"

    # The switch flips the light, whatever it was, and the indicator follows the appliance's answer.
    light = page.get_by_role("switch", name="Light")
    before = light.get_attribute("aria-checked")
    after = "false" if before == "true" else "true"
    light.tap()
    expect(light).to_have_attribute("aria-checked", after)
    # Hold the microphone with a finger (real touch events, not synthetic pointer events).
    mic = page.locator("#mic")
    box = mic.bounding_box()
    finger = [{"x": box["x"] + box["width"] / 2, "y": box["y"] + box["height"] / 2}]
    touch = page.context.new_cdp_session(page)
    voice_replies = page.locator("li.message.hark").filter(has=page.get_by_role("button", name="Play the spoken reply"))
    touch.send("Input.dispatchTouchEvent", {"type": "touchStart", "touchPoints": finger})
    expect(mic).to_have_attribute("aria-pressed", "true")
    page.wait_for_timeout(1500)
    touch.send("Input.dispatchTouchEvent", {"type": "touchEnd", "touchPoints": []})
    expect(mic).to_have_attribute("aria-pressed", "false")
    expect(voice_replies).to_have_count(1, timeout=30000)
    expect(mic).to_have_attribute("data-state", "idle")

    page.get_by_role("textbox", name="Message").fill("is the light on")
    page.get_by_role("textbox", name="Message").press("Enter")
    expect(page.locator("li.message.hark").last).to_contain_text("light")
    page.screenshot(path=str(artifacts / "05-phone.png"))
    light.tap()
    expect(light).to_have_attribute("aria-checked", before)
    watch.assert_clean()


def test_space_bar_logout_and_bad_token(open_page, pairing_code):
    page, watch = open_page("session")
    # This page has no AudioWorklet, so the ScriptProcessor fallback captures.
    page.context.add_init_script("Object.defineProperty(BaseAudioContext.prototype, 'audioWorklet', {get: () => undefined})")
    page.reload()
    pair(page, pairing_code())

    # The space bar holds the microphone too, when the focus is not in the text box.
    mic = page.locator("#mic")
    page.locator("#messages").click()
    page.keyboard.down("Space")
    expect(mic).to_have_attribute("aria-pressed", "true")
    page.wait_for_timeout(1500)
    page.keyboard.up("Space")
    expect(mic).to_have_attribute("aria-pressed", "false")
    expect(page.locator("li.message.hark").filter(has=page.get_by_role("button", name="Play the spoken reply"))).to_have_count(1, timeout=30000)
    # ... and in the text box a space is a space.
    page.get_by_role("textbox", name="Message").press("Space")
    expect(mic).to_have_attribute("aria-pressed", "false")
    expect(page.get_by_role("textbox", name="Message")).to_have_value(" ")

    page.get_by_role("button", name="Log out").click()
    expect(page.get_by_label("Pairing code")).to_be_visible()
    assert page.evaluate("localStorage.getItem('hark.token')") is None

    # A token the appliance refuses (tampered, expired, revoked) sends the user back to pair again.
    page.evaluate("localStorage.setItem('hark.token', 'eyJhbGciOiJIUzI1NiJ9.eyJpc3MiOiJoYXJrIn0.bm90LWEtc2lnbmF0dXJl')")
    page.reload()
    expect(page.get_by_label("Pairing code")).to_be_visible()
    expect(page.locator("#login-notice")).to_contain_text("Signed out")
    watch.assert_clean()


def test_wrong_code_is_shown(open_page, pairing_code, artifacts):
    page, watch = open_page("wrong-code")
    code = pairing_code()
    wrong = f"{(int(code) + 1) % 1000000:06d}"
    page.get_by_label("Pairing code").fill(wrong)
    page.get_by_role("button", name="Pair", exact=True).click()
    alert = page.locator("#login-error")
    expect(alert).to_be_visible()
    expect(alert).not_to_be_empty()
    page.screenshot(path=str(artifacts / "00-login-error.png"))
    expect(page.get_by_label("Pairing code")).to_be_visible()
    watch.assert_clean()


def test_event_stream_reconnects_and_resumes(open_page, pairing_code):
    page, watch = open_page("reconnect")
    connections = []  # (page side, the highest event id passed to the page)

    def relay(socket):
        server = socket.connect_to_server()
        seen = {"url": socket.url, "last": None, "socket": socket}
        connections.append(seen)

        def forward(message):
            event = json.loads(message)
            seen["last"] = max(seen["last"] or 0, event["id"])
            socket.send(message)

        server.on_message(forward)

    page.route_web_socket(re.compile(r"/api/events"), relay)
    page.reload()
    pair(page, pairing_code())
    assert len(connections) == 1 and "since=" not in connections[0]["url"], "the first connection asks for live events only"
    page.get_by_role("textbox", name="Message").fill("hello")
    page.get_by_role("textbox", name="Message").press("Enter")
    expect(page.locator("li.message.hark").last).not_to_have_class(re.compile("pending"))
    for _ in range(50):  # the turn's events travel on their own socket: give them a moment
        if connections[0]["last"] is not None:
            break
        page.wait_for_timeout(100)
    assert connections[0]["last"] is not None, "no event reached the page after a typed turn"
    # The turn's later events are still on their way: close only once none has come for half a second, or the
    # drop may take events the relay passed on but the page never read (it then rightly resumes before them).
    quiet, last = 0, connections[0]["last"]
    for _ in range(100):
        page.wait_for_timeout(100)
        quiet = quiet + 1 if connections[0]["last"] == last else 0
        last = connections[0]["last"]
        if quiet >= 5:
            break

    connections[0]["socket"].close()  # the network drops
    expect(page.locator("#connection")).to_have_attribute("data-state", "reconnecting")
    expect(page.locator("#connection")).to_have_attribute("data-state", "live", timeout=10000)
    assert len(connections) == 2
    assert f"since={connections[0]['last']}" in connections[1]["url"], "the reconnection does not resume after the last event seen"
    watch.assert_clean()
