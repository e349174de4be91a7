"""Report files: a run's (``report.html`` beside its results, or any set of HTML / Markdown / CSV files), a
suite's and a sweep's.

Each function builds the outcome's document once (:mod:`headtohead.report.sections`) and draws it
with the formats of :mod:`headtohead.report.formats`.
"""

from __future__ import annotations

from collections.abc import Sequence
from dataclasses import dataclass, field
from pathlib import Path

from headtohead.errors import ConfigError
from headtohead.report.formats.csv import render_csv as table_csv
from headtohead.report.formats.html import render_html as document_html
from headtohead.report.formats.markdown import render_markdown as document_markdown
from headtohead.report.merge import MergedRuns, as_merged
from headtohead.report.sections.run import run_document
from headtohead.report.sections.run.summary import csv_table
from headtohead.results.files import (
    REPORT_FILE,
    SUITE_CD_PDF,
    SUITE_CD_SVG,
    SUITE_CSV,
    SUITE_FIGURES_DIR,
    SUITE_LATEX,
    SUITE_MARKDOWN,
    SUITE_REPORT,
)
from headtohead.results.predictions import Predictions
from headtohead.results.records import RunResult
from headtohead.results.suite import SuiteResult
from headtohead.results.sweep import SweepResult
from headtohead.runtime.files import write_bytes_atomic, write_text_atomic

__all__ = [
    "render_html",
    "write_html",
    "render_markdown",
    "write_markdown",
    "render_csv",
    "write_csv",
    "write_reports",
    "write_outputs",
    "Written",
    "write_suite_reports",
    "sweep_markdown",
    "write_sweep_report",
    "log_runs_to_mlflow",
    "render_suite_html",
    "render_suite_markdown",
    "render_suite_csv",
]

Results = RunResult | Sequence[RunResult] | MergedRuns
Preds = Predictions | Sequence[Predictions | None] | None


def render_html(results: Results, *, predictions: Preds = None, title: str | None = None) -> str:
    """The whole report as one self-contained HTML page.

    Parameters
    ----------
    results : RunResult, sequence of RunResult, or MergedRuns
        One run, several (grouped by machine), or runs already loaded with :func:`~headtohead.report.merge.load_runs`.
    predictions : Predictions or sequence, optional
        Per-example predictions (used for reliability diagrams when a result has no statistics).
    title : str, optional
        Defaults to the run name(s).

    Returns
    -------
    str
        A complete HTML document: no script, nothing loaded from the network.

    Examples
    --------
    >>> html = render_html(headtohead.load_result("runs/sst2/results.json"))   # doctest: +SKIP
    """
    return document_html(run_document(results, predictions=predictions, title=title))


def write_html(results: Results, path: str | Path, *, predictions: Preds = None, title: str | None = None) -> Path:
    """Render the report and write it to ``path`` atomically; returns the path."""
    path = Path(path)
    write_text_atomic(path, render_html(results, predictions=predictions, title=title))
    return path


def render_markdown(
    results: Results, *, image_folder: str = "report_files", predictions: Preds = None, title: str | None = None
) -> tuple[str, dict[str, bytes]]:
    """The Markdown text and the files it links to (PNG charts, thumbnails).

    Parameters
    ----------
    results : RunResult, sequence of RunResult, or MergedRuns
    image_folder : str
        Folder (relative to the Markdown file) the images are linked from.
    predictions : Predictions or sequence, optional
    title : str, optional

    Returns
    -------
    text : str
    images : dict of str to bytes
        File name inside ``image_folder`` → its bytes.
    """
    return document_markdown(run_document(results, predictions=predictions, title=title), image_folder=image_folder)


def write_markdown(results: Results, path: str | Path, *, predictions: Preds = None, title: str | None = None) -> Path:
    """Write ``path`` and its charts into ``<name>_files/`` beside it; returns the path.

    Examples
    --------
    >>> write_markdown(result, "runs/sst2/report.md")   # doctest: +SKIP
    PosixPath('runs/sst2/report.md')
    """
    path = Path(path)
    folder = f"{path.stem}_files"
    text, files = render_markdown(results, image_folder=folder, predictions=predictions, title=title)
    for name, data in files.items():
        write_bytes_atomic(path.parent / folder / name, data)
    write_text_atomic(path, text)
    return path


