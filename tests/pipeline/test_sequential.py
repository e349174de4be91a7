"""``h2h run --until-decided``: stops on a clear gap, runs to the end without one, feeds every model the same
examples in the same order, resumes from the last finished chunk, and records what it did."""

from __future__ import annotations

from collections import defaultdict

import numpy as np
import pytest
import yaml

import headtohead
from headtohead.cli.main import main
from headtohead.pipeline import sequential as seq
from headtohead.pipeline.sequential_store import ChunkStore
from headtohead.runtime.faults import RunInterrupted
from headtohead.stats.mcnemar import mcnemar_test
from headtohead.stats.sequential import replay
from headtohead.testing import known
from headtohead.testing.data import write_text_table

N = 600


def _model(name: str, accuracy: float, seed: int) -> dict:
    return {
        "name": name,
        "kind": "python",
        "source": "headtohead.testing.known:known_accuracy",
        "model_args": {"accuracy": accuracy, "seed": seed},
        "outputs": "probabilities",
    }


def _experiment(tmp_path, *models: dict, n: int = N, **eval_: object) -> dict:
    data = write_text_table(tmp_path / "dev.csv", known.known_accuracy_rows(n, seed=5))
    return {
        "name": "seq",
        "seed": 7,
        "data": {"path": str(data)},
        "models": list(models),
        "eval": {"batch_size": 16, "device": "cpu", "until_decided": True, "chunk_size": 32, **eval_},
        "stats": {"n_resamples": 200},
        "speed": {"enabled": False},
    }


@pytest.fixture()
def seen(monkeypatch) -> dict[str, list[str]]:
    """The texts fed to each model (keyed ``"<accuracy>-<seed>"``), in order, over every run of the test."""
    fed: dict[str, list[str]] = defaultdict(list)
    factory = known.known_accuracy

    def keeping(accuracy: float = 0.8, seed: int = 0, label_names=("negative", "positive")) -> known.KnownAccuracy:
        model = factory(accuracy, seed, label_names)
        model.seen = fed[f"{accuracy}-{seed}"]
        return model

    monkeypatch.setattr(known, "known_accuracy", keeping)
    return fed


@pytest.fixture(scope="module")
def clear_gap(tmp_path_factory):
    """A strong (0.95) and a weak (0.6) model: decided long before the data runs out."""
    tmp = tmp_path_factory.mktemp("gap")
    exp = _experiment(tmp, _model("strong", 0.95, 1), _model("weak", 0.6, 2))
    return exp, headtohead.run(exp, out_dir=tmp / "out", report=True), tmp / "out"


