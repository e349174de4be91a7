"""The fresh processes' template imports ahead, and whoever times anything waits until it is done."""

from __future__ import annotations

import importlib
import sys
import textwrap

import pytest

from headtohead.config.schema import model_settings
from headtohead.engines import fresh_process
from headtohead.engines.fresh_process import await_imports, can_fork, import_ahead, run_in_fresh_process
from headtohead.engines.isolated import prepare_fresh_processes

pytestmark = pytest.mark.skipif(not can_fork("cpu"), reason="the template forks children on Linux only")

#: A module whose import takes a while and leaves a mark when it has finished.
SLOW_MODULE = """
import pathlib, time
time.sleep(0.5)
pathlib.Path({mark!r}).write_text("imported")
"""

#: The body the fresh process runs: which modules it holds before importing anything of its own.
#: It lives in a module of its own (pytest names this file ``tests.engines…``, which the template
#: cannot import).
PROBE_MODULE = """
import gc
import sys


def modules_present(names):
    return {name: name in sys.modules for name in names}


def frozen_objects():
    return gc.get_freeze_count()
"""


@pytest.fixture
def modules_present(tmp_path, monkeypatch):
    """The probe, importable by a template started from now on (each test starts its own)."""
    suffix = tmp_path.name.replace("-", "_")
    (tmp_path / f"h2h_probe_{suffix}.py").write_text(PROBE_MODULE)
    monkeypatch.syspath_prepend(str(tmp_path))  # the template is spawned with this sys.path
    # A run's child holds what the run imported; here that is the whole test session (torch, transformers, Ray
    # …: seconds per template, one per test), and none of it is what these tests look at.
    monkeypatch.setattr(fresh_process, "imported_modules", lambda: ["headtohead.engines.fresh_process"])
    fresh_process._stop_template()  # one started by an earlier test has the old sys.path
    yield importlib.import_module(f"h2h_probe_{suffix}").modules_present
    fresh_process._stop_template()


@pytest.fixture
def slow_module(tmp_path, modules_present):
    name = f"h2h_slow_import_{tmp_path.name.replace('-', '_')}"
    mark = tmp_path / "imported.txt"
    (tmp_path / f"{name}.py").write_text(textwrap.dedent(SLOW_MODULE.format(mark=str(mark))))
    return name, mark


def test_await_imports_returns_only_after_the_template_imported_everything_asked(slow_module, modules_present):
    name, mark = slow_module
    import_ahead([name])
    assert not mark.exists()  # import_ahead does not wait: the run goes on with its setup
    await_imports()
    assert mark.read_text() == "imported"
    assert name not in sys.modules  # imported there, not here
    # The forked child starts from the template: the module is held before the child imports anything.
    present = run_in_fresh_process(modules_present, ([name, "tabnanny"],), fork=True)
    assert present == {name: True, "tabnanny": False}


def test_await_imports_without_a_template_or_after_it_died_returns(modules_present):
    await_imports()  # nothing asked: nothing to wait for
    import_ahead(["tabnanny"])
    assert fresh_process._template is not None
    fresh_process._template.process.kill()
    fresh_process._template.process.join(5)
    await_imports()  # it died: no hang, no error; the next use starts another
    assert run_in_fresh_process(modules_present, (["tabnanny"],), fork=True) == {"tabnanny": False}


def test_a_module_that_cannot_be_imported_there_is_skipped(modules_present):
    import_ahead(["h2h_no_such_module_anywhere", "tabnanny"])
    await_imports()
    assert run_in_fresh_process(modules_present, (["tabnanny"],), fork=True) == {"tabnanny": True}


def test_a_run_prepares_the_libraries_each_family_loads_with(modules_present):
    configs = [model_settings(name="m", kind="sklearn", source="m.skops")]
    prepare_fresh_processes(configs, "auto")
    await_imports()
    wanted = [
        "headtohead.adapters.sklearn_models",
        "skops.io",
        "sklearn.linear_model",
        "sklearn.feature_extraction.text",
    ]
    present = run_in_fresh_process(modules_present, (wanted,), fork=True)
    assert present == dict.fromkeys(wanted, True)  # the estimator modules too: a .skops load imports them


def test_the_child_finds_the_templates_imports_frozen_out_of_the_collectors_reach(modules_present):
    """The child's first gc.collect() (its memory baseline) walks only what it made itself, not the imports."""
    import_ahead(["tabnanny"])
    await_imports()
    frozen = run_in_fresh_process(importlib.import_module(modules_present.__module__).frozen_objects, (), fork=True)
    assert frozen > 10_000  # headtohead and its libraries, frozen once imported


def test_nothing_is_prepared_for_a_gpu_or_without_models():
    fresh_process._stop_template()
    prepare_fresh_processes([model_settings(name="m", kind="sklearn", source="m.skops")], "cuda:0")
    prepare_fresh_processes([], "cpu")
    assert fresh_process._template is None  # a CUDA context does not survive a fork: spawned per model
