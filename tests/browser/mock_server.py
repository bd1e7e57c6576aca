#!/usr/bin/env python3
"""A stand-in for `hark serve`: docs/server-api.md implemented with canned behaviour, for the browser test.

The real server (Sources/HarkServer) is what the page is for; this mock exists so the page and its browser
test can be developed and proven before the real server runs, and so a failure can be told apart as the
page's or the server's. It follows the contract where the contract speaks (auth, JSON errors, Content-Length,
the events replay, the listen socket's message order) and is canned where the real server thinks:

- pairing code 123456 (`--code`), user `hark` / password `hark-password` (`--user`, `--password`);
- the message API knows a handful of the home workspace's sentences by keyword (`turn on the light`,
  `is the light on`, `take a picture`, ...) and answers with Intents/home.json's replies;
- the listen socket measures the audio it gets (16 kHz s16le) and, when it holds speech, pretends it heard
  "take a picture"; silence is "not heard". `--save-audio DIR` keeps what it got as a WAV for inspection.

Needs aiohttp (the browser test's venv has it). Run: `mock_server.py --port 0 --print-port`.
"""

import argparse
import array
import asyncio
import base64
import datetime
import hashlib
import hmac
import io
import json
import math
import os
import re
import secrets
import sys
import time
import uuid
import wave
from pathlib import Path

from aiohttp import WSMsgType, web