def test_stops_early_on_a_clear_gap_and_analyses_the_examples_used(clear_gap):
    _, outcome, _ = clear_gap
    result, predictions = outcome.result, outcome.predictions
    (record,) = result.stats.sequential
    assert record.decision == "a_better" and (record.model_a, record.model_b) == ("strong", "weak")
    assert record.examples_used < N and record.examples_used % 32 == 0 and record.examples_available == N
    assert record.final.decided_at == record.examples_used and record.alpha == 0.05 and record.chunk_size == 32
    # the statistics, the predictions and every model record cover exactly the examples used
    assert len(predictions.order) == record.examples_used == result.stats.models[0].n_examples
    assert len(set(predictions.order.tolist())) == record.examples_used
    assert all(m.n_batches == record.examples_used // 16 for m in result.models)
    correct = {name: predictions[name].pred == predictions.y_true for name in ("strong", "weak")}
    b, c = int(np.sum(correct["strong"] & ~correct["weak"])), int(np.sum(~correct["strong"] & correct["weak"]))
    assert (record.final.only_a_correct, record.final.only_b_correct) == (b, c)
    assert result.stats.comparisons[0].table.only_a_correct == b  # McNemar is computed on the same examples
    # the path is the test replayed over the saved predictions, chunk by chunk
    path = replay(correct["strong"], correct["weak"], 32)
    assert [s.n for s in path] == [s.n for s in record.steps]
    assert path[-1].log_e_a_better == pytest.approx(record.final.log_e_a_better)
    # and the sentence says it stopped early
    assert "Stopped early after" in result.stats.comparisons[0].verdict
    assert f"{record.examples_used} of {N} examples" in result.stats.comparisons[0].verdict


def test_the_order_is_seeded_random_and_each_chunk_holds_the_next_examples(clear_gap):
    exp, outcome, _ = clear_gap
    order = outcome.predictions.order
    expected = seq.sequential_order(N, exp["seed"])
    assert not np.array_equal(np.sort(order[:32]), np.arange(32))  # not the file's order
    for start in range(0, len(order), 32):  # inside a chunk the order may group lengths; the set is the chunk's
        assert set(order[start : start + 32].tolist()) == set(expected[start : start + 32].tolist())


def test_runs_to_the_end_when_there_is_no_gap(tmp_path):
    exp = _experiment(tmp_path, _model("a", 0.8, 1), _model("b", 0.8, 2), n=320)
    result = headtohead.run(exp).result
    (record,) = result.stats.sequential
    assert record.decision == "undecided" and record.examples_used == record.examples_available == 320
    assert len(record.steps) == 10 and record.final.low < 0 < record.final.high
    assert (
        "Sequential evaluation used all 320 examples (a look every 32): no decision between a and b"
        in result.stats.comparisons[0].verdict
    )
    # the full-data McNemar test agrees that there is no clear gap
    assert not result.stats.comparisons[0].significant


def test_equivalence_margin_can_end_the_run(tmp_path):
    exp = _experiment(tmp_path, _model("a", 0.9, 1), _model("b", 0.9, 1), n=800, equivalence_margin=0.05, chunk_size=64)
    (record,) = headtohead.run(exp).result.stats.sequential
    # identical models (same seed): never different, shown equivalent within 5 points well before the end
    assert record.decision == "equivalent" and record.examples_used < 800 and record.margin == 0.05


def test_every_model_sees_the_same_examples_in_the_same_order(tmp_path, seen):
    exp = _experiment(tmp_path, _model("a", 0.9, 1), _model("b", 0.7, 2), _model("c", 0.8, 3))
    outcome = headtohead.run(exp)
    fed = [seen["0.9-1"], seen["0.7-2"], seen["0.8-3"]]
    assert fed[0] == fed[1] == fed[2] and len(fed[0]) == len(outcome.predictions.order) < N
    rows = known.known_accuracy_rows(N, seed=5)
    assert fed[0] == [rows[i]["text"] for i in outcome.predictions.order]
    assert len({m.index_order_hash for m in outcome.result.models}) == 1


def test_three_models_split_alpha_over_the_pairs_and_stop_when_all_are_decided(tmp_path):
    exp = _experiment(tmp_path, _model("a", 0.95, 1), _model("b", 0.6, 2), _model("c", 0.8, 3))
    stats = headtohead.run(exp).result.stats
    records = stats.sequential
    assert [(r.model_a, r.model_b) for r in records] == [("a", "b"), ("a", "c"), ("b", "c")]
    assert all(r.alpha == pytest.approx(0.05 / 3) for r in records)
    used = records[0].examples_used
    assert all(r.examples_used == used for r in records) and used < N
    assert all(r.decision != "continue" for r in records)
    assert max(r.final.decided_at for r in records) == used  # the last pair to decide ended the run
    assert "0.05 over 3 pairs, Bonferroni" in stats.comparisons[0].verdict


def test_an_interrupted_run_resumes_from_its_last_chunk(tmp_path, monkeypatch, seen):
    exp = _experiment(tmp_path, _model("strong", 0.9, 1), _model("weak", 0.75, 2))
    reference = headtohead.run(exp)  # uninterrupted, no output folder
    used = reference.result.stats.sequential[0].examples_used
    assert used >= 3 * 32
    first_run = len(seen["0.9-1"])
    save = ChunkStore.save

    def save_then_stop(self, index, order, result):
        save(self, index, order, result)
        if index == 1:
            raise KeyboardInterrupt

    monkeypatch.setattr(ChunkStore, "save", save_then_stop)
    out = tmp_path / "out"
    with pytest.raises(RunInterrupted, match=r"SIGINT: 2 of 19 chunks are kept in .*--resume to go on from chunk 3"):
        headtohead.run(exp, out_dir=out)
    monkeypatch.setattr(ChunkStore, "save", save)
    before = len(seen["0.9-1"])
    assert before == first_run + 64
    resumed = headtohead.run(exp, out_dir=out, resume=True)
    # only the chunks after the second were evaluated again
    assert len(seen["0.9-1"]) - before == used - 64
    assert resumed.result.stats.sequential == reference.result.stats.sequential
    np.testing.assert_array_equal(resumed.predictions.order, reference.predictions.order)
    np.testing.assert_array_equal(resumed.predictions["weak"].proba, reference.predictions["weak"].proba)
    assert resumed.result.stats.comparisons[0].verdict == reference.result.stats.comparisons[0].verdict


def test_a_finished_run_resumes_without_evaluating_and_a_fresh_run_starts_over(tmp_path, seen):
    exp = _experiment(tmp_path, _model("strong", 0.95, 1), _model("weak", 0.6, 2))
    out = tmp_path / "out"
    first = headtohead.run(exp, out_dir=out)
    fed = len(seen["0.95-1"])
    again = headtohead.run(exp, out_dir=out, resume=True)
    assert len(seen["0.95-1"]) == fed  # every chunk was read back
    assert again.result.stats.sequential == first.result.stats.sequential
    headtohead.run(exp, out_dir=out)  # without --resume: evaluated again
    assert len(seen["0.95-1"]) == 2 * fed


def test_results_file_and_reports_carry_the_sequential_run(clear_gap):
    _, outcome, out = clear_gap
    loaded = headtohead.load_result(out / "results.json")
    assert loaded.stats.sequential == outcome.result.stats.sequential
    html = (out / "report.html").read_text()
    assert ">Sequential evaluation</h3>" in html and 'id="run1-sequential"' in html
    from headtohead.report.write import render_markdown

    text, files = render_markdown(loaded)
    assert "### Sequential evaluation" in text and "run1-sequential.png" in files


def test_without_until_decided_nothing_changes(tmp_path):
    exp = _experiment(tmp_path, _model("strong", 0.95, 1), _model("weak", 0.6, 2), until_decided=False)
    outcome = headtohead.run(exp, out_dir=tmp_path / "out", report=True)
    assert outcome.result.stats.sequential is None
    assert len(outcome.predictions.order) == N and "Stopped early" not in outcome.result.stats.comparisons[0].verdict
    assert "Sequential evaluation" not in (tmp_path / "out" / "report.html").read_text()
    # the McNemar test on all examples agrees with the early decision's direction
    p = outcome.predictions
    a, b = p["strong"].pred == p.y_true, p["weak"].pred == p.y_true
    assert mcnemar_test(a, b).p_value < 1e-6


def test_cli_flag_turns_it_on(tmp_path, capsys):
    exp = _experiment(tmp_path, _model("strong", 0.95, 1), _model("weak", 0.6, 2), until_decided=False)
    path = tmp_path / "exp.yaml"
    path.write_text(yaml.safe_dump(exp))
    main(["run", str(path), "--out", str(tmp_path / "out"), "--until-decided"])
    printed = capsys.readouterr().out
    assert "Stopped early after" in " ".join(printed.split())
    assert headtohead.load_result(tmp_path / "out" / "results.json").experiment["eval"]["until_decided"] is True


def test_chunk_plans_keep_each_chunk_and_group_lengths_inside_it():
    order = np.array([5, 0, 7, 2, 1, 6, 3, 4, 8])
    lengths = np.array([1, 9, 3, 8, 2, 7, 4, 6, 5])
    plans = seq.chunk_plans(order, 4, 2, lengths=lengths)
    assert [set(p.order.tolist()) for p in plans] == [{5, 0, 7, 2}, {1, 6, 3, 4}, {8}]
    assert plans[0].order.tolist()[:2] == [5, 7]  # the longest pair first (lengths 7 and 6)
    assert [p.batch_size for p in plans] == [2, 2, 2]


def test_default_chunk_is_whole_batches_from_64():
    from headtohead.config.schema import EvalConfig

    assert [EvalConfig(batch_size=b).sequential_chunk_size for b in (1, 16, 32, 48, 100)] == [64, 64, 64, 96, 100]
    assert EvalConfig(batch_size=16, chunk_size=48).sequential_chunk_size == 48


def test_a_model_of_stored_labels_without_probabilities_stops_early_too(tmp_path):
    """Its chunks carry no probabilities: the run stops and records it label-only (it crashed concatenating None)."""
    labels = ["neg", "pos"] * 100
    (tmp_path / "data.csv").write_text(
        "id,text,label\n" + "".join(f"e{i},text {i},{y}\n" for i, y in enumerate(labels))
    )
    (tmp_path / "right.csv").write_text("id,prediction\n" + "".join(f"e{i},{y}\n" for i, y in enumerate(labels)))
    (tmp_path / "pos.csv").write_text("id,prediction\n" + "".join(f"e{i},pos\n" for i in range(len(labels))))
    run = headtohead.run(
        {
            "name": "labels-only",
            "data": {"path": "data.csv", "id_column": "id"},
            "models": [
                {"name": "right", "kind": "predictions", "source": "right.csv"},
                {"name": "pos", "kind": "predictions", "source": "pos.csv"},
            ],
            "eval": {"until_decided": True, "chunk_size": 32, "batch_size": 32},
            "stats": {"n_resamples": 200},
        },
        base_dir=tmp_path,
    )
    assert run.predictions["right"].proba is None and len(run.predictions["right"].pred) < len(labels)


def test_when_the_data_runs_out_undecided_the_run_shows_no_decision_whatever_mcnemar_says(tmp_path):
    """α is spent once: after 12 interim looks the final McNemar (p = 0.014 here) is not quoted as a verdict."""
    from headtohead.report.words.verdict import build_verdict
    from headtohead.stats.paired import difference_pvalue

    n, labels = 400, ["neg", "pos"] * 200
    flip = {"neg": "pos", "pos": "neg"}
    a = [flip[y] if 18 <= i < 30 else y for i, y in enumerate(labels)]  # wrong where only B is right, and both wrong
    b = [flip[y] if i < 18 or 24 <= i < 30 else y for i, y in enumerate(labels)]  # wrong where only A is right
    (tmp_path / "data.csv").write_text(
        "id,text,label\n" + "".join(f"e{i},text {i},{y}\n" for i, y in enumerate(labels))
    )
    for name, predicted in (("a", a), ("b", b)):
        (tmp_path / f"{name}.csv").write_text(
            "id,prediction\n" + "".join(f"e{i},{y}\n" for i, y in enumerate(predicted))
        )
    exp = {
        "name": "ran-out",
        "data": {"path": "data.csv", "id_column": "id"},
        "models": [{"name": m, "kind": "predictions", "source": f"{m}.csv"} for m in ("a", "b")],
        "eval": {"until_decided": True, "chunk_size": 32, "batch_size": 32},
        "stats": {"n_resamples": 200},
    }
    out = tmp_path / "out"
    result = headtohead.run(exp, base_dir=tmp_path, out_dir=out, report=True).result
    (record,) = result.stats.sequential
    assert record.decision == "undecided" and record.examples_used == record.examples_available == n
    assert (record.final.only_a_correct, record.final.only_b_correct) == (18, 6)
    assert difference_pvalue(18, 6) < 0.05  # a fixed-sample test of all 400 would have called a better
    (comparison,) = result.stats.comparisons
    assert not comparison.significant and comparison.winner is None and not comparison.stopped_early
    assert [g.models for g in result.stats.ranking] == [["a", "b"]]
    assert "McNemar" not in comparison.verdict and "no decision between a and b" in comparison.verdict
    (line,) = [line for line in build_verdict(result).headline if line.kind == "quality"]
    assert line.subject is None and line.text.startswith("no decision between a and b, after 400 of 400 examples")
    assert "McNemar" not in line.text
    html = (out / "report.html").read_text()
    assert "no decision between a and b, after 400 of 400 examples" in html and "better than" not in html


def test_a_run_that_used_every_example_shows_its_slices_as_nominal_like_an_early_stop(tmp_path):
    """Slice tests of an --until-decided run come after its interim looks, stopped early or not: never a headline,
    always in the nominal words (issue 41: they read as decisions beside "no decision" when the data ran out)."""
    from headtohead.report.sections.run.details.where import slices_note
    from headtohead.report.words.quality import verdict_lines
    from headtohead.report.words.slices import SEQUENTIAL_NOMINAL
    from headtohead.report.words.verdict import build_verdict

    n, labels = 400, ["neg", "pos"] * 200
    flip = {"neg": "pos", "pos": "neg"}
    a = [flip[y] if y == "pos" and i < 60 else y for i, y in enumerate(labels)]  # a wrong on 30 positives
    b = [flip[y] if y == "neg" and i < 60 else y for i, y in enumerate(labels)]  # b wrong on 30 negatives
    (tmp_path / "data.csv").write_text(
        "id,text,label\n" + "".join(f"e{i},text {i},{y}\n" for i, y in enumerate(labels))
    )
    for name, predicted in (("a", a), ("b", b)):
        (tmp_path / f"{name}.csv").write_text(
            "id,prediction\n" + "".join(f"e{i},{y}\n" for i, y in enumerate(predicted))
        )
    exp = {
        "name": "slices-ran-out",
        "data": {"path": "data.csv", "id_column": "id"},
        "models": [{"name": m, "kind": "predictions", "source": f"{m}.csv"} for m in ("a", "b")],
        "eval": {"until_decided": True, "chunk_size": 32, "batch_size": 32},
        "stats": {"n_resamples": 200},
    }
    out = tmp_path / "out"
    result = headtohead.run(exp, base_dir=tmp_path, out_dir=out, report=True).result
    (record,) = result.stats.sequential
    assert record.decision == "undecided" and record.examples_used == record.examples_available == n
    assert not result.stats.comparisons[0].stopped_early
    significant = [p for s in result.stats.slices.slices for p in s.pairs if p.significant]
    assert len(significant) == 2  # a on class neg, b on class pos: fixed-sample tests that would read as decisions
    assert all(p.verdict.startswith(SEQUENTIAL_NOMINAL) for p in significant)
    verdict = build_verdict(result)
    assert not any("by slice" in line.text for line in verdict.headline)
    (sliced,) = [line for line in verdict.details if "by slice" in line]
    assert sliced.startswith(SEQUENTIAL_NOMINAL) and "a is better on class neg" in sliced
    (listed,) = [line for line in verdict_lines(result.stats) if "by slice" in line]
    assert listed.startswith(SEQUENTIAL_NOMINAL)
    assert slices_note(result).startswith(SEQUENTIAL_NOMINAL)
    html = (out / "report.html").read_text()
    assert html.count("by slice:") == html.count(SEQUENTIAL_NOMINAL + "a vs b by slice:") >= 1
