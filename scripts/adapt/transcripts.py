#!/usr/bin/env python3
"""Word transcripts of clean dev clips for Baum-Welch, by forced decoding against the labels.

usage: transcripts.py --wavdir CLEAN_WAV_DIR --digits 01234567 --work DIR --out-lsn F --out-ctl F

labels.json has only slot values, not the carrier words. For each clip this writes a JSGF that forces the
labelled slot values (in any order of the labelled set) but leaves the carrier phrase and the article free,
compiles it to an FSG (`sphinx_jsgf2fsg`) and decodes the clip against its own FSG (`pocketsphinx_batch
-fsgctl`). The hypothesis is the transcript: its slots are right by construction; the carrier is what the
acoustic model heard, with the pauses (<sil>) and noises it found between words. Clips with no hypothesis are left out (reported). Output: a SphinxTrain transcript
file (`<s> words </s> (id)`) and the matching control file.
"""
import argparse
import os
import subprocess
import sys

sys.path.insert(0, os.path.dirname(os.path.abspath(__file__)))
import decode  # noqa: E402
import domain  # noqa: E402


def main():
    ap = argparse.ArgumentParser(description=__doc__, formatter_class=argparse.RawDescriptionHelpFormatter)
    ap.add_argument("--wavdir", required=True)
    ap.add_argument("--digits", required=True)
    ap.add_argument("--work", required=True)
    ap.add_argument("--out-lsn", required=True)
    ap.add_argument("--out-ctl", required=True)
    args = ap.parse_args()
    carriers, articles, slots = domain.load_domain()
    labels = domain.labels()
    fsgdir = os.path.join(args.work, "fsg")
    os.makedirs(fsgdir, exist_ok=True)
    ids = [i for i in domain.clips(args.digits) if os.path.exists(os.path.join(args.wavdir, i + ".wav"))]
    for i in ids:
        fixed = {k: domain.norm(v) for k, v in labels[i + ".wav"]["slots"].items()}
        for k, v in fixed.items():
            if v not in slots.get(k, []):
                domain.die(f"labels.json {i}: {k}={v!r} is not a value of slot {k} in rhino-context.yaml")
        jsgf = os.path.join(fsgdir, i + ".jsgf")
        fsg = os.path.join(fsgdir, i + ".fsg")
        if not os.path.exists(fsg):
            with open(jsgf, "w") as f:
                f.write(domain.grammar(carriers, articles, slots, fixed))
            subprocess.run(["sphinx_jsgf2fsg", "-jsgf", jsgf, "-fsg", fsg], check=True,
                           stdout=subprocess.DEVNULL, stderr=subprocess.DEVNULL)
    hyps = decode.run_batch(args.wavdir, ids, decode.MODEL, fsgdir=fsgdir, segments=True)
    for i, seg in hyps.items():
        # Keep the pauses and noises the decoder found between words (speakers pause mid-order): without
        # them Baum-Welch would have to stretch speech phones over the pause. Leading/trailing fillers are
        # covered by <s> and </s>.
        words = seg.split()
        while words and words[0].startswith(("<", "[")):
            words.pop(0)
        while words and words[-1].startswith(("<", "[")):
            words.pop()
        hyps[i] = " ".join(w for k, w in enumerate(words) if not (w.startswith("<") and k and words[k - 1].startswith("<")))
    kept = [i for i in ids if hyps.get(i)]
    with open(args.out_lsn, "w") as lsn, open(args.out_ctl, "w") as ctl:
        for i in kept:
            lsn.write(f"<s> {hyps[i]} </s> ({i})\n")
            ctl.write(i + "\n")
    missing = sorted(set(ids) - set(kept))
    print(f"transcripts: {len(kept)}/{len(ids)} clips" + (f"; no alignment: {' '.join(missing)}" if missing else ""))


if __name__ == "__main__":
    main()
