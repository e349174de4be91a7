"""Faults mid-run: a real ``h2h run`` is interrupted (SIGINT, then SIGTERM) and resumed to the end;
an out-of-memory model and a crashing model keep what finished; resume keys re-run exactly what changed."""

from __future__ import annotations

import logging
import os
import signal
import subprocess
import sys
import textwrap
import time
from pathlib import Path

import numpy as np
import pytest
import yaml

import headtohead
from headtohead.cli.main import main
from headtohead.errors import DataError
from headtohead.pipeline.resume import RESUME_DIR
from headtohead.testing.data import make_text_table

# Models built by a module beside the experiment: keyword classifiers that, when asked,
# touch a marker file as their pass starts and, if slow and named by H2H_TEST_HOLD, stay inside it
# until a signal ends the run (from the environment, so the experiment file — and with it every
# resume key — is the same for every run). The test waits for events, never for seconds: a loaded
# machine is slow, not wrong.
MODELS_PY = textwrap.dedent("""\
    import os
    import time
    from pathlib import Path

    from headtohead.testing.models import keyword_classifier


    class Marked:
        def __init__(self, name, inner, slow):
            self.name, self.inner, self.slow = name, inner, slow
            self.label_names = inner.label_names

        def __call__(self, examples):
            markers = os.environ.get("H2H_TEST_MARKERS")
            if markers:
                Path(markers, self.name + ".started").touch()
            while self.slow and os.environ.get("H2H_TEST_HOLD") == self.name:
                time.sleep(0.02)  # held inside its pass: the test's signal always lands here
            if self.slow:
                time.sleep(float(os.environ.get("H2H_TEST_DELAY") or 0))  # a known least time per batch
            return self.inner(examples)


    def make(name, keywords, slow=False, oom=False):
        if oom:
            def out_of_memory(examples):
                raise MemoryError("simulated")
            out_of_memory.label_names = list(keywords)
            return out_of_memory
        return Marked(name, keyword_classifier(keywords), slow)
    """)

KEYWORDS = {"negative": ["bad", "dull", "awful", "boring"], "positive": ["good", "great", "lovely", "superb"]}


def _model(name: str, words: int, **args) -> dict:
    keywords = {label: pool[:words] for label, pool in KEYWORDS.items()}
    return {
        "name": name,
        "kind": "python",
        "source": "h2h_test_models:make",
        "outputs": "probabilities",
        "model_args": {"name": name, "keywords": keywords, **args},
    }


@pytest.fixture()
def experiment(tmp_path) -> Path:
    (tmp_path / "h2h_test_models.py").write_text(MODELS_PY)
    make_text_table(tmp_path / "dev.csv", n_per_class=20, seed=3)
    exp = {
        "name": "resume",
        "data": {"path": "dev.csv"},
        "eval": {"batch_size": 2, "device": "cpu"},
        "stats": {"n_resamples": 500},
        "speed": {"enabled": False},
        "models": [_model("a", 1), _model("b", 2, slow=True), _model("c", 4, slow=True)],
    }
    path = tmp_path / "exp.yaml"
    path.write_text(yaml.safe_dump(exp, sort_keys=False))
    return path


def _start(experiment: Path, out: Path, markers: Path, *extra: str, hold: str = "") -> subprocess.Popen:
    """``h2h run`` in a fresh process; model ``hold`` (if slow) stays inside its pass until the run is signalled."""
    env = {**os.environ, "H2H_TEST_MARKERS": str(markers), "H2H_TEST_HOLD": hold, "HF_HUB_OFFLINE": "1"}
    cmd = [sys.executable, "-m", "headtohead.cli.main", "run", str(experiment), "--out", str(out), *extra]

    def default_sigint() -> None:  # a job started in the background inherits SIGINT ignored
        signal.signal(signal.SIGINT, signal.SIG_DFL)

    return subprocess.Popen(
        cmd, env=env, stdout=subprocess.PIPE, stderr=subprocess.PIPE, text=True, preexec_fn=default_sigint
    )


def _interrupt_when_started(until, process: subprocess.Popen, marker: Path, sig: int) -> tuple[int, str, str]:
    """Signal ``process`` once ``marker`` appears; waits for events only (a loaded machine is slow, not wrong)."""
    if not until(marker.exists, process):
        out, err = process.communicate()
        pytest.fail(f"{marker.name} never appeared (exit {process.returncode}): {err[-2000:]}")
    process.send_signal(sig)
    out, err = process.communicate()
    return process.returncode, out, err


