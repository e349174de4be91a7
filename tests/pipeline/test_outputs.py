"""Whose output folder it is: another experiment is refused unless --overwrite; one run at a time (real processes)."""

from __future__ import annotations

import os
import signal
import subprocess
import sys
import textwrap
from pathlib import Path

import pytest
import yaml

import headtohead
from headtohead.errors import ResultsError
from headtohead.pipeline.outputs import OutputLock
from headtohead.results.files import LOCK_FILE, REPORT_FILE, RESUME_DIR

MLP = {
    "name": "mlp",
    "kind": "python",
    "source": "headtohead.testing.models:tiny_mlp",
    "model_args": {"n_features": 4, "n_classes": 3},
}
IRIS = {
    "name": "first",
    "data": {"path": "sklearn:iris"},
    "models": [MLP],
    "speed": {"enabled": False},
    "stats": {"n_resamples": 200},
}


def _files(out: Path) -> dict[str, bytes]:
    return {p.name: p.read_bytes() for p in out.iterdir() if p.is_file()}


def test_another_experiment_is_refused_and_overwrite_replaces_it(tmp_path):
    out = tmp_path / "out"
    headtohead.run(IRIS, out_dir=out, report=True)
    before = _files(out)
    assert {"results.json", "predictions.npz", REPORT_FILE} <= set(before)
    second = {**IRIS, "name": "second", "models": [MLP, {**MLP, "name": "mlp2"}]}
    with pytest.raises(
        ResultsError,
        match=rf"--out {out}: holds the h2h run results of experiment 'first'; "
        rf"refusing to replace them with h2h run of experiment 'second'; pass "
        rf"--overwrite to replace them, or choose another --out",
    ):
        headtohead.run(second, out_dir=out)
    assert _files(out) == before  # nothing touched, no lock left behind
    with pytest.raises(ResultsError, match="refusing to replace them with h2h bench of experiment 'first'"):
        headtohead.run(IRIS, out_dir=out, quality=False, speed=False)

    replaced = headtohead.run(second, out_dir=out, overwrite=True)
    assert headtohead.load_result(out / "results.json").name == "second"
    assert [m.name for m in replaced.result.models] == ["mlp", "mlp2"]
    assert not (out / REPORT_FILE).exists()  # the first experiment's report described results that are gone
    entries = sorted(p.name.split("-")[0] for p in (out / RESUME_DIR).glob("*-*.json"))
    assert entries == ["mlp", "mlp2"]  # the first experiment's resume entries went with it
    # The same experiment again: its own folder, no flag needed; --resume re-uses its finished models.
    assert headtohead.run(second, out_dir=out, resume=True).resumed == ["mlp", "mlp2"]
    assert not (out / LOCK_FILE).exists()


def test_a_lock_held_elsewhere_refuses_at_once_and_goes_with_its_holder(tmp_path):
    out = tmp_path / "out"
    out.mkdir()
    with OutputLock(out, "h2h run of experiment 'x'"):
        with pytest.raises(
            ResultsError,
            match=r"another h2h run of experiment 'x' \(pid \d+ on .+, since .+\) is "
            r"writing there now; wait for it to finish, or choose another --out",
        ):
            headtohead.run(IRIS, out_dir=out)
        assert (out / LOCK_FILE).exists()
    assert not (out / LOCK_FILE).exists()
    headtohead.run(IRIS, out_dir=out)  # free again


# A model module beside the experiment: keyword classifiers that touch a marker as their pass
# starts and then wait until the test lets them go (settings from the environment, so every run
# has the same experiment): the test, not the machine's speed, decides when the first run ends.
MODELS_PY = textwrap.dedent("""\
    import os
    import time
    from pathlib import Path

    from headtohead.testing.models import keyword_classifier


    def make(name, keywords):
        inner = keyword_classifier(keywords)

        def predict(examples):
            Path(os.environ["H2H_TEST_MARKERS"], name + ".started").touch()
            release = Path(os.environ["H2H_TEST_MARKERS"], "release")
            while not release.exists():  # held until the test releases it: an event, not a clock
                time.sleep(0.02)
            return inner(examples)

        predict.label_names = inner.label_names
        return predict
    """)


