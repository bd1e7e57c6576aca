#!/usr/bin/env python3
"""Make the audio for the wake-phrase evaluation (docs/wake-phrase.md) and the manifest the Swift side reads.

Streams, 16 kHz s16le raw, each a long stretch of listening:
- one per synthetic voice and condition (clean with a faint noise floor, kitchen noise at 10 dB): positives
  ("<phrase>, <command>") shuffled among negatives (the commands alone, chit-chat, sound-alike sentences),
  1-2 s apart;
- real speech with no wake phrase: the speech-to-intent benchmark's coffee orders (50+ speakers, its own
  dev/test split by file name), LibriVox read speech, and the kitchen noise on its own.
Two disjoint halves: "dev" (voices flite kal, slt; eSpeak NG en-us, en-us+f3; even-numbered sentences; the
benchmark's dev half; the first minute of kitchen noise) for choosing the phrase and thresholds, and "test"
(flite rms, awb, kal16; eSpeak NG en-us+m3, en+f4; odd-numbered sentences; the benchmark's test half;
LibriVox; the second minute of kitchen noise) for the reported figures.

usage: make_eval.py OUT_DIR --benchmarks DIR --phrase "hey hark" [--phrase ...] [--half dev|test|both]
                    [--noise FILE --noise-name NAME] [--run-on]
--run-on: the positives run straight on ("<phrase> <command>", no comma, so the synthesisers make no pause), and only
the voices' streams are made (the real speech is the same as without it): how the spotter does when a user does not
stop after the phrase.
writes OUT_DIR/audio/*.raw and OUT_DIR/truth.json; needs numpy, flite, espeak-ng, sox.
"""
import argparse
import json
import os
import random
import subprocess
import sys

import numpy as np

HERE = os.path.dirname(os.path.abspath(__file__))
RATE = 16000
SNR_DB = 10.0
FRAME = 2048  # the speech-to-intent benchmark's frame for its max-frame-energy SNR

VOICES = {
    "dev": [("flite", "kal"), ("flite", "slt"), ("espeak", "en-us"), ("espeak", "en-us+f3")],
    "test": [("flite", "rms"), ("flite", "awb"), ("flite", "kal16"), ("espeak", "en-us+m3"), ("espeak", "en+f4")],
}

# Commands for the appliance (home.json's kind); each is said after the phrase (positives) and alone (negatives).
COMMANDS = [
    "turn on the light", "switch off the lamp", "take a picture", "what time is it", "is the light on",
    "turn off the light", "take a photo", "switch on the lamp", "what's the time", "lights off please",
    "turn the light on", "snap a picture of the door", "is the lamp off", "tell me the time", "light on",
    "turn off the lamp please", "take a photo of the kitchen", "could you turn the light off", "what time is it now",
    "switch the light off", "dim the light", "show me the camera", "good morning", "thank you", "goodbye",
    "help", "turn on the kitchen light", "is it dark in here", "open the blinds", "set a timer",
    "what is the weather like", "hello there", "switch the lamp on please", "picture please", "lamp off",
    "make it brighter", "take another picture", "is anybody at the door", "turn everything off", "stop",
    "what day is it", "turn the lamp off", "please take a picture", "the light please", "lights on",
    "never mind", "can you hear me", "cancel that", "switch everything on", "what's the date today",
]

# Sentences that sound like the phrase without being it: the hard negatives.
SOUND_ALIKES = [
    "we parked the car in the dark", "hey mark are you coming", "okay park it over there", "hark the herald angels sing",
    "hey jack how are you", "a dark bark in the park", "they heard a lark at dawn", "okay but not today",
    "hey hey what's going on", "the shark swam past the ark", "hey there hank", "okay hank let's go",
    "i heard the dog bark", "her heart was racing", "okay harry sit down", "hey harper dinner is ready",
    "that's a hard call", "hey how are you", "this car is hard to park", "mark my words", "hey karl over here",
    "okay carl", "the harp was out of tune", "hey harvey",
]

# Sound-alikes of other candidate phrases, heard only in that phrase's streams (SOUND_ALIKES was written for "hey
# hark"; without these a longer phrase would meet no hard negative of its own). Split in halves like the rest.
PHRASE_SOUND_ALIKES = {
    "hark assistant": [
        "ask the park assistant", "the art assistant is late", "her assistant called back", "a smart assistant can help",
        "mark is distant these days", "the dark is persistent", "this watch is water resistant",
        "the hard part is the distance", "the bark was resistant to rot", "my car assistant is broken",
        "the lab assistant is here", "harsh assistance was needed", "call your personal assistant",
        "a heart assist device",
    ],
}


def sentences(path):
    with open(path, encoding="utf-8") as handle:
        return [line.strip() for line in handle if line.strip() and not line.startswith("#")]


def half(items, name):
    return items[0::2] if name == "dev" else items[1::2]


