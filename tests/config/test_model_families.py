"""Each model family owns its keys: one settings class per kind, one registry row, the kinds' table generated."""

from __future__ import annotations

from pathlib import Path

import pytest
from pydantic import TypeAdapter, ValidationError

from headtohead.config import experiment_from_dict
from headtohead.config.models import FAMILIES, MODEL_KINDS, AnyModel, ModelConfig, model_settings, with_kinds_table
from headtohead.config.models.openai import OpenAISettings
from headtohead.config.models.prompting import PromptSettings
from headtohead.errors import ConfigError

README = Path(__file__).resolve().parents[2] / "README.md"


def test_the_committed_kinds_table_is_the_generated_one():
    text = README.read_text(encoding="utf-8")
    assert with_kinds_table(text) == text, "run: python -m headtohead.config.models README.md"


def test_the_base_is_small_and_every_openai_key_is_declared_once():
    assert len(ModelConfig.model_fields) <= 10
    assert MODEL_KINDS == tuple(f.kind for f in FAMILIES) and len(set(MODEL_KINDS)) == len(MODEL_KINDS)
    # every openai key is declared once: in its settings class or the prompting keys it extends
    for key in set(OpenAISettings.model_fields) - set(ModelConfig.model_fields):
        declared = [c for row in FAMILIES for c in row.settings.__mro__ if key in getattr(c, "__annotations__", {})]
        assert set(declared) <= {OpenAISettings, PromptSettings}, key
    assert issubclass(OpenAISettings, PromptSettings) and "base_url" not in PromptSettings.model_fields


def test_an_entry_becomes_its_familys_class_however_it_is_built():
    entry = {"name": "m", "kind": "onnx", "source": "m.onnx", "tokenizer": "tok"}
    for built in (model_settings(**entry), model_settings(entry), TypeAdapter(AnyModel).validate_python(entry)):
        assert type(built).__name__ == "OnnxSettings" and built.tokenizer == "tok"
    exp = experiment_from_dict({"data": {"path": "d.csv"}, "models": [entry]}, overrides=["models.0.max_length=32"])
    assert exp.models[0].max_length == 32 and exp.models[0].model_copy(update={"name": "n"}).tokenizer == "tok"
    assert exp.model_dump(exclude_defaults=True)["models"] == [{**entry, "max_length": 32}]
    # another family's key left empty (null) is "not given", as when every entry had every key
    assert model_settings(name="m", kind="sklearn", source="m.skops", max_length=None).kind == "sklearn"


def test_a_typo_lists_the_keys_of_the_entrys_own_family():
    with pytest.raises(ConfigError, match=r"models\[0\]\.max_lenght: unknown key — did you mean max_length\?") as info:
        experiment_from_dict(
            {
                "data": {"path": "d.csv"},
                "models": [{"name": "b", "kind": "transformers", "source": "b", "max_lenght": 3}],
            }
        )
    assert "tokenizer" not in str(info.value)  # an onnx key, not a transformers one
    with pytest.raises(ConfigError, match="tokenizer is a key of kind: onnx only"):
        experiment_from_dict(
            {
                "data": {"path": "d.csv"},
                "models": [{"name": "b", "kind": "transformers", "source": "b", "tokenizer": "t"}],
            }
        )


def _importers() -> dict[str, set[str]]:
    """Module → the modules it imports (every import statement, at any depth), for every module of src/."""
    import ast

    src = Path(__file__).resolve().parents[2] / "src"
    found = {}
    for path in src.rglob("*.py"):
        module = ".".join(path.relative_to(src).with_suffix("").parts).removesuffix(".__init__")
        names = set()
        for node in ast.walk(ast.parse(path.read_text(encoding="utf-8"))):
            if isinstance(node, ast.ImportFrom) and node.module:
                names.add(node.module)
            elif isinstance(node, ast.Import):
                names.update(alias.name for alias in node.names)
        found[module] = names
    return found


