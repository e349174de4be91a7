"""Speed records: results of schema version 1 read under the new names; statistics recomputed, never believed."""

from __future__ import annotations

import numpy as np
import pytest

from headtohead.results.latency import iqr_over_median, repeat_noise
from headtohead.results.records import SCHEMA_VERSION
from headtohead.results.speed import ColdStart, ModelSpeed, ScenarioTiming

#: One model of a results.json written by schema version 1 (process figures named as if they were the model's).
V1_MODEL = {
    "name": "bert",
    "device": "cpu",
    "num_parameters": 10,
    "parameter_bytes": 40,
    "load_time_s": 0.5,
    "first_preprocess_s": 0.001,
    "first_call_s": 0.01,
    "offline": {
        "scenario": "offline",
        "batch_size": 8,
        "timer": "perf_counter_ns",
        "warmup_iterations": 3,
        "warmup_s": 0.1,
        "rounds_ns": [[100, 110], [105, 100]],
        "unstable": True,
        "iqr_over_median": 9.0,
    },
    "memory": {
        "rss_baseline_mb": 1000.0,
        "rss_peak_mb": 1034.0,
        "rss_mean_mb": 1020.0,
        "rss_samples": 7,
        "cuda_max_allocated_mb": None,
        "cuda_max_reserved_mb": None,
    },
    "telemetry": {"available": False, "samples": 0},
    "warnings": [],
}


def test_version_one_results_are_read_under_the_names_of_what_they_measured():
    assert SCHEMA_VERSION >= 2
    record = ModelSpeed.model_validate(V1_MODEL)
    memory = record.memory
    assert memory.process_rss_peak_mb == 1034.0 and memory.process_rss_baseline_mb == 1000.0
    assert memory.inference_rss_mb == pytest.approx(34.0) and memory.process_rss_samples == 7
    assert not memory.isolated and memory.model_peak_mb is None and memory.weights_mb is None  # never measured
    assert record.cold_start is None and record.offline.inputs == 1
    assert record.offline.iqr_over_median == pytest.approx(iqr_over_median([100, 110, 105, 100]))  # not 9.0
    assert "telemetry" not in record.model_dump()
    again = ModelSpeed.model_validate_json(record.model_dump_json())
    assert again == record


def test_cold_start_recomputes_time_to_first_prediction():
    cold = ColdStart(
        scenario="single_stream",
        batch_size=1,
        load_s=1.0,
        first_preprocess_s=0.01,
        first_transfer_s=0.0,
        first_call_s=0.2,
    )
    raw = cold.model_dump()
    assert raw["first_prediction_s"] == pytest.approx(1.21)
    raw["first_prediction_s"] = 0.0  # a tampered figure is not believed
    assert ColdStart.model_validate(raw).first_prediction_s == pytest.approx(1.21)


@pytest.mark.parametrize(("noise", "low"), [(0.01, True), (0.3, False)])
def test_repeat_noise_is_judged_on_repeats_of_the_same_input(noise, low):
    rng = np.random.default_rng(0)
    base = np.tile([1e6, 3e6, 9e6, 2e6], 50)  # four inputs of very different cost, cycled
    samples = (base * rng.lognormal(0.0, noise, size=base.size)).astype(int)
    timing = ScenarioTiming(
        scenario="single_stream",
        batch_size=1,
        timer="perf_counter_ns",
        warmup_iterations=0,
        warmup_s=0.0,
        rounds_ns=[samples[:100].tolist(), samples[100:].tolist()],
        inputs=4,
    )
    assert timing.iqr_over_median > 0.5  # the mixture of inputs, whatever the noise
    assert timing.repeat_noise == pytest.approx(repeat_noise(samples, 4))
    assert (timing.repeat_noise < 0.05) is low
    assert "unstable" not in timing.model_dump()  # a flag of earlier versions, dropped on read (V1_MODEL has one)
    assert [np.median(x) for x in timing.input_latencies_ns()] == pytest.approx([1e6, 3e6, 9e6, 2e6], rel=0.1)


def test_speed_results_of_version_3_read_without_p_values_and_keep_their_verdicts(tmp_path):
    """Version 3 wrote no p-values and an ``unstable`` flag per series; both read, worded as before."""
    import json

    from sim.sample import sample_run

    import headtohead
    from headtohead.report.words.speed import speed_sentence
    from headtohead.report.words.warnings import speed_warnings

    result, _ = sample_run({"a": 0.9, "b": 0.8}, n_examples=60, stats=False)
    raw = json.loads(result.model_dump_json())
    raw["schema_version"] = 3
    for run in raw["speed"]["scenarios"]:
        for comparison in run["comparisons"]:
            for key in ("p_value", "p_adjusted", "n_speed_tests"):
                del comparison[key]
    for model in raw["speed"]["models"]:
        for scenario in ("offline", "single_stream"):
            model[scenario]["unstable"] = True
    (tmp_path / "v3.json").write_text(json.dumps(raw))
    old = headtohead.load_result(tmp_path / "v3.json").speed
    comparison = old.scenarios[0].comparisons[0]
    assert comparison.p_value is None and comparison.n_speed_tests is None
    assert comparison.faster == result.speed.scenarios[0].comparisons[0].faster
    assert "Holm" not in speed_sentence(comparison) and " p " not in speed_sentence(comparison)
    assert speed_warnings(old) == speed_warnings(result.speed)  # judged by today's rules, from the raw rounds
