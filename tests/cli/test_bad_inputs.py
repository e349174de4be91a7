"""Malformed input, systematically: every case through the real CLI entry point.

Each case must give exit code 2, exactly one line on stderr that names what is wrong and
where, no traceback, and leave the ``results.json``/``predictions.npz`` of an earlier run
in the ``--out`` folder byte-identical. The list of cases is the issue's checklist (and a
few more); add a case by adding one entry to ``CASES``.
"""

from __future__ import annotations

import contextlib
import errno
import os
import shutil
import tempfile
from collections.abc import Callable
from dataclasses import dataclass, field
from pathlib import Path
from typing import Any

import pytest
import yaml

from headtohead.cli.main import main
from headtohead.runtime.devices import use_backend
from headtohead.testing.data import make_image_folder, make_text_table, write_text_table

KEYWORDS = {
    "name": "kw",
    "kind": "python",
    "source": "headtohead.testing.models:keyword_classifier",
    "model_args": {"keywords": {"negative": ["bad", "dull"], "positive": ["good", "great"]}},
    "outputs": "probabilities",
}
MLP = {
    "name": "mlp",
    "kind": "python",
    "source": "headtohead.testing.models:tiny_mlp",
    "model_args": {"n_features": 4, "n_classes": 3},
}


@pytest.fixture(scope="module")
def assets(tmp_path_factory) -> dict[str, Path]:
    """Shared inputs: a text table, tiny BERTs (2 and 3 labels), an image folder, and the files of a finished run."""
    from headtohead.testing.text import make_tiny_bert

    root = tmp_path_factory.mktemp("assets")
    previous = root / "previous"
    # The earlier run is of the experiment the cases run ("bad"), so the folder is theirs to write into.
    main(
        [
            "run",
            str(
                _write_exp(
                    root,
                    {"name": "bad", "data": {"path": "sklearn:iris"}, "models": [MLP], "speed": {"enabled": False}},
                )
            ),
            "--out",
            str(previous),
        ]
    )
    return {
        "table": make_text_table(root / "dev.csv", n_per_class=6),
        "table3": make_text_table(root / "dev3.csv", n_per_class=4, classes=("negative", "neutral", "positive")),
        "bert": make_tiny_bert(root / "bert", ["negative", "positive"], max_position_embeddings=64),
        "bert3": make_tiny_bert(root / "bert3", ["negative", "neutral", "positive"], seed=3),
        "images": make_image_folder(root / "images", classes=("ants", "bees"), n_per_class=3, size=12),
        "previous": previous,
    }


def _write_exp(folder: Path, experiment: dict[str, Any] | str, name: str = "exp.yaml") -> Path:
    path = folder / name
    path.write_text(experiment if isinstance(experiment, str) else yaml.safe_dump(experiment, sort_keys=False))
    return path


def _text_exp(data: dict[str, Any], *models: dict[str, Any], **extra: Any) -> dict[str, Any]:
    return {"name": "bad", "data": data, "models": list(models) or [KEYWORDS], "speed": {"enabled": False}, **extra}


@dataclass
class Case:
    """``build(tmp, assets)`` writes the inputs and returns the argv after ``h2h`` (``{out}`` is replaced)."""

    id: str
    build: Callable[[Path, dict[str, Path]], list[str]]
    expect: str
    patch: Callable[[pytest.MonkeyPatch], None] | None = None
    backend: Any = None
    extra: dict[str, Any] = field(default_factory=dict)


def run_args(experiment: dict[str, Any] | str, *more: str) -> Callable[[Path, dict[str, Path]], list[str]]:
    """A case that runs ``experiment`` (a dict, YAML text, or a callable of (tmp, assets) returning one)."""

    def build(tmp: Path, assets: dict[str, Path]) -> list[str]:
        exp = experiment(tmp, assets) if callable(experiment) else experiment
        return ["run", str(_write_exp(tmp, exp)), "--out", "{out}", *more]

    return build


def with_file(
    name: str, content: bytes | str | Callable[[Path], Any], data: dict[str, Any] | None = None, *models: dict[str, Any]
) -> Callable[[Path, dict[str, Path]], list[str]]:
    """A run whose data.path is a file written from ``content`` (bytes, text, or a writer of the path)."""

    def experiment(tmp: Path, assets: dict[str, Path]) -> dict[str, Any]:
        path = tmp / name
        if callable(content):
            content(path)
        elif isinstance(content, bytes):
            path.write_bytes(content)
        else:
            path.write_text(content, encoding="utf-8")
        return _text_exp({"path": str(path), **(data or {})}, *models)

    return run_args(experiment)


