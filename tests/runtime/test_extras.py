"""The extra that brings a module is read from the package's metadata, and a missing module of any family is one line.

The extras are not kept by hand beside ``pyproject.toml``: :func:`declared_extras` reads them
from ``importlib.metadata`` (what ``pip`` installs), and the tests below check that every
optional module the package imports has an extra there, so the two cannot drift again. A
missing module is simulated as ``tests/test_light_install.py`` does in-process: ``sys.modules[name]
= None`` makes ``import name`` raise ``ModuleNotFoundError``.
"""

from __future__ import annotations

import ast
import importlib.abc
import importlib.metadata
import sys
from pathlib import Path

import pytest
import yaml

from headtohead.adapters import create_adapter
from headtohead.adapters.base import LoadContext
from headtohead.config.models import FAMILIES, model_settings
from headtohead.errors import ModelError
from headtohead.runtime.extras import DISTRIBUTIONS, Extras, declared_extras, distribution, extra_for, installed

tomllib = pytest.importorskip("tomllib")  # Python >= 3.11 reads pyproject.toml

ROOT = Path(__file__).resolve().parents[2]
PYPROJECT = tomllib.loads((ROOT / "pyproject.toml").read_text(encoding="utf-8"))["project"]
#: Modules no extra lists because a declared distribution brings them (they are never missing alone).
BROUGHT_ALONG = {"huggingface_hub": "transformers", "joblib": "scikit-learn", "pydantic_core": "pydantic"}
#: Modules the package finds by name rather than imports (``importlib.util.find_spec``).
FOUND_BY_NAME = ("gguf",)


def _pyproject_extras() -> Extras:
    """The extras as ``pyproject.toml`` writes them, read the way the metadata is."""
    optional = PYPROJECT["optional-dependencies"]
    return Extras.parse([f'{req}; extra == "{extra}"' for extra, reqs in optional.items() for req in reqs])


def _base() -> set[str]:
    """The distributions of the base install."""
    return set(Extras.parse([f'{req}; extra == "base"' for req in PYPROJECT["dependencies"]]).direct["base"])


def _imported_modules() -> set[str]:
    """Every top-level module src/headtohead imports (at any depth) that is neither the standard library nor its own."""
    found = set(FOUND_BY_NAME)
    for path in (ROOT / "src" / "headtohead").rglob("*.py"):
        for node in ast.walk(ast.parse(path.read_text(encoding="utf-8"))):
            if isinstance(node, ast.Import):
                found.update(alias.name.split(".")[0] for alias in node.names)
            elif isinstance(node, ast.ImportFrom) and node.level == 0 and node.module:
                found.add(node.module.split(".")[0])
    return {m for m in found if m not in sys.stdlib_module_names and m != "headtohead"}


def test_the_extras_read_from_the_metadata_are_pyprojects():
    assert declared_extras() == _pyproject_extras(), "the installed metadata is stale: pip install -e ."
    assert declared_extras().nested["llm-local"] == ("text",) and "torch" in declared_extras().brings("llm-local")


def test_every_optional_module_the_package_imports_names_the_extra_that_lists_it():
    extras, base, checked = _pyproject_extras(), _base(), 0
    for module in sorted(_imported_modules()):
        dist = distribution(module)
        if dist in base or module in BROUGHT_ALONG:
            continue
        extra = extra_for(module)
        assert extra is not None and extra != "dev", f"{module} ({dist}): no extra of pyproject.toml lists it"
        assert dist in extras.direct[extra], (module, extra)
        checked += 1
    assert checked >= 15  # torch, transformers, timm, onnxruntime, httpx, gguf, inspect_ai, skops, datasets …
    for module, bringer in BROUGHT_ALONG.items():
        assert distribution(module) not in {d for ds in extras.direct.values() for d in ds}
        assert bringer in base or extra_for(bringer) is not None


def test_each_import_name_that_differs_is_the_distribution_pyproject_lists():
    declared = _base() | {d for ds in _pyproject_extras().direct.values() for d in ds}
    owners = importlib.metadata.packages_distributions()
    for module, dist in DISTRIBUTIONS.items():
        assert dist in declared, f"{module} → {dist}: pyproject.toml lists no {dist}"
        if module in owners:  # installed here: the name is the distribution that put it there
            assert dist in {distribution(d) for d in owners[module]}, (module, owners[module])


def test_every_familys_extra_is_declared_and_the_family_is_preferred():
    extras = declared_extras()
    for row in FAMILIES:
        assert row.extra is None or row.extra in extras.direct or row.extra in extras.nested, row.kind
    # torch is the torch extra's, but a vision model's family brings it too: one install, not two
    assert extra_for("torch") == "torch" and extra_for("torch", "vision") == "vision"
    assert extra_for("onnxruntime", "llm") == "onnx"  # a family that does not bring it: the extra that lists it
    assert extra_for("numpy") is None and extra_for("gguf") == "llm-local" and extra_for("httpx") == "llm"
    assert extra_for("pytest") is None  # the developer's tools are no user's extra


def test_installed_reads_the_nested_extras(monkeypatch):
    pytest.importorskip("transformers")
    assert installed("text")
    monkeypatch.setitem(sys.modules, "torch", None)  # text brings torch through headtohead[torch]
    assert not installed("text")


