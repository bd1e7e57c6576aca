#!/usr/bin/env python3
"""Attacks a live `hark serve` the way a hostile LAN host or web page would, and reports what happened.

    python3 tests/security/probe.py --hark .build/debug/hark --json after.json
    python3 tests/security/probe.py --hark /tmp/hark-before/.build/debug/hark --repo /tmp/hark-before --json before.json
    python3 tests/security/probe.py --compare before.json after.json      # the before/after table (Markdown)

It starts the server itself (`hark serve --simulate --port 0 --print-port` on a fresh data directory, and a
second one with `--lan` for the TLS probe), so nothing else on the machine is touched. Several probes play
many clients by connecting from different loopback addresses (127.0.0.0/8 is all local on Linux). Python's
standard library only. Takes about two minutes; a probe that cannot run says why in its row.

Each row says what the probe did and what came back; "held" is whether the server resisted, judged by the
same rule for every binary.
"""

import argparse
import base64
import http.client
import json
import os
import re
import select
import socket
import ssl
import stat
import struct
import subprocess
import sys
import tempfile
import threading
import time
from pathlib import Path

HERE = Path(__file__).resolve().parent
REPO = HERE.parent.parent


# --- a server to attack --------------------------------------------------------------------------------------

class Server:
    """`hark serve` on a fresh data directory; `port`, `code` (the pairing code it printed), `data`."""

    def __init__(self, hark, repo, extra=()):
        self.hark = hark
        self.repo = repo
        # A directory hark makes itself, so its mode is hark's choice.
        self.data = Path(tempfile.mkdtemp(prefix="hark-probe-")) / "data"
        self.process = subprocess.Popen(
            [hark, "serve", "--simulate", "--port", "0", "--print-port", "--host", "127.0.0.1", "--data", str(self.data), *extra],
            cwd=repo, stdout=subprocess.PIPE, stderr=subprocess.PIPE, text=True)
        line = self.process.stdout.readline().strip()
        if not line.isdigit():
            raise RuntimeError(f"hark serve did not print its port: {line!r} {self.process.stderr.read()[:500]}")
        self.port = int(line)
        self.stderr_lines = []
        banner = ""
        while "serving" not in banner:
            banner = self.process.stderr.readline()
            if not banner:
                break
        found = re.search(r"code (\d{6})", banner)
        self.code = found.group(1) if found else None
        threading.Thread(target=self._drain, daemon=True).start()

    def _drain(self):
        for line in self.process.stderr:
            self.stderr_lines.append(line)

    def new_code(self, lifetime=None):
        """A fresh pairing code from `hark pair` (another process, the same data directory)."""
        args = [self.hark, "pair", "--data", str(self.data)] + (["--lifetime", lifetime] if lifetime else [])
        result = subprocess.run(args, cwd=self.repo, capture_output=True, text=True)
        found = re.search(r"\b(\d{6})\b", result.stdout)
        return result, (found.group(1) if found else None)

    def stop(self):
        self.process.terminate()
        try:
            self.process.wait(10)
        except subprocess.TimeoutExpired:
            self.process.kill()


# --- clients -------------------------------------------------------------------------------------------------

def call(port, method, path, body=None, headers=None, source=None, timeout=15, tls=False):
    """(status, headers, body, seconds); status 0 with the error as body when the connection failed."""
    headers = dict(headers or {})
    if body is not None and not isinstance(body, bytes):
        body = json.dumps(body).encode()
        headers.setdefault("Content-Type", "application/json")
    start = time.monotonic()
    try:
        if tls:
            context = ssl._create_unverified_context()
            conn = http.client.HTTPSConnection("127.0.0.1", port, timeout=timeout, source_address=(source, 0) if source else None, context=context)
        else:
            conn = http.client.HTTPConnection("127.0.0.1", port, timeout=timeout, source_address=(source, 0) if source else None)
        conn.request(method, path, body=body, headers=headers)
        response = conn.getresponse()
        data = response.read()
        conn.close()
        return response.status, {k.lower(): v for k, v in response.getheaders()}, data, time.monotonic() - start
    except Exception as error:  # noqa: BLE001 - the probe reports any failure as its outcome
        return 0, {}, str(error).encode(), time.monotonic() - start


