"""Refactoring check: the demo's and the examples' outputs before and after a change, compared.

A restructuring (issue 30) must not change what a run computes: predictions bit-identical,
statistics equal to 1e-12. ``capture`` runs ``h2h demo`` and every example of ``examples/``
that runs offline with the code of the clone this script sits in (its ``src/`` first on
``PYTHONPATH``) and keeps each run's records; ``compare`` checks two captures against each
other::

    git stash / checkout the old code
    PYTHONPATH=$PWD/src .venv/bin/python benchmarks/identical_outputs.py capture /tmp/before
    ... the new code ...
    PYTHONPATH=$PWD/src .venv/bin/python benchmarks/identical_outputs.py capture /tmp/after
    .venv/bin/python benchmarks/identical_outputs.py compare /tmp/before /tmp/after

``render``, ``extras`` and ``rendered-diff`` compare what is *shown*: every report file and terminal text
drawn from a capture's records by the old and the new code (``benchmarks/rendered.py``).

``capture`` copies ``examples/`` into a fresh work folder (with ``shared`` beside it, as a
clone has), builds the examples' local models there with the clone's own build scripts, runs
each example into that folder and copies ``results.json``, ``predictions.npz`` and any
``suite.json`` / ``training.json`` / ``sweep.json`` to ``OUTDIR/<run>/`` (the work folder is
deleted unless ``--keep-work``). The speed phase is switched off where a command allows it
(``h2h demo`` has no switch: its speed section is ignored by ``compare``). One CPU thread,
runs in sequence: 29 minutes on a 2-core machine shared with other jobs (load average 12), 10
of them training the ants/bees models. ``OUTDIR/manifest.json`` lists the runs captured,
skipped (and why), failed, and their wall times.

``compare`` prints one line per run (``identical``, or ``differs`` with the first ten
differences) and exits 1 on any difference. Keys only the newer capture holds are reported
as ``added`` and tolerated; removed or changed keys are differences. :data:`IGNORED_KEYS` and
:data:`IGNORED_PATHS` name what is not compared, each with its reason.

Not shipped and not part of the test suite.
"""

from __future__ import annotations

import argparse
import json
import math
import os
import re
import shutil
import subprocess
import sys
import tempfile
import threading
import time
from collections.abc import Iterator
from contextlib import contextmanager
from dataclasses import dataclass, field
from http.server import BaseHTTPRequestHandler, ThreadingHTTPServer
from pathlib import Path
from typing import Any

import numpy as np

ROOT = Path(__file__).resolve().parents[1]
KEPT_FILES = ("results.json", "predictions.npz", "suite.json", "training.json", "sweep.json")
JSON_FILES = ("results.json", "suite.json", "training.json", "sweep.json")
TOLERANCE = 1e-12
SHOWN_DIFFERENCES = 10

#: Keys not compared wherever they appear (a JSON object's key name), by reason. Each measures the machine or
#: the moment, not what the code computes: two captures of the same code differ in them (and only in them).
_IGNORED_BY_REASON: dict[str, tuple[str, ...]] = {
    "versions, dates and the machine (the environment of the run and of each worker, a worker's host:pid)": (
        "schema_version",
        "headtohead_version",
        "created_at",
        "environment",
        "environment_fingerprint",
        "worker",
    ),
    "wall times: of the run's stages, of loading and evaluating a model, of training (epochs, steps, data waits, "
    "time to target), of an endpoint's requests": (
        "timings",
        "load_time_s",
        "eval_time_s",
        "train_s",
        "elapsed_train_s",
        "eval_s",
        "end_to_end_s",
        "time_to_target_s",
        "data_wait_ns",
        "compute_ns",
        "latencies_s",
        "wall_s",
        "latency",
    ),
    "rates derived from those wall times": ("samples_per_s", "tokens_per_s", "requests_per_s", "data_wait_fraction"),
    "memory and device telemetry": ("rss_peak_mb", "cuda_max_allocated_mb", "cuda_max_reserved_mb", "telemetry"),
    "the stand-in LLM server's address: a free port, chosen per capture": ("base_url",),
}
IGNORED_KEYS: dict[str, str] = {key: reason for reason, keys in _IGNORED_BY_REASON.items() for key in keys}