def test_a_family_is_the_files_architecture_md_counts():
    import re

    page = (README.parent / "docs" / "architecture.md").read_text(encoding="utf-8")
    row = next(line for line in page.splitlines() if line.startswith("| support a new model family |"))
    documented = int(re.search(r"\*\*(\d+) files\*\*", row).group(1))
    imports = _importers()
    for family in FAMILIES:
        settings, adapter = family.settings.__module__, family.adapter.split(":")[0]
        own = {settings, adapter, "headtohead.config.models"}  # its settings, its adapter, the registry row
        assert len(own) == documented
        users = {m for m, names in imports.items() if settings in names or adapter in names}
        # other settings modules may extend its keys; sweeps/ export the families they speed up (onnx, transformers)
        others = {m for m in users - own if not m.startswith(("headtohead.config.models.", "headtohead.sweeps."))}
        assert not others, f"kind {family.kind}: {sorted(others)} import its modules; a family is {documented} files"


def test_a_suites_models_keep_their_familys_keys_through_a_dump():
    from headtohead.config.suite import suite_from_dict

    datasets = [{"name": n, "data": {"path": f"{n}.csv"}} for n in ("a", "b")]
    models = [
        {"name": "x", "kind": "transformers", "source": "o/{dataset}", "max_length": 8},
        {"name": "y", "kind": "predictions", "source": "{dataset}.csv"},
    ]
    suite = suite_from_dict({"datasets": datasets, "models": models})
    assert suite_from_dict(suite.model_dump(mode="json")) == suite
    assert suite.experiment_dict("a")["models"][0] == {**models[0], "source": "o/a"}


def test_an_entry_dumped_when_every_entry_had_every_key_still_validates():
    # results.json's experiment before families owned their keys: every key, empty or at its default
    old = {"name": "b", "kind": "transformers", "source": "b", "max_length": 64, "pretrained": False}
    old |= {"outputs": "logits", "tokenizer": None, "mean": None, "base_url": None, "few_shot": None}
    assert model_settings(old) == model_settings(name="b", kind="transformers", source="b", max_length=64)
    with pytest.raises(ValueError, match="pretrained is a key of kind: timm, torchvision only"):
        model_settings({**old, "pretrained": True})


#: Each key that was once every entry's, and the families whose adapters read it (grep adapters/ for it).
READ_BY = {
    "checkpoint": {"timm", "torchvision"},
    "allow_pickle": {"transformers", "timm", "torchvision", "sklearn"},
    "trust_remote_code": {"transformers", "causal-lm"},
    "revision": {"transformers", "causal-lm"},
    "label_names": {"transformers", "timm", "torchvision", "sklearn", "python", "onnx", "predictions"},
    "model_args": {"transformers", "timm", "torchvision", "python", "causal-lm"},
}


def test_each_key_lives_on_the_families_that_read_it():
    # repeats: every family that runs a model reads it (its passes); those of stored answers refuse it in their
    # own words ("nothing to re-run"), not as another family's key
    assert set(ModelConfig.model_fields) == {"name", "kind", "source", "repeats"}
    for key, readers in READ_BY.items():
        assert {row.kind for row in FAMILIES if key in row.settings.model_fields} == readers, key


@pytest.mark.parametrize(
    ("kind", "keys", "said"),
    [
        ("openai", {"base_url": "http://127.0.0.1:1/v1", "checkpoint": "w.pt"}, "checkpoint is a key of kind: timm, torchvision only"),
        ("predictions", {"trust_remote_code": True}, "trust_remote_code is a key of kind: transformers, causal-lm only"),
        ("lm-eval", {"model_args": {"a": 1}}, "model_args is a key of kind: transformers, timm, torchvision, python, causal-lm only"),
        ("inspect", {"label_names": ["a", "b"]}, "label_names is a key of kind: transformers, timm, torchvision, sklearn, python, onnx, predictions only"),
        ("onnx", {"allow_pickle": True}, "allow_pickle is a key of kind: transformers, timm, torchvision, sklearn only"),
    ],
)  # fmt: skip
def test_a_key_its_family_does_not_read_is_refused_in_one_line(kind, keys, said):
    entry = {"name": "m", "kind": kind, "source": "m", **keys}
    with pytest.raises(ConfigError) as info:
        experiment_from_dict({"data": {"path": "d.csv"}, "models": [entry]})
    assert str(info.value) == f"experiment: models[0]: {said} (this model is kind: {kind}); remove it"