def render_csv(results: Results) -> str:
    """The CSV table: one row per model × run, one column per metric, numbers unrounded, intervals beside them."""
    return table_csv(csv_table(as_merged(results)))


def write_csv(results: Results, path: str | Path) -> Path:
    """Write the CSV table to ``path`` atomically; returns the path.

    Examples
    --------
    >>> import pandas as pd
    >>> write_csv(result, "table.csv")                     # doctest: +SKIP
    >>> pd.read_csv("table.csv")[["model", "accuracy"]]    # doctest: +SKIP
    """
    path = Path(path)
    write_text_atomic(path, render_csv(results))
    return path


def write_reports(result: RunResult, out_dir: str | Path, *, predictions: Predictions | None = None) -> Path:
    """Write ``report.html`` for one run into ``out_dir`` (beside its ``results.json``).

    Parameters
    ----------
    result : RunResult
    out_dir : str or Path
    predictions : Predictions, optional
        The run's per-example predictions (reliability diagrams when ``result.stats`` is absent).

    Returns
    -------
    Path
        The report written.

    Examples
    --------
    >>> outcome = headtohead.run("experiment.yaml", out_dir="runs/x")          # doctest: +SKIP
    >>> write_reports(outcome.result, "runs/x", predictions=outcome.predictions)  # doctest: +SKIP
    PosixPath('runs/x/report.html')
    """
    return write_html(result, Path(out_dir) / REPORT_FILE, predictions=predictions)


@dataclass(frozen=True)
class Written:
    """The files one call of :func:`write_outputs` produced."""

    html: Path | None = None
    markdown: Path | None = None
    markdown_images: Path | None = None
    csv: Path | None = None
    files: list[Path] = field(default_factory=list)


def _check_suffix(path: Path | None, suffixes: tuple[str, ...], option: str) -> None:
    if path is not None and path.suffix.lower() not in suffixes:
        raise ConfigError(
            f"{option} {path}: expected a file ending in {' or '.join(suffixes)} (e.g. {option} report{suffixes[0]})"
        )


def write_outputs(
    results: RunResult | MergedRuns,
    *,
    html: str | Path | None = None,
    markdown: str | Path | None = None,
    csv: str | Path | None = None,
    title: str | None = None,
) -> Written:
    """Write the requested formats of one report (its document built once).

    Parameters
    ----------
    results : RunResult or MergedRuns
    html, markdown, csv : str or Path, optional
        Where to write each format; ``None`` skips it. Markdown images go to ``<name>_files/`` beside it.
    title : str, optional

    Returns
    -------
    Written

    Raises
    ------
    ConfigError
        A path has the wrong extension (``--html report.md``).
    """
    html_path, md_path, csv_path = (Path(p) if p is not None else None for p in (html, markdown, csv))
    _check_suffix(html_path, (".html", ".htm"), "--html")
    _check_suffix(md_path, (".md", ".markdown"), "--md")
    _check_suffix(csv_path, (".csv",), "--csv")
    merged = as_merged(results)
    document = run_document(merged, title=title) if html_path is not None or md_path is not None else None
    files: list[Path] = []
    images = None
    if html_path is not None and document is not None:
        write_text_atomic(html_path, document_html(document))
        files.append(html_path)
    if md_path is not None and document is not None:
        folder = f"{md_path.stem}_files"
        text, found = document_markdown(document, image_folder=folder)
        for name, data in found.items():
            write_bytes_atomic(md_path.parent / folder / name, data)
        write_text_atomic(md_path, text)
        files.append(md_path)
        images = md_path.parent / folder
        if images.is_dir():
            files.append(images)
        else:
            images = None
    if csv_path is not None:
        write_text_atomic(csv_path, render_csv(merged))
        files.append(csv_path)
    return Written(html=html_path, markdown=md_path, markdown_images=images, csv=csv_path, files=files)