#: Whole sub-trees not compared, as ``[[run/]file:]dotted.path`` (``*`` matches any one key or list index).
IGNORED_PATHS: dict[str, str] = {
    "results.json:speed": "the speed and memory phase: timings, throughput, memory, energy, cost per prediction "
    "(h2h demo cannot switch it off)",
    "training.runs.*.cost": "a fine-tune's wall time, the energy it drew and their price (results.json and "
    "training.json)",
    "antsbees-resnet-vs-efficientnet/results.json:dataset.fingerprint": "an image folder's fingerprint hashes the "
    "images' absolute paths, which hold the capture's work folder (the images, labels and predictions are compared)",
}


# ----------------------------------------------------------------------------------------------- runs


@dataclass(frozen=True)
class Example:
    """One command of the capture: ``h2h <args>`` run in the work copy of ``examples/``."""

    name: str
    args: tuple[str, ...]
    needs_llm_server: bool = False


EXAMPLES: tuple[Example, ...] = (
    # `make demo` is `h2h demo`: its speed section is fixed (no switch), so compare ignores `speed`
    Example("demo", ("demo", "--out", "{out}")),
    Example("sst2-tfidf-offline", ("run", "sst2-tfidf-offline.yaml", "--out", "{out}", "--set", "speed.enabled=false")),
    Example(
        "antsbees-resnet-vs-efficientnet",
        ("run", "antsbees-resnet-vs-efficientnet.yaml", "--out", "{out}", "--set", "speed.enabled=false"),
    ),
    Example("suite-six-datasets", ("suite", "suite-six-datasets.yaml", "--out", "{out}")),
    Example("train-digits-timm", ("train", "train-digits-timm.yaml", "--out", "{out}", "--set", "speed.enabled=false")),
    Example(
        "sst2-minilm-vs-llm",
        (
            "run",
            "sst2-minilm-vs-llm.yaml",
            "--out",
            "{out}",
            "--set",
            "speed.enabled=false",
            "--set",
            "models.llm.base_url={llm_url}",
            "--no-cache",
        ),
        needs_llm_server=True,
    ),
)

#: Examples that cannot run on an offline machine, and why.
SKIPPED: dict[str, str] = {
    "sst2-bert-vs-roberta": "needs textattack/bert-base-uncased-SST-2 and textattack/roberta-base-SST-2 from the hub",
    "train-bert-base-throughput": "needs bert-base-uncased and distilbert-base-uncased from the hub (and a GPU to be "
    "short: 300 steps of BERT-base per model)",
    "train-sst2-minilm-vs-bert": "needs google/bert_uncased_L-4_H-256_A-4 from the hub; 2 epochs x 3 seeds of SST-2 "
    "train take hours on 2 CPU cores",
    "sweep-minilm": "sweeps the fine-tuned MiniLM that train-sst2-minilm-vs-bert writes (skipped above)",
}

#: The scripts that build the examples' local models (run in the work copy, in this order).
MODEL_BUILDERS = ("build_offline_models.py", "build_suite_models.py")


def thread_environment(repo: Path, work: Path) -> dict[str, str]:
    """The environment of every command: the clone's code, one CPU thread, no network, a private response cache."""
    env = dict(os.environ)
    env["PYTHONPATH"] = str(repo / "src")
    for name in ("OMP_NUM_THREADS", "MKL_NUM_THREADS", "OPENBLAS_NUM_THREADS"):
        env[name] = "1"
    env.update(HF_HUB_OFFLINE="1", TRANSFORMERS_OFFLINE="1", H2H_CACHE_DIR=str(work / "cache"), NO_COLOR="1")
    env["TOKENIZERS_PARALLELISM"] = "false"
    return env