def test_an_old_dump_of_an_endpoint_with_every_base_key_at_its_default_still_validates():
    # results.json's experiment when every entry had checkpoint, label_names, model_args … (empty)
    entry = {"name": "llm", "kind": "openai", "source": "m", "base_url": "http://127.0.0.1:1/v1"}
    old = {**entry, "checkpoint": None, "label_names": None, "model_args": {}, "allow_pickle": False}
    old |= {"trust_remote_code": False, "revision": None}
    assert model_settings(old) == model_settings(entry)


def test_the_kind_picks_the_class_through_pydantics_discriminated_union():
    # the union is the registry's, tagged by each class's literal kind; the base is built by no one
    (union, *_), *_ = [m for m in AnyModel.__metadata__ if hasattr(m, "discriminator")], None
    assert union.discriminator == "kind"
    assert tuple(FAMILIES[0].settings.model_fields["kind"].annotation.__args__) == (FAMILIES[0].kind,)
    schema = TypeAdapter(AnyModel).json_schema()
    assert sorted(schema["discriminator"]["mapping"]) == sorted(MODEL_KINDS)
    assert not hasattr(ModelConfig, "families") and "__new__" not in ModelConfig.__dict__
    with pytest.raises(TypeError, match="build an entry with headtohead.config.models.model_settings"):
        ModelConfig(name="m", kind="onnx", source="m.onnx")


@pytest.mark.parametrize(
    ("entry", "said"),
    [
        ({"kind": "onx"}, "models[0].kind: unknown model kind 'onx' — did you mean onnx? (choose one of: " + ", ".join(MODEL_KINDS) + ")"),
        ({"kind": "xyzzy"}, "models[0].kind: unknown model kind 'xyzzy' (choose one of: " + ", ".join(MODEL_KINDS) + ")"),
        ({}, "models[0].kind: missing required field; add 'kind' here (examples/ has complete experiments)"),
        ({"kind": "onnx", "max_length": "x"}, "models[0].max_length: Input should be a valid integer, unable to parse string as an integer (got 'x')"),
        ({"kind": "openai", "base_url": "ftp://x"}, "models[0]: base_url 'ftp://x' is not an http:// or https:// address; give the API root, e.g. http://127.0.0.1:8000/v1"),
        ({"kind": "causal-lm", "temperature": 0.5}, "models[0].temperature: kind: causal-lm answers greedily (temperature 0) when run once: one sampled run would read as the model; sample with repeats: 2 or more (each run seeded its own), or set temperature 0"),
    ],
)  # fmt: skip
def test_the_unions_errors_read_as_the_entrys_own(entry, said):
    """No tag in the location (models.0.onnx.max_length), no "does not match any of the expected tags"."""
    with pytest.raises(ConfigError) as info:
        experiment_from_dict({"data": {"path": "d.csv"}, "models": [{"name": "m", "source": "m", **entry}]})
    assert str(info.value) == f"experiment: {said}"


def test_a_built_entry_passes_through_the_union_as_it_is():
    built = model_settings(name="m", kind="predictions", source="p.csv", missing_ids="failed")
    exp = experiment_from_dict({"data": {"path": "d.csv"}, "models": [{"name": "x", "kind": "sklearn", "source": "x"}]})
    again = exp.model_copy(update={"models": [built]})
    assert again.models[0] is built
    assert type(exp.model_validate({**exp.model_dump(), "models": [built]}).models[0]).__name__ == "PredictionsSettings"
    with pytest.raises(ValidationError):
        model_settings(name="m", kind="predictions", source="p.csv", missing_ids="sometimes")
