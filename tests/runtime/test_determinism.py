"""Determinism: the same experiment gives identical predictions on the CPU, whatever the model order;
``--deterministic`` turns torch's deterministic algorithms on and names every op that refuses."""

from __future__ import annotations

import textwrap

import numpy as np
import pytest
import torch
import yaml

import headtohead
from headtohead.cli.main import main
from headtohead.testing.data import make_image_folder

# An image model with random weights drawn at load time (seeded by the run) and a CNN
# from a factory: both depend on the random state each model starts from.
MODELS = [
    {"name": "resnet", "kind": "timm", "source": "test_resnet", "image_size": 24},
    {
        "name": "cnn",
        "kind": "python",
        "source": "headtohead.testing.models:tiny_cnn",
        "model_args": {"n_classes": 2},
        "label_names": ["ants", "bees"],
    },
]

# put_ (accumulate=False) has no deterministic implementation, even on the CPU.
NONDETERMINISTIC_PY = textwrap.dedent("""\
    import torch


    class Scatter(torch.nn.Module):
        def __init__(self):
            super().__init__()
            self.linear = torch.nn.Linear(4, 3)

        def forward(self, x):
            out = self.linear(x)
            flat = torch.zeros(out.numel())
            flat.put_(torch.arange(out.numel()), out.flatten())
            return flat.view_as(out)


    def make():
        torch.manual_seed(0)
        return Scatter()
    """)


@pytest.fixture(scope="module")
def images(tmp_path_factory):
    return make_image_folder(
        tmp_path_factory.mktemp("det") / "imgs", classes=("ants", "bees"), n_per_class=6, size=20, fmt="jpg"
    )


def _experiment(images, models):
    return {
        "name": "det",
        "data": {"path": str(images)},
        "models": models,
        "eval": {"batch_size": 5, "device": "cpu"},
        "stats": {"n_resamples": 200},
        "speed": {"enabled": False},
    }


def test_same_experiment_twice_gives_identical_predictions(images):
    first = headtohead.run(_experiment(images, MODELS))
    second = headtohead.run(_experiment(images, MODELS))
    swapped = headtohead.run(_experiment(images, MODELS[::-1]))  # the order of the models must not matter
    for name in ("resnet", "cnn"):
        for other in (second, swapped):
            np.testing.assert_array_equal(first.predictions[name].proba, other.predictions[name].proba)
            np.testing.assert_array_equal(first.predictions[name].pred, other.predictions[name].pred)
            assert first.result.model(name).quality == other.result.model(name).quality
    assert first.result.stats == second.result.stats
    assert first.predictions["resnet"].proba.std() > 0  # a real, varied model, not a constant


def test_deterministic_flag_reports_refusing_ops_and_restores_torch(tmp_path, capsys, monkeypatch):
    (tmp_path / "nondet_models.py").write_text(NONDETERMINISTIC_PY)
    models = [
        {"name": "scatter", "kind": "python", "source": "nondet_models:make"},
        {
            "name": "mlp",
            "kind": "python",
            "source": "headtohead.testing.models:tiny_mlp",
            "model_args": {"n_features": 4, "n_classes": 3},
        },
    ]
    path = tmp_path / "exp.yaml"
    path.write_text(
        yaml.safe_dump(
            {
                "name": "nd",
                "data": {"path": "sklearn:iris"},
                "models": models,
                "eval": {"device": "cpu"},  # the scatter model builds its buffer on the CPU
                "speed": {"enabled": False},
            }
        )
    )
    assert not torch.are_deterministic_algorithms_enabled()
    main(["run", str(path), "--out", str(tmp_path / "out"), "--deterministic"])
    captured = capsys.readouterr()
    assert "Deterministic algorithms: on; 1 refusal(s): model 'scatter' used put_" in captured.out
    assert "no deterministic implementation" in captured.err  # also shown as the model's warning
    result = headtohead.load_result(tmp_path / "out" / "results.json")
    assert any("used put_" in w for w in result.model("scatter").warnings)
    assert not any("deterministic" in w for w in result.model("mlp").warnings)
    assert not torch.are_deterministic_algorithms_enabled()  # the process is left as it was

    main(["run", str(path), "--out", str(tmp_path / "plain")])  # without the flag nothing is reported
    assert "Deterministic algorithms" not in capsys.readouterr().out
    plain = headtohead.load_result(tmp_path / "plain" / "results.json")
    assert not any("put_" in w for w in plain.model("scatter").warnings)
    assert plain.model("scatter").quality == result.model("scatter").quality