def capture(outdir: Path, repo: Path, shared: Path, only: list[str] | None, keep_work: bool) -> int:
    """Run every example into ``outdir``; 1 when a run or a model build failed."""
    outdir.mkdir(parents=True, exist_ok=True)
    work = Path(tempfile.mkdtemp(prefix="h2h-identical-"))
    (work / "clone").mkdir()
    shutil.copytree(repo / "examples", work / "clone" / "examples", ignore=shutil.ignore_patterns("models", "runs"))
    (work / "shared").symlink_to(shared.resolve(), target_is_directory=True)
    examples_dir = work / "clone" / "examples"
    env = thread_environment(repo, work)
    previous = outdir / "manifest.json"
    kept_runs = json.loads(previous.read_text(encoding="utf-8"))["runs"] if only and previous.is_file() else {}
    manifest: dict[str, Any] = {
        "repo": str(repo),
        "git_revision": _git_revision(repo),
        "uncommitted_changes": _git_dirty(repo),
        "work": str(work),
        "shared": str(shared.resolve()),
        "started": time.strftime("%Y-%m-%dT%H:%M:%SZ", time.gmtime()),
        "builds": {},
        "runs": {name: run for name, run in kept_runs.items() if name not in only},  # --only: the others kept
        "skipped": dict(SKIPPED),
        "failed": {},
    }
    began = time.perf_counter()
    failed = False
    try:
        for builder in MODEL_BUILDERS:
            seconds, error = _call([sys.executable, builder], examples_dir, env, work / "logs" / f"{builder}.log")
            manifest["builds"][builder] = {"seconds": round(seconds, 1), "error": error}
            print(f"build {builder}: {'failed: ' + error if error else 'done'} ({seconds:.0f} s)", flush=True)
            failed |= error is not None
        with _llm_server() as llm_url:
            for example in EXAMPLES:
                if only and example.name not in only:
                    continue
                out = work / "runs" / example.name
                args = [a.format(out=out, llm_url=llm_url) for a in example.args]
                command = [sys.executable, "-c", "from headtohead.cli.main import main; main()", *args]
                seconds, error = _call(command, examples_dir, env, work / "logs" / f"{example.name}.log")
                if error:
                    manifest["failed"][example.name] = error
                    failed = True
                    print(f"{example.name}: FAILED ({seconds:.0f} s): {error}", flush=True)
                    continue
                kept = _keep(out, outdir / example.name)
                manifest["runs"][example.name] = {"seconds": round(seconds, 1), "args": args, "files": kept}
                print(f"{example.name}: captured {len(kept)} files ({seconds:.0f} s)", flush=True)
    finally:
        manifest["seconds"] = round(time.perf_counter() - began, 1)
        (outdir / "manifest.json").write_text(json.dumps(manifest, indent=2) + "\n", encoding="utf-8")
        if keep_work or failed:
            print(f"work folder kept: {work}")
        else:
            shutil.rmtree(work, ignore_errors=True)
    for name, reason in SKIPPED.items():
        print(f"{name}: skipped ({reason})")
    print(f"capture: {manifest['seconds']:.0f} s in all; manifest {outdir / 'manifest.json'}")
    return 1 if failed else 0


def _call(command: list[str], cwd: Path, env: dict[str, str], log: Path) -> tuple[float, str | None]:
    """Run ``command`` with its output in ``log``; (seconds, None) or (seconds, the last line of its output)."""
    log.parent.mkdir(parents=True, exist_ok=True)
    began = time.perf_counter()
    with open(log, "w", encoding="utf-8") as sink:
        code = subprocess.call(command, cwd=cwd, env=env, stdout=sink, stderr=subprocess.STDOUT)
    seconds = time.perf_counter() - began
    if code == 0:
        return seconds, None
    lines = [line for line in log.read_text(encoding="utf-8", errors="replace").splitlines() if line.strip()]
    return seconds, f"exit {code}: {lines[-1] if lines else '(no output)'} (log: {log})"


def _keep(run_dir: Path, target: Path) -> list[str]:
    """Copy the compared files of a run (and of every run under it: a suite's data sets) to ``target``."""
    shutil.rmtree(target, ignore_errors=True)
    kept = []
    for path in sorted(run_dir.rglob("*")):
        if path.name in KEPT_FILES and path.is_file():
            relative = path.relative_to(run_dir)
            (target / relative).parent.mkdir(parents=True, exist_ok=True)
            shutil.copy2(path, target / relative)
            kept.append(str(relative))
    return kept


def _git_dirty(repo: Path) -> bool | None:
    """Whether src/ or examples/ differ from the commit (the capture ran uncommitted code)."""
    try:
        command = ["git", "-C", str(repo), "status", "--porcelain", "--", "src", "examples"]
        return bool(subprocess.check_output(command, text=True).strip())
    except (OSError, subprocess.CalledProcessError):
        return None


def _git_revision(repo: Path) -> str | None:
    try:
        return subprocess.check_output(["git", "-C", str(repo), "rev-parse", "HEAD"], text=True).strip()
    except (OSError, subprocess.CalledProcessError):
        return None


