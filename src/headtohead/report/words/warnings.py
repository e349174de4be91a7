"""Warnings shown to people about a measurement, worded from its numbers.

A speed or training record keeps what was measured (every latency, the host's load before
and after, the time spent waiting for data); whether that deserves a warning — noise that
leaves a speed ratio undecided or drifts, a busy machine, a model starved of data — is decided and worded here, each
time a record is shown, so old and new results are judged by the same rule. Warnings that
engines and adapters record while they run (a label remapping, a refused op) are stored with
the record and shown as they are.
"""

from __future__ import annotations

from collections import Counter

from headtohead.config.models import family
from headtohead.errors import listing
from headtohead.report.words.missing import why_missing
from headtohead.report.words.numbers import format_p, format_percent
from headtohead.results.answers import AnswersRecord
from headtohead.results.files import answers_file
from headtohead.results.records import ModelRecord, QualityMetrics
from headtohead.results.speed import HostLoad, SpeedSummary
from headtohead.results.training import TrainingRun
from headtohead.stats.speed_family import noise_checks

__all__ = [
    "isolation_warning",
    "instability_warnings",
    "speed_warnings",
    "stall_warning_text",
    "training_warnings",
    "model_warnings",
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
    stored = list(summary.warnings) + [w for m in summary.models for w in m.warnings]
    return list(dict.fromkeys(derived + stored + instability_warnings(summary)))


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

    The unparseable ones are counted among the answers that came back (not among the examples asked);
    a harness's log (Inspect's) is worded as what its log says.
    """
    said = []
    logged = from_log(record)
    if answers.n_unparseable:
        n, came = answers.n_unparseable, answers.examples - answers.n_failed
        if logged:
            said.append(
                f"model '{record.name}': {n} of the {came} answers in its log could not be read by the log's scorer "
                f"(see {answers_file(record.name)}; {n / total:.1%} of the examples): {treated}; read them in "
                f"the report"
            )
        else:
            said.append(
                f"model '{record.name}': {n} of {came} answers could not be read as a label (see "
                f"{answers_file(record.name)}; {n / total:.1%} of the examples): {treated}; read them in the "
                f"report, and check the prompt and max_tokens"
            )
    missing = set(answers.missing)
    own = answers.n_failed - answers.n_missing
    if own:
        counted = Counter(f.reason for f in answers.failed if f.index not in missing)
        reasons = ", ".join(f"{why} ×{n}" for why, n in counted.most_common())
        if logged:
            said.append(
                f"model '{record.name}' has no answer in its log for {own} of {total} examples ({own / total:.1%}: "
                f"{reasons}): {treated}"
            )
        elif answers.endpoint is not None:
            said.append(
                f"model '{record.name}' got no answer for {own} of {total} examples ({own / total:.1%}: the server "
                f"refused the request for the example itself: {reasons}): {treated}"
            )
        else:
            said.append(
                f"model '{record.name}' gave no prediction for {own} of {total} examples ({own / total:.1%}: "
                f"{reasons}): {treated}; check its weights and precision (an fp16 overflow gives such scores)"
            )
    if answers.n_missing:
        said.append(
            f"model '{record.name}' never answered {answers.n_missing} of {total} examples "
            f"({why_missing(record)}, after every retry): missing data, not wrong answers; no verdict involves "
            f"it until they are asked again (--resume), unless --allow-missing"
        )
    return said


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