def with_assets(make: Callable[[Path, dict[str, Path]], dict[str, Any]]) -> Callable[[Path, dict[str, Path]], list]:
    return run_args(make)


class _NoGPU:
    def cuda_available(self) -> bool:
        return False


def _png(path: Path) -> None:
    from PIL import Image

    Image.new("RGB", (4, 4)).save(path, format="PNG")


def _empty_classes(tmp: Path) -> Path:
    for name in ("cat", "dog"):
        (tmp / "imgs" / name).mkdir(parents=True)
        (tmp / "imgs" / name / "notes.txt").write_text("no image here")
    return tmp / "imgs"


def _flat_folder(tmp: Path) -> Path:
    (tmp / "flat").mkdir()
    _png(tmp / "flat" / "loose.png")
    return tmp / "flat"


def _truncated_bert(tmp: Path, assets: dict[str, Path]) -> dict[str, Any]:
    folder = tmp / "broken-bert"
    shutil.copytree(assets["bert"], folder)
    weights = folder / "model.safetensors"
    weights.write_bytes(weights.read_bytes()[: weights.stat().st_size // 2])
    return _text_exp({"path": str(assets["table"])}, {"name": "bert", "kind": "transformers", "source": str(folder)})


def _pickled_torch_checkpoint(tmp: Path, assets: dict[str, Path]) -> dict[str, Any]:
    import timm
    import torch

    torch.save(timm.create_model("test_resnet", num_classes=2), tmp / "whole.pt")  # a full pickle, not weights
    return {
        "name": "bad",
        "data": {"path": str(assets["images"])},
        "speed": {"enabled": False},
        "models": [
            {
                "name": "net",
                "kind": "timm",
                "source": "test_resnet",
                "checkpoint": str(tmp / "whole.pt"),
                "image_size": 32,
            }
        ],
    }


def _pickled_sklearn(tmp: Path, assets: dict[str, Path]) -> dict[str, Any]:
    import pickle

    from sklearn.datasets import load_iris
    from sklearn.linear_model import LogisticRegression

    x, y = load_iris(return_X_y=True)
    (tmp / "lr.pkl").write_bytes(pickle.dumps(LogisticRegression(max_iter=200).fit(x, y)))
    return {
        "name": "bad",
        "data": {"path": "sklearn:iris"},
        "speed": {"enabled": False},
        "models": [{"name": "lr", "kind": "sklearn", "source": str(tmp / "lr.pkl")}],
    }


def _disk_full(monkeypatch: pytest.MonkeyPatch) -> None:
    def no_space(fd: int) -> None:
        raise OSError(errno.ENOSPC, os.strerror(errno.ENOSPC))

    monkeypatch.setattr(os, "fsync", no_space)


def _not_writable(monkeypatch: pytest.MonkeyPatch) -> None:
    # Permission bits do not stop root (CI containers often run as root): refuse the write itself.
    def refused(*args: Any, **kwargs: Any) -> Any:
        raise PermissionError(errno.EACCES, os.strerror(errno.EACCES))

    monkeypatch.setattr(tempfile, "TemporaryFile", refused)


def _changed_data_since(tmp: Path, assets: dict[str, Path]) -> list[str]:
    """A resume entry in {out} evaluated on other data (its run.json names another fingerprint)."""
    store = tmp / "out" / ".h2h-resume"
    store.mkdir(parents=True, exist_ok=True)
    (store / "run.json").write_text('{"format": 1, "fingerprint": "0123456789abcdef", "source": "dev.csv"}')
    (store / "kw-0123456789abcdef.json").write_text("{}")
    return ["run", str(_write_exp(tmp, _text_exp({"path": str(assets["table"])}))), "--out", "{out}", "--resume"]


NAN_MODEL = """\
import numpy as np


def everywhere_nan(n_classes=2):
    def predict(examples):
        return np.full((len(examples), n_classes), np.nan)
    predict.label_names = ["negative", "positive"]
    return predict
"""


def _nan_everywhere(tmp: Path, assets: dict[str, Path]) -> dict[str, Any]:
    (tmp / "h2h_bad_nan_model.py").write_text(NAN_MODEL)
    return _text_exp(
        {"path": str(assets["table"])}, {"name": "nan", "kind": "python", "source": "h2h_bad_nan_model:everywhere_nan"}
    )


def _hold_the_lock(out: Path) -> contextlib.AbstractContextManager[Any]:
    """Another run writing into ``out`` (its lock held through another open file, as a second process would)."""
    from headtohead.pipeline.outputs import OutputLock

    return OutputLock(out, "h2h run of experiment 'bad'")


def quick_run(data: str, *models: str) -> Callable[[Path, dict[str, Path]], list[str]]:
    """``h2h run --data … --model …`` of files written into the case's folder (``{name: text}`` of ``FILES``)."""

    def build(tmp: Path, assets: dict[str, Path]) -> list[str]:
        for name in (data, *models):
            (tmp / name).write_text(FILES[name])
        chosen = [arg for i, name in enumerate(models) for arg in ("--model", f"m{i}={tmp / name}")]
        return ["run", "--data", str(tmp / data), *chosen, "--set", "name=bad", "--out", "{out}"]

    return build


#: Files of quick runs: data labelled 0/1, and models' predictions of it.
FILES = {
    "numbered.csv": "text,label\n" + "".join(f"{w} {i},{i % 2}\n" for i, w in enumerate(["dull", "good"] * 6)),
    "named-proba.csv": "prediction,proba_negative,proba_positive\n" + "negative,0.7,0.3\npositive,0.2,0.8\n" * 6,
    "named-labels.csv": "prediction\n" + "negative\npositive\n" * 6,
    "indices.csv": "prediction\n" + "0\n1\n" * 6,
    # a test split without labels whose header names its sentence column 'label' (GLUE's test.tsv, renamed)
    "unlabelled.tsv": "text\tlabel\n" + "".join(f"{i}\tsentence number {i} of the test split\n" for i in range(24)),
}


def _scores(tmp: Path, rows: int) -> str:
    """A table of scores for h2h suite --scores: ``rows`` data sets, two models."""
    lines = ["dataset,a,b", *(f"d{i},0.{80 + i},0.{70 + i}" for i in range(rows))]
    (tmp / "scores.csv").write_text("\n".join(lines) + "\n")
    return str(tmp / "scores.csv")


def _scores_of(tmp: Path, scale: float) -> str:
    """A table of scores on a 0–``scale`` scale (issue 41: a 0–100 table kept the ROPE of 0.01)."""
    lines = ["dataset,a,b", *(f"d{i},{(0.80 + i / 100) * scale:g},{(0.797 + i / 100) * scale:g}" for i in range(6))]
    (tmp / "scores.csv").write_text("\n".join(lines) + "\n")
    return str(tmp / "scores.csv")


MANY = {f"intent_{i:02d}": [f"word{i}"] for i in range(77)}  # 77 classes, none of them the data's

BERT = {"name": "bert", "kind": "transformers"}
SUITE = {
    "name": "bad",
    "datasets": [{"name": "a", "data": {"path": "a.csv"}}, {"name": "b", "data": {"path": "b.csv"}}],
    "models": [KEYWORDS, {**KEYWORDS, "name": "kw2"}],
    "across": {"metric": "accuracy"},
}

CASES = [
    # -- the experiment file and --set overrides
    Case("yaml-syntax-error", run_args("name: x\ndata: {path: [\n"), "exp.yaml:3:1: YAML syntax error"),
    Case(
        "unknown-key",
        run_args(_text_exp({"path": "d.csv"}, eval={"batch_sise": 4})),
        "eval.batch_sise: unknown key — did you mean batch_size?",
    ),
    Case(
        "wrong-type",
        run_args(_text_exp({"path": "d.csv"}, eval={"batch_size": "many"})),
        "eval.batch_size: Input should be a valid integer",
    ),
    Case(
        "missing-required-field", run_args({"name": "x", "data": {"path": "d.csv"}}), "models: missing required field"
    ),
    Case(
        "duplicate-model-names",
        run_args(_text_exp({"path": "d.csv"}, KEYWORDS, KEYWORDS)),
        "model name 'kw' is used twice",
    ),
    Case(
        "batch-size-zero",
        run_args(_text_exp({"path": "d.csv"}, eval={"batch_size": 0})),
        "eval.batch_size: Input should be greater than 0",
    ),
    Case(
        "batch-size-negative",
        run_args(_text_exp({"path": "d.csv"}), "--set", "eval.batch_size=-8"),
        "eval.batch_size: Input should be greater than 0 (got -8)",
    ),
    Case(
        "unknown-device",
        run_args(_text_exp({"path": "d.csv"}, eval={"device": "gpu"})),
        "eval.device: unknown device 'gpu' (use auto, cpu, cuda, cuda:N or mps)",
    ),
    Case(
        "cuda-without-gpu",
        with_assets(lambda t, a: _text_exp({"path": str(a["table"])}, eval={"device": "cuda"})),
        "CUDA is not available on this machine",
        backend=_NoGPU(),
    ),
    Case(
        "conflicting-overrides",
        run_args(_text_exp({"path": "d.csv"}), "--set", "eval.batch_size=4", "--set", "eval.batch_size=8"),
        "--set eval.batch_size=4 and --set eval.batch_size=8 conflict",
    ),
    Case(
        "override-without-value",
        run_args(_text_exp({"path": "d.csv"}), "--set", "eval.batch_size"),
        "expected KEY=VALUE",
    ),
    Case(
        "override-unknown-model",
        run_args(_text_exp({"path": "d.csv"}), "--set", "models.kws.max_length=8"),
        "no entry named 'kws' — did you mean kw?",
    ),
    Case(
        "experiment-file-missing",
        lambda t, a: ["run", str(t / "nope.yaml"), "--out", "{out}"],
        "nope.yaml: experiment file not found",
    ),
    Case("experiment-file-empty", run_args(""), "the experiment file is empty"),
    Case(
        "suite-file-to-run",
        run_args(SUITE),
        "exp.yaml: this is a suite file (datasets:, across:), not an experiment (data:); run it with h2h suite ",
    ),
    Case(
        "suite-file-to-validate",
        lambda t, a: ["validate", str(_write_exp(t, SUITE))],
        "exp.yaml: this is a suite file (datasets:, across:), not an experiment (data:); run it with h2h suite ",
    ),
    Case(
        "unknown-model-kind",
        run_args(_text_exp({"path": "d.csv"}, {**KEYWORDS, "kind": "sklarn"})),
        "unknown model kind 'sklarn' — did you mean sklearn?",
    ),
    # -- the data
    Case("data-file-missing", run_args(_text_exp({"path": "nowhere.csv"})), "nowhere.csv: data file not found"),
    Case("binary-file-as-csv", with_file("photo.csv", _png), "not a text table (the file is a PNG image)"),
    Case("empty-file", with_file("empty.csv", ""), "empty.csv: the file is empty"),
    Case("header-only", with_file("head.csv", "text,label\n"), "has a header (text, label) but no rows"),
    Case(
        "text-column-missing",
        with_file("t.csv", "sentence,label\ngood,1\nbad,0\n"),
        "no column 'text' (data.text_column)",
    ),
    Case(
        "label-column-missing",
        with_file("t.csv", "text,label\ngood,1\nbad,0\n", {"label_column": "target"}),
        "no column 'target' (data.label_column)",
    ),
    Case(
        "all-texts-empty",
        with_file("t.csv", "text,label\n,1\n  ,0\n"),
        "no usable examples (skipped: {'empty text': 2})",
    ),
    Case(
        "nan-texts-jsonl",
        with_file("t.jsonl", '{"text": NaN, "label": 1}\n{"text": null, "label": 0}\n'),
        "no usable examples (skipped: {'empty text': 2})",
    ),
    Case(
        "mixed-label-types",
        with_file("t.csv", "text,label\ngood,1\nbad,negative\n"),
        "column 'label' mixes numbers and names",
    ),
    Case(
        "class-without-eval-examples",
        with_file("t.csv", "text,label\ngood,1\nbad,0\n", {"label_names": ["negative", "neutral", "positive"]}),
        "class(es) ['positive'] have no evaluation examples",
    ),
    Case(
        "train-class-missing-from-eval",
        with_assets(
            lambda t, a: _text_exp(
                {
                    "path": str(a["table"]),
                    "train": str(
                        write_text_table(
                            t / "train.csv",
                            [{"text": "meh", "label": "neutral"}, {"text": "good", "label": "positive"}],
                        )
                    ),
                }
            )
        ),
        "classes ['neutral'] have training examples but no evaluation examples",
    ),
    Case(
        "every-label-unique",
        quick_run("unlabelled.tsv", "indices.csv", "indices.csv"),
        "unlabelled.tsv: column 'label' (data.label_column): all 24 values differ, so it is probably not labels "
        "(an unlabelled file?); set data.label_column (--label-column) to the column of classes (columns: text, "
        "label)",
    ),
    Case(
        "malformed-csv-row",
        with_file("t.csv", "text,label\ngood,1\nbad,0,extra,fields\n"),
        "malformed row at line 3: expected 2 fields, saw 4",
    ),
    Case(
        "malformed-jsonl-line",
        with_file("t.jsonl", '{"text": "good", "label": 1}\n{"text": "bad", \n'),
        "line 2 is not valid JSON",
    ),
    Case("not-utf8", with_file("t.csv", "text,label\ncaf\xe9,1\n".encode("latin-1")), "not UTF-8 text"),
    Case(
        "image-folder-without-images",
        run_args(lambda t, a: _text_exp({"path": str(_empty_classes(t))}, MLP)),
        "class folder(s) ['cat', 'dog'] hold no readable image",
    ),
    Case(
        "image-folder-without-classes",
        run_args(lambda t, a: _text_exp({"path": str(_flat_folder(t))}, MLP)),
        "no class subfolders",
    ),
    # -- the models
    Case(
        "model-labels-do-not-match",
        with_assets(
            lambda t, a: _text_exp(
                {"path": str(a["table"])}, {**BERT, "source": str(a["bert"]), "label_names": ["cat", "dog"]}
            )
        ),
        "model 'bert' labels 'cat', 'dog' do not match the dataset labels 'negative', 'positive'",
    ),
    Case(
        "model-lacks-a-data-class",
        with_assets(lambda t, a: _text_exp({"path": str(a["table3"])}, {**BERT, "source": str(a["bert"])})),
        "model 'bert' cannot predict the dataset's class(es) 'neutral': its 2 outputs are 'negative', 'positive'",
    ),
    Case(
        "long-label-list-is-cut",
        with_assets(lambda t, a: _text_exp({"path": str(a["table"])}, {**KEYWORDS, "model_args": {"keywords": MANY}})),
        "labels 'intent_00', 'intent_01', 'intent_02', 'intent_03', 'intent_04', 'intent_05', 'intent_06', "
        "'intent_07', 'intent_08', 'intent_09' … and 67 more do not match the dataset labels 'negative', "
        "'positive'",
    ),
    Case(
        "nan-scores-for-every-example",
        with_assets(_nan_everywhere),
        "model 'nan' returned NaN or infinite scores for every example (12)",
    ),
    Case("truncated-checkpoint", with_assets(_truncated_bert), "corrupt or truncated"),
    Case("pickle-checkpoint-without-opt-in", with_assets(_pickled_torch_checkpoint), "holds pickled Python objects"),
    Case("pickled-sklearn-without-opt-in", with_assets(_pickled_sklearn), "allow_pickle: true"),
    Case(
        "max-length-beyond-position-limit",
        with_assets(
            lambda t, a: _text_exp({"path": str(a["table"])}, {**BERT, "source": str(a["bert"]), "max_length": 512})
        ),
        "max_length 512 is beyond what the model can read (its position embeddings allow 64 tokens)",
    ),
    Case(
        "hub-id-while-offline",
        with_assets(lambda t, a: _text_exp({"path": str(a["table"])}, {**BERT, "source": "someone/no-such-model"})),
        "hub model 'someone/no-such-model' is not available offline: download it first (hf download "
        "someone/no-such-model)",
    ),
    Case(
        "python-module-missing",
        with_assets(lambda t, a: _text_exp({"path": str(a["table"])}, {**KEYWORDS, "source": "nomodule:make"})),
        "module 'nomodule' not found",
    ),
    Case(
        "model-cannot-read-modality",
        with_assets(
            lambda t, a: _text_exp({"path": str(a["table"])}, {"name": "net", "kind": "timm", "source": "test_resnet"})
        ),
        "model 'net' (kind timm) cannot read text data",
    ),
    Case(
        "named-probability-columns-on-numbered-data",
        quick_run("numbered.csv", "named-proba.csv", "indices.csv"),
        "named-proba.csv): probability columns for labels the data does not have: 'proba_negative', "
        "'proba_positive'; the data's labels are 0, 1 (columns proba_0, proba_1); the data's labels are numbers: "
        "name them, label i as data.label_names[i] (--set 'data.label_names=[negative,positive]' if 0 is "
        "negative, 1 is positive)",
    ),
    Case(
        "named-predictions-on-numbered-data",
        quick_run("numbered.csv", "named-labels.csv", "indices.csv"),
        "the data's labels are numbers: name them, label i as data.label_names[i] (--set "
        "'data.label_names=[negative,positive]' if 0 is negative, 1 is positive)",
    ),
    # -- --until-decided (eval.until_decided)
    Case(
        "until-decided-one-model",
        with_assets(lambda t, a: _text_exp({"path": str(a["table"])})),
        "--until-decided (eval.until_decided) stops when a comparison is decided, but the experiment has 1 model",
        extra={"more": ["--until-decided"]},
    ),
    Case(
        "until-decided-with-processes",
        run_args(
            _text_exp({"path": "d.csv"}, KEYWORDS, {**KEYWORDS, "name": "kw2"}, execution={"mode": "processes"}),
            "--until-decided",
        ),
        "cannot be combined with execution.mode: processes",
    ),
    Case(
        "until-decided-with-shards",
        run_args(
            _text_exp({"path": "d.csv"}, KEYWORDS, {**KEYWORDS, "name": "kw2"}, execution={"shards": 2}),
            "--until-decided",
        ),
        "cannot be combined with execution.shards: 2",
    ),
    Case(
        "until-decided-chunk-size-zero",
        run_args(
            _text_exp({"path": "d.csv"}, KEYWORDS, {**KEYWORDS, "name": "kw2"}),
            "--until-decided",
            "--set",
            "eval.chunk_size=0",
        ),
        "eval.chunk_size: Input should be greater than 0",
    ),
    Case(
        "until-decided-chunk-not-whole-batches",
        run_args(
            _text_exp(
                {"path": "d.csv"}, KEYWORDS, {**KEYWORDS, "name": "kw2"}, eval={"batch_size": 4, "chunk_size": 10}
            ),
            "--until-decided",
        ),
        "eval.chunk_size=10 is not a multiple of eval.batch_size=4",
    ),
    Case(
        "until-decided-chunk-covers-the-data",
        with_assets(
            lambda t, a: _text_exp(
                {"path": str(a["table"])},
                KEYWORDS,
                {**KEYWORDS, "name": "kw2"},
                eval={"batch_size": 4, "chunk_size": 12},
            )
        ),
        "eval.chunk_size=12 is not smaller than the 12 examples to evaluate",
        extra={"more": ["--until-decided"]},
    ),
    Case(
        "until-decided-conflicts-with-set",
        run_args(
            _text_exp({"path": "d.csv"}, KEYWORDS, {**KEYWORDS, "name": "kw2"}),
            "--until-decided",
            "--set",
            "eval.until_decided=false",
        ),
        "--set eval.until_decided=false and --set eval.until_decided=true conflict",
    ),
    # -- the output
    Case(
        "output-is-a-file",
        with_assets(lambda t, a: _text_exp({"path": str(a["table"])})),
        "is a file, not a folder",
        extra={"out_is_file": True},
    ),
    Case(
        "output-not-writable",
        with_assets(lambda t, a: _text_exp({"path": str(a["table"])})),
        "cannot write results there (Permission denied)",
        patch=_not_writable,
    ),
    Case(
        "disk-full-while-writing",
        with_assets(lambda t, a: _text_exp({"path": str(a["table"])})),
        "No space left on device",
        patch=_disk_full,
    ),
    Case(
        "another-experiment-in-out",
        with_assets(lambda t, a: {**_text_exp({"path": str(a["table"])}), "name": "other"}),
        "holds the h2h run results of experiment 'bad'; refusing to replace them with h2h run of experiment "
        "'other'; pass --overwrite to replace them, or choose another --out",
    ),
    Case(
        "bench-into-a-run-folder",
        lambda t, a: ["bench", str(_write_exp(t, _text_exp({"path": str(a["table"])}))), "--out", "{out}"],
        "holds the h2h run results of experiment 'bad'; refusing to replace them with h2h bench of experiment 'bad'",
    ),
    Case(
        "another-run-writing-there",
        with_assets(lambda t, a: _text_exp({"path": str(a["table"])})),
        "another h2h run of experiment 'bad' (pid",
        extra={"locked": True},
    ),
    Case("resume-after-the-data-changed", _changed_data_since, "the data changed since the run being resumed in"),
    Case(
        "show-corrupt-results",
        lambda t, a: ["show", str(_write_exp(t, "{not json", "results.json"))],
        "not a readable results JSON file",
    ),
    Case(
        "gate-ambiguous-margin",
        lambda t, a: [
            "gate",
            "{out}/results.json",
            "--baseline",
            "mlp",
            "--candidate",
            "mlp2",
            "--max-accuracy-drop",
            "0.5%",
        ],
        "'%' is ambiguous for accuracy",
    ),
    Case(
        "gate-unknown-model",
        lambda t, a: [
            "gate",
            "{out}/results.json",
            "--baseline",
            "mpl",
            "--candidate",
            "x",
            "--max-accuracy-drop",
            "0.5pp",
        ],
        "--baseline mpl: no model of that name",
    ),
    # -- metric names: the nearest by edits of spelling; a table's own name unless it misspells a catalogue one
    Case(
        "gate-metric-misspelt",
        lambda t, a: (
            ["gate", "{out}", "--baseline", "mlp", "--candidate", "mlp", "--max-accuracy-drop", "1pp"]
            + ["--metric", "mmc"]
        ),
        "--metric mmc: unknown metric 'mmc' — did you mean mcc?",
    ),
    Case(
        "suite-table-metric-misspelt",
        lambda t, a: ["suite", "--scores", _scores(t, 3), "--metric", "acuracy", "--out", str(t / "suite")],
        "--metric acuracy: not a catalogue metric but a misspelling of one — did you mean accuracy?",
    ),
    Case(
        "suite-table-of-one-data-set",
        lambda t, a: ["suite", "--scores", _scores(t, 1), "--out", str(t / "suite")],
        "scores.csv: one data set (d0); a suite compares models across at least two data sets: give one row per "
        "data set",
    ),
    Case(
        "suite-table-of-unknown-scale-beyond-one",
        lambda t, a: ["suite", "--scores", _scores_of(t, 100), "--out", str(t / "suite")],
        "scores.csv: the values run from 79.7 to 85 and 'score' has no scale headtohead knows, so the default "
        "ROPE of 0.01 would be 0.01 of its units; give --rope in the table's units",
    ),
    Case(
        "suite-share-metric-beyond-percent",
        lambda t, a: ["suite", "--scores", _scores_of(t, 250), "--metric", "accuracy", "--out", str(t / "suite")],
        "scores.csv: accuracy is a share, but the values run from 199.25 to 212.5: neither shares (0–1) nor "
        "percent (0–100)",
    ),
    # -- one rule for every --alpha: 0 < alpha < 0.5 (docs/cli.md, "Words")
    Case(
        "gate-alpha-above-one-half",
        lambda t, a: (
            ["gate", "{out}", "--baseline", "mlp", "--candidate", "mlp", "--max-accuracy-drop", "1pp"]
            + ["--alpha", "0.7"]
        ),
        "--alpha 0.7: a significance level lies between 0 and 0.5, both excluded; write e.g. --alpha 0.05",
    ),
    Case(
        "plan-alpha-a-confidence",
        lambda t, a: ["plan", "--accuracy", "0.9", "--delta", "2pp", "--alpha", "0.95"],
        "--alpha 0.95: a significance level lies between 0 and 0.5, both excluded (0.95 reads as a confidence: "
        "its alpha is 0.05)",
    ),
    Case(
        "plan-alpha-one-half",
        lambda t, a: ["plan", "--accuracy", "0.9", "--delta", "2pp", "--alpha", "0.5"],
        "--alpha 0.5: a significance level lies between 0 and 0.5, both excluded",
    ),
    Case(
        "suite-alpha-zero",
        lambda t, a: ["suite", "--scores", _scores(t, 3), "--alpha", "0", "--out", str(t / "suite")],
        "--alpha 0: a significance level lies between 0 and 0.5, both excluded",
    ),
    Case(
        "suite-alpha-not-a-number",
        lambda t, a: ["suite", "--scores", _scores(t, 3), "--alpha", "5%", "--out", str(t / "suite")],
        "--alpha 5%: not a number; write e.g. --alpha 0.05",
    ),
]


def test_at_least_thirty_distinct_cases():
    assert len({case.id for case in CASES}) == len(CASES) >= 30


@pytest.mark.parametrize("case", CASES, ids=[case.id for case in CASES])
def test_bad_input_gives_one_line_and_exit_2(case: Case, assets, tmp_path, monkeypatch, capsys):
    out = tmp_path / "out"
    shutil.copytree(assets["previous"], out, ignore=shutil.ignore_patterns(".h2h-resume"))
    before = {p.name: p.read_bytes() for p in out.iterdir() if p.is_file()}
    assert {"results.json", "predictions.npz"} <= set(before)
    if case.extra.get("out_is_file"):
        out = tmp_path / "out" / "results.json"  # --out names an existing file
    argv = [arg.replace("{out}", str(out)) for arg in [*case.build(tmp_path, assets), *case.extra.get("more", [])]]
    monkeypatch.chdir(tmp_path)
    capsys.readouterr()
    if case.patch is not None:
        case.patch(monkeypatch)
    with (
        pytest.raises(SystemExit) as info,
        use_backend(case.backend) if case.backend else contextlib.nullcontext(),
        _hold_the_lock(out) if case.extra.get("locked") else contextlib.nullcontext(),
    ):
        main(argv)
    monkeypatch.undo()
    err = capsys.readouterr().err.strip()
    assert info.value.code == 2, err
    assert len(err.splitlines()) == 1, err
    assert err.startswith("error: ") and "Traceback" not in err
    assert case.expect in err, err
    assert len(err) < 500, err  # long lists are cut with a count (errors.listing)
    after = {p.name: p.read_bytes() for p in (tmp_path / "out").iterdir() if p.is_file()}
    assert after == before  # the earlier run's files are untouched
    assert not list((tmp_path / "out").rglob("*.tmp"))  # and no half-written temporary file is left


def test_corrupt_jpeg_and_empty_rows_are_skipped_with_a_count(tmp_path, capsys):
    """Not errors: a corrupt JPEG in an image folder and empty rows in a table are counted and left out."""
    folder = make_image_folder(tmp_path / "imgs", classes=("ants", "bees"), n_per_class=3, size=12, fmt="jpg")
    good = (folder / "ants" / "ants_0.jpg").read_bytes()
    (folder / "bees" / "broken.jpg").write_bytes(good[: len(good) // 3])  # truncated mid-scan
    cnn = {
        "name": "cnn",
        "kind": "python",
        "source": "headtohead.testing.models:tiny_cnn",
        "model_args": {"n_classes": 2},
        "label_names": ["ants", "bees"],
    }
    main(["run", str(_write_exp(tmp_path, _text_exp({"path": str(folder)}, cnn))), "--out", str(tmp_path / "o")])
    err = capsys.readouterr().err
    assert "skipped 1 files (unreadable image: 1)" in err
    import headtohead

    result = headtohead.load_result(tmp_path / "o" / "results.json")
    assert result.dataset.skipped == {"unreadable image": 1} and result.dataset.n_examples == 6

    table = write_text_table(
        tmp_path / "t.csv",
        [{"text": "good", "label": "positive"}, {"text": "", "label": "x"}, {"text": "bad", "label": "negative"}],
    )
    outcome = headtohead.run(_text_exp({"path": str(table)}))
    assert outcome.result.dataset.skipped == {"empty text": 1} and outcome.result.dataset.n_examples == 2


def test_a_full_disk_names_only_the_models_resume_evaluates_again(assets, tmp_path, monkeypatch, capsys):
    """The disk fills while the second model's results are written, after its resume entry was: --resume
    re-uses it, so the line names only the third model as the one to evaluate, and --resume does just that."""
    models = [{**KEYWORDS, "name": name} for name in ("na", "nb", "nc")]
    experiment = _write_exp(tmp_path, {**_text_exp({"path": str(assets["table"])}, *models), "name": "disk"})
    out = tmp_path / "out"
    replace, written = os.replace, []

    def disk_fills(src: Any, dst: Any, *args: Any, **kwargs: Any) -> None:
        if Path(dst).name == "predictions.npz":  # the run's own file, after the model's resume entry
            written.append(dst)
            if len(written) == 2:
                raise OSError(errno.ENOSPC, os.strerror(errno.ENOSPC))
        replace(src, dst, *args, **kwargs)

    monkeypatch.setattr(os, "replace", disk_fills)
    capsys.readouterr()
    with pytest.raises(SystemExit) as info:
        main(["run", str(experiment), "--out", str(out)])
    err = capsys.readouterr().err.strip()
    assert info.value.code == 2 and len(err.splitlines()) == 1 and "Traceback" not in err, err
    assert err.endswith(
        "writing failed (No space left on device); the previous file, if any, is unchanged; free some disk space "
        f"or choose another --out folder (results of na, nb are kept in {out}; run again with --resume to "
        "evaluate nc)"
    ), err
    monkeypatch.setattr(os, "replace", replace)
    main(["run", str(experiment), "--out", str(out), "--resume"])
    assert "Resumed: the finished results of na, nb were re-used." in capsys.readouterr().out


def test_a_prediction_file_run_names_a_bad_input_before_importing_what_models_need(tmp_path):
    """The command in a fresh process: one line, exit 2, and torch (2 s of imports) not in sys.modules then.

    The process runs the CLI's own entry point and, as it exits on the error, prints the modules it
    holds: the inputs (the data, each prediction file) are checked before the device, the random
    state and the environment record import torch.
    """
    import subprocess
    import sys

    for name in ("numbered.csv", "named-proba.csv", "indices.csv"):
        (tmp_path / name).write_text(FILES[name])
    argv = ["run", "--data", "numbered.csv", "--model", "a=named-proba.csv", "--model", "b=indices.csv"]
    entry = (
        "import sys\n"
        "from headtohead.cli.main import main\n"
        "try:\n"
        "    main(sys.argv[1:])\n"
        "finally:\n"
        "    print(' '.join(sorted(sys.modules)))\n"
    )
    done = subprocess.run(
        [sys.executable, "-c", entry, *argv, "--out", str(tmp_path / "out")],
        cwd=tmp_path,
        capture_output=True,
        text=True,
        timeout=600,
        env={**os.environ, "HF_HUB_OFFLINE": "1", "COLUMNS": "400"},
        check=False,
    )
    err = done.stderr.strip()
    assert done.returncode == 2 and len(err.splitlines()) == 1 and "Traceback" not in err, err
    assert err.startswith("error: model 'a' (") and "probability columns for labels the data does not have" in err
    held = set(done.stdout.split())
    assert {"pandas", "headtohead.adapters.predictions"} <= held  # the file was read, in this process
    assert not {"torch", "transformers", "timm"} & held, sorted({"torch", "transformers", "timm"} & held)
    assert not (tmp_path / "out").exists()  # and nothing was left behind
