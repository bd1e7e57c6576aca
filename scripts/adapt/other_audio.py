#!/usr/bin/env python3
"""Does an adapted model hurt other audio? Decode audio that has nothing to do with the coffee benchmark.

usage: other_audio.py --work DIR [--hmm DIR] [--mllr FILE] [--mean FILE]

- rhasspy-en: the 49 command WAVs (resampled to 16 kHz with sox), a JSGF of the 49 expected sentences;
  counts exact sentence matches.
- recorded-speech: goforward.raw and the 5 LibriVox clips, decoded with the en-us trigram LM
  (`en-us.lm.bin`); word error rate against the transcripts ("go forward ten meters" for goforward).
Prints one summary line; per-clip hypotheses go to DIR/<tag>-*.txt.
"""
import argparse
import glob
import json
import os
import subprocess
import sys

sys.path.insert(0, os.path.dirname(os.path.abspath(__file__)))
import decode  # noqa: E402
import domain  # noqa: E402

LM = "/usr/share/pocketsphinx/model/en-us/en-us.lm.bin"


def wer(ref, hyp):
    r, h = ref.split(), hyp.split()
    d = list(range(len(h) + 1))
    for i in range(1, len(r) + 1):
        prev, d[0] = d[0], i
        for j in range(1, len(h) + 1):
            cur = min(d[j] + 1, d[j - 1] + 1, prev + (r[i - 1] != h[j - 1]))
            prev, d[j] = d[j], cur
    return d[len(h)], len(r)


def main():
    ap = argparse.ArgumentParser(description=__doc__, formatter_class=argparse.RawDescriptionHelpFormatter)
    ap.add_argument("--work", required=True)
    ap.add_argument("--hmm", default=decode.MODEL)
    ap.add_argument("--mllr")
    ap.add_argument("--mean", help="a means file to load instead of the model's (pocketsphinx -mean)")
    ap.add_argument("--tag", default="run")
    args = ap.parse_args()
    bench = domain.find_benchmarks()
    extra = ["-mean", args.mean] if args.mean else []

    rdir = os.path.join(args.work, "rhasspy16k")
    os.makedirs(rdir, exist_ok=True)
    expected = {}
    for j in sorted(glob.glob(os.path.join(bench, "rhasspy-en", "*.json"))):
        name = os.path.basename(j)[:-5]
        wav = j[:-5] + ".wav"
        if not os.path.exists(wav):
            continue
        expected[name] = " ".join(json.load(open(j))["text"].lower().split())
        out = os.path.join(rdir, name + ".wav")
        if not os.path.exists(out):
            subprocess.run(["sox", wav, "-r", "16000", "-c", "1", "-b", "16", out], check=True)
    jsgf = os.path.join(args.work, "rhasspy.jsgf")
    with open(jsgf, "w") as f:
        f.write("#JSGF V1.0;\ngrammar rhasspy;\npublic <s> = " + " | ".join(sorted(set(expected.values()))) + ";\n")
    hyps = decode.run_batch(rdir, sorted(expected), args.hmm, args.mllr, jsgf=jsgf, extra=extra)
    ok = sum(hyps.get(n, "") == t for n, t in expected.items())
    with open(os.path.join(args.work, f"{args.tag}-rhasspy.txt"), "w") as f:
        for n in sorted(expected):
            f.write(f"{n}\t{hyps.get(n, '')}\n")

    sdir = os.path.join(args.work, "recorded16k")
    os.makedirs(sdir, exist_ok=True)
    refs = {"goforward": "go forward ten meters"}
    src = os.path.join(bench, "recorded-speech")
    subprocess.run(["sox", "-t", "raw", "-r", "16000", "-e", "signed", "-b", "16", "-c", "1",
                    os.path.join(src, "goforward.raw"), os.path.join(sdir, "goforward.wav")], check=True)
    for t in sorted(glob.glob(os.path.join(src, "*.txt"))):
        name = os.path.basename(t)[:-4]
        refs[name] = " ".join(open(t).read().lower().split())
        subprocess.run(["sox", t[:-4] + ".wav", "-r", "16000", "-c", "1", "-b", "16",
                        os.path.join(sdir, name + ".wav")], check=True)
    hyps2 = decode.run_batch(sdir, sorted(refs), args.hmm, args.mllr, extra=["-lm", LM, *extra])
    errs = words = 0
    with open(os.path.join(args.work, f"{args.tag}-recorded.txt"), "w") as f:
        for n in sorted(refs):
            e, w = wer(refs[n], hyps2.get(n, ""))
            errs, words = errs + e, words + w
            f.write(f"{n}\t{e}/{w}\t{hyps2.get(n, '')}\n")
    print(f"{args.tag}: rhasspy-en {ok}/{len(expected)} exact; recorded-speech WER {errs}/{words} = "
          f"{errs / words:.3f}; goforward: {hyps2.get('goforward', '')!r}")


if __name__ == "__main__":
    main()
