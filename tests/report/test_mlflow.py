"""Optional MLflow logging into a local sqlite store (skipped where the ``mlflow`` extra is absent)."""

from __future__ import annotations

import pytest
from sim.sample import sample_run

from headtohead.errors import ConfigError
from headtohead.report.formats import mlflow as mlflow_log
from headtohead.report.merge import as_merged
from headtohead.report.write import log_runs_to_mlflow, write_outputs


@pytest.mark.filterwarnings("ignore::DeprecationWarning")  # SQLAlchemy 2.1 deprecations inside MLflow's store
def test_params_metrics_and_report_files_reach_a_sqlite_store(tmp_path):
    pytest.importorskip("mlflow", reason="the mlflow extra is not installed")
    from mlflow.tracking import MlflowClient

    result, _ = sample_run({"bert": 0.8, "roberta": 0.9}, n_examples=300, speed=False, n_resamples=200)
    merged = as_merged(result)
    written = write_outputs(
        merged, html=tmp_path / "report.html", markdown=tmp_path / "report.md", csv=tmp_path / "table.csv"
    )
    uri = f"sqlite:///{tmp_path / 'mlflow.db'}"
    (run_id,) = log_runs_to_mlflow(merged, tracking_uri=uri, artifacts=written.files, experiment="h2h-test")
    client = MlflowClient(tracking_uri=uri)
    run = client.get_run(run_id)
    assert run.info.status == "FINISHED" and run.info.run_name == "sample-comparison"
    assert run.data.params["dataset"] == "sample.tsv" and run.data.params["roberta/kind"] == "python"
    assert run.data.metrics["roberta/accuracy"] == pytest.approx(result.model("roberta").quality.accuracy)
    est = result.stats.model("roberta").accuracy
    assert run.data.metrics["roberta/accuracy_ci_low"] == pytest.approx(est.low)
    assert run.data.metrics["bert_vs_roberta/mcnemar_p"] == pytest.approx(result.stats.comparisons[0].p_value)
    files = {a.path for a in client.list_artifacts(run_id, "report")}
    assert {"report/report.html", "report/report.md", "report/table.csv", "report/report_files"} <= files
    assert (tmp_path / "mlartifacts").is_dir()  # artifacts beside the database, not in the working directory


def test_metric_keys_are_made_safe_for_mlflow():
    assert mlflow_log.metric_key("bert<base>", "accuracy") == "bert_base_/accuracy"
    assert mlflow_log.resolve_tracking_uri("http://x:5000") == "http://x:5000"


def test_default_uri_uses_the_environment_or_a_local_sqlite_file(monkeypatch, tmp_path):
    monkeypatch.chdir(tmp_path)
    monkeypatch.delenv("MLFLOW_TRACKING_URI", raising=False)
    assert mlflow_log.resolve_tracking_uri("default") == f"sqlite:///{tmp_path / 'mlflow.db'}"
    monkeypatch.setenv("MLFLOW_TRACKING_URI", "http://tracking:5000")
    assert mlflow_log.resolve_tracking_uri("default") == "http://tracking:5000"


def test_missing_mlflow_is_a_one_line_error_naming_the_extra(monkeypatch):
    import builtins

    real_import = builtins.__import__

    def no_mlflow(name, *args, **kwargs):
        if name.startswith("mlflow"):
            raise ImportError(name)
        return real_import(name, *args, **kwargs)

    monkeypatch.setattr(builtins, "__import__", no_mlflow)
    with pytest.raises(ConfigError, match=r"pip install 'headtohead\[mlflow\]'"):
        log_runs_to_mlflow(
            as_merged(sample_run(n_examples=100, stats=False, speed=False)[0]), tracking_uri="sqlite:///x.db"
        )