def _fresh(markers: Path) -> Path:
    markers.mkdir(exist_ok=True)
    for marker in markers.iterdir():
        marker.unlink()
    return markers


def test_kill_and_resume_gives_the_uninterrupted_results(experiment, tmp_path, until):
    out, markers = tmp_path / "out", _fresh(tmp_path / "markers")

    code, _, err = _interrupt_when_started(
        until, _start(experiment, out, markers, hold="b"), markers / "b.started", signal.SIGINT
    )
    assert code == 130, err
    assert "interrupted by SIGINT: results of a are kept in" in err and "--resume to evaluate b, c" in err
    assert "Traceback" not in err
    assert [m.name for m in headtohead.load_result(out / "results.json").models] == ["a"]

    code, _, err = _interrupt_when_started(
        until, _start(experiment, out, _fresh(markers), "--resume", hold="c"), markers / "c.started", signal.SIGTERM
    )
    assert code == 143, err
    assert "interrupted by SIGTERM: results of a, b are kept in" in err and "--resume to evaluate c" in err
    assert "model 'a' finished in an earlier run" in err
    assert not (markers / "a.started").exists()  # a was not evaluated again

    finish = _start(experiment, out, _fresh(markers), "--resume")  # nothing held: the last run goes through
    stdout, err = finish.communicate()  # however long a loaded machine takes: the run ends by itself
    assert finish.returncode == 0, err
    assert "Resumed: the finished results of a, b were re-used." in stdout
    assert sorted(p.name for p in markers.iterdir()) == ["c.started"]

    os.environ.pop("H2H_TEST_MARKERS", None)
    reference = headtohead.run(experiment, out_dir=tmp_path / "reference")  # uninterrupted, in this process
    resumed = headtohead.load_result(out / "results.json")
    predictions = headtohead.load_predictions(out)
    assert list(predictions.models) == list(reference.predictions.models) == ["a", "b", "c"]
    for name in ("a", "b", "c"):
        np.testing.assert_array_equal(predictions[name].pred, reference.predictions[name].pred)
        np.testing.assert_array_equal(predictions[name].proba, reference.predictions[name].proba)
        assert resumed.model(name).quality == reference.result.model(name).quality
        assert resumed.model(name).index_order_hash == reference.result.model(name).index_order_hash
    assert resumed.stats == reference.result.stats
    assert resumed.dataset == reference.result.dataset


def test_out_of_memory_and_a_crash_keep_finished_models(experiment, tmp_path, capsys, monkeypatch):
    monkeypatch.chdir(tmp_path)
    out = tmp_path / "out"
    with pytest.raises(SystemExit) as info:
        main(["run", str(experiment), "--out", str(out), "--set", "models.b.model_args.oom=true"])
    err = capsys.readouterr().err.strip()
    assert info.value.code == 2 and len(err.splitlines()) == 1, err
    assert "model 'b' ran out of memory on cpu at eval.batch_size=2 (MemoryError)" in err
    assert "--set eval.batch_size=1" in err and "results of a are kept in" in err

    import headtohead.pipeline.model_pass as per_model

    real = per_model.evaluate_model

    def crash_on_c(adapter, *args, **kwargs):  # a bug in headtohead itself, met while evaluating c
        if adapter.name == "c":
            raise RuntimeError("simulated bug")
        return real(adapter, *args, **kwargs)

    monkeypatch.setattr(per_model, "evaluate_model", crash_on_c)
    with pytest.raises(SystemExit) as info:
        main(["run", str(experiment), "--out", str(out), "--resume"])  # b as first: run again
    monkeypatch.setattr(per_model, "evaluate_model", real)
    err = capsys.readouterr().err
    assert info.value.code == 1 and "internal error: RuntimeError: simulated bug" in err
    assert "results of a, b are kept in" in err and "--resume to evaluate c" in err

    outcome = headtohead.run(experiment, out_dir=out, resume=True)
    assert outcome.resumed == ["a", "b"]
    assert [m.name for m in headtohead.load_result(out / "results.json").models] == ["a", "b", "c"]
    kept = sorted(p.name.split("-")[0] for p in (out / RESUME_DIR).glob("*-*.json"))  # not run.json
    assert kept == ["a", "b", "c"]  # the entries of the out-of-memory and crashing variants were pruned