# ------------------------------------------------------------------------------- the stand-in LLM server

_POSITIVE = frozenset("good great best fun funny love lovely moving beautiful charming delight wonderful".split())
_NEGATIVE = frozenset("bad worst dull boring mess fails never nothing neither tedious flat stupid".split())


def scripted_answer(review: str) -> tuple[str, float]:
    """The stand-in LLM's deterministic answer: cue words counted, and the answer's probability."""
    words = re.findall(r"[a-z]+", review.lower())
    score = sum(w in _POSITIVE for w in words) - sum(w in _NEGATIVE for w in words)
    return ("positive" if score >= 0 else "negative"), min(0.95, 0.6 + 0.1 * abs(score))


class _ChatHandler(BaseHTTPRequestHandler):
    """``POST /v1/chat/completions``: the scripted answer, usage as word counts, logprobs when asked."""

    def do_POST(self) -> None:  # noqa: N802 - http.server's name
        payload = json.loads(self.rfile.read(int(self.headers.get("content-length") or 0)) or b"{}")
        messages = payload.get("messages", [])
        users = [m for m in messages if m.get("role") == "user"]
        review = str(users[-1]["content"]).split("Review:", 1)[-1] if users else ""
        answer, probability = scripted_answer(review)
        choice: dict[str, Any] = {
            "index": 0,
            "message": {"role": "assistant", "content": answer},
            "finish_reason": "stop",
        }
        if payload.get("logprobs"):
            other = "negative" if answer == "positive" else "positive"
            alternatives = [
                {"token": answer, "logprob": math.log(probability)},
                {"token": other, "logprob": math.log(1 - probability)},
            ]
            choice["logprobs"] = {"content": [{**alternatives[0], "top_logprobs": alternatives}]}
        prompt_tokens = sum(len(str(m.get("content", "")).split()) for m in messages)
        body = {
            "id": "scripted",
            "object": "chat.completion",
            "model": payload.get("model", ""),
            "choices": [choice],
            "usage": {"prompt_tokens": prompt_tokens, "completion_tokens": 1, "total_tokens": prompt_tokens + 1},
        }
        data = json.dumps(body).encode()
        self.send_response(200)
        self.send_header("content-type", "application/json")
        self.send_header("content-length", str(len(data)))
        self.end_headers()
        self.wfile.write(data)

    def log_message(self, format: str, *args: Any) -> None:  # noqa: A002 - http.server's signature
        pass


@contextmanager
def _llm_server() -> Iterator[str]:
    """A deterministic OpenAI-compatible chat server on 127.0.0.1 (a free port) for the LLM example."""
    server = ThreadingHTTPServer(("127.0.0.1", 0), _ChatHandler)
    thread = threading.Thread(target=server.serve_forever, daemon=True)
    thread.start()
    try:
        yield f"http://127.0.0.1:{server.server_address[1]}/v1"
    finally:
        server.shutdown()
        server.server_close()


# ------------------------------------------------------------------------------------------- compare


@dataclass
class Findings:
    """What differs between two captures of one run, and what only the newer one holds."""

    differences: list[str] = field(default_factory=list)
    added: list[str] = field(default_factory=list)


def compare(before: Path, after: Path, extra_ignored: list[str]) -> int:
    """Print one line per run; 1 when any run differs or is missing from ``after``."""
    manifests = [_manifest(before), _manifest(after)]
    substitutions = [_path_substitutions(m) for m in manifests]
    names_before, names_after = (set(m.get("runs", {})) for m in manifests)
    ignored = {**IGNORED_PATHS, **{pattern: "--ignore" for pattern in extra_ignored}}
    differing = 0
    for name in sorted(names_before | names_after):
        if name not in names_after:
            reason = manifests[1].get("failed", {}).get(name) or manifests[1].get("skipped", {}).get(name) or "absent"
            print(f"{name}: MISSING from {after} ({reason})")
            differing += 1
            continue
        if name not in names_before:
            print(f"{name}: only in {after} (not compared)")
            continue
        findings = compare_run(before / name, after / name, substitutions, ignored)
        if findings.differences:
            differing += 1
            print(f"{name}: differs ({len(findings.differences)} differences)")
            for line in findings.differences[:SHOWN_DIFFERENCES]:
                print(f"    {line}")
        else:
            print(f"{name}: identical")
        if findings.added:
            print(f"    added ({len(findings.added)}): {', '.join(findings.added[:SHOWN_DIFFERENCES])}")
    print(f"{differing} of {len(names_before | names_after)} runs differ" if differing else "all runs identical")
    return 1 if differing else 0


