"""``h2h run --until-decided``: evaluate chunk by chunk and stop once every pair of models is decided.

The examples (or, with ``data.group_column``, whole groups) go in a seeded random order, cut
into chunks; every model evaluates a chunk with the quality pass's machinery, then one
anytime-valid test per pair (:mod:`headtohead.stats.sequential`, at ``stats.alpha / m``:
Bonferroni over the pairs) looks. Every chunk's predictions are kept
(:mod:`~headtohead.pipeline.sequential_store`), so an interrupted run resumes from its last
finished chunk. The order, the stopping rule and what α guarantees: ``docs/statistics.md``,
section 6 ("In a run").
"""

from __future__ import annotations

import dataclasses
import itertools
from collections.abc import Sequence
from dataclasses import dataclass
from pathlib import Path

import numpy as np

from headtohead.adapters import ModelAdapter
from headtohead.adapters.labels import LabelAlignment, align_labels
from headtohead.engines.batching import BatchPlan, plan_batches
from headtohead.engines.evaluate import Evaluation, ProgressCallback, evaluate_model
from headtohead.engines.planning import example_lengths
from headtohead.errors import ConfigError, ModelError
from headtohead.pipeline.model_pass import ModelOutcome, load_model, model_record
from headtohead.pipeline.resume import model_key
from headtohead.pipeline.sequential_store import ChunkResult, ChunkStore, sequential_key
from headtohead.pipeline.setup import RunSetup
from headtohead.results import ModelPredictions
from headtohead.results.files import RESUME_DIR
from headtohead.results.sequential import SequentialRecord
from headtohead.runtime.determinism import recording_refusals, refusal_warning
from headtohead.runtime.faults import (
    RunInterrupted,
    Terminated,
    interrupt_exit_code,
    interrupt_name,
    is_out_of_memory,
)
from headtohead.stats.sequential import SequentialTest, to_record
from headtohead.stats.sequential_groups import GroupedSequentialTest

__all__ = ["SequentialRun", "sequential_order", "grouped_order", "chunk_plans", "pair_alpha", "evaluate_until_decided"]

# Spawn key of the order's random stream: the order depends on the seed alone, not on other draws.
_ORDER_STREAM = 17


@dataclass
class SequentialRun:
    """What :func:`evaluate_until_decided` gives the run.

    Attributes
    ----------
    setup : RunSetup
        The run's setup with ``plan`` cut to the examples used, in the order they were evaluated.
    outcomes : list of ModelOutcome
        Every model's record and predictions on those examples, in experiment order.
    records : list of SequentialRecord
        One per pair, in the order of ``itertools.combinations`` over the experiment's models.
    chunks_resumed : int
        Chunks read back from an interrupted run (``--resume``).
    """

    setup: RunSetup
    outcomes: list[ModelOutcome]
    records: list[SequentialRecord]
    chunks_resumed: int = 0


def sequential_order(n_examples: int, seed: int) -> np.ndarray:
    """The seeded random order of a sequential run: a permutation of ``0..n_examples−1``.

    Examples
    --------
    >>> sorted(sequential_order(5, 42).tolist()), bool((sequential_order(5, 42) == sequential_order(5, 42)).all())
    ([0, 1, 2, 3, 4], True)
    """
    rng = np.random.default_rng(np.random.SeedSequence([seed, _ORDER_STREAM]))
    return rng.permutation(n_examples).astype(np.int64)


def grouped_order(groups: np.ndarray, seed: int) -> tuple[np.ndarray, np.ndarray]:
    """The seeded random order of a grouped sequential run: groups in random order, each group's examples together.

    Returns
    -------
    order : ndarray of int
        Dataset indices.
    starts : ndarray of int
        Position in ``order`` where each group begins (chunks may end only there).

    Examples
    --------
    >>> order, starts = grouped_order(np.array(["u", "v", "u", "w"]), 0)
    >>> sorted(order.tolist()), len(starts)
    ([0, 1, 2, 3], 3)
    """
    rng = np.random.default_rng(np.random.SeedSequence([seed, _ORDER_STREAM]))
    names, codes = np.unique(np.asarray(groups), return_inverse=True)
    codes = codes.reshape(-1)
    rank = rng.permutation(len(names))[codes]  # each group's place in the order
    order = np.lexsort((rng.random(len(codes)), rank))  # by group, and at random inside one
    starts = np.flatnonzero(np.r_[True, np.diff(rank[order]) != 0])
    return order.astype(np.int64), starts


