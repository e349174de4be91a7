"""The settings known to move scores, read from records and compared (results.score_settings), and their words."""

from __future__ import annotations

from sim.sample import sample_environment, sample_run

from headtohead.report.words.score_settings import setting_warning, setting_warnings, unchecked_note
from headtohead.results.records import GPURecord
from headtohead.results.score_settings import (
    NOT_SET,
    RunSettings,
    SettingDifference,
    score_settings,
    setting_differences,
)

LLM = {
    "name": "llm",
    "kind": "openai",
    "source": "m",
    "prompt": "Classify: {text}",
    "system_prompt": None,
    "few_shot": 0,
    "temperature": 0.0,
    "extra_body": {"top_p": 0.9},
}


def _run(name="a", *, environment=None, models=None, seed=0):
    result, _ = sample_run({"bert": 0.8, "llm": 0.7}, n_examples=60, stats=False, speed=False, name=name,
                           environment=environment or sample_environment("box"))  # fmt: skip
    experiment = {"name": name, "seed": seed, "models": models or [{"name": "bert", "kind": "python"}, LLM]}
    return result.model_copy(update={"experiment": experiment})


def test_a_run_records_every_setting_known_to_move_scores():
    gpu = GPURecord(index=1, name="NVIDIA H200", driver="560", cuda="12.6")
    result = _run(environment=sample_environment("box", gpus=[gpu], onnxruntime="1.20.1"))
    models = [m.model_copy(update={"device": "cuda:1"}) if m.name == "llm" else m for m in result.models]
    bert = {"name": "bert", "kind": "transformers", "max_length": 128, "model_args": {"dtype": "bfloat16"}}
    result = result.model_copy(update={"models": models, "experiment": {**result.experiment, "models": [bert, LLM]}})
    read = score_settings(result)
    assert read.models["bert"] == {"batch_size": 16, "dtype": "bfloat16", "device": "cpu", "max_length": 128}
    llm = read.models["llm"]
    assert llm["device"] == "cuda (NVIDIA H200)" and llm["dtype"] == NOT_SET and llm["max_length"] == NOT_SET
    assert (llm["temperature"], llm["top_p"], llm["seed"]) == (0.0, 0.9, NOT_SET)
    assert "Classify: {text}" in str(llm["prompt"])
    assert "llm_backend" not in llm  # no endpoint record: the field does not apply, it is not compared
    assert read.run["torch"] == "2.14.1" and read.run["onnxruntime"] == "1.20.1" and read.run["run_seed"] == 0
    assert read.run["data"] == result.dataset.fingerprint


def test_identical_runs_differ_in_nothing():
    assert setting_differences([_run("a"), _run("b")]) == []


def test_each_differing_field_is_one_difference_and_models_alike_are_named_together():
    a = _run("a")
    b = _run("b", environment=sample_environment("box", torch="2.3.0"), seed=7)
    b = b.model_copy(update={"models": [m.model_copy(update={"batch_size": 32}) for m in b.models]})
    differences = setting_differences([a, b])
    assert [(d.field, d.models, d.values) for d in differences] == [
        ("batch_size", ("bert", "llm"), (("a", 16), ("b", 32))),
        ("run_seed", (), (("a", 0), ("b", 7))),
        ("torch", (), (("a", "2.14.1"), ("b", "2.3.0"))),
    ]
    assert setting_warnings(differences) == [
        "batch_size of bert and llm differs: a 16, b 32 — the batch size is known to move scores",
        "seed differs: a 0, b 7 — the experiment's seed is known to move scores",
        "torch version differs: a 2.14.1, b 2.3.0 — the torch version is known to move scores",
    ]
    assert unchecked_note(differences) is None
    assert [d.field for d in setting_differences([a, b], ignore=("batch_size", "torch"))] == ["run_seed"]


def test_a_per_model_field_is_compared_model_by_model():
    hot = {**LLM, "temperature": 0.7, "prompt": "Is this review positive or negative? {text}"}
    a, b = _run("a"), _run("b", models=[{"name": "bert", "kind": "python"}, hot])
    differences = setting_differences([a, b])
    assert [(d.field, d.models) for d in differences] == [("temperature", ("llm",)), ("prompt", ("llm",))]
    temperature, prompt = setting_warnings(differences)
    assert (
        temperature == "temperature of llm differs: a 0.000, b 0.700 — the sampling temperature is known to move scores"
    )
    assert (
        prompt.startswith("prompt of llm differs: a 'Classify: {text}' (#")
        and "b 'Is this review positive or nega…' (#" in prompt
    )
    # a model in one run only has nothing to be compared with
    lone = _run("c", models=[{"name": "bert", "kind": "python"}, {**LLM, "temperature": 1.0}])
    lone = lone.model_copy(
        update={"models": [m.model_copy(update={"name": "other"}) if m.name == "llm" else m for m in lone.models]}
    )
    assert setting_differences([a, lone]) == []


def test_unknown_is_never_different_and_is_noted_once():
    old = _run("old")
    old = old.model_copy(update={"schema_version": 7})  # before onnxruntime was recorded
    new = _run("new", environment=sample_environment("box", onnxruntime="1.20.1"))
    differences = setting_differences([old, new])
    assert [(d.field, d.kind, d.unknown) for d in differences] == [("onnxruntime", "unknown", ("old",))]
    assert setting_warnings(differences) == []
    assert (
        unchecked_note(differences) == "not recorded in every run, so not checked: onnxruntime version (unknown in old)"
    )
    # a version-8 run without onnxruntime says so: "not installed" is a value, and differs from one installed
    plain = _run("plain")
    assert score_settings(plain).run["onnxruntime"] == "not installed"
    assert [d.kind for d in setting_differences([plain, new])] == ["differs"]


def test_the_llm_backend_differs_only_where_both_servers_said_what_they_are():
    def run(label, server):
        return RunSettings(label, models={"llm": {"llm_backend": server}})

    differs = setting_differences([run("a", "uvicorn"), run("b", "llama.cpp, b4589-1a2b3c")])
    assert setting_warnings(differs) == [
        "llm_backend of llm differs: a uvicorn, b llama.cpp, b4589-1a2b3c — the LLM backend is known to move scores"
    ]
    assert setting_warnings(setting_differences([run("a", None), run("b", "uvicorn")])) == []
    assert setting_differences([run("a", None), run("b", None)]) == []


def test_three_runs_name_the_runs_of_one_value_together():
    difference = SettingDifference("batch_size", "differs", (("a", 8), ("b", 32), ("c", 8)), models=("m",))
    assert (
        setting_warning(difference) == "batch_size of m differs: a, c 8; b 32 — the batch size is known to move scores"
    )
    data = SettingDifference("data", "differs", (("a", "0123456789abcdef"), ("b", "fedcba9876543210")))
    assert setting_warning(data) == (
        "data fingerprint differs: a 0123456789ab, b fedcba987654 — scores on different data are not comparable"
    )
