"""``h2h gate``: exit 1 only when the candidate is worse beyond the margin with confidence, 0 when it is
non-inferior, 3 when the data cannot tell; one paragraph explains; JUnit XML has one testcase per check."""

from __future__ import annotations

import textwrap
from xml.etree import ElementTree

import numpy as np
import pytest
import yaml

from headtohead.cli.main import main
from headtohead.config.margins import parse_accuracy_margin, parse_slowdown_margin
from headtohead.errors import ConfigError
from headtohead.results import RunResult, load_result, save_result
from headtohead.stats.gate import accuracy_noninferiority, gate_exit_code, slowdown_noninferiority

# Oracles over texts "item <i>" whose label is neg/pos by parity: each model errs on a chosen
# set of examples, so the accuracies are known exactly.
ORACLE_PY = textwrap.dedent("""\
    def make(wrong_every, fixed_every=0, extra_every=0, extra_offset=0):
        def wrong(i):
            fixed = fixed_every and i % fixed_every == 0
            return (i % wrong_every == 0 and not fixed) or bool(extra_every and i % extra_every == extra_offset)

        def predict(texts):
            rows = []
            for text in texts:
                i = int(text.split()[1])
                positive = (i % 2 == 1) != wrong(i)
                rows.append([0.1, 0.9] if positive else [0.9, 0.1])
            return rows

        predict.label_names = ["neg", "pos"]
        return predict
    """)

N = 1000
MODELS = {  # accuracy: base 90 %, good +2 pp, slight −0.3 pp, bad −10 pp
    "base": {"wrong_every": 10},
    "good": {"wrong_every": 10, "fixed_every": 50},
    "slight": {"wrong_every": 10, "extra_every": 333, "extra_offset": 1},
    "bad": {"wrong_every": 5},
}
# Milliseconds per call in the speed rounds written into the results: wall-clock timings on a
# shared CI machine are too noisy to make a test's pass/fail depend on them.
SPEED_MS = {"base": 2.0, "good": 2.0, "slight": 2.0, "bad": 8.0}
SPEED = {
    "scenarios": ["offline"],
    "num_batches": 1,
    "warmup_iterations": 0,
    "warmup_seconds": 0.0,
    "min_iterations": 6,
    "min_seconds": 0.0,
    "rounds": 6,
    "precision": None,  # a fixed number of rounds
    "pipeline_iterations": 0,
    "memory": False,
    "telemetry": False,
}


def _with_known_timings(path):
    """Replace each model's measured offline rounds by steady ones at :data:`SPEED_MS` (±1 % jitter)."""
    raw = load_result(path).model_dump(mode="json")
    for model in raw["speed"]["models"]:
        base_ns = SPEED_MS[model["name"]] * 1e6
        model["offline"]["rounds_ns"] = [
            [int(base_ns * (1 + 0.01 * ((r + k) % 3 - 1))) for k in range(6)] for r in range(6)
        ]
    save_result(RunResult.model_validate(raw), path)


@pytest.fixture(scope="module")
def results(tmp_path_factory):
    root = tmp_path_factory.mktemp("gate")
    (root / "gate_oracles.py").write_text(ORACLE_PY)
    (root / "dev.csv").write_text("text,label\n" + "".join(f"item {i},{'pos' if i % 2 else 'neg'}\n" for i in range(N)))
    models = [
        {"name": name, "kind": "python", "source": "gate_oracles:make", "outputs": "probabilities", "model_args": args}
        for name, args in MODELS.items()
    ]
    path = root / "exp.yaml"
    path.write_text(
        yaml.safe_dump(
            {
                "name": "gate",
                "data": {"path": "dev.csv"},
                "models": models,
                "eval": {"batch_size": 250},
                "stats": {"n_resamples": 200},
                "speed": SPEED,
            }
        )
    )
    main(["run", str(path), "--out", str(root / "out")])
    _with_known_timings(root / "out" / "results.json")
    main(["run", str(path), "--out", str(root / "no-speed"), "--set", "speed.enabled=false"])
    return root


def _gate(capsys, results_json, *args: str) -> tuple[int, str]:
    capsys.readouterr()
    try:
        main(["gate", str(results_json), *args])
        code = 0  # main returns normally on success, like every command
    except SystemExit as exit_:
        code = exit_.code
    return code, capsys.readouterr().out.strip()


