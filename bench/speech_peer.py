#!/usr/bin/env python3
"""The speech-to-intent peer: plain PocketSphinx 5.1.1 (PyPI) with a closed JSGF grammar of the domain.

usage (inside bench/.venv-pocketsphinx):
  speech_peer.py --write-grammar bench/peers/barista.jsgf      generate the grammar from rhino-context.yaml
  speech_peer.py --grammar G.jsgf --out RESULTS.jsonl WAV...   decode (or --list FILE with one path a line)

Each clip is decoded as a whole utterance (`process_raw(full_utt=True)`, `bestpath=False`: with bestpath the
5.1.1 wheel hangs on some clips), with the wheel's own en-us model and dictionary. The intent is orderDrink
whenever the grammar gives a hypothesis (a closed grammar has no rejection); slots are read off the
hypothesis by longest match against the slot value lists. One line per clip:
  {"file", "intent", "slots", "transcript", "decode_ms", "audio_ms"}
`decode_ms` is the time from handing over the whole clip to having the result: for whole-utterance decoding
it is also the latency from the end of the audio to the result.
"""
import argparse
import json
import os
import sys
import time
import wave

sys.path.insert(0, os.path.dirname(os.path.abspath(__file__)))
import speechlib  # noqa: E402


def read_wav(path):
    with wave.open(path, "rb") as w:
        if w.getframerate() != 16000 or w.getnchannels() != 1 or w.getsampwidth() != 2:
            raise ValueError(f"{path}: expected 16 kHz mono 16-bit WAV, got {w.getframerate()} Hz, "
                             f"{w.getnchannels()} channel(s), {8 * w.getsampwidth()}-bit")
        return w.readframes(w.getnframes()), w.getnframes() / 16000.0


def main():
    ap = argparse.ArgumentParser(description=__doc__, formatter_class=argparse.RawDescriptionHelpFormatter)
    ap.add_argument("--write-grammar", metavar="PATH")
    ap.add_argument("--grammar", default=os.path.join(speechlib.ROOT, "bench", "peers", "barista.jsgf"))
    ap.add_argument("--out")
    ap.add_argument("--list", help="file with one WAV path per line")
    ap.add_argument("wavs", nargs="*")
    args = ap.parse_args()

    expressions, slots = speechlib.domain()
    if args.write_grammar:
        with open(args.write_grammar, "w", encoding="utf-8") as f:
            f.write(speechlib.factored_jsgf(expressions["orderDrink"], slots))
        print(f"wrote {args.write_grammar}")
        return

    from pocketsphinx import Decoder, get_model_path  # only inside the peer's venv

    files = list(args.wavs)
    if args.list:
        files += [line.strip() for line in open(args.list) if line.strip()]
    if not files or not args.out:
        speechlib.die("speech_peer: need --out and at least one WAV (or --list)")
    if not os.path.isfile(args.grammar):
        speechlib.die(f"speech_peer: {args.grammar}: no such grammar (run with --write-grammar first)")

    start = time.perf_counter()
    decoder = Decoder(hmm=get_model_path("en-us/en-us"), dict=get_model_path("en-us/cmudict-en-us.dict"),
                      jsgf=args.grammar, bestpath=False, logfn=os.devnull)
    load_ms = (time.perf_counter() - start) * 1000
    reader = speechlib.SlotReader(slots)
    with open(args.out, "w", encoding="utf-8") as out:
        for path in files:
            pcm, seconds = read_wav(path)
            t0 = time.perf_counter()
            decoder.start_utt()
            decoder.process_raw(pcm, full_utt=True)
            decoder.end_utt()
            hyp = decoder.hyp()
            decode_ms = (time.perf_counter() - t0) * 1000
            text = hyp.hypstr if hyp is not None else ""
            row = {"file": path, "intent": "orderDrink" if text else None,
                   "slots": reader.read(text) if text else {}, "transcript": text,
                   "decode_ms": round(decode_ms, 2), "audio_ms": round(seconds * 1000, 1)}
            out.write(json.dumps(row) + "\n")
            out.flush()
    print(json.dumps({"files": len(files), "load_ms": round(load_ms, 1)}), file=sys.stderr)


if __name__ == "__main__":
    main()