def _manifest(folder: Path) -> dict[str, Any]:
    path = folder / "manifest.json"
    if not path.is_file():
        raise SystemExit(f"{path} not found: is {folder} the OUTDIR of a capture?")
    return json.loads(path.read_text(encoding="utf-8"))


def _path_substitutions(manifest: dict[str, Any]) -> list[tuple[str, str]]:
    """The capture's own folders, replaced by placeholders in every string before comparing (longest first)."""
    pairs = [(manifest.get("work", ""), "<work>"), (manifest.get("shared", ""), "<shared>")]
    pairs += [(manifest.get("repo", ""), "<repo>")]
    return sorted(((p, r) for p, r in pairs if p), key=lambda pair: -len(pair[0]))


def compare_run(
    before: Path, after: Path, substitutions: list[list[tuple[str, str]]], ignored: dict[str, str]
) -> Findings:
    """Compare every kept file of one run (a suite's data sets included)."""
    findings = Findings()
    files_before = {p.relative_to(before) for p in before.rglob("*") if p.is_file()}
    files_after = {p.relative_to(after) for p in after.rglob("*") if p.is_file()}
    for missing in sorted(files_before - files_after):
        findings.differences.append(f"{missing}: file missing")
    findings.added += [f"{extra} (file)" for extra in sorted(files_after - files_before)]
    for relative in sorted(files_before & files_after):
        label = str(relative)
        run_file = f"{before.name}/{relative}"
        if relative.suffix == ".npz":
            compare_npz(before / relative, after / relative, label, findings)
        elif relative.name in JSON_FILES:
            old, new = (json.loads(p.read_text(encoding="utf-8")) for p in (before / relative, after / relative))
            old, new = _substituted(old, substitutions[0]), _substituted(new, substitutions[1])
            compare_json(old, new, label, run_file, (), ignored, findings)
    return findings


def compare_npz(before: Path, after: Path, label: str, findings: Findings) -> None:
    """Every array bit-identical: same names, dtypes, shapes and values (NaN equal to NaN)."""
    with np.load(before, allow_pickle=False) as old, np.load(after, allow_pickle=False) as new:
        findings.differences += [f"{label}:{key}: array removed" for key in sorted(set(old.files) - set(new.files))]
        findings.added += [f"{label}:{key}" for key in sorted(set(new.files) - set(old.files))]
        for key in sorted(set(old.files) & set(new.files)):
            a, b = old[key], new[key]
            if a.dtype != b.dtype or a.shape != b.shape:
                findings.differences.append(f"{label}:{key}: {a.dtype}{a.shape} -> {b.dtype}{b.shape}")
                continue
            floating = a.dtype.kind in "fc"
            if not np.array_equal(a, b, equal_nan=floating):
                same = (a == b) | (np.isnan(a) & np.isnan(b)) if floating else a == b
                findings.differences.append(
                    f"{label}:{key}: {int(np.size(same) - np.sum(same))} of {a.size} values differ"
                )


def compare_json(
    old: Any, new: Any, label: str, run_file: str, path: tuple[str, ...], ignored: dict[str, str], findings: Findings
) -> None:
    """Walk two JSON values together, recording differences (numbers to :data:`TOLERANCE`) and added keys."""
    where = f"{label}:{'.'.join(path) or '<root>'}"
    if _ignored_path(run_file, path, ignored):
        return
    if isinstance(old, dict) and isinstance(new, dict):
        for key in old:
            if key in IGNORED_KEYS:
                continue
            if key not in new:
                findings.differences.append(f"{label}:{'.'.join((*path, str(key)))}: removed")
            else:
                compare_json(old[key], new[key], label, run_file, (*path, str(key)), ignored, findings)
        findings.added += [
            f"{label}:{'.'.join((*path, str(key)))}" for key in new if key not in old and key not in IGNORED_KEYS
        ]
    elif isinstance(old, list) and isinstance(new, list):
        if len(old) != len(new):
            findings.differences.append(f"{where}: {len(old)} items -> {len(new)}")
        for index, (a, b) in enumerate(zip(old, new, strict=False)):
            compare_json(a, b, label, run_file, (*path, str(index)), ignored, findings)
    elif _is_number(old) and _is_number(new):
        if not _close(float(old), float(new)):
            findings.differences.append(f"{where}: {old!r} -> {new!r}")
    elif type(old) is not type(new) or old != new:
        findings.differences.append(f"{where}: {_short(old)} -> {_short(new)}")


