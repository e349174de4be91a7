"""Warnings shown to people about a measurement, worded from its numbers.

A speed or training record keeps what was measured (every latency, the host's load before
and after, the time spent waiting for data); whether that deserves a warning — noise that
leaves a speed ratio undecided or drifts, a busy machine, a model starved of data — is decided and worded here, each
time a record is shown, so old and new results are judged by the same rule. Warnings that
engines and adapters record while they run (a label remapping, a refused op) are stored with
the record and shown as they are.
"""

from __future__ import annotations

import re
from collections.abc import Sequence

from headtohead.config.models import family
from headtohead.errors import listing
from headtohead.report.words.missing import why_missing
from headtohead.report.words.numbers import format_duration, format_p, format_percent, format_share
from headtohead.results.answers import AnswersRecord, FailedAnswer
from headtohead.results.files import answers_file
from headtohead.results.records import ModelRecord, QualityMetrics
from headtohead.results.speed import HostLoad, ScenarioRun, SpeedSummary
from headtohead.results.training import TrainingRun
from headtohead.stats.speed_family import noise_checks

__all__ = [
    "budget_warning",
    "isolation_warning",
    "instability_warnings",
    "speed_warnings",
    "stall_warning_text",
    "training_warnings",
    "model_warnings",
    "failure_reasons",
    "no_prediction_words",
    "label_mass_warnings",
    "from_log",
    "BUSY_CPU_PERCENT",
]

#: Other processes' CPU use (percent of one core) above which the machine counts as busy.
BUSY_CPU_PERCENT = 50.0


def isolation_warning(load: HostLoad, *, check_load_average: bool = True) -> str | None:
    """A warning when the machine was busy with other work, else ``None``.

    Parameters
    ----------
    load : HostLoad
    check_load_average : bool
        Also judge the 1-minute load average. Turn off after measuring: this process's
        own work is in it then.

    Examples
    --------
    >>> isolation_warning(HostLoad(cpu_count=2, load_average=[0.1, 0.1, 0.1], other_cpu_percent=3.0))
    """
    reasons = []
    if load.other_cpu_percent is not None and load.other_cpu_percent >= BUSY_CPU_PERCENT:
        named = f" ({', '.join(load.busy_processes)})" if load.busy_processes else ""
        reasons.append(f"other processes used {load.other_cpu_percent:.0f} % CPU{named}")
    if check_load_average and load.load_average and load.cpu_count and load.load_average[0] > load.cpu_count:
        reasons.append(f"the 1-minute load average is {load.load_average[0]:.1f} on {load.cpu_count} CPUs")
    if not reasons:
        return None
    return (
        "; ".join(reasons) + " — speed results are only comparable under the same conditions; close other "
        "programs or re-run on an idle machine"
    )