def test_pass_when_not_worse_beyond_the_margin(results, capsys, tmp_path):
    junit = tmp_path / "gate.xml"
    code, out = _gate(
        capsys,
        results / "out" / "results.json",
        "--baseline",
        "base",
        "--candidate",
        "good",
        "--max-accuracy-drop",
        "0.5pp",
        "--max-slowdown",
        "5%",
        "--junit",
        str(junit),
    )
    assert code == 0, out
    assert len(out.splitlines()) == 1 and out.startswith("PASS: good is not worse than base")
    assert "good − base = +2.00 pp" in out and "Speed (offline): good takes" in out
    suite = ElementTree.parse(junit).getroot().find("testsuite")
    assert [c.get("name") for c in suite.findall("testcase")] == ["accuracy", "speed (offline)"]
    assert suite.get("failures") == suite.get("errors") == "0" and not suite.findall("testcase/failure")


def test_fail_when_worse_beyond_the_margin_with_confidence(results, capsys, tmp_path):
    junit = tmp_path / "gate.xml"
    code, out = _gate(
        capsys,
        results / "out" / "results.json",
        "--baseline",
        "base",
        "--candidate",
        "bad",
        "--max-accuracy-drop",
        "0.005",
        "--max-slowdown",
        "1.05x",
        "--junit",
        str(junit),
    )
    assert code == 1, out
    assert out.startswith("FAIL: bad is worse than base beyond the allowed margin (accuracy, speed (offline)).")
    assert "bad − base = −10.00 pp" in out and "the whole interval lies below −0.50 pp" in out
    assert "bad takes 4.000× the time of base" in out and "the whole interval lies above 1.050×" in out
    suite = ElementTree.parse(junit).getroot().find("testsuite")
    failures = suite.findall("testcase/failure")
    assert suite.get("failures") == "2" and len(failures) == 2
    assert failures[0].get("type") == "worse beyond margin" and "−0.50 pp" in failures[0].get("message")


def test_inconclusive_with_too_few_examples_is_exit_3(results, capsys, tmp_path):
    junit = tmp_path / "gate.xml"
    code, out = _gate(
        capsys,
        results / "out" / "results.json",
        "--baseline",
        "base",
        "--candidate",
        "slight",
        "--max-accuracy-drop",
        "0.5pp",
        "--junit",
        str(junit),
    )
    assert code == 3, out
    assert out.startswith("INCONCLUSIVE: the data cannot tell whether slight is worse than base")
    assert "slight − base = −0.30 pp" in out and "too few examples" in out
    needed = int(out.split("about ")[1].split(" examples")[0].replace(",", ""))
    assert N < needed < 100 * N
    error = ElementTree.parse(junit).getroot().find("testsuite/testcase/error")
    assert error is not None and error.get("type") == "inconclusive"


def test_missing_speed_results_are_said_and_do_not_decide(results, capsys, tmp_path):
    junit = tmp_path / "gate.xml"
    code, out = _gate(
        capsys,
        results / "no-speed" / "results.json",
        "--baseline",
        "base",
        "--candidate",
        "good",
        "--max-accuracy-drop",
        "0.5pp",
        "--max-slowdown",
        "5%",
        "--junit",
        str(junit),
    )
    assert code == 0 and "Speed: not checked — the results hold no speed measurement" in out
    assert ElementTree.parse(junit).getroot().find("testsuite/testcase/skipped") is not None


@pytest.mark.parametrize("text, value", [("0.5pp", 0.005), ("0.005", 0.005), ("2 pp", 0.02), ("0pp", 0.0)])
def test_accuracy_margins(text, value):
    assert parse_accuracy_margin(text) == pytest.approx(value)


@pytest.mark.parametrize("text, value", [("5%", 0.05), ("0.05", 0.05), ("1.05x", 0.05), ("12.5 %", 0.125)])
def test_slowdown_margins(text, value):
    assert parse_slowdown_margin(text) == pytest.approx(value)


@pytest.mark.parametrize(
    "parse, text, message",
    [
        (parse_accuracy_margin, "0.5%", "ambiguous"),
        (parse_accuracy_margin, "half", "not a number"),
        (parse_accuracy_margin, "-1pp", "cannot be negative"),
        (parse_accuracy_margin, "5", "did you mean 5pp"),
        (parse_accuracy_margin, "1x", "not an accuracy unit"),
        (parse_slowdown_margin, "5pp", "'pp' is for accuracy"),
        (parse_slowdown_margin, "0.9x", "below 1"),
        (parse_slowdown_margin, "150%", "2.5×"),
    ],
)
def test_bad_margins_say_how_to_write_them(parse, text, message):
    with pytest.raises(ConfigError, match=message.replace("(", r"\(")):
        parse(text)


