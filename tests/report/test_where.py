"""The report's "where they differ" sections: slices, slice verdicts after Holm, disagreeing examples."""

from __future__ import annotations

import pytest
from sim.sample import sample_run

from headtohead.report.rows.where import SHOWN, disagreement_blocks, slice_table
from headtohead.report.words.slices import slice_phrase
from headtohead.report.write import render_html, render_markdown


@pytest.fixture(scope="module")
def run():
    texts = [f"sentence number {i} " + "word " * (i % 40) for i in range(1500)]
    return sample_run({"weak": 0.75, "strong": 0.9}, n_examples=1500, n_resamples=200, speed=False, texts=texts)


def test_both_directions_listed_by_confidence_gap_with_the_inputs(run):
    result, predictions = run
    found = result.stats.disagreements[0]
    assert found.n_only_a_right > SHOWN and found.n_only_b_right > SHOWN  # more than shown: the first SHOWN
    blocks = disagreement_blocks(result)
    assert len(blocks) == 2 and all(len(b.rows) == SHOWN for b in blocks)
    for rows in (found.only_a_right, found.only_b_right):
        gaps = [r.confidence_gap for r in rows]
        assert gaps == sorted(gaps, reverse=True)
    html = render_html(result, predictions=predictions)
    markdown, _ = render_markdown(result, predictions=predictions)
    for row in (found.only_a_right[0], found.only_b_right[0], found.only_b_right[SHOWN - 1]):
        assert row.input.strip() in html and row.input.strip() in markdown


def test_slices_table_and_verdict_name_only_slices_significant_after_holm():
    texts = [f"sentence number {i} " + "word " * (i % 40) for i in range(1500)]
    result, predictions = sample_run(
        {"weak": 0.87, "strong": 0.9}, n_examples=1500, n_resamples=200, speed=False, texts=texts
    )
    slices = result.stats.slices
    assert len(slice_table(result)[1]) == len(slices.slices) and {s.kind for s in slices.slices} == {"class", "size"}
    pairs = [(found, pair) for found in slices.slices for pair in found.pairs]
    significant = [(f, p) for f, p in pairs if p.significant]
    # this simulation: a few slices survive Holm, others have raw p < 0.05 but do not
    assert 0 < len(significant) < len(pairs) and all(p.p_adjusted <= slices.alpha for _, p in significant)
    assert any(p.p_value < 0.05 for _, p in pairs if not p.significant)
    html = render_html(result, predictions=predictions)
    line = next(x for x in html.split("\n") if "by slice:" in x)
    for found, pair in pairs:
        assert (f"{slice_phrase(found, slices)} (" in line) == pair.significant
        assert bool(pair.verdict) == pair.significant
        assert pair.winner == ("strong" if pair.significant else None)
