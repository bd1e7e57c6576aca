#!/usr/bin/env python3
"""Make the wake verifier's training audio (docs/wake-phrase.md, "The verifier"): streams like make_eval.py's,
with voices, sentences and noise that the evaluation's test half never uses.

- Voices: eSpeak NG English voices and variants other than the test half's (en-us+m3 and en+f4 are never used,
  nor their variants m3 and f4 with any voice), at several speeds and pitches; flite's kal and slt (the dev
  voices; rms, awb and kal16 are the test half's) shifted in pitch and tempo by sox.
- Sentences: the dev half's (even-numbered) commands, chit-chat and sound-alikes, plus sound-alikes written for
  training only (below) and sentences from bench/data/ood-tuning-sentences.txt. The phrase comes before a dev
  command, as in the evaluation.
- Noise: the generated types of scripts/adapt/general_noise.py's bank (pink, brown, fan, clatter; not its babbles:
  the flite one's talkers include test voices, the LibriVox one is the evaluation's false-wake speech), one type per
  noisy stream at 5, 10 or 15 dB by the evaluation's rule. With `--noise babble busy`: `babble`, five eSpeak NG
  talkers of this script's own (variants drawn as the extra voices are, never m3 or f4) reading the tuning
  sentences over each other, and `busy`, that babble with the bank's clatter and fan under it (a room with people,
  dishes and a hood: what a kitchen has, none of it the kitchen recording). Never the speech-to-intent kitchen
  recording.

usage: make_train.py OUT_DIR --bank BANK_DIR [--phrase "hey hark"] [--seed N] [--noise TYPE ...]
writes OUT_DIR/audio/*.raw and OUT_DIR/truth.json (split "train"); needs numpy, flite, espeak-ng, sox.
"""
import argparse
import json
import os
import random
import subprocess
import sys

import numpy as np

HERE = os.path.dirname(os.path.abspath(__file__))
sys.path.insert(0, HERE)
import make_eval as ev  # noqa: E402

# (engine, voice, eSpeak speed wpm or sox tempo, eSpeak pitch 0-99 or sox cents)
VOICES = [
    ("espeak", "en-gb+m1", 160, 40), ("espeak", "en-gb-scotland+m2", 175, 50), ("espeak", "en-us-nyc+m4", 150, 45),
    ("espeak", "en-029+m5", 170, 55), ("espeak", "en-gb-x-rp+m6", 165, 35), ("espeak", "en-us+m7", 180, 50),
    ("espeak", "en-gb-x-gbclan+f1", 160, 60), ("espeak", "en-us+f2", 170, 65), ("espeak", "en-gb-x-gbcwmd+f5", 155, 55),
    ("espeak", "en-gb+f3", 175, 70), ("espeak", "en-us+klatt", 165, 50), ("espeak", "en-gb+klatt2", 150, 40),
    ("espeak", "en-us+Andy", 170, 50), ("espeak", "en-us+Annie", 165, 60), ("espeak", "en-gb+Alex", 160, 45),
    ("espeak", "en-us+Edward", 155, 40), ("espeak", "en-us+Linda", 170, 65), ("espeak", "en-gb+Steph", 160, 60),
    ("espeak", "en-us+grandpa", 145, 35), ("espeak", "en-us+Michael", 175, 45),
    ("flite", "kal", 0.9, -300), ("flite", "kal", 1.1, 200), ("flite", "slt", 0.95, -200), ("flite", "slt", 1.1, 250),
]

# Sound-alikes written for training only (none of make_eval.py's sentences): the phrase's sounds in other words.
TRAIN_SOUND_ALIKES = [
    "hey harold over here", "hey hardy how was work", "hey harley wait up", "hey hartley come in",
    "a lark sang in the park", "hey heart of mine", "the dog began to bark", "hey hawk look up there",
    "hey hack the planet", "hey hurry up please", "the ark is on the hill", "hey park over there",
    "hey marco are you ready", "a stark warning was given", "hey charlie where are you", "hey honey i'm home",
    "hey how was your day", "hey can you help me", "okay hold on", "hey dark night", "hark at him",
    "a sharp turn ahead", "hey clark nice to see you", "the hard part is over", "hey arc light",
    "hey carla dinner is served", "the yard is large", "hey harry", "heart of the matter", "hey hot stuff",
]


