"""Fixtures for the companion page's browser test: one headless Chromium (Debian's) with a fake microphone.

Configured by environment variables, which scripts/browser-test.sh sets:

- HARK_BASE_URL    the server, e.g. http://127.0.0.1:8080 (required)
- HARK_PAIR_CMD    a shell command whose output holds a fresh six-digit pairing code (required)
- HARK_SPEECH_WAV  a WAV of someone saying "take a picture", played as the microphone (required)
- HARK_ARTIFACTS   where screenshots go (default .build/browser-artifacts)
- HARK_CHROMIUM    the browser (default /usr/bin/chromium)
"""

import os
import re
import subprocess
from pathlib import Path

import pytest
from playwright.sync_api import sync_playwright

REPO = Path(__file__).resolve().parents[2]


def setting(name, default=None):
    value = os.environ.get(name, default)
    if value is None:
        pytest.fail(f"{name} is not set: run the browser test through scripts/browser-test.sh (see docs/web.md)")
    return value


@pytest.fixture(scope="session")
def base_url():
    return setting("HARK_BASE_URL").rstrip("/")


@pytest.fixture(scope="session")
def artifacts():
    directory = Path(setting("HARK_ARTIFACTS", str(REPO / ".build" / "browser-artifacts")))
    directory.mkdir(parents=True, exist_ok=True)
    return directory


@pytest.fixture(scope="session")
def speech_wav():
    path = Path(setting("HARK_SPEECH_WAV"))
    if not path.is_file():
        pytest.fail(f"HARK_SPEECH_WAV: no such file {path}")
    return path


@pytest.fixture
def pairing_code():
    """Runs HARK_PAIR_CMD for a fresh code; the last six-digit number it prints is the code."""
    def fresh():
        command = setting("HARK_PAIR_CMD")
        done = subprocess.run(command, shell=True, capture_output=True, text=True, timeout=60)
        if done.returncode != 0:
            pytest.fail(f"pairing command failed ({done.returncode}): {command}\n{done.stdout}{done.stderr}")
        codes = re.findall(r"(?<!\d)\d{6}(?!\d)", done.stdout)
        if not codes:
            pytest.fail(f"pairing command printed no six-digit code: {command}\n{done.stdout}{done.stderr}")
        return codes[-1]
    return fresh


@pytest.fixture(scope="session")
def browser(speech_wav):
    executable = setting("HARK_CHROMIUM", "/usr/bin/chromium")
    with sync_playwright() as playwright:
        browser = playwright.chromium.launch(
            executable_path=executable,
            args=[
                "--no-sandbox",  # the test runs as root on CI machines
                "--use-fake-ui-for-media-stream",
                "--use-fake-device-for-media-stream",
                f"--use-file-for-fake-audio-capture={speech_wav}%noloop",
                "--autoplay-policy=no-user-gesture-required",
            ],
        )
        yield browser
        browser.close()


@pytest.hookimpl(hookwrapper=True)
def pytest_runtest_makereport(item, call):
    outcome = yield
    report = outcome.get_result()
    setattr(item, f"report_{report.when}", report)


class PageWatch:
    """What a page did that the test should fail on: script errors, requests to anywhere but the appliance."""

    def __init__(self, page, base_url):
        self.errors = []
        self.foreign = []
        self.console = []
        origin = re.match(r"^(https?)://([^/]+)", base_url)
        allowed = {f"{origin.group(1)}://{origin.group(2)}", f"{'wss' if origin.group(1) == 'https' else 'ws'}://{origin.group(2)}"}
        page.on("pageerror", lambda error: self.errors.append(str(error)))
        page.on("console", lambda message: self.console.append(f"{message.type}: {message.text}"))

        def check(url):
            if url.startswith(("data:", "blob:", "about:")):
                return
            prefix = re.match(r"^([a-z]+://[^/]+)", url)
            if not prefix or prefix.group(1) not in allowed:
                self.foreign.append(url)

        page.on("request", lambda request: check(request.url))
        page.on("websocket", lambda socket: check(socket.url))

    def assert_clean(self):
        assert not self.errors, f"script errors on the page: {self.errors}"
        assert not self.foreign, f"the page reached outside the appliance: {self.foreign}"


def pages(browser, base_url, artifacts, request, **defaults):
    """Yields `open_(name, **context_options)`, which opens the page in a fresh context (fresh localStorage) of
    `browser`; at the end, screenshots every page if the test failed, and closes them."""
    opened = []

    def open_(name, **context_options):
        context = browser.new_context(base_url=base_url, ignore_https_errors=True, **{**defaults, **context_options})
        context.grant_permissions(["microphone"])
        page = context.new_page()
        page.set_default_timeout(15000)
        watch = PageWatch(page, base_url)
        opened.append((name, context, page, watch))
        page.goto(base_url + "/")
        return page, watch

    yield open_
    failed = getattr(request.node, "report_call", None)
    for name, context, page, watch in opened:
        if failed is not None and failed.failed:
            try:
                page.screenshot(path=str(artifacts / f"FAILED-{request.node.name}-{name}.png"), full_page=True)
            except Exception as error:  # the page may be gone; the report matters more
                print(f"no failure screenshot: {error}")
            print(name, "\n".join(watch.console[-30:]))
        context.close()


@pytest.fixture
def open_page(browser, base_url, artifacts, request):
    """Opens the page in a fresh context (fresh localStorage); screenshots it if the test fails."""
    yield from pages(browser, base_url, artifacts, request)
