#!/usr/bin/env python3
"""The peer for bench/server.sh: hassil behind a small aiohttp server, the "Rhasspy-style" path a user would
pick instead of Hark's companion server to get intents over HTTP.

usage: server_peer.py --grammar bench/peers/home_hassil.yaml [--port 0]
Runs in bench/.venv-server (hassil 3.x and aiohttp from PyPI; bench/server.sh makes it). Prints the bound
port alone on the first line of standard output, then serves until SIGTERM/SIGINT.

`POST /api/text-to-intent` takes the same body as Hark's Watson endpoint, `{"input": {"text": "…"},
"context": {…}}` (the context is read and ignored: hassil has no dialog), so one load script drives both
servers, and answers the way Rhasspy's endpoint of that name does: `{"text", "intent": {"name",
"confidence"}, "entities": [{"entity", "value", "raw_value"}], "slots"}`; no match is intent name "".
One process, one event loop, no authentication: what a small home-made bridge looks like.
"""
import argparse
import asyncio
import json
import signal
import sys

import yaml  # hassil depends on PyYAML
from aiohttp import web
from hassil import Intents, recognize


def load_intents(path):
    with open(path, encoding="utf-8") as f:
        return Intents.from_dict(yaml.safe_load(f))


def to_json_value(value):
    """hassil slot values may be numbers, strings or small objects; keep what JSON can carry."""
    if isinstance(value, (str, int, float, bool)) or value is None:
        return value
    return str(value)


def handler(intents):
    async def text_to_intent(request):
        try:
            body = await request.json()
            text = body["input"]["text"]
            if not isinstance(text, str):
                raise TypeError("input.text must be a string")
        except (ValueError, KeyError, TypeError) as e:
            return web.json_response({"error": f"bad request: {e}"}, status=400)
        result = recognize(text, intents)
        if result is None:
            answer = {"text": text, "intent": {"name": "", "confidence": 0.0}, "entities": [], "slots": {}}
        else:
            entities = [{"entity": name, "value": to_json_value(e.value), "raw_value": e.text}
                        for name, e in result.entities.items()]
            answer = {"text": text, "intent": {"name": result.intent.name, "confidence": 1.0},
                      "entities": entities, "slots": {e["entity"]: e["value"] for e in entities}}
        return web.json_response(answer)
    return text_to_intent


async def serve(grammar, host, port):
    app = web.Application()
    app.router.add_post("/api/text-to-intent", handler(load_intents(grammar)))
    runner = web.AppRunner(app, access_log=None)
    await runner.setup()
    site = web.TCPSite(runner, host, port, backlog=1024)
    await site.start()
    bound = runner.addresses[0][1]
    print(bound, flush=True)
    stop = asyncio.Event()
    loop = asyncio.get_running_loop()
    for number in (signal.SIGTERM, signal.SIGINT):
        loop.add_signal_handler(number, stop.set)
    await stop.wait()
    await runner.cleanup()


def main():
    ap = argparse.ArgumentParser(description=__doc__, formatter_class=argparse.RawDescriptionHelpFormatter)
    ap.add_argument("--grammar", required=True)
    ap.add_argument("--host", default="127.0.0.1")
    ap.add_argument("--port", type=int, default=0)
    args = ap.parse_args()
    try:
        asyncio.run(serve(args.grammar, args.host, args.port))
    except OSError as e:
        print(f"server_peer.py: cannot listen on {args.host}:{args.port}: {e}", file=sys.stderr)
        return 1
    return 0


if __name__ == "__main__":
    sys.exit(main())