def instability_warnings(summary: SpeedSummary) -> list[str]:
    """Warnings where the noise threatens a conclusion; none for noise the verdict survived.

    The rules (:mod:`headtohead.stats.speed_family`, ``docs/speed.md``): a pair left undecided
    whose ratio interval is wider than ±10 % (or ``speed.target_ci_halfwidth``); a tested trend
    of a pair's per-round ratio of 5 % or more over the rounds; a tested trend of the machine's
    level (every model together) of 10 % or more. Both trend tests are Holm-adjusted over the
    run's drift tests at α = 1 − ``speed.confidence``. Repeat noise alone is shown as a number in
    the speed table, never as a warning.
    """
    checks = noise_checks(summary)

    def tested(p: float, adjusted: float) -> str:
        if checks.n_drift_tests > 1:
            return f"trend test p {format_p(p)}, Holm p {format_p(adjusted)} over {checks.n_drift_tests} drift tests"
        return f"trend test p {format_p(p)}"

    noise: dict[tuple[str, str], float] = {
        (m.name, t.scenario): t.repeat_noise
        for m in summary.models
        for t in (m.offline, m.single_stream)
        if t is not None
    }
    out, pct, limit = [], format_percent, format_percent(checks.limit)
    for r in checks.ratios:
        a, b, level = r.model_a, r.model_b, f"{100 * r.confidence:g} %"
        if r.too_wide:
            repeats = ", ".join(
                f"{name} {pct(noise[(name, r.scenario)])}" for name in (a, b) if (name, r.scenario) in noise
            )
            out.append(
                f"{r.scenario}: {a} vs {b} is undecided — time ratio {a}/{b} {r.ratio:.2f}, {level} CI "
                f"{r.low:.2f}–{r.high:.2f} (±{pct(r.halfwidth)}, wider than ±{limit}) over {r.n_rounds} "
                f"rounds: too noisy to tell whether they differ by {limit} (repeat noise {repeats}); about "
                f"{r.rounds_needed} rounds would narrow it to ±{limit} (speed.rounds), or quiet the machine "
                f"(close other programs, set num_threads)"
            )
        if r.drifted:
            sign = "+" if r.drift > 0 else "\u2212"
            out.append(
                f"{r.scenario}: the time ratio {a}/{b} drifted {sign}{pct(abs(r.drift))} from the first to "
                f"the last of {r.n_rounds} rounds ({tested(r.drift_p, r.drift_p_adjusted)}): the ratio "
                f"depends on when the measurement stopped — a warm-up that had not finished (raise "
                f"warmup_seconds), throttling or a job that started part-way; re-run on a quiet machine"
            )
    for lv in checks.levels:
        if lv.drifted:
            rose = "rose" if lv.change > 0 else "fell"
            out.append(
                f"{lv.scenario}: the latency drifted — the models' mean latency {rose} {pct(abs(lv.change))} "
                f"from the first to the last of {lv.n_rounds} rounds ({tested(lv.p_value, lv.p_adjusted)}): "
                f"throttling, or another job; a drift the models share cancels in the ratios, but the "
                f"latencies and throughputs shown are averages over it"
            )
    return out


def speed_warnings(summary: SpeedSummary) -> list[str]:
    """Every warning about a speed measurement: the host's load, the stored ones, noise that threatens a ratio.

    Each appears once (results written by older versions stored some of them).
    """
    derived = []
    if (before := isolation_warning(summary.host_before)) is not None:
        derived.append(f"before measuring: {before}")
    if (after := isolation_warning(summary.host_after, check_load_average=False)) is not None:
        derived.append(f"after measuring: {after}")
    derived += [w for w in map(budget_warning, summary.scenarios) if w is not None]
    stored = list(summary.warnings) + [w for m in summary.models for w in m.warnings]
    return list(dict.fromkeys(derived + stored + instability_warnings(summary)))


def budget_warning(run: ScenarioRun) -> str | None:
    """The warning of a scenario whose budget ran out before every ratio was decided (results of version 9 on).

    Results of version 8 and older stored their own (``speed.max_seconds``) in ``SpeedSummary.warnings``.

    Examples
    --------
    ``offline: the speed budget of 1.0 s (the quality pass took 0.1 s) was spent before every ratio was
    decided — 1 of 1 undecided; raise speed.budget or speed.budget_floor_seconds for more rounds, or quiet
    the machine``
    """
    if run.stop_reason != "time_budget" or run.budget_s is None:
        return None
    took = f" (the quality pass took {format_duration(run.quality_s)})" if run.quality_s is not None else ""
    undecided = sum(c.settled is None for c in run.comparisons)
    return (
        f"{run.scenario}: the speed budget of {format_duration(run.budget_s)}{took} was spent before every ratio "
        f"was decided — {undecided} of {len(run.comparisons)} undecided; raise "
        f"speed.budget or speed.budget_floor_seconds for more rounds, or quiet the machine"
    )


def stall_warning_text(model: str, fraction: float) -> str:
    """The data-stall warning shown to users, e.g. for 38 % waiting.

    Examples
    --------
    >>> stall_warning_text("bert", 0.38)  # doctest: +ELLIPSIS
    "model 'bert': the model waits for data 38 % of the time — raise train.num_workers ..."
    """
    return (
        f"model '{model}': the model waits for data {fraction * 100:.0f} % of the time — raise "
        f"train.num_workers / pre-tokenise or shrink the preprocessing, or the samples/s measure the "
        f"data pipeline rather than the hardware"
    )