def synthesize(engine, voice, text, work):
    """16 kHz mono float samples of `text` spoken by one voice (cached by name)."""
    key = f"{engine}-{voice}-{text}".replace(" ", "_").replace("'", "").replace(",", "").replace("+", "_")
    raw = os.path.join(work, "tts", key + ".raw")
    if not os.path.exists(raw):
        os.makedirs(os.path.dirname(raw), exist_ok=True)
        wav = raw[:-4] + ".wav"
        if engine == "flite":
            subprocess.run(["flite", "-voice", voice, "-t", text, "-o", wav], check=True)
        else:
            subprocess.run(["espeak-ng", "-v", voice, "-w", wav, text], check=True)
        subprocess.run(["sox", "-D", wav, "-r", str(RATE), "-c", "1", "-b", "16", "-e", "signed", "-t", "raw", raw], check=True)
        os.remove(wav)
    return np.fromfile(raw, dtype="<i2").astype(np.float64)


def read_audio(path):
    raw = subprocess.run(["sox", path, "-t", "raw", "-r", str(RATE), "-c", "1", "-e", "signed", "-b", "16", "-"],
                         check=True, capture_output=True).stdout
    return np.frombuffer(raw, dtype="<i2").astype(np.float64)


def speech_bounds(samples):
    """First and last sample of 10 ms frames louder than 1/30 of the loudest frame's RMS."""
    n = samples.size // 160
    rms = np.sqrt((samples[: n * 160].reshape(n, 160) ** 2).mean(axis=1))
    loud = np.nonzero(rms > rms.max() / 30)[0]
    return (int(loud[0]) * 160, int(loud[-1] + 1) * 160) if loud.size else (0, samples.size)