def _experiment(folder: Path, models: list[str], file: str = "exp.yaml") -> Path:
    from headtohead.testing.data import make_text_table

    make_text_table(folder / "dev.csv", n_per_class=10, seed=3)
    keywords = {"negative": ["bad", "dull"], "positive": ["good", "great"]}
    exp = {
        "name": "locked",
        "data": {"path": "dev.csv"},
        "eval": {"batch_size": 2, "device": "cpu"},
        "stats": {"n_resamples": 200},
        "speed": {"enabled": False},
        "models": [
            {
                "name": m,
                "kind": "python",
                "source": "h2h_lock_models:make",
                "outputs": "probabilities",
                "model_args": {"name": m, "keywords": keywords},
            }
            for m in models
        ],
    }
    path = folder / file
    path.write_text(yaml.safe_dump(exp, sort_keys=False))
    return path


def _start(experiment: Path, out: Path, markers: Path) -> subprocess.Popen:
    env = {**os.environ, "H2H_TEST_MARKERS": str(markers), "HF_HUB_OFFLINE": "1"}
    return subprocess.Popen(
        [sys.executable, "-m", "headtohead.cli.main", "run", str(experiment), "--out", str(out)],
        env=env,
        stdout=subprocess.PIPE,
        stderr=subprocess.PIPE,
        text=True,
    )


def _wait_for(until, marker: Path, process: subprocess.Popen) -> None:
    if not until(marker.exists, process):
        pytest.fail(f"{marker.name} never appeared: {process.communicate()[1][-2000:]}")


@pytest.mark.slow
def test_two_runs_at_once_the_second_refuses_and_a_killed_run_leaves_no_lock(tmp_path, until):
    (tmp_path / "h2h_lock_models.py").write_text(MODELS_PY)
    markers = tmp_path / "markers"
    markers.mkdir()
    first = _experiment(tmp_path, ["a", "b"])
    second = _experiment(tmp_path, ["z"], "same-name.yaml")  # the same experiment name, other models
    out = tmp_path / "out"

    running = _start(first, out, markers)
    _wait_for(until, markers / "a.started", running)  # the first run is inside its pass, held there …
    intruder = _start(second, out, markers)
    _, err = intruder.communicate()
    (markers / "release").touch()  # … until the second has come and gone
    assert intruder.returncode == 2, err
    assert len(err.strip().splitlines()) == 1 and "Traceback" not in err
    assert f"error: --out {out}: another h2h run of experiment 'locked' (pid {running.pid} on " in err
    assert "is writing there now; wait for it to finish, or choose another --out" in err
    _, err = running.communicate()
    assert running.returncode == 0, err
    assert not (markers / "z.started").exists()  # the second run never evaluated anything
    result = headtohead.load_result(out / "results.json")
    assert [m.name for m in result.models] == ["a", "b"] and result.stats is not None  # nothing interleaved
    assert list(headtohead.load_predictions(out).models) == ["a", "b"]
    assert not (out / LOCK_FILE).exists()

    (markers / "release").unlink()
    (markers / "a.started").unlink()
    killed = _start(first, out, markers)  # a run killed outright cannot release anything …
    _wait_for(until, markers / "a.started", killed)
    killed.send_signal(signal.SIGKILL)
    killed.communicate()
    assert (out / LOCK_FILE).exists()
    (markers / "release").touch()
    finish = _start(first, out, markers)  # … and still does not block the next one: the kernel dropped its lock
    _, err = finish.communicate()
    assert finish.returncode == 0, err
    assert not (out / LOCK_FILE).exists() and not list(out.glob(".*.tmp"))