def training_warnings(run: TrainingRun, stall_threshold: float) -> list[str]:
    """The warnings of one training: those recorded while it ran, and a data stall over ``stall_threshold``."""
    derived = []
    fraction = run.steps.data_wait_fraction
    if fraction is not None and fraction > stall_threshold:
        derived.append(stall_warning_text(run.model, fraction))
    return list(dict.fromkeys(list(run.warnings) + derived))


#: How a model given as objects in memory (``headtohead.compare``) is named in ``source``.
IN_MEMORY = "<in memory"


def from_log(record: ModelRecord) -> bool:
    """Whether the model's outputs are another harness's log (``kind: lm-eval``, ``kind: inspect``)."""
    try:
        return family(record.kind).holds_data
    except KeyError:  # a kind this version does not know (a newer file): not a log it can say so of
        return False


def _named(quality: QualityMetrics) -> str:
    """The examples without a prediction, by their ids where the data has them (else dataset rows, from 0): the
    first ones, ``…`` when there are more."""
    more = " …" if quality.n_failed > len(quality.failed_examples) else ""
    if quality.failed_ids:
        return f"ids {listing(quality.failed_ids)}{more}"
    return f"dataset rows {listing(quality.failed_examples)}{more}"


def _no_prediction_warnings(record: ModelRecord, quality: QualityMetrics) -> list[str]:
    """Examples without a prediction: NaN scores of a model run here; an LLM's unusable answers, or missing ones.

    An LLM's (any family's: its record has ``answers``) are worded from its answers: those that could
    not be read as a label, those that failed for the example, those the transport lost; never as NaN
    scores unless its label scores were NaN. A model whose outputs were given is worded for what it
    is: a prediction file, predictions given to ``compare()``, a harness's log.
    """
    failed = quality.n_failed
    total = quality.n_examples if quality.failures_counted else quality.n_examples + failed
    treated = (
        f"each counts as a wrong answer (accuracy on the answered rows only: {100 * quality.answered.accuracy:.1f} %)"
        if quality.failures_counted and quality.answered
        else "each counts as a wrong answer"
        if quality.failures_counted
        else "these version-3 results left them out of its metrics"
    )
    answers = record.answers
    if answers is not None:
        return _llm_failure_warnings(record, answers, total, treated)
    share, named = f"{failed / total:.1%}", _named(quality)
    if from_log(record):
        said = f"model '{record.name}' has no answer in its log for {failed} of {total} examples ({share}; {named})"
        return [f"{said}: {treated}"]
    if record.outputs == "stored" and record.source.startswith(IN_MEMORY):
        why = "the predictions given to compare() mark them failed, by an empty label or NaN probabilities"
    elif record.outputs == "stored":
        why = (
            "its prediction file marks them failed, by an empty prediction, a true 'failed' column or NaN probabilities"
        )
    else:
        why = "NaN or infinite scores"
    said = f"model '{record.name}' gave no prediction for {failed} of {total} examples ({share}; {named}: {why})"
    check = (
        "" if record.outputs == "stored" else "; check its weights and precision (an fp16 overflow gives such scores)"
    )
    return [f"{said}: {treated}{check}"]