REPO = Path(__file__).resolve().parents[2]
MAX_BODY = 1 << 20
TOKEN_LIFETIME = 30 * 24 * 3600
LISTEN_RATE = 16000
REPLY_RATE = 22050
# A 160x120 colour-bar JPEG ("mock camera"), drawn once on a canvas: the mock has no JPEG encoder.
PICTURE_JPEG = base64.b64decode("""
/9j/4AAQSkZJRgABAQAAAQABAAD/4gHYSUNDX1BST0ZJTEUAAQEAAAHIAAAAAAQwAABtbnRyUkdCIFhZWiAH4AABAAEAAAAAAABh
Y3NwAAAAAAAAAAAAAAAAAAAAAAAAAAAAAAAAAAAAAQAA9tYAAQAAAADTLQAAAAAAAAAAAAAAAAAAAAAAAAAAAAAAAAAAAAAAAAAA
AAAAAAAAAAAAAAAAAAAAAAAAAAlkZXNjAAAA8AAAACRyWFlaAAABFAAAABRnWFlaAAABKAAAABRiWFlaAAABPAAAABR3dHB0AAAB
UAAAABRyVFJDAAABZAAAAChnVFJDAAABZAAAAChiVFJDAAABZAAAAChjcHJ0AAABjAAAADxtbHVjAAAAAAAAAAEAAAAMZW5VUwAA
AAgAAAAcAHMAUgBHAEJYWVogAAAAAAAAb6IAADj1AAADkFhZWiAAAAAAAABimQAAt4UAABjaWFlaIAAAAAAAACSgAAAPhAAAts9Y
WVogAAAAAAAA9tYAAQAAAADTLXBhcmEAAAAAAAQAAAACZmYAAPKnAAANWQAAE9AAAApbAAAAAAAAAABtbHVjAAAAAAAAAAEAAAAM
ZW5VUwAAACAAAAAcAEcAbwBvAGcAbABlACAASQBuAGMALgAgADIAMAAxADb/2wBDAA0JCgsKCA0LCgsODg0PEyAVExISEyccHhcg
LikxMC4pLSwzOko+MzZGNywtQFdBRkxOUlNSMj5aYVpQYEpRUk//2wBDAQ4ODhMREyYVFSZPNS01T09PT09PT09PT09PT09PT09P
T09PT09PT09PT09PT09PT09PT09PT09PT09PT09PT0//wAARCAB4AKADASIAAhEBAxEB/8QAGwABAAMBAQEBAAAAAAAAAAAAAAME
BQIGBwH/xAA4EAABAwIEAgcGBQQDAAAAAAAAAQIDBAUREjNxITIGExQxYXLRFRZBUVNUIlKhoqNCYmOBc4Lh/8QAGgEAAwEBAQEA
AAAAAAAAAAAAAAUGAwQHAv/EACwRAAECBAQEBwADAAAAAAAAAAABAgMEBXExMzSxBhGB0RQVIUFRocETI/D/2gAMAwEAAhEDEQA/
APTgAAOZNN2xULcmm7YqCCsZjbGsPAENXoLuhMQ1egu6HFI6mHdNzKc077LsZ4AL4iCGp5U3ICep5U3ICYqepXobswBTreduxcKd
bzt2NaLq29dh5w/rm2XYrAAtT0Iqz6qkZJPqqRkhN577qdDcAZs2s/zKaRmzaz/Mo34fzX2/RJXMttzgAFUTZ9oABEHScyabtioW
5NN2xUEFYzG2NYeAIavQXdCYhq9Bd0OKR1MO6bmU5p32XYzwAXxEENTypuQE9TypuQExU9SvQ3ZgCnW87di4U63nbsa0XVt67Dzh
/XNsuxWABanoRVn1VIySfVUjJCbz33U6G4AzZtZ/mU0jNm1n+ZRvw/mvt+iSuZbbnAAKomz7QACIOk5k03bFQtyabtioIKxmNsaw
8AQ1egu6ExDV6C7ocUjqYd03MpzTvsuxngAviIIanlTcgJ6nlTcgJip6lehuzAFOt527Fwp1vO3Y1ourb12HnD+ubZdisAC1PQir
PqqRkk+qpGSE3nvup0NwBmzaz/MppGbNrP8AMo34fzX2/RJXMttzgAFUTZ9oABEHScyabtioW5NN2xUEFYzG2NYeAIavQXdCYhq9
Bd0OKR1MO6bmU5p32XYzwAXxEENTypuQE9TypuQExU9SvQ3ZgCnW87di4U63nbsa0XVt67Dzh/XNsuxWABanoRVn1VIySfVUjJCb
z33U6G4AzZtZ/mU0jNm1n+ZRvw/mvt+iSuZbbnAAKomz7QACIOk5k03bFQtyabtioIKxmNsaw8AQ1egu6ExDV6C7ocUjqYd03Mpz
TvsuxngAviIIanlTcgJ6nlTcgJip6lehuzAFOt527Fwp1vO3Y1ourb12HnD+ubZdisAC1PQirPqqRkk+qpGSE3nvup0NwBmzaz/M
ppGbNrP8yjfh/Nfb9Elcy23OAAVRNn2gHzb3pvf3v8TPQe9N7+9/iZ6EQdJ9Hk03bFQ8EvSi9KmC1vBf8TPQ4947v93/ABs9BXPy
USYcisVPT5PtrkQ+gENXoLuh4X3ju/3f8bPQ/H9Ibs9uV1Vin/Gz0OeWpkWFGbEcqckVF9+x8TH9kJzExVFQ9WDyHtq4/cfsb6D2
1cfuP2N9Cn8Q0nfKI/yn32PU1PKm5AebdeLg7mqMf+jfQ59q131/2N9BPOSz48VXtwNG0uMicuaffY9MU63nbsYvtWu+v+xvocPu
FVIqK+XHD+1PQ+6fAdLR0iPwTngMqXLulJlIr/VE54GoDJ7ZUfU/RB2yo+p+iFD4+H8L/upU+ZwfhfruXJ9VSMquqJXLir8V2Q/O
uk/N+ghjw1iRHPT3U0SrQUTBfruWzNm1n+ZSfrpPzfoRORHOVV71O+lxWyj3Of6809hfUZtk0xrWIvovuRAkyN+QyN+Q683gfC/X
cUfxqdAAnTYAAALtvtNdcmTPooOsbBl6xc7W5cVwReKp/wCFip6N3mlgnmqKF7GU/GTFzcUT54Y4qninAls9fTUthvdNNLkmqo4m
wtyqubB2K8U7uHzNqpv1tkrbhIlUqsmsyU0a5HcZcE/D3b8e4AMBOjl4W39uShf2fq+szZm45PzZcccPHA5Z0fu0lu7eyietPkV6
OxTFWp/Vlxxw8cD03t2z+0UvnbX9clF1HYepdjny5cM3Ll+JTrLhaK6mo619zqaappqBKZaaFjkc5zccMHdyNXHiAFC5dHZIm0z7
eySRi26KsqHSPaiMV2OPFcEw4cE79zLt1trLpOsFDAsr2tVzkRURGp81VeCHrK6/2yvscVnkqEjjbb4csyRvxSoYnI7hxb49yGN0
ar6KCnudDXzLTx10CMbOjFfkVFx4onHAAKqdHrstbJSdick0bEe/M5qNa1e5cyrhh/s/Y+j13knqYW0bkkpcvXNc9rcmbuXivd4p
wNqjrLFTJVxdvdUSNgijgnrIHSx4oqq9Gsw4Jhhgilq8X61VVPeH01WuetpYGRxrE5qo5q/iReGHd44AB5yp6N3mlgnmqKF7GU/G
TFzcUT54Y4qninA4fYbpHb+3PpHJT5EkVczcUavc7Ljjh44Hoqm/W2StuEiVSqyazJTRrkdxlwT8Pdvx7jq69I6Oqo5Z6arhilmo
0gdTpRIsuKpgqLIqcvx7/wDQAefk6NXmOSGN1C7POqJG1HtVXYtzfBe7D49yFS4Wystr421sPV9Y3MxUcjmuTwVFVFPTTXezVPS2
CrqZespGUbY2udG5WtkRvxbhiqYlPpPcqC4Wm2RUtRG6akWRkjI6fqmrmVFzNREwROG/gAHmgAAAAAAAAAAAAAAAAAAAAAAAAAAA
AAAAAAAAAAAAf//Z
""")

