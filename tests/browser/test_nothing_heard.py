"""A press of the microphone that holds no voice: Chromium's fake microphone plays a chime (a pitch that holds, what
the appliance's endpointer dismisses), the page shows "(nothing heard: noise without a voice)" and the apology, and no
command runs (the light stays as it was). Runs against the real server only: the mock server decodes nothing.
"""

import math
import os
import random
import struct
import wave

import pytest
from playwright.sync_api import expect

from conftest import pages, setting
from test_web import pair

RATE = 16000


def chime_wav(path):
    """Half a second of a quiet room, a chime (880 Hz and its octave, decaying over 0.4 s) and a second of room."""
    rng = random.Random(5)
    samples = [rng.uniform(-100, 100) for _ in range(int(0.5 * RATE))]
    for i in range(int(0.6 * RATE)):
        t = i / RATE
        tone = (math.sin(2 * math.pi * 880 * t) + 0.5 * math.sin(2 * math.pi * 1760 * t)) * 6000 * math.exp(-t / 0.4)
        samples.append(tone + rng.uniform(-100, 100))
    samples += [rng.uniform(-100, 100) for _ in range(RATE)]
    with wave.open(str(path), "wb") as out:
        out.setnchannels(1)
        out.setsampwidth(2)
        out.setframerate(RATE)
        out.writeframes(b"".join(struct.pack("<h", int(s)) for s in samples))
    return len(samples) / RATE


@pytest.fixture
def chime_page(base_url, artifacts, request, tmp_path):
    if os.environ.get("HARK_MOCK"):
        pytest.skip("the mock server decodes nothing")
    from playwright.sync_api import sync_playwright
    seconds = chime_wav(tmp_path / "chime.wav")
    with sync_playwright() as playwright:
        browser = playwright.chromium.launch(
            executable_path=setting("HARK_CHROMIUM", "/usr/bin/chromium"),
            args=["--no-sandbox", "--use-fake-ui-for-media-stream", "--use-fake-device-for-media-stream",
                  f"--use-file-for-fake-audio-capture={tmp_path / 'chime.wav'}%noloop", "--autoplay-policy=no-user-gesture-required"],
        )
        try:
            opener = pages(browser, base_url, artifacts, request)
            yield next(opener), seconds
            next(opener, None)
        finally:
            browser.close()


def test_a_press_that_held_only_a_chime_is_nothing_heard(chime_page, pairing_code):
    open_page, seconds = chime_page
    page, watch = open_page("chime", viewport={"width": 1100, "height": 800})
    pair(page, pairing_code())
    light = page.get_by_role("switch", name="Light")
    before = light.get_attribute("aria-checked")

    mic = page.locator("#mic")
    box = mic.bounding_box()
    page.mouse.move(box["x"] + box["width"] / 2, box["y"] + box["height"] / 2)
    page.mouse.down()
    expect(mic).to_have_attribute("aria-pressed", "true")
    page.wait_for_timeout(int(seconds * 1000) + 300)
    page.mouse.up()

    expect(page.locator("li.message.you", has_text="(nothing heard: noise without a voice)")).to_be_visible(timeout=30000)
    expect(page.locator("li.message.hark", has_text="Sorry, I didn't catch that.")).to_be_visible(timeout=30000)
    expect(mic).to_have_attribute("aria-pressed", "false")
    expect(light).to_have_attribute("aria-checked", before)
    watch.assert_clean()