def write_suite_reports(
    result: SuiteResult, out_dir: str | Path, *, figure_size: tuple[float | None, float | None] | None = None
) -> list[Path]:
    """Write a suite's files into ``out_dir``: ``suite.html``, ``suite.md`` (its diagram in ``suite_files/``),
    ``suite.csv``, ``suite.tex``, and the CD diagram as ``cd.svg`` and ``cd.pdf`` when there are statistics.

    Every file draws the suite's one document (:func:`headtohead.report.sections.suite.suite_document`);
    each data set's name links to its own ``report.html`` (relative links: the folder can be moved whole).

    Parameters
    ----------
    result : SuiteResult
    out_dir : str or Path
    figure_size : (float or None, float or None), optional
        The width and height in inches of ``cd.svg`` and ``cd.pdf`` (``across.figure``, ``--figure-size``;
        ``None`` for either: the default). The pages' own diagram keeps the screen size.

    Returns
    -------
    list of Path
    """
    from headtohead.report.formats.latex import render_latex
    from headtohead.report.plots import to_pdf, to_svg
    from headtohead.report.sections.suite import cd_figure, suite_csv_table, suite_document

    out = Path(out_dir)
    document = suite_document(result)
    written = [out / SUITE_REPORT, out / SUITE_MARKDOWN, out / SUITE_CSV, out / SUITE_LATEX]
    write_text_atomic(written[0], document_html(document))
    text, images = document_markdown(document, image_folder=SUITE_FIGURES_DIR)
    for name, data in images.items():
        write_bytes_atomic(out / SUITE_FIGURES_DIR / name, data)
    written += [out / SUITE_FIGURES_DIR / name for name in images]
    if result.average_ranks:
        figure = cd_figure(result, figure_size)
        for path, how in ((SUITE_CD_SVG, to_svg), (SUITE_CD_PDF, to_pdf)):
            drawn = figure.render(how)
            if drawn is not None:
                write_bytes_atomic(out / path, drawn)
                written.append(out / path)
    write_text_atomic(written[1], text)
    write_text_atomic(written[2], table_csv(suite_csv_table(result)))
    empty = f"no comparison across data sets: {result.statistics_note or 'no statistics'}"
    write_text_atomic(written[3], render_latex(document, name=result.name, empty=empty))
    return written


def sweep_markdown(result: SweepResult) -> tuple[str, dict[str, bytes]]:
    """A sweep's ``sweep.md`` and its curves (``sweep.png``, beside it)."""
    from headtohead.report.sections.sweep import sweep_document

    text, images = document_markdown(sweep_document(result), image_folder=".")
    return text.replace("](./", "]("), images


def write_sweep_report(result: SweepResult, out_dir: str | Path) -> list[Path]:
    """Write ``sweep.md`` and ``sweep.png`` into ``out_dir``; returns their paths."""
    out = Path(out_dir)
    text, images = sweep_markdown(result)
    written = [out / "sweep.md"]
    for name, data in images.items():
        write_bytes_atomic(out / name, data)
        written.append(out / name)
    write_text_atomic(written[0], text)
    return written


def log_runs_to_mlflow(
    merged: MergedRuns, *, tracking_uri: str, artifacts: Sequence[str | Path] = (), experiment: str | None = None
) -> list[str]:
    """Log every run of a report to MLflow: its settings, every number of its summary and pairs, the files given.

    Returns
    -------
    list of str
        The MLflow run ids, one per run.
    """
    from headtohead.report.formats.mlflow import DEFAULT_EXPERIMENT, log_to_mlflow

    runs = [(run, run_document(run.result)) for run in merged.runs]
    return log_to_mlflow(
        runs, tracking_uri=tracking_uri, artifacts=artifacts, experiment=experiment or DEFAULT_EXPERIMENT
    )


def render_suite_html(result: SuiteResult) -> str:
    """A suite's report as one self-contained HTML page (the CD diagram inline)."""
    from headtohead.report.sections.suite import suite_document

    return document_html(suite_document(result))


def render_suite_markdown(
    result: SuiteResult, *, image_folder: str = SUITE_FIGURES_DIR
) -> tuple[str, dict[str, bytes]]:
    """A suite's report in Markdown, and its figures (the CD diagram as a PNG in ``image_folder``)."""
    from headtohead.report.sections.suite import suite_document

    return document_markdown(suite_document(result), image_folder=image_folder)


def render_suite_csv(result: SuiteResult) -> str:
    """``suite.csv``: one row per data set and model, numbers unrounded (a failed data set: its error)."""
    from headtohead.report.sections.suite import suite_csv_table

    return table_csv(suite_csv_table(result))