class WebSocket:
    """A minimal RFC 6455 client: enough to open, send and read frames."""

    def __init__(self, port, path, headers=None, source=None, timeout=10):
        self.sock = socket.create_connection(("127.0.0.1", port), timeout, source_address=(source, 0) if source else None)
        key = base64.b64encode(os.urandom(16)).decode()
        fields = {"Host": f"127.0.0.1:{port}", "Upgrade": "websocket", "Connection": "Upgrade",
                  "Sec-WebSocket-Key": key, "Sec-WebSocket-Version": "13"}
        fields.update(headers or {})
        head = f"GET {path} HTTP/1.1\r\n" + "".join(f"{k}: {v}\r\n" for k, v in fields.items()) + "\r\n"
        self.sock.sendall(head.encode())
        self.buffer = b""
        while b"\r\n\r\n" not in self.buffer:
            more = self.sock.recv(65536)
            if not more:
                break
            self.buffer += more
        status_line = self.buffer.split(b"\r\n", 1)[0].decode(errors="replace")
        self.status = int(status_line.split()[1]) if len(status_line.split()) > 1 else 0
        self.buffer = self.buffer.split(b"\r\n\r\n", 1)[1] if b"\r\n\r\n" in self.buffer else b""

    def send(self, payload, opcode=2):
        header = bytes([0x80 | opcode])
        n = len(payload)
        if n < 126:
            header += bytes([0x80 | n])
        elif n < 65536:
            header += bytes([0x80 | 126]) + struct.pack(">H", n)
        else:
            header += bytes([0x80 | 127]) + struct.pack(">Q", n)
        mask = os.urandom(4)
        masked = bytes(b ^ mask[i % 4] for i, b in enumerate(payload)) if n < 4096 else _mask(payload, mask)
        self.sock.sendall(header + mask + masked)

    def _fill(self, count):
        while len(self.buffer) < count:
            more = self.sock.recv(65536)
            if not more:
                raise ConnectionError("closed")
            self.buffer += more

    def receive(self, answer_pings=True):
        """(opcode, payload) of the next frame; a close frame's payload is (code, reason)."""
        while True:
            self._fill(2)
            opcode = self.buffer[0] & 0x0F
            length = self.buffer[1] & 0x7F
            offset = 2
            if length == 126:
                self._fill(4)
                length = struct.unpack(">H", self.buffer[2:4])[0]
                offset = 4
            elif length == 127:
                self._fill(10)
                length = struct.unpack(">Q", self.buffer[2:10])[0]
                offset = 10
            self._fill(offset + length)
            payload = self.buffer[offset:offset + length]
            self.buffer = self.buffer[offset + length:]
            if opcode == 9 and answer_pings:
                self.send(payload, opcode=10)
                continue
            if opcode == 8:
                code = struct.unpack(">H", payload[:2])[0] if len(payload) >= 2 else None
                return 8, (code, payload[2:].decode(errors="replace"))
            return opcode, payload

    def close(self):
        try:
            self.sock.close()
        except OSError:
            pass