def _ignored_path(run_file: str, path: tuple[str, ...], ignored: dict[str, str]) -> bool:
    """Whether a pattern names ``path`` of ``run_file`` (``run/file``; a pattern's ``file`` alone matches every run)."""
    for pattern in ignored:
        pattern_file, _, dotted = pattern.rpartition(":")
        parts = dotted.split(".")
        if pattern_file and not (run_file == pattern_file or run_file.endswith("/" + pattern_file)):
            continue
        if len(parts) == len(path) and all(p in ("*", q) for p, q in zip(parts, path, strict=True)):
            return True
    return False


def _is_number(value: Any) -> bool:
    return isinstance(value, (int, float)) and not isinstance(value, bool)


def _close(a: float, b: float) -> bool:
    if math.isnan(a) or math.isnan(b):
        return math.isnan(a) and math.isnan(b)
    return a == b or math.isclose(a, b, rel_tol=TOLERANCE, abs_tol=TOLERANCE)


def _short(value: Any) -> str:
    text = json.dumps(value) if not isinstance(value, str) else repr(value)
    return text if len(text) <= 80 else text[:77] + "..."


def _substituted(value: Any, pairs: list[tuple[str, str]]) -> Any:
    """``value`` with the capture's folders replaced by placeholders in every string."""
    if isinstance(value, dict):
        return {key: _substituted(item, pairs) for key, item in value.items()}
    if isinstance(value, list):
        return [_substituted(item, pairs) for item in value]
    if isinstance(value, str):
        for old, new in pairs:
            value = value.replace(old, new)
    return value


# ------------------------------------------------------------------------------------------------ main


def main(argv: list[str] | None = None) -> int:
    parser = argparse.ArgumentParser(description=__doc__, formatter_class=argparse.RawDescriptionHelpFormatter)
    commands = parser.add_subparsers(dest="command", required=True)
    run = commands.add_parser("capture", help="run the demo and the offline examples; keep their records")
    run.add_argument("outdir", type=Path)
    run.add_argument(
        "--repo", type=Path, default=ROOT, help="the clone whose src/ and examples/ run (default: this one)"
    )
    run.add_argument("--shared", type=Path, default=None, help="the shared data folder (default: <repo>/../shared)")
    run.add_argument("--only", action="append", help="capture only this run (repeatable)")
    run.add_argument("--keep-work", action="store_true", help="keep the work folder (models, logs, reports)")
    check = commands.add_parser("compare", help="compare two captures; exit 1 on any difference")
    check.add_argument("before", type=Path)
    check.add_argument("after", type=Path)
    check.add_argument(
        "--ignore",
        action="append",
        default=[],
        help="also skip [RUN/]FILE:dotted.path (* matches one key), e.g. results.json:experiment.models.*.kind",
    )
    drawn = commands.add_parser("render", help="draw every report file and terminal text of a capture (rendered.py)")
    drawn.add_argument("capture", type=Path)
    drawn.add_argument("outdir", type=Path)
    more = commands.add_parser("extras", help="add a prompted run and a sweep to a capture (rendered.py)")
    more.add_argument("capture", type=Path)
    differ = commands.add_parser("rendered-diff", help="a unified diff of every rendered file that differs")
    differ.add_argument("before", type=Path)
    differ.add_argument("after", type=Path)
    args = parser.parse_args(argv)
    if args.command in ("render", "extras", "rendered-diff"):
        import rendered

        if args.command == "render":
            return rendered.render(args.capture, args.outdir)
        if args.command == "extras":
            return rendered.extras(args.capture)
        return rendered.diff(args.before, args.after)
    if args.command == "capture":
        repo = args.repo.resolve()
        shared = args.shared or repo.parent / "shared"
        if not (shared / "data").is_dir():
            parser.error(f"{shared / 'data'} not found: pass --shared, the folder holding data/")
        return capture(args.outdir.resolve(), repo, shared, args.only, args.keep_work)
    return compare(args.before, args.after, args.ignore)


if __name__ == "__main__":
    sys.exit(main())