ERROR_CODES = {
    400: "bad_request", 401: "unauthorized", 404: "not_found", 405: "method_not_allowed",
    411: "length_required", 413: "payload_too_large", 429: "too_many_requests", 431: "headers_too_large",
    500: "internal", 503: "unavailable",
}


class APIError(Exception):
    """An error answered as `{"error": {"code", "message"}}` with its HTTP status."""

    def __init__(self, status, message, headers=None):
        super().__init__(message)
        self.status = status
        self.message = message
        self.headers = headers or {}


def now_iso():
    return datetime.datetime.now(datetime.timezone.utc).isoformat(timespec="milliseconds").replace("+00:00", "Z")


def b64url(data):
    return base64.urlsafe_b64encode(data).rstrip(b"=").decode()


def b64url_decode(text):
    return base64.urlsafe_b64decode(text + "=" * (-len(text) % 4))


class Tokens:
    """HS256 JWTs, issuer `hark`, 30 days: the contract's tokens, made with the standard library."""

    def __init__(self):
        self.secret = secrets.token_bytes(32)

    def issue(self, subject):
        issued = int(time.time())
        header = b64url(json.dumps({"alg": "HS256", "typ": "JWT"}).encode())
        payload = b64url(json.dumps({"iss": "hark", "sub": subject, "iat": issued, "exp": issued + TOKEN_LIFETIME}).encode())
        signature = b64url(hmac.new(self.secret, f"{header}.{payload}".encode(), hashlib.sha256).digest())
        expires = datetime.datetime.fromtimestamp(issued + TOKEN_LIFETIME, datetime.timezone.utc)
        return {"token": f"{header}.{payload}.{signature}", "expires": expires.isoformat().replace("+00:00", "Z")}

    def check(self, token):
        """The reason the token is refused, or None when it is good."""
        parts = token.split(".")
        if len(parts) != 3:
            return "the token is not a JWT"
        try:
            header = json.loads(b64url_decode(parts[0]))
            payload = json.loads(b64url_decode(parts[1]))
            signature = b64url_decode(parts[2])
        except ValueError:
            return "the token is not a JWT"
        expected = hmac.new(self.secret, f"{parts[0]}.{parts[1]}".encode(), hashlib.sha256).digest()
        if header.get("alg") != "HS256" or not hmac.compare_digest(signature, expected):
            return "the token's signature is wrong"
        if payload.get("iss") != "hark":
            return "the token was not issued by hark"
        if not isinstance(payload.get("exp"), int) or payload["exp"] <= time.time():
            return "the token has expired"
        return None


