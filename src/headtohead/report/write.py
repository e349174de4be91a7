"""Writing report files: ``report.html`` beside a run's results, or any set of HTML / Markdown / CSV files."""

from __future__ import annotations

from dataclasses import dataclass, field
from pathlib import Path

from headtohead.errors import ConfigError
from headtohead.report.merge import MergedRuns, as_merged
from headtohead.results.files import REPORT_FILE
from headtohead.results.predictions import Predictions
from headtohead.results.records import RunResult

__all__ = ["write_reports", "write_outputs", "Written"]


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
    from headtohead.report.html import write_html

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
    """Write the requested formats of one report.

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
    files: list[Path] = []
    images = None
    if html_path is not None:
        from headtohead.report.html import write_html

        files.append(write_html(merged, html_path, title=title))
    if md_path is not None:
        from headtohead.report.markdown import write_markdown

        files.append(write_markdown(merged, md_path, title=title))
        images = md_path.parent / f"{md_path.stem}_files"
        if images.is_dir():
            files.append(images)
        else:
            images = None
    if csv_path is not None:
        from headtohead.report.csv_export import write_csv

        files.append(write_csv(merged, csv_path))
    return Written(html=html_path, markdown=md_path, markdown_images=images, csv=csv_path, files=files)