LANGUAGES = ["en-us", "en-gb", "en-gb-scotland", "en-gb-x-gbclan", "en-gb-x-rp", "en-gb-x-gbcwmd", "en-029", "en-us-nyc"]
# eSpeak NG's variants, less m3 and f4 (the test half's) and the novelty ones that are not speech.
VARIANTS = ["m1", "m2", "m4", "m5", "m6", "m7", "m8", "f1", "f2", "f3", "f5", "klatt", "klatt3", "klatt4", "Adam", "Alex",
            "Alicia", "Andrea", "Andy", "Annie", "Antonio", "Auntie", "Belinda", "Benjamin", "Caleb", "David", "Denis",
            "Ed", "Edward2", "Gene", "Gene2", "Henrique", "Hugo", "Iven", "Iven2", "Iven3", "Jacky", "John", "Lee", "Marco",
            "Max", "Mike", "Paul", "Pedro", "Quincy", "Rob", "Robert", "Steph2", "Steph3", "Zac", "female2", "female3",
            "female5"]


def extra_voices(count, seed):
    """`count` more eSpeak NG voices drawn at random: an English, a variant, a speed and a pitch."""
    rng = random.Random(seed)
    voices = []
    while len(voices) < count:
        spec = ("espeak", f"{rng.choice(LANGUAGES)}+{rng.choice(VARIANTS)}", rng.randrange(130, 195, 5), rng.randrange(25, 80, 5))
        if spec not in voices and spec[1] not in ("en-us+f3",):
            voices.append(spec)
    return voices


def babble_noise(work, tuning, seed, seconds=300, talkers=5):
    """Five eSpeak NG talkers (training variants, random speeds and pitches) reading the tuning sentences in
    shuffled order, each scaled to the same level, summed; `seconds` long, cached in `work`."""
    path = os.path.join(work, f"babble-{seed}.raw")
    if os.path.exists(path):
        return np.fromfile(path, dtype="<i2").astype(np.float64)
    rng = random.Random(seed)
    n = seconds * ev.RATE
    out = np.zeros(n)
    for talker in extra_voices(talkers, seed):
        order = list(tuning)
        rng.shuffle(order)
        stream = np.concatenate([synthesize(*talker, text, work) for text in order])
        while stream.size < 2 * n:
            stream = np.concatenate([stream, stream])
        start = rng.randrange(0, stream.size - n)
        part = stream[start:start + n]
        out += part / max(1.0, float(np.sqrt(np.mean(part ** 2))))
    out *= 3000.0 / float(np.sqrt(np.mean(out ** 2)))
    out.astype("<i2").tofile(path)
    return out


def busy_noise(babble, clatter, fan):
    """Babble with the bank's clatter 3 dB and its fan 10 dB under it (each first brought to the babble's level)."""
    n = min(babble.size, clatter.size, fan.size)
    level = lambda x: float(np.sqrt(np.mean(x[:n] ** 2)))  # noqa: E731
    b = babble[:n]
    return b + clatter[:n] * (level(b) / level(clatter) * 10 ** (-3 / 20)) + fan[:n] * (level(b) / level(fan) * 10 ** (-10 / 20))


def synthesize(engine, voice, speed, pitch, text, work):
    key = f"{engine}-{voice}-{speed}-{pitch}-{text}".replace(" ", "_").replace("'", "").replace(",", "").replace("+", "_")
    raw = os.path.join(work, "tts", key + ".raw")
    if not os.path.exists(raw):
        os.makedirs(os.path.dirname(raw), exist_ok=True)
        wav = raw[:-4] + ".wav"
        effects = []
        if engine == "flite":
            subprocess.run(["flite", "-voice", voice, "-t", text, "-o", wav], check=True)
            effects = ["pitch", str(pitch), "tempo", str(speed)]
        else:
            subprocess.run(["espeak-ng", "-v", voice, "-s", str(speed), "-p", str(pitch), "-w", wav, text], check=True)
        subprocess.run(["sox", "-D", wav, "-r", str(ev.RATE), "-c", "1", "-b", "16", "-e", "signed", "-t", "raw", raw] + effects,
                       check=True)
        os.remove(wav)
    return np.fromfile(raw, dtype="<i2").astype(np.float64)