class Appliance:
    """The canned appliance: devices, event log, pictures and a keyword 'dialog'."""

    RULES = [  # (pattern, intent, dialog node); first match wins, so the status question comes before "light on".
        (r"\bis the (light|lamp)\b", "LightStatus", "light_status"),
        (r"\b(turn|switch)( the)? (light|lamp) on\b|\b(turn|switch) on\b", "OnLight", "light_on"),
        (r"\b(turn|switch)( the)? (light|lamp) off\b|\b(turn|switch) off\b", "OffLight", "light_off"),
        (r"\b(picture|photo)\b", "TakePicture", "take_picture"),
        (r"^(hi|hello|hey)\b", "Greetings", "greetings"),
        (r"\btime\b", "Time", "time"),
        (r"\bhelp\b", "Help", "help"),
        (r"\bthank", "Thanks", "thanks"),
        (r"\b(bye|goodbye)\b", "Goodbye", "goodbye"),
    ]

    def __init__(self):
        self.events = []
        self.subscribers = set()
        self.pictures = []
        self.devices = {"light": "off", "led": "off", "button": "off"}
        self.turns = 0
        self.context = {}  # the appliance's own conversation, used by voice turns
        self.emit("start", "Hark is running (mock)", None, {"mode": "mock"})

    def emit(self, kind, text, turn, data=None):
        event = {"id": len(self.events) + 1, "time": now_iso(), "kind": kind, "turn": turn, "text": text}
        event.update(data or {})
        self.events.append(event)
        for queue in list(self.subscribers):
            queue.put_nowait(event)
        return event

    def switch(self, name, command, turn):
        state = self.devices[name]
        if command == "toggle":
            state = "off" if state == "on" else "on"
        elif command in ("on", "off"):
            state = command
        elif command != "blink":
            raise APIError(400, f'unknown command "{command}" for {name} (use on, off, toggle or blink)')
        changed = state != self.devices[name]
        self.devices[name] = state
        if changed:
            self.emit("device", f"{name.capitalize()} is {state}", turn, {"name": name, "state": state})
        return state

    def capture(self, trigger, turn):
        picture = {
            "id": len(self.pictures) + 1, "time": now_iso(), "width": 160, "height": 120,
            "bytes": len(PICTURE_JPEG), "trigger": trigger,
        }
        picture["url"] = f"/api/pictures/{picture['id']}"
        self.pictures.append(picture)
        self.emit("picture", f"Picture saved as picture-{picture['id']}.jpg", turn, {
            "picture": picture["id"], "path": f"/mock/pictures/picture-{picture['id']}.jpg", "width": 160,
            "height": 120, "bytes": len(PICTURE_JPEG), "source": "mock", "trigger": trigger,
        })
        return picture

    def message(self, text, context, alternate_intents, trigger):
        """One turn of the canned dialog, answered in Watson v1's /message shape."""
        self.turns += 1
        turn = self.turns
        context = dict(context or {})
        context.setdefault("conversation_id", str(uuid.uuid4()))
        context["light_state"] = self.devices["light"]
        lowered = text.lower().strip()
        intent, node = None, "anything_else"
        for pattern, name, dialog_node in self.RULES:
            if re.search(pattern, lowered):
                intent, node = name, dialog_node
                break
        intents = [{"intent": intent, "confidence": 0.97}] if intent else []
        self.emit("intent", f"#{intent} 0.97" if intent else "no intent", turn, {"accepted": bool(intent), "intents": intents, "entities": []})
        actions = []
        nodes = [node]
        if intent == "OnLight" or intent == "OffLight":
            command = "on" if intent == "OnLight" else "off"
            actions.append({"name": "light", "type": "client", "parameters": {"command": command}, "result_variable": "light_state"})
            state = self.switch("light", command, turn)
            self.emit("action", f"light {command}", turn, {"name": "light", "command": command, "result": state})
            context["light"] = command
            context["light_state"] = state
            reply = f"Light is {state}"
        elif intent == "TakePicture":
            actions.append({"name": "camera", "type": "client", "parameters": {"command": "capture"}, "result_variable": "last_picture"})
            picture = self.capture(trigger, turn)
            path = f"/mock/pictures/picture-{picture['id']}.jpg"
            self.emit("action", "camera capture", turn, {"name": "camera", "command": "capture", "result": path})
            context["last_picture"] = path
            reply = "Picture taken"
        elif intent == "LightStatus":
            on = context.get("light_state", context.get("light")) == "on"
            nodes.append("light_status_on" if on else "light_status_off")
            reply = "The light is on." if on else "The light is off."
        elif intent == "Greetings":
            reply = "Hello! What can I do for you?"
        elif intent == "Time":
            reply = f"It's {datetime.datetime.now().strftime('%-I:%M %p')}."
        elif intent == "Help":
            reply = 'You can say things like "turn on the light", "is the light on?", "take a picture" or "what time is it?".'
        elif intent == "Thanks":
            reply = "You're welcome."
        elif intent == "Goodbye":
            reply = "Goodbye."
        else:
            reply = "Sorry, I can't help with that. I can switch the light on or off, take a picture or tell you the time."
        system = dict(context.get("system") or {})
        counter = int(system.get("dialog_turn_counter", 0)) + 1
        system.update({"dialog_stack": [{"dialog_node": "root"}], "dialog_turn_counter": counter,
                       "dialog_request_counter": counter, "branch_exited": True, "branch_exited_reason": "completed"})
        context["system"] = system
        self.emit("state", f"Dialog: {', '.join(nodes)}", turn, {"nodes_visited": nodes})
        self.emit("reply", reply, turn, {"accepted": bool(intent)})
        output = {"text": [reply], "generic": [{"response_type": "text", "text": reply}], "nodes_visited": nodes, "log_messages": []}
        if actions:
            output["actions"] = actions
        return {"input": {"text": text}, "intents": intents, "entities": [], "output": output,
                "context": context, "alternate_intents": bool(alternate_intents)}


