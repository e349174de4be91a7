"""`h2h demo`: offline, two architectures trained identically, a two-model table."""

from __future__ import annotations

import pytest
import yaml

import headtohead
from headtohead.cli.main import main


@pytest.mark.slow
def test_demo_trains_and_compares_two_models(tmp_path, capsys):
    out = tmp_path / "demo"
    main(["demo", "--out", str(out), "--epochs", "2"])
    captured = capsys.readouterr()
    assert "resnet-slim" in captured.out and "mobilenetv3" in captured.out
    assert "identical order and settings" in captured.err
    result = headtohead.load_result(out / "results.json")
    assert [m.name for m in result.models] == ["resnet-slim", "mobilenetv3"]
    assert result.dataset.source == "sklearn:digits" and result.dataset.n_examples == 540
    assert result.models[0].index_order_hash == result.models[1].index_order_hash
    # trained, not random: 10 classes give 10 % by chance
    assert all(m.quality.accuracy > 0.5 for m in result.models), [m.quality.accuracy for m in result.models]
    # the saved experiment re-runs through the normal path with the saved weights
    saved = yaml.safe_load((out / "experiment.yaml").read_text())
    assert all(m["checkpoint"].endswith(".safetensors") for m in saved["models"])
    rerun = headtohead.run(out / "experiment.yaml", speed=False)  # the accuracies are what is compared
    for model in result.models:
        assert rerun.result.model(model.name).quality.accuracy == model.quality.accuracy