def chunk_plans(
    order: np.ndarray,
    chunk_size: int,
    batch_size: int,
    *,
    lengths: np.ndarray | None = None,
    seed: int = 0,
    starts: np.ndarray | None = None,
) -> list[BatchPlan]:
    """Cut ``order`` into chunks of ``chunk_size`` examples, each a batch plan of its own.

    Parameters
    ----------
    order : ndarray of int
        Dataset indices in the sequential order.
    chunk_size, batch_size : int
        ``chunk_size`` is a multiple of ``batch_size``, so no batch straddles two chunks.
    lengths : ndarray, optional
        One length per dataset example: inside a chunk, examples of similar length share a batch
        (which examples a chunk holds never changes, only the order they are fed in).
    seed : int
        Orders a chunk's batches (see :func:`~headtohead.engines.batching.plan_batches`).
    starts : ndarray of int, optional
        Positions where a chunk may end (the groups' starts, :func:`grouped_order`): each chunk
        then runs to the first such position at or after ``chunk_size`` examples.

    Returns
    -------
    list of BatchPlan
        The last chunk may be shorter.

    Examples
    --------
    >>> [p.order.tolist() for p in chunk_plans(np.array([4, 0, 3, 1, 2]), 2, 1)]
    [[4, 0], [3, 1], [2]]
    """
    plans = []
    cuts = list(range(0, len(order), chunk_size)) if starts is None else _group_cuts(starts, len(order), chunk_size)
    for start, stop in zip(cuts, cuts[1:] + [len(order)], strict=True):
        chunk = np.asarray(order[start:stop], dtype=np.int64)
        if lengths is not None:
            chunk = chunk[plan_batches(len(chunk), batch_size, seed=seed, lengths=lengths[chunk]).order]
        plans.append(BatchPlan(chunk, batch_size))
    return plans


def _group_cuts(starts: np.ndarray, n: int, chunk_size: int) -> list[int]:
    """Chunk starts at group boundaries, each chunk at least ``chunk_size`` examples (the last one fewer)."""
    cuts, boundaries = [0], set(starts.tolist()) | {n}
    for position in sorted(boundaries):
        if position - cuts[-1] >= chunk_size and position < n:
            cuts.append(position)
    return cuts


