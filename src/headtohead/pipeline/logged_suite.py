"""A suite over the tasks of lm-eval logs: ``h2h suite --model a=lm-eval:runs/a --model b=lm-eval:runs/b``.

Each task every log holds becomes a data set whose data is the models' logs (``data.path: logs:``,
:mod:`headtohead.pipeline.logged_data`), each model reading that task only. See ``docs/harnesses.md``.
"""

from __future__ import annotations

from collections.abc import Sequence
from pathlib import Path
from typing import Any

from headtohead.adapters import adapter_class
from headtohead.adapters.logged import LoggedAdapter
from headtohead.config.schema import model_settings
from headtohead.config.suite import DATASET_PLACEHOLDER
from headtohead.data.logged import LOGS
from headtohead.errors import ConfigError, listing

__all__ = ["tasks_suite"]


def tasks_suite(
    models: Sequence[str], *, base_dir: Path | None = None, name: str = "tasks", also: Sequence[str] = ()
) -> dict[str, Any]:
    """The suite of ``h2h suite --model a=lm-eval:runs/a --model b=lm-eval:runs/b``: each task of the logs a data set.

    Parameters
    ----------
    models : sequence of str
        ``--model`` values (``name=kind:source``), each a log of several tasks (an lm-eval group's
        output folder).
    base_dir : Path, optional
        Folder relative sources are read from (default: the current directory).
    name : str
        The suite's name.
    also : sequence of str
        Other sources given with them (a suite file, finished runs): refused.

    Returns
    -------
    dict
        A suite (``headtohead.suite`` takes it): one data set per task every log holds, its data
        the models' logs, each model reading that task only.

    Raises
    ------
    ConfigError
        A model of a kind that is no log of several parts, or fewer than two tasks in common.
    """
    from headtohead.pipeline.quick import parse_model_option

    if also:
        raise ConfigError(f"{also[0]}: give a suite file, finished runs, or --model logs, not both")
    base = base_dir or Path.cwd()
    entries: list[tuple[str, str, str, type[LoggedAdapter]]] = []
    shared: list[str] | None = None
    for spec in models:
        model_name, kind, source = parse_model_option(spec, base)
        entry = model_settings(name=model_name, kind=kind, source=source)
        reader = adapter_class(kind)
        parts = reader.parts(entry, base / source) if issubclass(reader, LoggedAdapter) else ()
        if not parts:
            raise ConfigError(
                f"--model {spec}: a suite over tasks needs logs of several tasks (kind lm-eval: an lm_eval "
                f"--output_path folder run with --log_samples)"
            )
        assert issubclass(reader, LoggedAdapter)
        shared = [p for p in parts if shared is None or p in shared]
        where = (base / source).resolve()
        twin = next((e for e in entries if e[1] == kind and Path(e[2]).resolve() == where), None)
        if twin is not None:
            raise ConfigError(
                f"--model {spec}: '{twin[0]}' reads the same logs ({where}): that is one run compared with "
                f"itself; give each model the output folder of its own run"
            )
        entries.append((model_name, kind, str(base / source), reader))
    tasks = shared or []
    if len(tasks) < 2:
        raise ConfigError(
            f"--model: the logs hold {len(tasks)} task(s) in common ({listing(tasks) if tasks else 'none'}); "
            f"a suite needs two or more"
        )
    return {
        "name": name,
        "datasets": [{"name": task, "data": {"path": LOGS}} for task in tasks],
        "models": [
            {"name": model_name, "kind": kind, "source": source, **reader.part_settings(DATASET_PLACEHOLDER)}
            for model_name, kind, source, reader in entries
        ],
    }