def _llm_failure_warnings(record: ModelRecord, answers: AnswersRecord, total: int, treated: str) -> list[str]:
    """An LLM's examples without a prediction: answers not read as a label, failures of the example, missing ones.

    The unparseable answers are counted among the answers that came back (``8 of 22 answers``), not
    among every example; a refusal is said with the server's own reason, once per kind (:func:`failure_reasons`);
    a harness's log (Inspect's) is worded as what its log says.
    """
    said = []
    logged = from_log(record)
    if answers.n_unparseable:
        n, came = answers.n_unparseable, answers.examples - answers.n_failed
        if logged:
            of = f"{n} of {came} answers" if came == total else f"{n} of the {came} answers"
            said.append(
                f"model '{record.name}': {of} in its log could not be read by the log's scorer (see "
                f"{answers_file(record.name)}; {format_share(n / came)}): {treated}; read them in the report"
            )
        else:
            of = f"{n} of {came} answers" if came == total else f"{n} of the {came} answers that came back"
            said.append(
                f"model '{record.name}': {of} could not be read as a label (see {answers_file(record.name)}; "
                f"{format_share(n / came)}): {treated}; read them in the report, and check the prompt and max_tokens"
            )
    own = answers.n_failed - answers.n_missing
    if own:
        reasons = failure_reasons(_own_failures(answers))
        if logged:
            said.append(
                f"model '{record.name}' has no answer in its log for {own} of {total} examples "
                f"({format_share(own / total)}: {reasons}): {treated}"
            )
        elif answers.endpoint is not None:
            said.append(
                f"model '{record.name}': {own} of {total} examples ({format_share(own / total)}) were refused by the "
                f"server ({reasons}), each request for its example: {treated}"
            )
        else:
            said.append(
                f"model '{record.name}' gave no prediction for {own} of {total} examples ({format_share(own / total)}: "
                f"{reasons}): {treated}; check its weights and precision (an fp16 overflow gives such scores)"
            )
    if answers.n_missing:
        said.append(
            f"model '{record.name}' never answered {answers.n_missing} of {total} examples "
            f"({why_missing(record)}, after every retry): missing data, not wrong answers; no verdict involves "
            f"it until they are asked again (--resume), unless --allow-missing"
        )
    return said


def _own_failures(answers: AnswersRecord) -> list[FailedAnswer]:
    """The kept failures that are the example's own (a refused request, NaN scores), not the transport's."""
    missing = set(answers.missing)
    return [f for f in answers.failed if f.index not in missing]


_HTTP_STATUS = re.compile(r"^(HTTP \d{3}): ?(.*)$", re.DOTALL)


def failure_reasons(failures: Sequence[FailedAnswer]) -> str:
    """Why examples got no answer, each kind once: an HTTP status with the first refusal's reason (the server's words,
    the message a person needs), counted when there are several kinds.

    Examples
    --------
    >>> pinned = "HTTP 400: Server is pinned to 'smol'; requested 'gpt'."
    >>> failure_reasons([FailedAnswer(index=i, reason=pinned) for i in range(10)])
    "HTTP 400: Server is pinned to 'smol'; requested 'gpt'."
    >>> failure_reasons([FailedAnswer(index=0, reason="HTTP 400: prompt has 5000 tokens"),
    ...                  FailedAnswer(index=1, reason="HTTP 400: prompt has 6000 tokens"),
    ...                  FailedAnswer(index=2, reason="HTTP 413: too large")])
    'HTTP 400 ×2, the first: prompt has 5000 tokens; HTTP 413 ×1: too large'
    >>> failure_reasons([FailedAnswer(index=0, reason="NaN or infinite label scores")] * 3)
    'NaN or infinite label scores'
    """
    groups: dict[str, list[str]] = {}
    for f in failures:
        status = _HTTP_STATUS.match(f.reason)
        groups.setdefault(status.group(1) if status else f.reason, []).append(f.reason)
    parts = []
    for kind, reasons in groups.items():
        lead = kind + (f" ×{len(reasons)}" if len(groups) > 1 else "")
        status = _HTTP_STATUS.match(reasons[0])
        if status is None or not status.group(2):
            parts.append(lead)
            continue
        first = ", the first" if len(set(reasons)) > 1 else ""
        parts.append(f"{lead}{first}: {status.group(2)}")
    return "; ".join(parts) if parts else "no answer"