def max_frame_energy(pcm):
    n = max(1, pcm.size // FRAME)
    frames = np.resize(pcm, n * FRAME).reshape(n, FRAME)
    return float((frames ** 2).sum(axis=1).max())


class Noise:
    """The kitchen noise read from a moving offset (wrapping), so a stream hears it continuously."""

    def __init__(self, samples, start):
        self.samples, self.offset = samples, start

    def take(self, count):
        out = np.take(self.samples, np.arange(self.offset, self.offset + count), mode="wrap")
        self.offset = (self.offset + count) % self.samples.size
        return out


def floor(count, rng):
    # The recogniser's microphone floor (MicrophoneFloor): about -58 dBFS, so there is no digital silence.
    return rng.integers(-40, 41, count).astype(np.float64)


def write_raw(path, samples):
    np.clip(np.round(samples), -32768, 32767).astype("<i2").tofile(path)


def build_voice_streams(out, work, split, engine, voice, phrase, negatives, kitchen, rng_seed, noise_name="kitchen",
                        run_on=False):
    rng = np.random.default_rng(rng_seed)
    order = random.Random(rng_seed)
    lead, phrase_length = speech_bounds(synthesize(engine, voice, phrase, work))
    phrase_seconds = (phrase_length - lead) / RATE
    items = [("positive", f"{phrase}{'' if run_on else ','} {command}") for command in half(COMMANDS, split)]
    items += [("negative", text) for text in negatives]
    order.shuffle(items)
    clips = [(kind, text, synthesize(engine, voice, text, work)) for kind, text in items]
    streams = []
    for condition in ("clean", f"{noise_name}10"):
        noise = Noise(kitchen, int(rng.integers(0, kitchen.size)))
        audio, truth = mix_stream(clips, phrase_seconds, None if condition == "clean" else noise, SNR_DB, rng)
        name = f"{split}-{phrase.replace(' ', '_')}-{engine}-{voice.replace('+', '_')}-{condition}{'-runon' if run_on else ''}.raw"
        path = os.path.join(out, "audio", name)
        write_raw(path, audio)
        streams.append({"path": path, "split": split, "phrase": phrase, "source": engine, "voice": voice,
                        "condition": condition + (" run-on" if run_on else ""), "items": truth, "seconds": audio.size / RATE})
    return streams


def mix_stream(clips, phrase_seconds, noise, snr_db, rng):
    """One stream of `clips` ([(kind, text, samples)], positives starting with the phrase, `phrase_seconds` long),
    each after 1-2 s of quiet, then a second more: over the microphone floor when `noise` is None, else with
    `noise` (a `Noise`) at `snr_db` by the speech-to-intent benchmark's max-frame-energy rule, each clip scaled
    for itself. Returns the samples and the truth items (times in seconds)."""
    parts, truth, position, scale = [], [], 0, 0.0
    for kind, text, clip in clips:
        gap = int(RATE * rng.uniform(1.0, 2.0))
        segment = np.concatenate([np.zeros(gap), clip])
        if noise is None:
            segment += floor(segment.size, rng)
        else:
            background = noise.take(segment.size)
            scale = np.sqrt(max_frame_energy(clip) / max(1e-9, max_frame_energy(background[gap:])) / 10 ** (snr_db / 10))
            segment += background * scale
        start, _ = speech_bounds(clip)
        entry = {"kind": kind, "text": text, "start": (position + gap) / RATE, "end": (position + segment.size) / RATE}
        if kind == "positive":
            entry["phrase_end"] = (position + gap + start) / RATE + phrase_seconds
        truth.append(entry)
        parts.append(segment)
        position += segment.size
    parts.append(np.zeros(RATE) + (floor(RATE, rng) if noise is None else noise.take(RATE) * scale))
    return np.concatenate(parts), truth


def build_real_streams(out, benchmarks, split, kitchen, rng_seed, noise_name="kitchen"):
    """Speech with no wake phrase at all, in streams of about five minutes."""
    rng = np.random.default_rng(rng_seed)
    clean = os.path.join(benchmarks, "speech-to-intent", "clean")
    first = "01234567" if split == "dev" else "89abcdef"
    files = sorted(f for f in os.listdir(clean) if f[0].lower() in first)
    streams, parts, count, index = [], [], 0, 0

    def flush(kind, source):
        nonlocal parts, count, index
        if not parts:
            return
        path = os.path.join(out, "audio", f"{split}-{kind}-{index}.raw")
        audio = np.concatenate(parts)
        write_raw(path, audio)
        streams.append({"path": path, "split": split, "phrase": None, "source": source, "voice": "real",
                        "condition": kind, "items": [], "seconds": audio.size / RATE, "clips": count})
        parts, count, index = [], 0, index + 1

    length = 0
    for name in files:
        clip = read_audio(os.path.join(clean, name))
        parts.append(np.concatenate([clip, floor(int(RATE * 0.5), rng)]))
        count += 1
        length += parts[-1].size
        if length > RATE * 300:
            flush("coffee-orders", "speech-to-intent " + split)
            length = 0
    flush("coffee-orders", "speech-to-intent " + split)
    minute = RATE * 60
    parts, count = [kitchen[:minute] if split == "dev" else kitchen[minute:2 * minute]], 1
    flush(f"{noise_name}-noise", f"{noise_name} noise alone")
    if split == "test":
        speech = os.path.join(benchmarks, "recorded-speech")
        for name in sorted(f for f in os.listdir(speech) if f.endswith(".wav")):
            parts.append(np.concatenate([read_audio(os.path.join(speech, name)), floor(RATE // 2, rng)]))
            count += 1
        flush("librivox", "LibriVox read speech")
    return streams


def main():
    parser = argparse.ArgumentParser(description=__doc__, formatter_class=argparse.RawDescriptionHelpFormatter)
    parser.add_argument("out")
    parser.add_argument("--benchmarks", required=True)
    parser.add_argument("--phrase", action="append", required=True)
    parser.add_argument("--half", choices=["dev", "test", "both"], default="both")
    parser.add_argument("--seed", type=int, default=20240601)
    parser.add_argument("--noise", help="another noise recording instead of the benchmark's kitchen (any format sox reads), "
                        "to check the settings on noise they were not chosen on")
    parser.add_argument("--noise-name", default="kitchen", help="what the noise conditions are called (default kitchen)")
    parser.add_argument("--run-on", action="store_true", help="positives without the pause after the phrase; voices' streams only")
    args = parser.parse_args()
    os.makedirs(os.path.join(args.out, "audio"), exist_ok=True)
    work = os.path.join(args.out, "cache")
    kitchen = read_audio(args.noise or os.path.join(args.benchmarks, "speech-to-intent", "noise", "kitchen.flac"))
    chitchat = sentences(os.path.join(HERE, "..", "..", "bench", "data", "ood-sentences.txt"))
    streams = []
    for split in (["dev", "test"] if args.half == "both" else [args.half]):
        negatives = half(COMMANDS, split) + half(chitchat, split) + half(SOUND_ALIKES, split)
        print(f"{split}: {len(negatives)} non-wake sentences per voice", file=sys.stderr)
        for phrase in args.phrase:
            mine = negatives + half(PHRASE_SOUND_ALIKES.get(phrase, []), split)
            for number, (engine, voice) in enumerate(VOICES[split]):
                streams += build_voice_streams(args.out, work, split, engine, voice, phrase, mine, kitchen,
                                               args.seed + number, args.noise_name, args.run_on)
        if not args.run_on:
            streams += build_real_streams(args.out, args.benchmarks, split, kitchen, args.seed, args.noise_name)
    with open(os.path.join(args.out, "truth.json"), "w") as handle:
        json.dump({"streams": streams, "seed": args.seed, "snr_db": SNR_DB}, handle, indent=1)
    hours = sum(s["seconds"] for s in streams) / 3600
    print(f"{len(streams)} streams, {hours:.2f} h of audio in {args.out}", file=sys.stderr)


if __name__ == "__main__":
    main()
