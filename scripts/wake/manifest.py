#!/usr/bin/env python3
"""Write the manifest WakeEvaluation (Tests/HarkSpeechTests) reads: which streams each run hears, and with
which wake settings.

usage: manifest.py TRUTH OUT_MANIFEST RESULTS --run NAME SPLIT SETTINGS_JSON [--run ...]
A run hears the streams of SPLIT (dev|test) made for its phrase, and the split's real-speech streams.
"""
import argparse
import json


def main():
    parser = argparse.ArgumentParser(description=__doc__, formatter_class=argparse.RawDescriptionHelpFormatter)
    parser.add_argument("truth")
    parser.add_argument("manifest")
    parser.add_argument("results")
    parser.add_argument("--run", nargs=3, action="append", metavar=("NAME", "SPLIT", "SETTINGS_JSON"), required=True)
    parser.add_argument("--chunk", type=int, default=1600)
    parser.add_argument("--features", action="store_true", help="record each hit's spectrogram (the verifier's training data)")
    args = parser.parse_args()
    with open(args.truth) as handle:
        streams = json.load(handle)["streams"]
    runs = []
    for name, split, settings in args.run:
        settings = json.loads(settings)
        phrase = settings["phrase"]
        mine = [s["path"] for s in streams if s["split"] == split and s["phrase"] in (phrase, None)]
        if not any(s["split"] == split and s["phrase"] == phrase for s in streams):
            raise SystemExit(f"manifest.py: no {split} audio made for the phrase '{phrase}'")
        runs.append({"name": name, "settings": settings, "chunk_samples": args.chunk, "streams": mine,
                     "record_features": args.features})
    with open(args.manifest, "w") as handle:
        json.dump({"output": args.results, "runs": runs}, handle, indent=1)


if __name__ == "__main__":
    main()