def no_prediction_words(record: ModelRecord) -> str | None:
    """Why an LLM has no prediction for any example, from its answers (``None``: not an LLM, or nothing to say).

    The run cannot judge such a model; this is the one line that says so, with the server's reason for
    a refusal (``10 of 10 examples were refused by the server (HTTP 400: Server is pinned to …)``), the
    answers that could not be read, the examples the transport lost — never NaN scores unless they were.
    """
    answers = record.answers
    if answers is None or not answers.examples:
        return None
    said = []
    came = answers.examples - answers.n_failed
    if answers.n_unparseable:
        said.append(
            f"{answers.n_unparseable} of {came} answers could not be read as a label (see {answers_file(record.name)}); "
            f"check the prompt and max_tokens"
        )
    own = answers.n_failed - answers.n_missing
    if own and answers.endpoint is not None:
        said.append(
            f"{own} of {answers.examples} examples were refused by the server ({failure_reasons(_own_failures(answers))}); "
            f"check source (the model name the server expects) and the request's fields (extra_body, max_tokens)"
        )
    elif own:
        said.append(
            f"{own} of {answers.examples} examples gave no answer ({failure_reasons(_own_failures(answers))}); check its "
            f"weights and precision (an fp16 overflow gives such scores)"
        )
    if answers.n_missing:
        said.append(f"{answers.n_missing} of {answers.examples} examples were never answered ({why_missing(record)})")
    if not said:
        return None
    return f"model '{record.name}' has no prediction for any example: {'; '.join(said)}"


def label_mass_warnings(record: ModelRecord) -> list[str]:
    """A warning when an LLM scoring its labels gave them little of the probability after the prompt: its median
    label mass below ``min_label_mass`` (the labels' probabilities are then a choice it would rarely make)."""
    answers = record.answers
    if (
        answers is None
        or answers.probabilities != "label log-likelihood"
        or answers.label_mass_median is None
        or answers.min_label_mass is None
        or not answers.n_label_mass
        or answers.label_mass_median >= answers.min_label_mass
    ):
        return []
    below, n = answers.n_label_mass_below, answers.n_label_mass
    warning = (
        f"model '{record.name}': its labels held a median {format_share(answers.label_mass_median)} of the "
        f"probability after the prompt (less than {format_share(answers.min_label_mass, 0)} on {below} of {n} "
        f"examples; each one's label mass in {answers_file(record.name)}): the prompt does not make the model "
        f"answer with a label, so its class probabilities compare labels it would rarely say; end the prompt "
        f"where the label begins, show few-shot examples, or ask an instruction-tuned model"
    )
    return [warning]


def model_warnings(record: ModelRecord) -> list[str]:
    """Every warning about one model's quality pass: those stored while it ran, and those its numbers call for.

    Worded here from the record: examples without a prediction (counted as wrong), classes
    the model knows that the data does not hold (and its predictions of them), and batches
    run in pieces after the device ran out of memory. Each appears once. A model measured several
    ways: each pass's, named by the pass (``llm@p2``).
    """
    if record.passes:
        return list(dict.fromkeys(w for p in record.passes for w in model_warnings(record.pass_record(p.key))))
    derived = []
    quality = record.quality
    if quality is not None and quality.n_failed:
        derived.extend(_no_prediction_warnings(record, quality))
    derived.extend(label_mass_warnings(record))
    if record.labels_outside_data:
        present = len(record.label_columns or [])
        predicted = quality.predicted_outside if quality is not None else 0
        errors = (
            f"; its {predicted} prediction(s) of them count as errors"
            if predicted
            else "; it never predicted one of them"
        )
        derived.append(
            f"model '{record.name}' knows {present + len(record.labels_outside_data)} classes, "
            f"{len(record.labels_outside_data)} of which never occur in this data "
            f"({listing(record.labels_outside_data, quote=True)}): precision and F1 average over the "
            f"data's {present} classes{errors}"
        )
    if record.batch_backoff:
        first, last = record.batch_backoff[0], record.batch_backoff[-1]
        derived.append(
            f"model '{record.name}' ran out of device memory on batch {first.batch + 1} "
            f"({first.batch_size} examples, {first.error}): from there on, batches ran in consecutive "
            f"pieces of at most {last.sub_batch_size} examples (same examples, same order, the same plan "
            f"as the other models; scores may differ from a whole batch by floating-point rounding)"
        )
    return list(dict.fromkeys(list(record.warnings) + derived))