def test_decisions_follow_the_interval_against_the_margin():
    rng = np.random.default_rng(0)
    y = rng.integers(0, 2, 4000)
    base = np.where(rng.random(4000) < 0.9, y, 1 - y)
    same = accuracy_noninferiority(y, base, base, margin=0.005)
    assert same.outcome == "pass" and same.estimate == 0.0  # 4,000 identical answers: non-inferior at 0.5 pp
    # … but no number of examples shows non-inferiority at a margin of 0, nor 60 examples at 0.1 pp
    assert accuracy_noninferiority(y, base, base, margin=0.0).outcome == "inconclusive"
    assert accuracy_noninferiority(y[:60], base[:60], base[:60], margin=0.001).outcome == "inconclusive"
    worse = np.where(rng.random(4000) < 0.05, 1 - base, base)  # about 5 % of answers flipped
    assert accuracy_noninferiority(y, base, worse, margin=0.005).outcome == "fail"
    assert accuracy_noninferiority(y, base, worse, margin=0.10).outcome == "pass"
    right = np.flatnonzero(base[:80] == y[:80])[:2]
    slightly = base[:80].copy()
    slightly[right] = 1 - slightly[right]  # two more errors in 80: −2.5 pp, but who can tell?
    few = accuracy_noninferiority(y[:80], base[:80], slightly, margin=0.005)
    assert few.outcome == "inconclusive" and few.needed > 80 and few.high >= -0.005 > few.low
    steady = [1.0, 1.01, 0.99, 1.0, 1.02, 0.98]
    assert slowdown_noninferiority(steady, [2 * t for t in steady], margin=0.05).outcome == "fail"
    assert slowdown_noninferiority(steady, steady[::-1], margin=0.05).outcome == "pass"
    noisy = slowdown_noninferiority(steady, [1.3, 0.8, 1.2, 0.85, 1.25, 0.9], margin=0.05)
    assert noisy.outcome == "inconclusive" and noisy.needed > 6
    assert gate_exit_code([same, noisy]) == 3 and gate_exit_code([same, noisy, worse_decision(y, base, worse)]) == 1


def worse_decision(y, base, worse):
    return accuracy_noninferiority(y, base, worse, margin=0.005)


def test_alpha_is_the_level_and_confidence_its_deprecated_alias(results, capsys):
    path = results / "out" / "results.json"
    margin = ["--baseline", "base", "--candidate", "slight", "--max-accuracy-drop", "0.5pp"]
    default = _gate(capsys, path, *margin)
    assert _gate(capsys, path, *margin, "--alpha", "0.05") == default
    capsys.readouterr()
    with pytest.raises(SystemExit) as exit_:
        main(["gate", str(path), *margin, "--confidence", "0.95"])
    captured = capsys.readouterr()
    assert (exit_.value.code, captured.out.strip()) == default  # the old spelling still works, the same
    assert captured.err.count("--confidence is deprecated") == 1 and "--alpha" in captured.err
    wider = _gate(capsys, path, *margin, "--alpha", "0.01")
    assert "99 % CI" in wider[1] and "95 % CI" in default[1]


@pytest.mark.parametrize(
    "args, fragment",
    [
        (["--max-accuracy-drop", "0.5%"], "--max-accuracy-drop 0.5%: '%' is ambiguous"),
        (["--max-slowdown", "5pp"], "--max-slowdown 5pp: 'pp' is for accuracy"),
        (["--max-accuracy-drop", "1pp", "--alpha", "0.1", "--confidence", "0.9"], "give only --alpha"),
    ],
)
def test_bad_gate_options_are_one_line_and_exit_2(results, capsys, args, fragment):
    with pytest.raises(SystemExit) as exit_:
        main(["gate", str(results / "out" / "results.json"), "--baseline", "base", "--candidate", "good", *args])
    err = capsys.readouterr().err.strip()
    assert exit_.value.code == 2 and fragment in err and len(err.splitlines()) == 1


def test_the_python_gate_takes_shares_and_the_same_strings(results):
    import headtohead

    path = results / "out" / "results.json"
    by_text = headtohead.gate(path, baseline="base", candidate="bad", max_accuracy_drop="0.5pp", max_slowdown="5%")
    by_share = headtohead.gate(path, baseline="base", candidate="bad", max_accuracy_drop=0.005, max_slowdown=0.05)
    assert by_text.decisions == by_share.decisions and by_share.decisions[0].margin == 0.005
    with pytest.warns(DeprecationWarning, match="alpha"):
        old = headtohead.gate(path, baseline="base", candidate="bad", max_accuracy_drop=0.005, confidence=0.9)
    assert (
        old.decisions
        == headtohead.gate(path, baseline="base", candidate="bad", max_accuracy_drop=0.005, alpha=0.1).decisions
    )
    with pytest.raises(ConfigError, match="did you mean 5pp"):
        headtohead.gate(path, baseline="base", candidate="bad", max_accuracy_drop=5)
