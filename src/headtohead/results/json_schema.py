"""The JSON Schema of ``results.json``, generated from its records (:class:`~headtohead.results.records.RunResult`).

The schema describes the file as ``h2h run`` writes it (pydantic's serialization schema: the
figures a record derives, such as a latency record's percentiles, are in the file too). Its
published copy is ``docs/schema/results.schema.json``, served with the documentation; a test
keeps it equal to what :func:`results_json_schema` gives. After changing a record, regenerate it::

    python -m headtohead.results.json_schema docs/schema/results.schema.json     # or: make schema
"""

from __future__ import annotations

import json
import sys
from pathlib import Path
from typing import Any

from headtohead.results.records import SCHEMA_VERSION, RunResult

__all__ = ["results_json_schema", "schema_text", "JSON_SCHEMA_DIALECT"]

#: The JSON Schema dialect pydantic writes.
JSON_SCHEMA_DIALECT = "https://json-schema.org/draft/2020-12/schema"


def results_json_schema() -> dict[str, Any]:
    """The JSON Schema of a ``results.json`` of the current :data:`~headtohead.results.records.SCHEMA_VERSION`.

    Returns
    -------
    dict
        A draft 2020-12 schema; ``schema_version`` in a file says which version it follows
        (``CHANGELOG.md`` lists what each version changed).

    Examples
    --------
    >>> schema = results_json_schema()
    >>> schema["title"], "models" in schema["required"]
    ('headtohead results.json, schema version 4', True)
    """
    generated = RunResult.model_json_schema(mode="serialization")
    head = {"$schema": JSON_SCHEMA_DIALECT, "$id": f"results-v{SCHEMA_VERSION}.schema.json",
            "title": f"headtohead results.json, schema version {SCHEMA_VERSION}"}
    return {**head, **{key: value for key, value in generated.items() if key != "title"}}


def schema_text() -> str:
    """:func:`results_json_schema` as the published file holds it (indented, sorted, one trailing newline)."""
    return json.dumps(results_json_schema(), indent=2, ensure_ascii=False, sort_keys=True) + "\n"


def main(argv: list[str] | None = None) -> int:
    """``python -m headtohead.results.json_schema [--check] [PATH]``: write the schema to PATH (default: standard
    output); with ``--check``, only say whether PATH holds it (exit 1 when it does not)."""
    args = list(sys.argv[1:] if argv is None else argv)
    check = "--check" in args
    args = [a for a in args if a != "--check"]
    if check:
        path = Path(args[0])
        if path.is_file() and path.read_text(encoding="utf-8") == schema_text():
            return 0
        print(f"{path} is not the schema the records generate: run `make schema` to regenerate it", file=sys.stderr)
        return 1
    if args:
        Path(args[0]).write_text(schema_text(), encoding="utf-8")
    else:
        sys.stdout.write(schema_text())
    return 0


if __name__ == "__main__":
    sys.exit(main())