def reply_wav(seconds=0.5):
    """A short two-note chime at 22.05 kHz mono: the mock's stand-in for the spoken reply."""
    samples = array.array("h")
    count = int(REPLY_RATE * seconds)
    for i in range(count):
        frequency = 660 if i < count // 2 else 880
        envelope = min(1.0, i / 400, (count - i) / 400)
        samples.append(int(8000 * envelope * math.sin(2 * math.pi * frequency * i / REPLY_RATE)))
    buffer = io.BytesIO()
    with wave.open(buffer, "wb") as out:
        out.setnchannels(1)
        out.setsampwidth(2)
        out.setframerate(REPLY_RATE)
        out.writeframes(samples.tobytes())
    return buffer.getvalue()


def speech_seconds(pcm):
    """Seconds of 20 ms frames whose RMS is clearly above silence in 16 kHz s16le `pcm`."""
    samples = array.array("h")
    samples.frombytes(pcm[: len(pcm) // 2 * 2])
    if sys.byteorder == "big":
        samples.byteswap()
    frame = LISTEN_RATE // 50
    voiced = 0
    for start in range(0, len(samples) - frame + 1, frame):
        energy = sum(s * s for s in samples[start:start + frame]) / frame
        if math.sqrt(energy) > 300:
            voiced += 1
    return voiced / 50


class Server:
    def __init__(self, args):
        self.args = args
        self.tokens = Tokens()
        self.appliance = Appliance()
        self.failures = {}  # client address -> times of failed pairing/login attempts
        self.web_dir = Path(args.web).resolve()
        self.openapi = Path(args.openapi)
        self.recordings = 0

    # --- plumbing -------------------------------------------------------------------------------------

    @web.middleware
    async def errors(self, request, handler):
        try:
            return await handler(request)
        except APIError as error:
            return self.error(error.status, error.message, error.headers)
        except web.HTTPException as error:
            if error.status < 400:
                raise
            message = {404: f"no such resource: {request.path}", 405: f"{request.method} is not allowed on {request.path}"}
            return self.error(error.status, message.get(error.status, error.reason), {"Allow": error.headers["Allow"]} if "Allow" in error.headers else None)
        except Exception as error:  # the mock must answer, not hang, whatever it got wrong
            print(f"mock: internal error on {request.path}: {error!r}", file=sys.stderr)
            return self.error(500, f"internal error: {error}")

    @staticmethod
    def error(status, message, headers=None):
        body = {"error": {"code": ERROR_CODES.get(status, "internal"), "message": message}}
        return web.json_response(body, status=status, headers=headers)

    def authorize(self, request):
        header = request.headers.get("Authorization", "")
        token = header[7:].strip() if header.lower().startswith("bearer ") else request.query.get("access_token")
        if not token:
            raise APIError(401, "a token is required (Authorization: Bearer, or access_token for sockets and images)")
        reason = self.tokens.check(token)
        if reason:
            raise APIError(401, reason)

    async def body(self, request):
        if request.content_length is None:
            raise APIError(411, "the request body needs a Content-Length")
        if request.content_length > MAX_BODY:
            raise APIError(413, f"the body is {request.content_length} bytes; the limit is {MAX_BODY}")
        raw = await request.read()
        try:
            value = json.loads(raw.decode("utf-8"))
        except (UnicodeDecodeError, ValueError) as error:
            raise APIError(400, f"the body is not JSON: {error}")
        if not isinstance(value, dict):
            raise APIError(400, "the body must be a JSON object")
        return value

    def throttle(self, request):
        address = request.remote or "?"
        recent = [t for t in self.failures.get(address, []) if t > time.time() - 60]
        self.failures[address] = recent
        if len(recent) >= 5:
            raise APIError(429, "too many failed attempts; try again in a minute", {"Retry-After": str(int(60 - (time.time() - recent[0])) + 1)})

    def failed(self, request, message):
        self.failures.setdefault(request.remote or "?", []).append(time.time())
        raise APIError(401, message)

    # --- static files ---------------------------------------------------------------------------------

    async def index(self, request):
        return web.FileResponse(self.web_dir / "index.html", headers={"Cache-Control": "no-cache"})

    async def static(self, request):
        path = (self.web_dir / request.match_info["path"]).resolve()
        if self.web_dir not in path.parents or not path.is_file():
            raise APIError(404, f"no such file: {request.path}")
        types = {".js": "text/javascript; charset=utf-8", ".css": "text/css; charset=utf-8", ".html": "text/html; charset=utf-8",
                 ".svg": "image/svg+xml", ".json": "application/json"}
        return web.FileResponse(path, headers={"Content-Type": types.get(path.suffix, "application/octet-stream"), "Cache-Control": "no-cache"})

    async def openapi_document(self, request):
        return web.Response(body=self.openapi.read_bytes(), content_type="application/json")

    # --- auth -----------------------------------------------------------------------------------------

    async def pair(self, request):
        self.throttle(request)
        body = await self.body(request)
        code = body.get("code")
        if not isinstance(code, str) or not re.fullmatch(r"\d{6}", code):
            raise APIError(400, 'the pairing code must be six digits, as a string: {"code": "123456"}')
        if not hmac.compare_digest(code, self.args.code):
            self.failed(request, "wrong pairing code")
        return web.json_response(self.tokens.issue("paired"))

    async def login(self, request):
        self.throttle(request)
        body = await self.body(request)
        user, password = body.get("user"), body.get("password")
        if not isinstance(user, str) or not isinstance(password, str):
            raise APIError(400, 'the body must be {"user": "...", "password": "..."}')
        if not (hmac.compare_digest(user, self.args.user) and hmac.compare_digest(password, self.args.password)):
            self.failed(request, "wrong user or password")
        return web.json_response(self.tokens.issue(user))

    # --- Watson message -------------------------------------------------------------------------------

    async def message(self, request):
        self.authorize(request)
        workspace = request.match_info["workspace"]
        if workspace not in ("default", "home"):
            raise APIError(404, f'no workspace "{workspace}" (this appliance serves "home", also reachable as "default")')
        if not re.fullmatch(r"\d{4}-\d{2}-\d{2}", request.query.get("version", "")):
            raise APIError(400, "the version query parameter is required, as YYYY-MM-DD (e.g. version=2021-06-14)")
        body = await self.body(request)
        given = body.get("input", {})
        if not isinstance(given, dict) or not isinstance(given.get("text", ""), str):
            raise APIError(400, 'input must be an object with a string text: {"input": {"text": "..."}}')
        context = body.get("context", {})
        if not isinstance(context, dict):
            raise APIError(400, "context must be an object")
        response = self.appliance.message(given.get("text", ""), context, body.get("alternate_intents", False), "api")
        return web.json_response(response)

    # --- events ---------------------------------------------------------------------------------------

    def since(self, request):
        value = request.query.get("since")
        if value is None:
            return None
        if not value.isdigit():
            raise APIError(400, f'since must be an event id (a whole number), not "{value}"')
        return int(value)

    async def events(self, request):
        self.authorize(request)
        since = self.since(request)
        if request.headers.get("Upgrade", "").lower() != "websocket":
            limit = request.query.get("limit", "100")
            if not limit.isdigit():
                raise APIError(400, f'limit must be a whole number, not "{limit}"')
            chosen = [e for e in self.appliance.events if e["id"] > (since or 0)][: int(limit)]
            return web.json_response({"events": chosen})
        socket = web.WebSocketResponse(heartbeat=20)
        await socket.prepare(request)
        queue = asyncio.Queue()
        self.appliance.subscribers.add(queue)  # before the replay snapshot, so nothing falls between them
        last = since if since is not None else self.appliance.events[-1]["id"] if self.appliance.events else 0
        try:
            if since is not None:
                for event in [e for e in self.appliance.events if e["id"] > since]:
                    await socket.send_str(json.dumps(event))
                    last = event["id"]
            reader = asyncio.ensure_future(self.drain(socket))
            while not socket.closed:
                getter = asyncio.ensure_future(queue.get())
                done, _ = await asyncio.wait({getter, reader}, return_when=asyncio.FIRST_COMPLETED)
                if getter not in done:
                    getter.cancel()
                    break
                event = getter.result()
                if event["id"] > last:
                    await socket.send_str(json.dumps(event))
                    last = event["id"]
        except ConnectionResetError:
            pass
        finally:
            self.appliance.subscribers.discard(queue)
        return socket

    @staticmethod
    async def drain(socket):
        async for _ in socket:
            pass

    # --- pictures and devices -------------------------------------------------------------------------

    async def picture_list(self, request):
        self.authorize(request)
        return web.json_response({"pictures": list(reversed(self.appliance.pictures))})

    async def picture(self, request):
        self.authorize(request)
        ident = request.match_info["id"]
        if not ident.isdigit() or not 1 <= int(ident) <= len(self.appliance.pictures):
            raise APIError(404, f"no picture {ident}")
        return web.Response(body=PICTURE_JPEG, content_type="image/jpeg", headers={"Cache-Control": "private, max-age=86400"})

    async def devices(self, request):
        self.authorize(request)
        state = self.appliance.devices
        devices = [{"name": "light", "kind": "output", "state": state["light"]},
                   {"name": "led", "kind": "output", "state": state["led"]},
                   {"name": "camera", "kind": "camera"},
                   {"name": "button", "kind": "input", "state": state["button"]}]
        return web.json_response({"devices": devices, "simulated": ["light", "led", "camera", "button"]})

    async def device(self, request):
        self.authorize(request)
        name = request.match_info["name"]
        body = await self.body(request)
        command = body.get("command")
        if not isinstance(command, str):
            raise APIError(400, 'the body must be {"command": "on" | "off" | "toggle" | "blink"} ("capture" for the camera)')
        if name == "camera":
            if command != "capture":
                raise APIError(400, f'unknown command "{command}" for camera (use capture)')
            return web.json_response(self.appliance.capture("api", None))
        if name == "button":
            raise APIError(400, "button is an input; it takes no commands")
        if name not in self.appliance.devices:
            raise APIError(404, f'no device named "{name}" (configured: light, led, camera, button)')
        return web.json_response({"name": name, "state": self.appliance.switch(name, command, None)})

    async def say(self, request):
        self.authorize(request)
        body = await self.body(request)
        if not isinstance(body.get("text"), str) or not body["text"].strip():
            raise APIError(400, 'the body must be {"text": "..."} with some text')
        self.appliance.emit("reply", body["text"], None, {"source": "say"})
        return web.json_response({"spoken": True}, status=202)

    # --- listen ---------------------------------------------------------------------------------------

    async def listen(self, request):
        self.authorize(request)
        socket = web.WebSocketResponse(heartbeat=20, max_msg_size=MAX_BODY)
        await socket.prepare(request)
        pcm = bytearray()
        partial = ""
        ended = False
        async for message in socket:
            if message.type == WSMsgType.BINARY:
                pcm.extend(message.data)
                if len(pcm) // 2 % (LISTEN_RATE // 5) < len(message.data) // 2:  # about every 200 ms of audio
                    heard = speech_seconds(bytes(pcm))
                    words = "take a" if heard >= 0.5 else "take" if heard >= 0.25 else ""
                    if words != partial:
                        partial = words
                        await socket.send_json({"type": "partial", "text": words})
            elif message.type == WSMsgType.TEXT:
                try:
                    kind = json.loads(message.data).get("type")
                except (ValueError, AttributeError):
                    kind = None
                if kind == "end":
                    ended = True
                    break
                await socket.send_json({"error": {"code": "bad_request", "message": f"unexpected text message: {message.data[:80]}"}})
        if not ended:  # closed without "end": the user cancelled; nothing is understood or said
            return socket
        self.save(pcm)
        heard = speech_seconds(bytes(pcm))
        turn_text = "take a picture" if heard >= 0.3 else ""
        self.appliance.emit("listening", "Listening", None, {"source": "browser", "cause": "button"})
        self.appliance.emit("transcript", turn_text, self.appliance.turns + 1, {
            "acoustic_confidence": 0.91 if turn_text else 0.0, "accepted": bool(turn_text), "seconds": len(pcm) / 2 / LISTEN_RATE})
        await socket.send_json({"type": "transcript", "text": turn_text, "acoustic_confidence": 0.91 if turn_text else 0.0, "accepted": bool(turn_text)})
        if turn_text:
            response = self.appliance.message(turn_text, self.appliance.context, False, "voice")
            self.appliance.context = response["context"]
            reply = response["output"]["text"][0]
        else:
            reply = "Sorry, I didn't catch that."
            self.appliance.turns += 1
            self.appliance.emit("reply", reply, self.appliance.turns, {"accepted": False})
            response = {"input": {"text": ""}, "intents": [], "entities": [], "context": self.appliance.context,
                        "output": {"text": [reply], "generic": [{"response_type": "text", "text": reply}], "nodes_visited": [], "log_messages": []}}
        await socket.send_json({"type": "reply", "text": reply, "response": response})
        await socket.send_bytes(reply_wav())
        await socket.close()
        return socket

    def save(self, pcm):
        if not self.args.save_audio:
            return
        directory = Path(self.args.save_audio)
        directory.mkdir(parents=True, exist_ok=True)
        self.recordings += 1
        with wave.open(str(directory / f"listen-{self.recordings}.wav"), "wb") as out:
            out.setnchannels(1)
            out.setsampwidth(2)
            out.setframerate(LISTEN_RATE)
            out.writeframes(bytes(pcm[: len(pcm) // 2 * 2]))

    # --- app ------------------------------------------------------------------------------------------

    def app(self):
        app = web.Application(middlewares=[self.errors], client_max_size=MAX_BODY)
        app.router.add_get("/", self.index)
        app.router.add_get("/web/{path:.+}", self.static)
        app.router.add_get("/api/openapi.json", self.openapi_document)
        app.router.add_post("/api/pair", self.pair)
        app.router.add_post("/api/login", self.login)
        app.router.add_post("/v1/workspaces/{workspace}/message", self.message)
        app.router.add_get("/api/events", self.events)
        app.router.add_get("/api/pictures", self.picture_list)
        app.router.add_get("/api/pictures/{id}", self.picture)
        app.router.add_get("/api/devices", self.devices)
        app.router.add_post("/api/devices/{name}", self.device)
        app.router.add_post("/api/say", self.say)
        app.router.add_get("/api/listen", self.listen)
        return app


async def serve(args):
    runner = web.AppRunner(Server(args).app(), access_log=None)
    await runner.setup()
    site = web.TCPSite(runner, args.host, args.port)
    await site.start()
    port = site._server.sockets[0].getsockname()[1]
    if args.print_port:
        print(port, flush=True)
    print(f"mock hark server on http://{args.host}:{port}/ (pairing code {args.code})", file=sys.stderr, flush=True)
    await asyncio.Event().wait()


def main():
    parser = argparse.ArgumentParser(description=__doc__.split("\n\n")[0])
    parser.add_argument("--host", default="127.0.0.1")
    parser.add_argument("--port", type=int, default=8080, help="0 picks a free port")
    parser.add_argument("--print-port", action="store_true", help="print the bound port alone on the first stdout line")
    parser.add_argument("--code", default="123456", help="the pairing code accepted")
    parser.add_argument("--user", default="hark")
    parser.add_argument("--password", default="hark-password")
    parser.add_argument("--web", default=str(REPO / "web"), help="the page's directory")
    parser.add_argument("--openapi", default=str(REPO / "docs" / "openapi.json"))
    parser.add_argument("--save-audio", metavar="DIR", help="keep each listen turn's audio as DIR/listen-N.wav")
    parser.add_argument("--data", help="accepted and ignored, so the mock takes the real server's command line shape")
    parser.add_argument("--simulate", action="store_true", help="accepted and ignored (the mock is all simulation)")
    args = parser.parse_args()
    if not re.fullmatch(r"\d{6}", args.code):
        parser.error("--code must be six digits")
    try:
        asyncio.run(serve(args))
    except KeyboardInterrupt:
        pass


if __name__ == "__main__":
    main()
