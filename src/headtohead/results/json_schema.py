"""The JSON Schemas of the files headtohead writes, generated from their records.

See ``docs/results-schema.md``.
"""

from __future__ import annotations

import json
import sys
from pathlib import Path
from typing import Any

from headtohead.results.records import SCHEMA_VERSION, RunResult
from headtohead.results.suite import SUITE_SCHEMA_VERSION, SuiteResult
from headtohead.results.sweep import SWEEP_SCHEMA_VERSION, SweepResult

__all__ = ["json_schema", "results_json_schema", "schema_text", "SCHEMA_FILES", "JSON_SCHEMA_DIALECT"]

#: The JSON Schema dialect pydantic writes.
JSON_SCHEMA_DIALECT = "https://json-schema.org/draft/2020-12/schema"

#: Each published schema file: the file it describes, its record and the record's schema version.
SCHEMA_FILES: dict[str, tuple[str, type[Any], int]] = {
    "results.schema.json": ("results.json", RunResult, SCHEMA_VERSION),
    "sweep.schema.json": ("sweep.json", SweepResult, SWEEP_SCHEMA_VERSION),
    "suite.schema.json": ("suite.json", SuiteResult, SUITE_SCHEMA_VERSION),
}


def json_schema(schema_file: str = "results.schema.json") -> dict[str, Any]:
    """The JSON Schema published as ``schema_file`` (a key of :data:`SCHEMA_FILES`).

    Returns
    -------
    dict
        A draft 2020-12 schema; ``schema_version`` in a file says which version it follows
        (``CHANGELOG.md`` lists what each version changed).

    Examples
    --------
    >>> json_schema("suite.schema.json")["title"]
    'headtohead suite.json, schema version 1'
    """
    written, record, version = SCHEMA_FILES[schema_file]
    generated = record.model_json_schema(mode="serialization")
    head = {
        "$schema": JSON_SCHEMA_DIALECT,
        "$id": f"{written.removesuffix('.json')}-v{version}.schema.json",
        "title": f"headtohead {written}, schema version {version}",
    }
    return {**head, **{key: value for key, value in generated.items() if key != "title"}}


def results_json_schema() -> dict[str, Any]:
    """The JSON Schema of a ``results.json`` of the current :data:`~headtohead.results.records.SCHEMA_VERSION`.

    Examples
    --------
    >>> schema = results_json_schema()
    >>> schema["title"], "models" in schema["required"]
    ('headtohead results.json, schema version 9', True)
    """
    return json_schema("results.schema.json")


def schema_text(schema_file: str = "results.schema.json") -> str:
    """:func:`json_schema` as the published file holds it (indented, sorted, one trailing newline)."""
    return json.dumps(json_schema(schema_file), indent=2, ensure_ascii=False, sort_keys=True) + "\n"


def _targets(path: Path) -> list[tuple[Path, str]]:
    """The files a path names: every schema in a folder, or the one schema a file is named after."""
    if path.is_dir() or path.suffix == "":
        return [(path / name, name) for name in SCHEMA_FILES]
    if path.name not in SCHEMA_FILES:
        raise SystemExit(f"{path}: a schema file is named one of {', '.join(SCHEMA_FILES)}; or give their folder")
    return [(path, path.name)]


def main(argv: list[str] | None = None) -> int:
    """``python -m headtohead.results.json_schema [--check] [PATH]``: write the schemas to PATH, a folder (every
    schema) or one of the file names of :data:`SCHEMA_FILES`; without PATH, print ``results.json``'s. With
    ``--check``, only say whether PATH holds them (exit 1 when it does not)."""
    args = list(sys.argv[1:] if argv is None else argv)
    if any(a in ("-h", "--help") for a in args):
        print((main.__doc__ or "").split(":", 1)[0].strip("`"))
        return 0
    check = "--check" in args
    args = [a for a in args if a != "--check"]
    unknown = [a for a in args if a.startswith("-")]
    if unknown or len(args) > 1:
        print(
            f"usage: python -m headtohead.results.json_schema [--check] [PATH]; got {' '.join(unknown or args)}",
            file=sys.stderr,
        )
        return 2
    if not args:
        sys.stdout.write(schema_text())
        return 0
    targets = _targets(Path(args[0]))
    if check:
        stale = [str(p) for p, name in targets if not p.is_file() or p.read_text(encoding="utf-8") != schema_text(name)]
        if stale:
            print(
                f"{', '.join(stale)}: not the schema the records generate; run `make schema` to regenerate",
                file=sys.stderr,
            )
            return 1
        return 0
    for path, name in targets:
        path.parent.mkdir(parents=True, exist_ok=True)
        path.write_text(schema_text(name), encoding="utf-8")
    return 0


if __name__ == "__main__":
    sys.exit(main())
