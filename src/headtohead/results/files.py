"""The names of the files and folders a run writes: the one place they are spelled.

See ``docs/api/results.md``, the section of this title.
"""

from __future__ import annotations

from pathlib import Path

__all__ = [
    "results_file",
    "RESULTS_FILE",
    "PREDICTIONS_FILE",
    "DISAGREEMENTS_FILE",
    "LABEL_SUSPECTS_FILE",
    "REPORT_FILE",
    "EXPERIMENT_FILE",
    "TRAINING_FILE",
    "SWEEP_FILE",
    "MODELS_DIR",
    "CHECKPOINTS_DIR",
    "RESUME_DIR",
    "LOCK_FILE",
    "TRAINED_MODEL_RECORD",
    "LOADGEN_DIR",
    "ANSWERS_DIR",
    "answers_file",
    "SUITE_FILE",
    "SUITE_REPORT",
    "SUITE_MARKDOWN",
    "SUITE_CSV",
    "SUITE_FIGURES_DIR",
    "SUITE_LATEX",
    "SUITE_CD_SVG",
    "SUITE_CD_PDF",
]

RESULTS_FILE = "results.json"
PREDICTIONS_FILE = "predictions.npz"
DISAGREEMENTS_FILE = "disagreements.csv"
#: The examples every model got wrong with the same answer (candidates for a wrong gold label), with ≥ 2 models.
LABEL_SUSPECTS_FILE = "label_suspects.csv"
REPORT_FILE = "report.html"
EXPERIMENT_FILE = "experiment.yaml"
TRAINING_FILE = "training.json"
SWEEP_FILE = "sweep.json"
MODELS_DIR = "models"
CHECKPOINTS_DIR = "checkpoints"
RESUME_DIR = ".h2h-resume"
#: MLPerf LoadGen's own logs, a folder per model (engines.server).
LOADGEN_DIR = "loadgen"
LOCK_FILE = ".h2h-lock"
#: Every answer of an LLM model, read as a label: ``answers/<model>.jsonl`` beside predictions.npz.
ANSWERS_DIR = "answers"


def answers_file(model: str) -> str:
    """``answers/<model>.jsonl``: the model's name with any character but letters, digits, ``-``, ``_``, ``.`` as ``_``."""
    safe = "".join(c if c.isalnum() or c in "-_." else "_" for c in model).lstrip(".") or "_"
    return f"{ANSWERS_DIR}/{safe}.jsonl"


#: Written beside a trained model: its TrainingRun and the settings it was trained with.
TRAINED_MODEL_RECORD = "h2h-training.json"

#: A suite's record and reports (h2h suite).
SUITE_FILE = "suite.json"
SUITE_REPORT = "suite.html"
SUITE_MARKDOWN = "suite.md"
SUITE_CSV = "suite.csv"
SUITE_FIGURES_DIR = "suite_files"
#: A paper's table (booktabs) and the critical-difference diagram as vector files, beside suite.html.
SUITE_LATEX = "suite.tex"
SUITE_CD_SVG = "cd.svg"
SUITE_CD_PDF = "cd.pdf"


def results_file(path: str | Path) -> Path:
    """A run's ``results.json``: ``path`` itself, or the file of that name in the folder ``path``.

    ``h2h show``, ``h2h gate`` and ``h2h report`` take either.
    """
    path = Path(path)
    return path / RESULTS_FILE if path.is_dir() else path