def build(out, work, spec, number, phrase, negatives, bank, seed, snrs=(5.0, 10.0, 15.0), run_on=0.0):
    engine, voice, speed, pitch = spec
    rng = np.random.default_rng(seed + number)
    order = random.Random(seed + number)
    lead, length = ev.speech_bounds(synthesize(engine, voice, speed, pitch, phrase, work))
    phrase_seconds = (length - lead) / ev.RATE
    # A share `run_on` of the positives go straight on into the command (no comma, so no pause), as many people say it.
    items = [("positive", f"{phrase}{'' if run_on > 0 and order.random() < run_on else ','} {command}") for command in ev.half(ev.COMMANDS, "dev")]
    items += [("negative", text) for text in negatives]
    order.shuffle(items)
    clips = [(kind, text, synthesize(engine, voice, speed, pitch, text, work)) for kind, text in items]
    kinds = sorted(bank)
    noise_kind = kinds[number % len(kinds)]
    snr = snrs[number % len(snrs)]
    streams = []
    for condition in ("clean", f"{noise_kind}{int(snr)}"):
        noise = ev.Noise(bank[noise_kind], int(rng.integers(0, bank[noise_kind].size)))
        audio, truth = ev.mix_stream(clips, phrase_seconds, None if condition == "clean" else noise, snr, rng)
        name = f"train-{phrase.replace(' ', '_')}-{number:02d}-{engine}-{voice.replace('+', '_')}-{condition}.raw"
        path = os.path.join(out, "audio", name)
        ev.write_raw(path, audio)
        streams.append({"path": path, "split": "train", "phrase": phrase, "source": engine, "voice": f"{voice} {speed} {pitch}",
                        "condition": "clean" if condition == "clean" else "noise", "noise": condition, "items": truth,
                        "seconds": audio.size / ev.RATE})
    return streams


def main():
    parser = argparse.ArgumentParser(description=__doc__, formatter_class=argparse.RawDescriptionHelpFormatter)
    parser.add_argument("out")
    parser.add_argument("--bank", required=True, help="scripts/adapt/general_noise.py bank OUT's folder")
    parser.add_argument("--phrase", default="hey hark")
    parser.add_argument("--seed", type=int, default=31)
    parser.add_argument("--extra", type=int, default=0, help="this many more eSpeak NG voices, drawn at random (seeded)")
    parser.add_argument("--negatives", type=int, default=0, help="at most this many non-wake sentences per voice (0: all)")
    parser.add_argument("--only-extra", action="store_true", help="make the extra voices' streams only")
    parser.add_argument("--snr", type=float, nargs="+", default=[5.0, 10.0, 15.0],
                        help="the noisy streams' signal-to-noise ratios, dB, in turn (default 5 10 15)")
    parser.add_argument("--noise", nargs="+", default=["brown", "clatter", "fan", "pink"],
                        choices=["brown", "clatter", "fan", "pink", "babble", "busy"],
                        help="the noisy streams' noise types, in turn (default the bank's four generated ones)")
    parser.add_argument("--run-on", type=float, default=0.0, metavar="SHARE",
                        help="this share of the positives said without the pause after the phrase (default 0)")
    args = parser.parse_args()
    os.makedirs(os.path.join(args.out, "audio"), exist_ok=True)
    work = os.path.join(args.out, "cache")
    generated = {kind: ev.read_audio(os.path.join(args.bank, kind + ".wav")) for kind in ("pink", "brown", "fan", "clatter")}
    chitchat = ev.sentences(os.path.join(HERE, "..", "..", "bench", "data", "ood-sentences.txt"))
    tuning = ev.sentences(os.path.join(HERE, "..", "..", "bench", "data", "ood-tuning-sentences.txt"))
    if {"babble", "busy"} & set(args.noise):
        generated["babble"] = babble_noise(work, tuning, args.seed + 1000)
        generated["busy"] = busy_noise(generated["babble"], generated["clatter"], generated["fan"])
    bank = {kind: generated[kind] for kind in args.noise}
    rng = random.Random(args.seed)
    streams = []
    voices = VOICES + extra_voices(args.extra, args.seed)
    for number, spec in enumerate(voices):
        negatives = (ev.half(ev.COMMANDS, "dev") + ev.half(chitchat, "dev") + ev.half(ev.SOUND_ALIKES, "dev")
                     + TRAIN_SOUND_ALIKES + rng.sample(tuning, 20))
        if args.negatives:
            negatives = rng.sample(negatives, args.negatives)
        if args.only_extra and number < len(VOICES):
            continue
        streams += build(args.out, work, spec, number, args.phrase, negatives, bank, args.seed, args.snr, args.run_on)
        print(f"voice {number + 1}/{len(voices)}: {spec}", file=sys.stderr)
    with open(os.path.join(args.out, "truth.json"), "w") as handle:
        json.dump({"streams": streams, "seed": args.seed}, handle, indent=1)
    hours = sum(s["seconds"] for s in streams) / 3600
    print(f"{len(streams)} streams, {hours:.2f} h of audio in {args.out}", file=sys.stderr)


if __name__ == "__main__":
    main()
