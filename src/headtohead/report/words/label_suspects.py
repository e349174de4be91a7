"""The words of wrong gold labels: the suspects (every model wrong with one answer) and the rows data.label_ok left out."""

from __future__ import annotations

from headtohead.report.words.numbers import format_number
from headtohead.results.files import LABEL_SUSPECTS_FILE
from headtohead.results.label_suspects import LabelSuspects

__all__ = ["suspects_note", "left_out_words", "LABEL_OK_FALSE"]

#: The reason ``data.tables.LABEL_OK_FALSE`` gives a row ``data.label_ok`` flags false, in ``DatasetRecord.skipped``
#: (spelled again here: the report reads records, never the data package).
LABEL_OK_FALSE = "label_ok false"


def left_out_words(count: int) -> str:
    """The rows ``data.label_ok`` left out, in words.

    Examples
    --------
    >>> left_out_words(3)
    '3 rows left out: label_ok false (gold label marked wrong; in no statistic)'
    >>> left_out_words(1)
    '1 row left out: label_ok false (gold label marked wrong; in no statistic)'
    """
    rows = "row" if count == 1 else "rows"
    return f"{format_number(count, 'integer')} {rows} left out: {LABEL_OK_FALSE} (gold label marked wrong; in no statistic)"


def suspects_note(found: LabelSuspects) -> str:
    """What the table of suspects shows, how many there are, and where all of them are.

    Examples
    --------
    >>> found = LabelSuspects(models=["a", "b"], n_examples=872, n_suspects=31, rows=[])
    >>> suspects_note(found)  # doctest: +NORMALIZE_WHITESPACE
    'On 31 of the 872 examples every model (a, b) gave one and the same answer, and the gold label says it is
     wrong: the label may be. Each still counts as wrong; check them, and mark a wrong one false in the column
     data.label_ok names to leave it out. 0 are shown (the most confident first); all 31 are in
     label_suspects.csv.'
    """
    shown, total = format_number(len(found.rows), "integer"), format_number(found.n_suspects, "integer")
    which = (
        f"{shown} are shown (the most confident first); all {total} are in {LABEL_SUSPECTS_FILE}."
        if len(found.rows) < found.n_suspects
        else f"All are in {LABEL_SUSPECTS_FILE}."
    )
    return (
        f"On {total} of the {format_number(found.n_examples, 'integer')} "
        f"examples every model ({', '.join(found.models)}) gave one and the same answer, and the gold label says "
        f"it is wrong: the label may be. Each still counts as wrong; check them, and mark a wrong one false in the "
        f"column data.label_ok names to leave it out. {which}"
    )
