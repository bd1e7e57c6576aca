"""Shared helpers for the benchmark drivers: running `hark`, reading its JSON, checking data, printing tables.

Standard library only; runs on the system python3 (3.11).
"""
import datetime
import json
import os
import re
import shutil
import subprocess
import sys

ROOT = os.path.dirname(os.path.dirname(os.path.abspath(__file__)))


def _shared_benchmarks():
    """`../shared/benchmarks` from the repository root. In a `git worktree` checkout that path is relative
    to the main checkout, so fall back to it; $HARK_BENCHMARKS overrides both."""
    if os.environ.get("HARK_BENCHMARKS"):
        return os.environ["HARK_BENCHMARKS"]
    here = os.path.normpath(os.path.join(ROOT, "..", "shared", "benchmarks"))
    if os.path.isdir(here):
        return here
    try:
        common = subprocess.run(["git", "rev-parse", "--path-format=absolute", "--git-common-dir"],
                                capture_output=True, text=True, cwd=ROOT).stdout.strip()
    except OSError:
        common = ""
    if common:
        main_checkout = os.path.dirname(common)
        candidate = os.path.normpath(os.path.join(main_checkout, "..", "shared", "benchmarks"))
        if os.path.isdir(candidate):
            return candidate
    return here


SHARED = _shared_benchmarks()
HOME_WORKSPACE = os.path.join(ROOT, "Intents", "home.json")
PARAPHRASES = os.path.join(ROOT, "bench", "data", "home-paraphrases.jsonl")
OUT = os.path.join(ROOT, "bench", "out")


def hark_binary():
    """The binary under test: $HARK, else the release build."""
    return os.environ.get("HARK", os.path.join(ROOT, ".build", "release", "hark"))


class HarkError(RuntimeError):
    pass


def pin_to_one_core(argv):
    """Prefix argv with `taskset -c 0` where taskset exists, so every engine is timed on one core."""
    return ["taskset", "-c", "0", *argv] if shutil.which("taskset") else argv


def hark_eval(workspace, cases, one_core=False, extra=()):
    """Run `hark eval --workspace W --json [EXTRA...] CASES` and return its JSON report."""
    argv = [hark_binary(), "eval", "--workspace", workspace, "--json", *extra, cases]
    if one_core:
        argv = pin_to_one_core(argv)
    try:
        proc = subprocess.run(argv, capture_output=True, text=True, cwd=ROOT)
    except OSError as error:
        raise HarkError(f"cannot run {argv[0]}: {error} (build it with `swift build -c release`)") from None
    if proc.returncode != 0:
        raise HarkError(f"{' '.join(argv)} exited {proc.returncode}: {proc.stderr.strip()[:500]}")
    return parse_report(proc.stdout, " ".join(argv))


def parse_report(stdout, what):
    """The report is one JSON object; tolerate log lines around it by taking the last line that is one."""
    try:
        return json.loads(stdout)
    except json.JSONDecodeError:
        pass
    for line in reversed(stdout.splitlines()):
        line = line.strip()
        if line.startswith("{"):
            try:
                return json.loads(line)
            except json.JSONDecodeError:
                continue
    raise HarkError(f"{what} printed no JSON report: {stdout.strip()[:300]!r}")


def read_jsonl(path):
    with open(path, encoding="utf-8") as f:
        return [json.loads(line) for line in f if line.strip()]


def write_jsonl(path, rows):
    os.makedirs(os.path.dirname(path), exist_ok=True)
    with open(path, "w", encoding="utf-8") as f:
        for row in rows:
            f.write(json.dumps(row, ensure_ascii=False) + "\n")


_NON_WORD = re.compile(r"[^\w\s']+")


def normalise(text):
    """Case-, punctuation- and spacing-insensitive form, so "Lights off." and "lights off" collide."""
    return " ".join(_NON_WORD.sub(" ", text.lower()).split())


def paraphrase_problems(workspace_path=HOME_WORKSPACE, paraphrases_path=PARAPHRASES):
    """Why the paraphrase set is not a fair held-out test of the workspace (empty list when it is)."""
    workspace = json.load(open(workspace_path, encoding="utf-8"))
    examples = {}
    for intent in workspace["intents"]:
        for example in intent["examples"]:
            examples[normalise(example["text"])] = intent["intent"]
    for counter in workspace.get("counterexamples", []):
        examples[normalise(counter["text"])] = "counterexample"
    known = {intent["intent"] for intent in workspace["intents"]}
    problems, seen = [], set()
    for number, case in enumerate(read_jsonl(paraphrases_path), 1):
        key = normalise(case["text"])
        if key in examples:
            problems.append(f"line {number}: {case['text']!r} is already in the workspace ({examples[key]})")
        if key in seen:
            problems.append(f"line {number}: {case['text']!r} appears twice in the paraphrase set")
        seen.add(key)
        if case.get("intent") not in known:
            problems.append(f"line {number}: intent {case.get('intent')!r} is not in the workspace")
    return problems


def provenance():
    """Enough to tell two result files apart: when, which commit, which binary."""
    def git(*args):
        try:
            return subprocess.run(["git", *args], capture_output=True, text=True, cwd=ROOT).stdout.strip()
        except OSError:
            return ""
    return {
        "date": datetime.datetime.now(datetime.timezone.utc).isoformat(timespec="seconds"),
        "commit": git("rev-parse", "--short", "HEAD"),
        "dirty": bool(git("status", "--porcelain", "--untracked-files=no")),
        "hark": os.path.relpath(hark_binary(), ROOT),
        "host": os.uname().nodename,
        "cpus": os.cpu_count(),
    }


def fmt(value, digits=3):
    if value is None:
        return "-"
    if isinstance(value, float):
        return f"{value:.{digits}f}"
    return str(value)


def print_table(headers, rows, file=sys.stdout):
    cells = [[fmt(c) for c in row] for row in rows]
    widths = [max(len(h), *(len(r[i]) for r in cells)) if cells else len(h) for i, h in enumerate(headers)]
    line = "  ".join(h.ljust(w) for h, w in zip(headers, widths))
    print(line, file=file)
    print("  ".join("-" * w for w in widths), file=file)
    for row in cells:
        print("  ".join(c.ljust(w) for c, w in zip(row, widths)), file=file)


def write_json(path, data):
    os.makedirs(os.path.dirname(path), exist_ok=True)
    with open(path, "w", encoding="utf-8") as f:
        json.dump(data, f, indent=2, ensure_ascii=False)
        f.write("\n")
