"""The experiment as run (its whole configuration, as ``results.json`` keeps it), folded."""

from __future__ import annotations

import json

from headtohead.report.document import Block, Code, Fold
from headtohead.report.sections.run.view import RunView

ORDER = 120


def build(view: RunView) -> list[Block]:
    """The experiment as JSON."""
    return [Fold("Experiment as run", (Code(json.dumps(view.result.experiment, indent=2, ensure_ascii=False)),))]