def pair_alpha(alpha: float, n_models: int) -> float:
    """Each pair's level: ``alpha`` split evenly over the ``n(n−1)/2`` pairs (Bonferroni).

    Examples
    --------
    >>> pair_alpha(0.05, 2), round(pair_alpha(0.05, 3), 6)
    (0.05, 0.016667)
    """
    return alpha / (n_models * (n_models - 1) // 2)


class _Models:
    """The run's models, loaded on first use and kept; each evaluates one chunk at a time."""

    def __init__(self, setup: RunSetup, n_batches: int, progress: ProgressCallback | None) -> None:
        self.setup, self.n_batches, self.progress = setup, n_batches, progress
        self.loaded: dict[str, tuple[ModelAdapter, float, LabelAlignment]] = {}
        self.batches_done: dict[str, int] = {}

    def get(self, name: str) -> tuple[ModelAdapter, float, LabelAlignment]:
        if name not in self.loaded:
            adapter, load_time = load_model(self.setup.experiment.model(name), self.setup.context)
            alignment = align_labels(adapter.label_names, self.setup.dataset.label_names, model=adapter.name)
            if alignment.warning:
                adapter.warn(alignment.warning)
            self.loaded[name] = (adapter, load_time, alignment)
        return self.loaded[name]

    def evaluate(self, name: str, plan: BatchPlan) -> tuple[ModelPredictions, float]:
        """Model ``name``'s predictions on one chunk and the seconds they took."""
        adapter = self.get(name)[0]
        done = self.batches_done.get(name, 0)
        progress = self.progress

        def report(model: str, batches: int, _total: int) -> None:
            if progress is not None:
                progress(model, done + batches, self.n_batches)

        try:
            with recording_refusals(self.setup.deterministic) as refused:
                evaluation = evaluate_model(adapter, self.setup.dataset, plan, progress=report)
        except Exception as exc:
            if is_out_of_memory(exc):
                raise ModelError(
                    f"model '{name}' ran out of memory on {self.setup.context.device} at "
                    f"eval.batch_size={plan.batch_size} ({type(exc).__name__}); lower the batch size "
                    f"(with eval.chunk_size a multiple of it) and run again"
                ) from exc
            raise
        for op in refused:
            adapter.warn(refusal_warning(name, op))
        self.batches_done[name] = done + len(plan)
        return ModelPredictions(evaluation.pred, evaluation.proba), evaluation.seconds

    def outcome(self, name: str, used: RunSetup, chunks: Sequence[ChunkResult]) -> ModelOutcome:
        """Model ``name``'s record and predictions over the chunks used (loaded here if every chunk was resumed)."""
        adapter, load_time, alignment = self.get(name)
        adapter.warnings[:] = list(dict.fromkeys(adapter.warnings))  # each chunk's pass repeats the same warnings
        pred = np.concatenate([c[0][name].pred for c in chunks])
        # a label-only model (stored predictions without probabilities) has none in any chunk
        parts = [p for c in chunks if (p := c[0][name].proba) is not None]
        proba = np.concatenate(parts) if len(parts) == len(chunks) else None
        evaluation = Evaluation(
            pred=pred,
            proba=proba,
            alignment=alignment,
            plan_hash=used.plan.hash(),
            n_batches=len(used.plan),
            seconds=sum(c[1][name] for c in chunks),
        )
        record = model_record(used.experiment.model(name), adapter, load_time, used, evaluation)
        return ModelOutcome(record, ModelPredictions(pred, proba), adapter)


def _chunk_correct(setup: RunSetup, plan: BatchPlan, chunk: ChunkResult) -> dict[str, np.ndarray]:
    truth = setup.dataset.labels[plan.order]
    return {name: model.pred == truth for name, model in chunk[0].items()}


def _check_chunk(chunk_size: int, n_examples: int) -> None:
    if chunk_size >= n_examples:
        raise ConfigError(
            f"eval.chunk_size={chunk_size} is not smaller than the {n_examples} examples to evaluate: "
            f"the sequential test would look only once, at the end; use a smaller chunk (a multiple "
            f"of eval.batch_size) or run without --until-decided"
        )


def _store(setup: RunSetup, out: Path | None) -> ChunkStore | None:
    if out is None:
        return None
    exp, facts = setup.experiment, setup.key_facts()
    keys = [model_key(m, facts, setup.base_dir) for m in exp.models]
    return ChunkStore(out / RESUME_DIR, sequential_key(keys, exp.stats.alpha))


def evaluate_until_decided(
    setup: RunSetup, out: Path | None, *, progress: ProgressCallback | None = None, resume: bool = False
) -> SequentialRun:
    """Evaluate every model chunk by chunk until every pair is decided or the data runs out.

    Parameters
    ----------
    setup : RunSetup
        From :func:`~headtohead.pipeline.setup.prepare_run`; its ``eval.until_decided`` settings apply.
    out : Path or None
        The output folder: chunks are kept under ``<out>/.h2h-resume`` as they finish.
    progress : callable, optional
        ``progress(model_name, batches_done, batches_total)`` over the whole data.
    resume : bool
        Go on from the chunks an interrupted run kept (``--resume``).

    Returns
    -------
    SequentialRun

    Raises
    ------
    ConfigError
        ``eval.chunk_size`` is not smaller than the data.
    ModelError
        A model cannot be loaded, does not fit the data, or ran out of memory.
    RunInterrupted
        SIGINT/SIGTERM arrived; the finished chunks are kept.
    """
    exp, dataset = setup.experiment, setup.dataset
    size, names = exp.eval.sequential_chunk_size, setup.experiment_model_names()
    _check_chunk(size, len(dataset))
    lengths, _ = example_lengths(dataset, exp.models, setup.context)
    groups, pairs = dataset.groups, list(itertools.combinations(names, 2))
    level, margin = pair_alpha(exp.stats.alpha, len(names)), exp.eval.equivalence_margin
    if groups is None:
        order, starts = sequential_order(len(dataset), exp.seed), None
        tests = {pair: SequentialTest(level, margin) for pair in pairs}
    else:
        order, starts = grouped_order(groups, exp.seed)
        largest = int(np.unique(groups, return_counts=True)[1].max())
        tests = {pair: GroupedSequentialTest(level, margin, max_group_size=largest) for pair in pairs}
    plans = chunk_plans(order, size, exp.eval.batch_size, lengths=lengths, seed=exp.seed, starts=starts)
    store = _store(setup, out)
    chunks: list[ChunkResult] = []
    if store is not None and resume:
        chunks = store.load([p.order for p in plans], names, dataset.num_classes)
    elif store is not None:
        store.clear()
    for index, (plan, chunk) in enumerate(zip(plans, chunks, strict=False)):
        if _all_decided(tests):  # kept beyond the decision (it cannot be, but never use more than it needs)
            del chunks[index:]
            break
        _update(tests, _chunk_correct(setup, plan, chunk), groups, plan)
    models = _Models(setup, sum(len(p) for p in plans), progress)
    resumed = len(chunks)
    try:
        while len(chunks) < len(plans) and not _all_decided(tests):
            plan = plans[len(chunks)]
            evaluated = {name: models.evaluate(name, plan) for name in names}
            chunk = ({n: e[0] for n, e in evaluated.items()}, {n: e[1] for n, e in evaluated.items()})
            if store is not None:
                store.save(len(chunks), plan.order, chunk)
            chunks.append(chunk)
            _update(tests, _chunk_correct(setup, plan, chunk), groups, plan)
    except (KeyboardInterrupt, Terminated) as exc:
        done = store.kept() if store is not None else 0  # the signal may have come just after a chunk was written
        kept = (
            (
                f"{done} of {len(plans)} chunks are kept in {store.folder}; run again with --until-decided "
                f"--resume to go on from chunk {done + 1}"
            )
            if store is not None
            else "nothing was saved (no output folder was given)"
        )
        raise RunInterrupted(f"{interrupt_name(exc)}: {kept}", interrupt_exit_code(exc)) from None
    if store is not None:
        store.prune()
    used = _narrowed(setup, plans[: len(chunks)])
    outcomes = [models.outcome(name, used, chunks) for name in names]
    records = [
        to_record(
            tests[(a, b)], model_a=a, model_b=b, chunk_size=size, examples_available=len(dataset), order_seed=exp.seed
        )
        for a, b in pairs
    ]
    return SequentialRun(used, outcomes, records, resumed)


def _update(
    tests: dict[tuple[str, str], SequentialTest],
    correct: dict[str, np.ndarray],
    groups: np.ndarray | None,
    plan: BatchPlan,
) -> None:
    for (a, b), test in tests.items():
        if groups is None:
            test.update(correct[a], correct[b])
        else:
            test.update(correct[a], correct[b], groups[plan.order])  # type: ignore[call-arg]


def _all_decided(tests: dict[tuple[str, str], SequentialTest]) -> bool:
    return all(test.state.decision != "continue" for test in tests.values())


def _narrowed(setup: RunSetup, plans: Sequence[BatchPlan]) -> RunSetup:
    """``setup`` whose plan holds the examples used, in the order evaluated (the data itself is unchanged)."""
    order = np.concatenate([p.order for p in plans])
    used = dataclasses.replace(setup, plan=BatchPlan(order, setup.plan.batch_size))
    if "fingerprint" in vars(setup):  # the data is the same: keep its hash rather than compute it again
        vars(used)["fingerprint"] = setup.fingerprint
    return used