def _mask(payload, mask):
    whole = (mask * (len(payload) // 4 + 1))[:len(payload)]
    return (int.from_bytes(payload, "big") ^ int.from_bytes(whole, "big")).to_bytes(len(payload), "big")


def pair(server, code, source="127.0.0.1"):
    status, _, body, _ = call(server.port, "POST", "/api/pair", {"code": code}, source=source)
    return json.loads(body)["token"] if status == 200 else None


def fresh_token(server, source):
    _, code = server.new_code()
    return pair(server, code, source=source) if code else None


# --- probes --------------------------------------------------------------------------------------------------

def probe_pairing_budget(server):
    """Item 1: 10 addresses × 5 wrong codes, then the real code from an 11th address."""
    _, code = server.new_code()
    wrong = "000000" if code != "000000" else "111111"
    statuses = []
    for a in range(10):
        for _ in range(5):
            statuses.append(call(server.port, "POST", "/api/pair", {"code": wrong}, source=f"127.0.3.{a + 1}")[0])
    evaluated = statuses.count(401)
    real, _, _, _ = call(server.port, "POST", "/api/pair", {"code": code}, source="127.0.3.99")
    return real != 200, f"50 wrong codes from 10 addresses: {evaluated} checked (401), {statuses.count(429)} refused (429); the real code afterwards: {real}"


def probe_code_lifetime(server):
    """Item 1: may a code live 24 h?"""
    result, code = server.new_code("24h")
    if code:
        return False, "hark pair --lifetime 24h: issued a code valid for 24 h"
    first_line = (result.stderr.strip().splitlines() or [""])[0]
    return True, f"hark pair --lifetime 24h: refused (exit {result.returncode}: {first_line[:70]})"


def probe_slowloris(server):
    """Item 2: 150 connections from 150 addresses trickling header lines every 2 s; time GET / meanwhile."""
    stop = threading.Event()

    def attacker(address):
        while not stop.is_set():
            try:
                s = socket.create_connection(("127.0.0.1", server.port), 5, source_address=(address, 0))
                s.sendall(b"GET / HTTP/1.1\r\nHost: 127.0.0.1\r\n")
                while not stop.wait(2):
                    s.sendall(b"X-Trickle: 1\r\n")
            except OSError:
                if stop.wait(0.2):
                    return
            finally:
                try:
                    s.close()
                except (OSError, UnboundLocalError):
                    pass

    threads = [threading.Thread(target=attacker, args=(f"127.0.4.{i % 250 + 1}" if i < 250 else "127.0.5.1",), daemon=True) for i in range(150)]
    for t in threads:
        t.start()
    time.sleep(3)
    samples = []
    for _ in range(4):
        status, _, _, seconds = call(server.port, "GET", "/", timeout=20)
        samples.append((status, seconds))
        time.sleep(3)
    stop.set()
    worst = max(s for _, s in samples)
    held = all(status == 200 for status, _ in samples) and worst < 2
    return held, "GET / under 150 trickling clients: " + ", ".join(f"{st} in {s:.1f} s" for st, s in samples)


def probe_websocket_exhaustion(server, token):
    """Item 2: 200 WebSocket upgrades with one token from 20 addresses, then GET /."""
    sockets, accepted, refused = [], 0, {}
    for i in range(200):
        try:
            ws = WebSocket(server.port, f"/api/events?access_token={token}", source=f"127.0.6.{i % 20 + 1}", timeout=5)
            if ws.status == 101:
                accepted += 1
                sockets.append(ws)
            else:
                refused[ws.status] = refused.get(ws.status, 0) + 1
                ws.close()
        except OSError as error:
            refused[str(error)[:20]] = refused.get(str(error)[:20], 0) + 1
    status, _, _, seconds = call(server.port, "GET", "/", timeout=20)
    api, _, _, _ = call(server.port, "GET", "/api/devices", headers={"Authorization": f"Bearer {token}"}, timeout=20)
    for ws in sockets:
        ws.close()
    time.sleep(1)
    return status == 200 and api == 200, f"200 upgrades: {accepted} open, refused {refused or 'none'}; then GET / {status}, GET /api/devices {api}"


def probe_websocket_idle(server, token):
    """Item 2: a WebSocket that never answers pings: still open after 75 s? (runs in the background)"""
    ws = WebSocket(server.port, f"/api/events?access_token={token}", source="127.0.7.1")
    result = {}

    def watch():
        deadline = time.monotonic() + 75
        ws.sock.settimeout(1)
        pings = 0
        while time.monotonic() < deadline:
            try:
                opcode, payload = ws.receive(answer_pings=False)
                if opcode == 9:
                    pings += 1
                elif opcode == 8:
                    result["outcome"] = (True, f"silent WebSocket: {pings} ping(s), closed after {75 - (deadline - time.monotonic()):.0f} s (code {payload[0]})")
                    return
            except socket.timeout:
                continue
            except (ConnectionError, OSError):
                result["outcome"] = (True, f"silent WebSocket: {pings} ping(s), dropped after {75 - (deadline - time.monotonic()):.0f} s")
                return
        result["outcome"] = (False, f"silent WebSocket: {pings} pings, still open after 75 s")

    thread = threading.Thread(target=watch, daemon=True)
    thread.start()
    return thread, result


def probe_logout(server):
    """Item 3: POST /api/logout, then the same token on the API and on its open WebSocket."""
    token = fresh_token(server, "127.0.8.1")
    ws = WebSocket(server.port, f"/api/events?access_token={token}", source="127.0.8.1")
    status, _, _, _ = call(server.port, "POST", "/api/logout", headers={"Authorization": f"Bearer {token}"}, source="127.0.8.1")
    after, _, _, _ = call(server.port, "GET", "/api/devices", headers={"Authorization": f"Bearer {token}"}, source="127.0.8.1")
    ws.sock.settimeout(12)
    try:
        while True:
            opcode, payload = ws.receive()
            if opcode == 8:
                socket_outcome = f"socket closed {payload[0]}"
                break
    except socket.timeout:
        socket_outcome = "socket still open after 12 s"
    except (ConnectionError, OSError):
        socket_outcome = "socket dropped"
    ws.close()
    return status == 200 and after == 401 and "closed" in socket_outcome, f"logout {status}; token afterwards {after}; {socket_outcome}"


def probe_listen_busy(server, token):
    """Item 4: one idle /api/listen socket; may another browser talk 12 s later?"""
    first = WebSocket(server.port, f"/api/listen?access_token={token}", source="127.0.9.1")
    if first.status != 101:
        return None, f"/api/listen refused ({first.status}): no speech model?"
    time.sleep(12)
    second = WebSocket(server.port, f"/api/listen?access_token={token}", source="127.0.9.2")
    second.sock.settimeout(10)
    try:
        _, payload = second.receive()
        text = payload.decode(errors="replace") if isinstance(payload, bytes) else str(payload)
    except (OSError, ConnectionError) as error:
        text = str(error)
    first.close()
    second.close()
    time.sleep(1)
    ok = '"listening"' in text
    return ok, "second browser 12 s after an idle first one: " + ("may talk" if ok else f"refused ({text[:60]})")


def probe_listen_flood(server, token):
    """Item 4: 10 MiB of PCM (328 s) pushed as fast as possible."""
    ws = WebSocket(server.port, f"/api/listen?access_token={token}", source="127.0.9.3")
    if ws.status != 101:
        return None, f"/api/listen refused ({ws.status})"
    chunk = bytes(32 * 1024)
    sent = 0
    start = time.monotonic()
    ws.sock.settimeout(5)
    closed = None
    try:
        while sent < 10 * 1024 * 1024:
            ready, _, _ = select.select([ws.sock], [], [], 0)
            if ready:
                opcode, payload = ws.receive()
                if opcode == 8:
                    closed = payload
                    break
            ws.send(chunk)
            sent += len(chunk)
    except (OSError, ConnectionError):
        pass
    seconds = time.monotonic() - start
    if closed is None:
        try:
            ws.sock.settimeout(5)
            while True:
                opcode, payload = ws.receive()
                if opcode == 8:
                    closed = payload
                    break
        except (OSError, ConnectionError):
            pass
    ws.close()
    audio = sent / 32000
    if closed:
        return True, f"sent {sent / 1048576:.1f} MiB ({audio:.0f} s of audio) in {seconds:.1f} s; closed {closed[0]} \"{closed[1][:40]}\""
    return False, f"accepted {sent / 1048576:.1f} MiB ({audio:.0f} s of audio) in {seconds:.1f} s without closing"


def probe_cross_origin_pair(server):
    """Item 5: a page elsewhere posts a guess (text/plain, Origin: evil)."""
    status, _, body, _ = call(server.port, "POST", "/api/pair", b'{"code": "000000"}', source="127.0.10.1",
                              headers={"Content-Type": "text/plain", "Origin": "http://evil.example"})
    return status in (403, 415), f"POST /api/pair from Origin evil.example as text/plain: {status}"


def probe_rebinding(server, token):
    """Item 5: DNS rebinding: Host names the attacker's domain."""
    pair_status, _, _, _ = call(server.port, "POST", "/api/pair", {"code": "000000"}, source="127.0.10.2",
                                headers={"Host": "rebind.evil.example:8080"})
    ws = WebSocket(server.port, f"/api/events?access_token={token}", headers={"Host": "rebind.evil.example"}, source="127.0.10.3")
    ws.close()
    return pair_status == 403 and ws.status == 403, f"Host rebind.evil.example: pair {pair_status}, WebSocket upgrade {ws.status}"


def probe_content_type(server):
    """Item 5: JSON sent as text/plain."""
    status, _, _, _ = call(server.port, "POST", "/api/login", b'{"user": "a", "password": "b"}', source="127.0.10.4",
                           headers={"Content-Type": "text/plain"})
    return status == 415, f"POST /api/login with Content-Type text/plain: {status}"


def probe_file_modes(server, token):
    """Item 6: modes of what the server wrote."""
    call(server.port, "POST", "/api/devices/camera", {"command": "capture"}, headers={"Authorization": f"Bearer {token}"})
    found = []
    loose = False
    for name in ["events.sqlite3", "events.sqlite3-wal", "pictures", "auth"]:
        path = server.data / name
        if path.exists():
            mode = stat.S_IMODE(path.stat().st_mode)
            found.append(f"{name} {mode:o}")
            loose |= bool(mode & 0o077)
    pictures = list((server.data / "pictures").glob("*.jpg"))
    if pictures:
        mode = stat.S_IMODE(pictures[0].stat().st_mode)
        found.append(f"*.jpg {mode:o}")
        loose |= bool(mode & 0o077)
    data_mode = stat.S_IMODE(server.data.stat().st_mode)
    return not loose, "; ".join(found) + f"; data dir {data_mode:o}"


def probe_token_in_url(server, token):
    """Item 6: the picture link with the token in the URL."""
    status, _, _, _ = call(server.port, "GET", f"/api/pictures/1?access_token={token}")
    return status == 401, f"GET /api/pictures/1?access_token=…: {status}"


def probe_auth_events(server, token):
    """Item 6: are the failed attempts above in the event log?"""
    status, _, body, _ = call(server.port, "GET", "/api/events?since=0&limit=10000", headers={"Authorization": f"Bearer {token}"})
    if status != 200:
        return False, f"GET /api/events: {status}"
    events = json.loads(body)["events"]
    kinds = {}
    for event in events:
        if event["kind"] == "auth":
            kinds[event.get("outcome")] = kinds.get(event.get("outcome"), 0) + 1
    return bool(kinds.get("failed")), "auth events: " + (", ".join(f"{k} {v}" for k, v in sorted(kinds.items())) or "none")


def probe_headers(server):
    """Item 6: security headers on the page."""
    _, headers, _, _ = call(server.port, "GET", "/")
    wanted = ["content-security-policy", "x-frame-options", "x-content-type-options", "referrer-policy"]
    present = [h for h in wanted if h in headers]
    return len(present) == len(wanted), "GET / has " + (", ".join(present) if present else "none of CSP, X-Frame-Options, nosniff, Referrer-Policy")


def probe_tls(hark, repo):
    """Item 6: does TLS 1.2 accept CBC suites?"""
    server = Server(hark, repo, extra=["--lan"])
    try:
        results = []
        for label, ciphers in [("CBC", "ECDHE-ECDSA-AES128-SHA:ECDHE-RSA-AES128-SHA:ECDHE-ECDSA-AES256-SHA:ECDHE-RSA-AES256-SHA:AES128-SHA:AES256-SHA:AES128-SHA256"),
                               ("AEAD", "ECDHE-ECDSA-AES128-GCM-SHA256:ECDHE-RSA-AES128-GCM-SHA256")]:
            context = ssl.SSLContext(ssl.PROTOCOL_TLS_CLIENT)
            context.check_hostname = False
            context.verify_mode = ssl.CERT_NONE
            context.maximum_version = ssl.TLSVersion.TLSv1_2
            context.set_ciphers(ciphers)
            try:
                with socket.create_connection(("127.0.0.1", server.port), 5) as raw, context.wrap_socket(raw) as tls:
                    results.append((label, tls.cipher()[0]))
            except (ssl.SSLError, OSError) as error:
                results.append((label, None if "handshake" in str(error).lower() or "alert" in str(error).lower() else str(error)[:40]))
        cbc = results[0][1]
        text = "; ".join(f"TLS 1.2 {label} only: {'accepted ' + c if c else 'refused'}" for label, c in results)
        return cbc is None and results[1][1] is not None, text
    finally:
        server.stop()


# --- running -------------------------------------------------------------------------------------------------

PROBES = [
    ("1", "pairing: global guess budget", "pairing_budget"),
    ("1", "pairing: longest code lifetime", "code_lifetime"),
    ("2", "slow headers (slowloris) vs the page", "slowloris"),
    ("2", "WebSocket flood vs the page", "websocket_exhaustion"),
    ("2", "silent WebSocket (ping / idle)", "websocket_idle"),
    ("3", "logout and the token's open socket", "logout"),
    ("4", "listen: idle socket blocks others", "listen_busy"),
    ("4", "listen: 10 MiB of audio", "listen_flood"),
    ("5", "cross-origin pairing attempt", "cross_origin_pair"),
    ("5", "DNS rebinding (Host)", "rebinding"),
    ("5", "JSON as text/plain", "content_type"),
    ("6", "file modes", "file_modes"),
    ("6", "token in picture URL", "token_in_url"),
    ("6", "auth failures in the event log", "auth_events"),
    ("6", "security headers", "headers"),
    ("6", "TLS 1.2 cipher suites", "tls"),
]


def run(hark, repo):
    results = {}
    server = Server(hark, repo)
    try:
        token = pair(server, server.code) if server.code else None
        if token is None:
            raise RuntimeError("could not pair with the server's own code")

        def record(key, outcome):
            held, text = outcome
            results[key] = {"held": held, "text": text}
            print(f"  {key}: {'held' if held else ('n/a' if held is None else 'EXPOSED')} — {text}", file=sys.stderr)

        idle_thread, idle_result = probe_websocket_idle(server, token)
        record("headers", probe_headers(server))
        record("content_type", probe_content_type(server))
        record("cross_origin_pair", probe_cross_origin_pair(server))
        record("rebinding", probe_rebinding(server, token))
        record("code_lifetime", probe_code_lifetime(server))
        record("pairing_budget", probe_pairing_budget(server))
        record("auth_events", probe_auth_events(server, token))
        record("logout", probe_logout(server))
        record("file_modes", probe_file_modes(server, token))
        record("token_in_url", probe_token_in_url(server, token))
        record("slowloris", probe_slowloris(server))
        record("websocket_exhaustion", probe_websocket_exhaustion(server, token))
        record("listen_busy", probe_listen_busy(server, token))
        record("listen_flood", probe_listen_flood(server, token))
        idle_thread.join(90)
        record("websocket_idle", idle_result.get("outcome", (False, "no result")))
    finally:
        server.stop()
    try:
        results["tls"] = dict(zip(("held", "text"), probe_tls(hark, repo)))
        print(f"  tls: {results['tls']}", file=sys.stderr)
    except Exception as error:  # noqa: BLE001
        results["tls"] = {"held": None, "text": f"could not run: {error}"}
    return results


def verdict(entry):
    if entry is None:
        return "—"
    return {True: "held", False: "**exposed**", None: "n/a"}[entry["held"]]


def table(before, after):
    lines = ["| item | probe | before (7be8a2a) | after |", "|---|---|---|---|"]
    for item, title, key in PROBES:
        b, a = before.get(key), after.get(key)
        lines.append(f"| {item} | {title} | {verdict(b)}: {b['text'] if b else '—'} | {verdict(a)}: {a['text'] if a else '—'} |")
    return "\n".join(lines)


def main():
    parser = argparse.ArgumentParser(description=__doc__, formatter_class=argparse.RawDescriptionHelpFormatter)
    parser.add_argument("--hark", help="the hark binary to attack")
    parser.add_argument("--repo", default=str(REPO), help="its checkout (web/, Intents/; default: this one)")
    parser.add_argument("--json", help="write the results here")
    parser.add_argument("--compare", nargs=2, metavar=("BEFORE", "AFTER"), help="print the Markdown table of two result files")
    args = parser.parse_args()
    if args.compare:
        before, after = (json.loads(Path(p).read_text()) for p in args.compare)
        print(table(before, after))
        return 0
    if not args.hark:
        parser.error("--hark or --compare is needed")
    results = run(os.path.abspath(args.hark), args.repo)
    if args.json:
        Path(args.json).write_text(json.dumps(results, indent=2) + "\n")
    print(table({}, results))
    return 0 if all(r["held"] is not False for r in results.values()) else 1


if __name__ == "__main__":
    sys.exit(main())