# ----------------------------------------------------------------- one line per missing module


def _without(monkeypatch, *modules: str) -> None:
    """``import m`` (and of any ``m.sub`` already imported) fails for each module, as if not installed."""
    for name in modules:
        for loaded in [m for m in sys.modules if m.startswith(name + ".")]:
            monkeypatch.setitem(sys.modules, loaded, None)
        monkeypatch.setitem(sys.modules, name, None)


def _one_line(error: BaseException | str, module: str, extra: str) -> None:
    text = str(error)
    assert "\n" not in text
    assert text.endswith(f'needs {module}, which is not installed; install it with: pip install "headtohead[{extra}]"')


class _NotInstalled(importlib.abc.MetaPathFinder):
    """Finds ``name`` nowhere, as a light install's import system does (``find_spec`` raises, as a blocker's may)."""

    def __init__(self, name: str) -> None:
        self.name = name

    def find_spec(self, fullname, path=None, target=None):
        if fullname.split(".")[0] == self.name:
            raise ModuleNotFoundError(f"No module named {fullname!r}", name=fullname)


@pytest.mark.parametrize("how", ["sys.modules", "import system"])
def test_a_gguf_file_without_gguf(tmp_path, monkeypatch, how):
    pytest.importorskip("transformers")
    (tmp_path / "m.gguf").write_bytes(b"GGUF")
    if how == "sys.modules":
        _without(monkeypatch, "gguf")
    else:  # the probe's way: this raised the bare ModuleNotFoundError
        monkeypatch.delitem(sys.modules, "gguf", raising=False)
        monkeypatch.setattr(sys, "meta_path", [_NotInstalled("gguf"), *sys.meta_path])
    config = model_settings(name="m", kind="causal-lm", source="m.gguf")
    with pytest.raises(ModelError) as info:
        create_adapter(config, LoadContext(label_names=("a", "b"), modality="text", base_dir=tmp_path))
    assert str(info.value).startswith("model 'm' (kind causal-lm) needs gguf")
    _one_line(info.value, "gguf", "llm-local")


def test_an_onnx_graph_without_onnxruntime(tmp_path, monkeypatch):
    (tmp_path / "m.onnx").write_bytes(b"not read")
    _without(monkeypatch, "onnxruntime")
    config = model_settings(name="m", kind="onnx", source="m.onnx")
    with pytest.raises(ModelError) as info:
        create_adapter(config, LoadContext(label_names=("a", "b"), modality="features", base_dir=tmp_path))
    _one_line(info.value, "onnxruntime", "onnx")


def test_a_timm_architecture_without_timm(tmp_path, monkeypatch):
    pytest.importorskip("torch")
    _without(monkeypatch, "timm")
    config = model_settings(name="r", kind="timm", source="resnet18")
    with pytest.raises(ModelError) as info:
        create_adapter(config, LoadContext(label_names=("a", "b"), modality="image", base_dir=tmp_path))
    _one_line(info.value, "timm", "vision")


def test_an_endpoint_without_httpx(tmp_path, monkeypatch):
    _without(monkeypatch, "httpx")
    for adapter_module in ("headtohead.adapters.openai_chat", "headtohead.adapters.chat_client"):
        monkeypatch.delitem(sys.modules, adapter_module, raising=False)  # imported again, now without httpx
    config = model_settings(name="llm", kind="openai", source="m", base_url="http://127.0.0.1:1/v1")
    with pytest.raises(ModelError) as info:
        create_adapter(config, LoadContext(label_names=("a", "b"), modality="text", base_dir=tmp_path))
    _one_line(info.value, "httpx", "llm")


def test_an_inspect_log_without_inspect_ai_read_before_any_model_loads(tmp_path, monkeypatch):
    from headtohead.adapters.inspect_log import InspectAdapter

    (tmp_path / "run.eval").write_bytes(b"PK")
    _without(monkeypatch, "inspect_ai")
    config = model_settings(name="i", kind="inspect", source="run.eval")
    with pytest.raises(ModelError) as info:  # the data are read from the logs before create_adapter
        InspectAdapter.logged(config, tmp_path)
    _one_line(info.value, "inspect_ai", "inspect")


def test_the_cli_says_it_in_one_line_and_exits_2(tmp_path, monkeypatch, capsys):
    from headtohead.cli.main import main

    (tmp_path / "m.onnx").write_bytes(b"not read")
    experiment = {
        "name": "missing",
        "data": {"path": "sklearn:iris"},
        "models": [{"name": "m", "kind": "onnx", "source": "m.onnx"}],
        "speed": {"enabled": False},
    }
    (tmp_path / "exp.yaml").write_text(yaml.safe_dump(experiment))
    _without(monkeypatch, "onnxruntime")
    capsys.readouterr()
    with pytest.raises(SystemExit) as info:
        main(["run", str(tmp_path / "exp.yaml"), "--out", str(tmp_path / "out")])
    err = capsys.readouterr().err.strip()
    assert info.value.code == 2, err
    assert len(err.splitlines()) == 1 and "Traceback" not in err
    _one_line(err, "onnxruntime", "onnx")
