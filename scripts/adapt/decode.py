#!/usr/bin/env python3
"""Decode WAV clips of the speech-to-intent dev half with pocketsphinx_batch and score them.

usage: decode.py --wavdir DIR --digits 4567 --out RESULTS.jsonl [--hmm DIR] [--mllr FILE] [--jsgf G.jsgf]
                 [--fsgdir DIR]  (per-clip FSG <id>.fsg instead of one grammar: forced transcripts)

Whole-utterance decoding (`pocketsphinx_batch`, `-cmn batch` as the model's feat.params says) with the
wide beams of docs/measurements.md (`-beam 1e-80 -pbeam 1e-80 -wbeam 1e-50`). One JSON line per clip:
{"file", "intent", "slots", "transcript"}; the intent is orderDrink whenever the closed grammar gives a
hypothesis. Prints `accepted K/N = R` by the upstream rule (score.py) over the selected clips.
"""
import argparse
import json
import os
import subprocess
import sys
import tempfile
import time

sys.path.insert(0, os.path.dirname(os.path.abspath(__file__)))
import domain  # noqa: E402

MODEL = "/usr/share/pocketsphinx/model/en-us/en-us"
DICT = "/usr/share/pocketsphinx/model/en-us/cmudict-en-us.dict"
BEAMS = ["-beam", "1e-80", "-pbeam", "1e-80", "-wbeam", "1e-50"]


def run_batch(wavdir, ids, hmm, mllr=None, jsgf=None, fsgdir=None, extra=(), segments=False):
    """{id: hypothesis text} from one pocketsphinx_batch run over wavdir/<id>.wav. With `segments`, the text
    is the word segmentation instead (`-hypseg`): fillers such as <sil> included, alternate pronunciations
    marked `word(2)`."""
    with tempfile.TemporaryDirectory(prefix="adapt-decode-") as tmp:
        ctl = os.path.join(tmp, "ctl")
        hyp = os.path.join(tmp, "hyp")
        with open(ctl, "w") as f:
            f.writelines(i + "\n" for i in ids)
        cmd = ["pocketsphinx_batch", "-hmm", hmm, "-dict", DICT, "-ctl", ctl, "-cepdir", wavdir,
               "-cepext", ".wav", "-adcin", "yes", "-adchdr", "44", *BEAMS, *extra]
        cmd += ["-hypseg" if segments else "-hyp", hyp]
        if mllr:
            cmd += ["-mllr", mllr]
        if fsgdir:
            fsgctl = os.path.join(tmp, "fsgctl")
            with open(fsgctl, "w") as f:
                f.writelines(os.path.join(fsgdir, i + ".fsg") + "\n" for i in ids)
            cmd += ["-fsgctl", fsgctl]
        elif jsgf:
            cmd += ["-jsgf", jsgf]
        log = os.path.join(tmp, "log")
        with open(log, "w") as lf:
            rc = subprocess.run(cmd, stdout=lf, stderr=subprocess.STDOUT).returncode
        if rc != 0 or not os.path.exists(hyp):
            tail = open(log).read()[-3000:]
            domain.die(f"pocketsphinx_batch failed (exit {rc}): {' '.join(cmd)}\n{tail}")
        out = {}
        if segments:
            # "uttid S s T t A a L l  sf ascr lscr word  sf ascr lscr word ... ef"
            for line in open(hyp):
                f = line.split()
                if len(f) >= 9:
                    out[f[0]] = " ".join(f[12::4])
            return out
        for line in open(hyp):
            line = line.rstrip("\n")
            # "words words (uttid score)"
            if not line.endswith(")") or "(" not in line:
                continue
            text, meta = line[: line.rindex("(")].strip(), line[line.rindex("(") + 1: -1].split()
            out[meta[0]] = text
        return out


def main():
    ap = argparse.ArgumentParser(description=__doc__, formatter_class=argparse.RawDescriptionHelpFormatter)
    ap.add_argument("--wavdir", required=True)
    ap.add_argument("--digits", required=True, help="leading hex digits of the clips to decode (dev: 0-7)")
    ap.add_argument("--out", required=True)
    ap.add_argument("--hmm", default=MODEL)
    ap.add_argument("--mllr")
    ap.add_argument("--jsgf")
    ap.add_argument("--fsgdir")
    args = ap.parse_args()
    if not args.jsgf and not args.fsgdir:
        domain.die("decode.py: need --jsgf or --fsgdir")
    for p, what in ((args.wavdir, "--wavdir"), (args.hmm, "--hmm")):
        if not os.path.isdir(p):
            domain.die(f"decode.py: {what} {p}: no such directory")
    if args.mllr and not os.path.isfile(args.mllr):
        domain.die(f"decode.py: --mllr {args.mllr}: no such file")
    ids = [i for i in domain.clips(args.digits) if os.path.exists(os.path.join(args.wavdir, i + ".wav"))]
    if not ids:
        domain.die(f"decode.py: no clips {args.digits}* in {args.wavdir}")
    _, _, slots = domain.load_domain()
    reader = domain.SlotReader(slots)
    labels = domain.labels()
    t0 = time.time()
    hyps = run_batch(args.wavdir, ids, args.hmm, args.mllr, args.jsgf, args.fsgdir)
    ok = 0
    with open(args.out, "w") as f:
        for i in ids:
            text = hyps.get(i, "")
            intent = "orderDrink" if text else None
            found = reader.read(text) if text else {}
            ok += domain.accepted(labels[i + ".wav"], intent, found)
            f.write(json.dumps({"file": os.path.join(args.wavdir, i + ".wav"), "intent": intent,
                                "slots": found, "transcript": text}) + "\n")
    print(f"{args.out}: accepted {ok}/{len(ids)} = {ok / len(ids):.3f}  ({time.time() - t0:.0f} s)")


if __name__ == "__main__":
    main()