def test_resume_keys_rerun_exactly_what_changed(experiment, tmp_path):
    out = tmp_path / "out"
    first = headtohead.run(experiment, out_dir=out)
    assert first.resumed == []
    again = headtohead.run(experiment, out_dir=out, resume=True, overrides=["stats.n_resamples=200"])
    assert again.resumed == ["a", "b", "c"]  # the statistics settings do not enter the keys
    assert again.result.stats.settings.n_resamples == 200
    edited = headtohead.run(experiment, out_dir=out, resume=True, overrides=["models.b.model_args.slow=false"])
    assert edited.resumed == ["a", "c"]
    data = tmp_path / "dev.csv"
    data.write_text(data.read_text().replace("good", "fine"))  # other data: resuming is refused, naming both
    before = headtohead.load_result(out / "results.json").dataset.fingerprint
    with pytest.raises(
        DataError,
        match=rf"dev.csv: the data changed since the run being resumed in {out} "
        rf"\(fingerprint {before[:12]} then, [0-9a-f]{{12}} now\).*run without "
        rf"--resume",
    ):
        headtohead.run(experiment, out_dir=out, resume=True)
    assert headtohead.run(experiment, out_dir=out, resume="reuse").resumed == []  # h2h train: nothing re-used
    assert headtohead.run(experiment, out_dir=out).resumed == []  # a fresh run on the new data …
    assert headtohead.run(experiment, out_dir=out, resume=True).resumed == ["a", "b", "c"]  # … resumes again
    entry = next((out / RESUME_DIR).glob("a-*.npz"))
    entry.write_bytes(b"damaged")
    messages: list[str] = []
    handler = logging.Handler()
    handler.emit = lambda record: messages.append(record.getMessage())  # type: ignore[method-assign]
    logging.getLogger("headtohead").addHandler(handler)
    try:
        damaged = headtohead.run(experiment, out_dir=out, resume=True)
    finally:
        logging.getLogger("headtohead").removeHandler(handler)
    assert damaged.resumed == ["b", "c"] and any("saved work of model 'a' " in m and "damaged" in m for m in messages)
    assert not headtohead.run(experiment, out_dir=out).resumed  # without --resume everything runs


def test_sigterm_becomes_an_exception_only_inside_the_block():
    from headtohead.runtime.faults import Terminated, interrupt_exit_code, signals_as_exceptions

    before = signal.getsignal(signal.SIGTERM)
    with pytest.raises(Terminated) as info, signals_as_exceptions():
        os.kill(os.getpid(), signal.SIGTERM)
        time.sleep(5)  # the handler raises at once; never reached
    assert interrupt_exit_code(info.value) == 143 and str(info.value) == "SIGTERM"
    assert signal.getsignal(signal.SIGTERM) is before
    previous = signal.signal(signal.SIGHUP, signal.SIG_IGN)  # as under nohup: stays ignored
    try:
        with signals_as_exceptions():
            assert signal.getsignal(signal.SIGHUP) is signal.SIG_IGN
    finally:
        signal.signal(signal.SIGHUP, previous)


def test_resumed_models_time_is_not_added_to_the_new_run(experiment, tmp_path, monkeypatch, capsys):
    from headtohead.report.words.timings import timings_line

    monkeypatch.setenv("H2H_TEST_DELAY", "0.02")  # b and c sleep per batch of 2: 20 batches each
    out = tmp_path / "out"
    first = headtohead.run(experiment, out_dir=out)
    assert first.result.timings.evaluate_s > 0.6
    monkeypatch.setenv("H2H_TEST_DELAY", "0")
    edited = headtohead.run(experiment, out_dir=out, resume=True, overrides=["models.b.model_args.slow=false"])
    assert edited.resumed == ["a", "c"]
    times = edited.result.timings
    assert times.evaluate_s == pytest.approx(edited.result.model("b").eval_time_s)  # b alone ran now
    assert times.evaluate_s < first.result.model("c").eval_time_s  # c's old pass is not part of it
    line = timings_line(edited.result, reused=edited.resumed)
    assert line.endswith("(reused from the earlier run, not timed again: a, c)")
    main(["run", str(experiment), "--out", str(out), "--resume"])  # b as first: run again
    assert "not timed again: a, c" in capsys.readouterr().out
