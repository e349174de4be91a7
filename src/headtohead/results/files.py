"""The names of the files and folders a run writes: the one place they are spelled.

Every command writes into one output folder (``--out``, default ``runs/<experiment name>``)::

    results.json        RunResult: the experiment, environment, per-model records, statistics, speed
    predictions.npz     every model's per-example predictions and probabilities
    disagreements.csv   every example exactly one of two models got right, per pair (h2h run)
    report.html         the self-contained report (h2h run, h2h report)
    experiment.yaml     the experiment to re-run (h2h train, h2h demo: models point at the saved weights)
    training.json       TrainingResult of h2h train (what h2h machines reads across machines)
    sweep.json          SweepResult of h2h sweep
    models/<model>/seed-<s>/        trained weights (h2h train, h2h demo)
    checkpoints/<model>/seed-<s>/   epoch checkpoints of an unfinished training (resume)
    .h2h-resume/        finished quality passes of an interrupted run (h2h run --resume)
    loadgen/<model>/<trial>/        MLPerf LoadGen's mlperf_log_summary.txt and mlperf_log_detail.txt of every
                                    Server trial and cross-check (speed.scenarios: [server])
    .h2h-lock           held while a run writes into the folder (removed when it ends)

A suite (h2h suite) writes into its folder::

    suite.json          SuiteResult: every data set's scores and verdicts, the statistics across them
    suite.html          its report (critical-difference diagram, ranks, verdict grid); suite.md, suite.csv too
    suite_files/        the Markdown report's figures
    <data set>/         one ordinary run per data set (results.json, predictions.npz, report.html …)
"""

from __future__ import annotations

__all__ = [
    "RESULTS_FILE",
    "PREDICTIONS_FILE",
    "DISAGREEMENTS_FILE",
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
    "SUITE_FILE",
    "SUITE_REPORT",
    "SUITE_MARKDOWN",
    "SUITE_CSV",
    "SUITE_FIGURES_DIR",
]

RESULTS_FILE = "results.json"
PREDICTIONS_FILE = "predictions.npz"
DISAGREEMENTS_FILE = "disagreements.csv"
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
#: Written beside a trained model: its TrainingRun and the settings it was trained with.
TRAINED_MODEL_RECORD = "h2h-training.json"

#: A suite's record and reports (h2h suite).
SUITE_FILE = "suite.json"
SUITE_REPORT = "suite.html"
SUITE_MARKDOWN = "suite.md"
SUITE_CSV = "suite.csv"
SUITE_FIGURES_DIR = "suite_files"
