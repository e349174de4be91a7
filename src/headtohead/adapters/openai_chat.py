"""Any OpenAI-compatible chat-completions endpoint as a model (``kind: openai``).

See ``docs/llm.md``, "LLMs as contenders (`kind: openai`, `kind: causal-lm`)".
"""

from __future__ import annotations

import os
from collections.abc import Callable
from dataclasses import dataclass
from typing import Any, ClassVar

import httpx
import numpy as np

from headtohead.adapters.base import LoadContext, LookedUpAdapter, StoredOutputs
from headtohead.adapters.chat_client import (
    EndpointRefused,
    Exchange,
    PassStats,
    RequestLog,
    ask_all,
    server_reason,
)
from headtohead.adapters.chat_stream import LoadTarget, stream_probe
from headtohead.adapters.prompt_variants import pass_prompt
from headtohead.adapters.prompting import (
    Answer,
    AnswerLog,
    Prompter,
    Reading,
    TokenChoice,
    answers_as_outputs,
    draw_few_shot,
    read_answer,
)
from headtohead.adapters.response_cache import ResponseCache, cache_key, default_cache_path
from headtohead.config.models.openai import OpenAISettings, public_url
from headtohead.config.schema import ModelConfig
from headtohead.data.base import Dataset
from headtohead.errors import ConfigError, ModelError, listing

__all__ = ["OpenAIChatAdapter", "exchange_answer"]

_REACH_TIMEOUT_S = 10.0


class OpenAIChatAdapter(LookedUpAdapter):
    """A chat model behind an OpenAI-compatible endpoint, asked one request per example."""

    kind: ClassVar[str] = "openai"
    no_forward_reason: ClassVar[str] = "is asked over the network, not run here; its answers are looked up by example"

    def __init__(self, config: ModelConfig, context: LoadContext) -> None:
        super().__init__(config, context)
        assert isinstance(config, OpenAISettings)  # the registry builds this adapter for kind: openai only
        self.settings = config
        self._headers: dict[str, str] = {}
        settings, variant = pass_prompt(config, context.pass_index)  # one of several prompts: its own
        self.prompter = Prompter(settings, context.label_names, variant)
        self.cache = ResponseCache(default_cache_path())  # written even with --no-cache: fresh answers replace old
        #: Dataset index → what became of its request (every example asked in this run).
        self.readings: dict[int, Reading] = {}
        #: The requests of each pass (its wall time, retries, HTTP statuses).
        self.passes: list[PassStats] = []
        self._probabilities = False  # see has_probabilities; set by fetch_outputs

    @classmethod
    def load(cls, config: ModelConfig, context: LoadContext) -> OpenAIChatAdapter:
        """Read the key, draw the few-shot examples and check that the server answers."""
        adapter = cls(config, context)
        adapter.label_names = context.label_names
        adapter.device = "endpoint"  # nothing runs on this machine's devices
        adapter._headers = _auth_headers(adapter.settings)
        adapter.prompter.few_shot = draw_few_shot(
            adapter.prompter, context.train, context.seed, adapter.name, adapter.warn
        )
        for warning in _name_warnings(adapter.settings, _listed_models(adapter.settings, adapter._headers)):
            adapter.warn(warning)  # in the model's record too (the run logged it before any model ran)
        return adapter

    @classmethod
    def check_before_run(cls, config: ModelConfig) -> list[str]:
        """The key variable set, the server reachable and the key accepted; a warning if ``source`` is not listed."""
        assert isinstance(config, OpenAISettings)  # the registry builds this adapter for kind: openai only
        return _name_warnings(config, _listed_models(config, _auth_headers(config)))

    def sampling(self) -> dict[str, Any]:
        """The sampling parameters sent with every request (and part of every cache key)."""
        s = self.settings
        params: dict[str, Any] = {"temperature": s.temperature, "max_tokens": s.max_tokens}
        if s.logprobs and s.api == "chat":
            params.update(logprobs=True, top_logprobs=s.top_logprobs)
        elif s.logprobs:  # …/completions takes the number of alternatives as logprobs itself
            params["logprobs"] = s.top_logprobs
        if s.stop:
            params["stop"] = list(s.stop)
        return {**params, **s.extra_body, **self._repeat_seed()}

    def _repeat_seed(self) -> dict[str, Any]:
        """A repeat's own seed (``repeats:``), sent so the server samples afresh and keyed in the cache."""
        return {} if self.context.run_seed is None else {"seed": self.context.run_seed}

    def fetch_outputs(self, dataset: Dataset, indices: np.ndarray, progress: Callable[..., None] | None = None) -> None:
        """Ask the endpoint (or the cache) about every example at ``indices`` not asked yet in this run."""
        wanted = [int(i) for i in indices if int(i) not in self.readings]
        if not wanted:
            return
        if self.settings.answer == "score":
            self._fetch_scores(dataset, wanted, progress)
            return
        sampling = self.sampling()
        prompts: list[Any]
        if self.settings.api == "completions":  # a base model: the conversation as plain text, ending "Answer:"
            prompts = [self.prompter.completion_text(*self._example(dataset, i)) for i in wanted]
            payloads = [{"model": self.config.source, "prompt": t, **sampling} for t in prompts]
            keys = [cache_key(self.settings.base_url, self.config.source, [{"prompt": t}], sampling) for t in prompts]
            exchanges = self._asked(payloads, keys, progress, "completions")
        else:
            prompts = [self.prompter.messages(*self._example(dataset, i)) for i in wanted]
            payloads = [{"model": self.config.source, "messages": m, **sampling} for m in prompts]
            keys = [cache_key(self.settings.base_url, self.config.source, m, sampling) for m in prompts]
            exchanges = self._asked(payloads, keys, progress)
        labels = self.prompter.answers  # the labels as the prompt shows them; index k is the data's label k
        for index, exchange, prompt in zip(wanted, exchanges, prompts, strict=True):
            self.readings[index] = _read(exchange, prompt, labels, self.settings)
        # decided once per fetch, not per batch read: the readings change only here
        self._probabilities = any(r.proba is not None for r in self.readings.values())

    def _example(self, dataset: Dataset, index: int) -> tuple[Any, dict[str, Any]]:
        """Example ``index`` and the columns of it the prompt reads."""
        return dataset.examples[index], self.prompter.example_columns(dataset, index)

    def _asked(
        self, payloads: list[dict[str, Any]], keys: list[str], progress: Any, path: str = "chat/completions"
    ) -> list[Exchange]:
        """The answers to ``payloads`` (from the cache, else asked); the pass of requests is kept."""
        try:
            exchanges, stats = ask_all(
                self.settings.base_url,
                self._headers,
                payloads,
                keys,
                cache=self.cache,
                fresh=not self.context.response_cache,
                progress=progress,
                max_concurrency=self.settings.max_concurrency,
                timeout_s=self.settings.timeout_s,
                max_retries=self.settings.max_retries,
                seed=self.context.seed,
                path=path,
            )
        except EndpointRefused as exc:
            raise ModelError(
                f"model '{self.name}' (kind openai): {self.settings.base_url} answered {exc}; check "
                f"source (the model name the server expects), base_url and the key"
            ) from None
        self.passes.append(stats)
        return exchanges

    def score_sampling(self) -> dict[str, Any]:
        """``answer: score``'s request fields: the prompt echoed with its log-probabilities, one token generated."""
        return {
            "temperature": 0.0,
            "max_tokens": 1,
            "echo": True,
            "logprobs": 1,
            **self.settings.extra_body,
            **self._repeat_seed(),
        }

    def _fetch_scores(self, dataset: Dataset, wanted: list[int], progress: Any) -> None:
        """``answer: score``: each label's log-likelihood after each example's prompt, one request per pair."""
        labels = self.prompter.answers
        contexts = [self.prompter.completion_text(*self._example(dataset, i)) for i in wanted]
        sampling = self.score_sampling()
        prompts = [f"{context} {label}" for context in contexts for label in labels]
        keys = [cache_key(self.settings.base_url, self.config.source, [{"prompt": p}], sampling) for p in prompts]
        payloads = [{"model": self.config.source, "prompt": p, **sampling} for p in prompts]
        exchanges = self._asked(payloads, keys, progress, "completions")
        k = len(labels)
        for n, index in enumerate(wanted):
            self.readings[index] = _scored(exchanges[n * k : (n + 1) * k], contexts[n], labels)
        if any(r.rule == _NO_PROMPT_LOGPROBS for r in self.readings.values()):
            raise ModelError(
                f"model '{self.name}' (kind openai, answer: score): {self.settings.base_url} returned no "
                f"log-probabilities of the prompt (…/completions with echo and logprobs); use answer: generate, "
                f"or a server that returns them (vLLM)"
            )
        self._probabilities = any(r.proba is not None for r in self.readings.values())

    def stored_outputs(self, dataset: Dataset, indices: np.ndarray) -> StoredOutputs:
        """The labels read from the answers at ``indices`` (asked now if not yet), and their probabilities."""
        self.fetch_outputs(dataset, indices)
        rows = [self.readings[int(i)] for i in indices]
        return StoredOutputs(*answers_as_outputs(rows, len(self.context.label_names), self.has_probabilities()))

    def has_probabilities(self) -> bool:
        """Some answered example of this run has class probabilities kept (the others' rows are NaN)."""
        return self._probabilities

    def load_target(self, dataset: Dataset, indices: np.ndarray) -> LoadTarget:
        """This model under load (the capacity scenario): the examples at ``indices`` asked streamed, unscored
        answers read as labels, requests sent straight to the server (never the cache)."""
        sampling = {k: v for k, v in self.sampling().items() if k not in ("logprobs", "top_logprobs")}
        if self.settings.api == "completions":
            payloads = [
                {
                    "model": self.config.source,
                    "prompt": self.prompter.completion_text(*self._example(dataset, int(i))),
                    **sampling,
                }
                for i in indices
            ]
        else:
            payloads = [
                {
                    "model": self.config.source,
                    "messages": self.prompter.messages(*self._example(dataset, int(i))),
                    **sampling,
                }
                for i in indices
            ]
        labels = self.prompter.answers
        base_url, headers, timeout = self.settings.base_url, dict(self._headers), self.settings.timeout_s
        path = "completions" if self.settings.api == "completions" else "chat/completions"
        return LoadTarget(
            name=self.name,
            payloads=payloads,
            gold=[int(dataset.labels[int(i)]) for i in indices],
            read=lambda text: read_answer(text, labels)[0],
            send=lambda sent, offsets, limit: stream_probe(
                base_url, headers, sent, offsets, limit, timeout_s=timeout, path=path
            ),
        )

    def answer_record(self) -> AnswerLog:
        """Every example asked in this run, read as a label, and the passes of requests (for the run's records)."""
        scored = self.settings.answer == "score"
        return AnswerLog(
            model=self.config.source,
            readings=self.readings,
            probabilities=self.has_probabilities(),
            min_label_mass=self.settings.min_label_mass if self.settings.logprobs or scored else None,
            scored=scored,
            requests=RequestLog(
                base_url=public_url(self.settings.base_url),
                passes=self.passes,
                concurrency=self.settings.max_concurrency,
                price=self.settings.price,
            ),
        )


def _auth_headers(settings: OpenAISettings) -> dict[str, str]:
    """The ``Authorization`` header from the variable ``api_key_env`` names (none without it)."""
    if settings.api_key_env is None:
        return {}
    key = os.environ.get(settings.api_key_env, "")
    if not key.strip():
        raise ConfigError(
            f"model '{settings.name}' (kind openai): the environment variable "
            f"{settings.api_key_env} named by api_key_env is not set; export it with the API "
            f"key, or remove api_key_env for a server that needs no key"
        )
    return {"Authorization": f"Bearer {key.strip()}"}


@dataclass(frozen=True)
class _Listing:
    """What ``…/models`` said: the model names it lists, or why they could not be read."""

    #: The names listed (``None``: none could be read; ``why`` says why).
    names: list[str] | None
    #: Why no list could be read (``HTTP 500: …``, a body without the list), or ``None``.
    why: str | None = None


def _listed_models(settings: OpenAISettings, headers: dict[str, str]) -> _Listing:
    """One GET of ``…/models``: the model names the server lists, or why they cannot be read.

    Any HTTP answer means the server is there (some answer this path with an error).
    """
    url = settings.base_url.rstrip("/") + "/models"
    try:
        response = httpx.get(url, headers=headers, timeout=min(_REACH_TIMEOUT_S, settings.timeout_s))
    except httpx.HTTPError as exc:
        raise ModelError(
            f"model '{settings.name}' (kind openai): cannot reach base_url {settings.base_url} "
            f"({_network_reason(exc)}); start the server or correct base_url"
        ) from None
    if response.status_code in (401, 403):
        raise ModelError(
            f"model '{settings.name}' (kind openai): {settings.base_url} refused the key "
            f"(HTTP {response.status_code}); check the key in "
            f"{settings.api_key_env or 'api_key_env (none is set)'}"
        )
    if response.status_code != 200:
        return _Listing(None, f"answered HTTP {response.status_code}: {server_reason(response)}")
    try:
        entries = response.json()["data"]
        if isinstance(entries, list):
            return _Listing([str(entry["id"]) for entry in entries])
    except (ValueError, KeyError, TypeError):
        pass
    return _Listing(None, "answered with no list of models that could be read")


def _name_warnings(settings: OpenAISettings, listed: _Listing) -> list[str]:
    """A warning when ``source`` could not be checked (``…/models`` failed), or is not among the models listed.

    A server that lists none (``transformers serve`` lists its hub cache, often empty) gives no news:
    many servers answer any name.
    """
    where = f"{public_url(settings.base_url)}/models"
    if listed.why is not None:
        unchecked = (
            f"model '{settings.name}' (kind openai): {where} {listed.why}, so the model name "
            f"'{settings.source}' (source) could not be checked against the models the server serves: it is "
            f"unchecked (a name the server does not serve shows as requests it refuses)"
        )
        return [unchecked]
    if not listed.names or settings.source in listed.names:
        return []
    warning = (
        f"model '{settings.name}' (kind openai): {public_url(settings.base_url)} does not list the model "
        f"'{settings.source}' (source) at /models; it lists {listing(listed.names, quote=True)}; a server "
        f"that answers any name answers with the model it serves: check source"
    )
    return [warning]


def exchange_answer(exchange: Exchange, prompt: str | list[dict[str, str]] | None) -> Answer:
    """What came back for ``prompt`` as every LLM family says it (:class:`~headtohead.adapters.prompting.Answer`):
    its text, the tokens the server reported (``None`` where it reported none), its latency, whether
    it came from the cache, and why none came (in transport or not)."""
    usage = exchange.body["usage"] if exchange.body is not None else {}
    return Answer(
        text=None if exchange.body is None else str(exchange.body["content"]),
        prompt=prompt,
        tokens_in=usage.get("prompt_tokens"),
        tokens_out=usage.get("completion_tokens"),
        latency_s=exchange.latency_s,
        from_cache=exchange.from_cache,
        error=exchange.error if exchange.body is None else None,
        missing=exchange.missing,
    )


def _read(exchange: Exchange, prompt: Any, labels: list[str], settings: OpenAISettings) -> Reading:
    """An exchange (asked ``prompt``) as a label, with the probabilities its log-probabilities give (when asked)."""
    body = exchange.body
    positions = _token_choices(body.get("logprobs")) if settings.logprobs and body is not None else None
    return Reading.of(exchange_answer(exchange, prompt), labels, positions, settings.min_label_mass)


#: The rule of an example whose label requests came back without the prompt's log-probabilities.
_NO_PROMPT_LOGPROBS = "no prompt log-probabilities"


def _scored(exchanges: list[Exchange], context: str, labels: list[str]) -> Reading:
    """One example's label requests as a :class:`Reading`: the labels' log-likelihoods, or what failed."""
    failed = next((e for e in exchanges if e.body is None), None)
    if failed is not None:
        return Reading(Answer(prompt=context, error=failed.error, missing=failed.missing), None, None, "no answer")
    joined = _joined(exchanges)
    start = len(context)
    loglik = [_span_loglik(e.body, start, start + 1 + len(label)) for e, label in zip(exchanges, labels, strict=True)]
    if any(value is None for value in loglik):
        return Reading(exchange_answer(joined, context), None, None, _NO_PROMPT_LOGPROBS)
    assert joined.body is not None
    joined.body["content"] = "; ".join(f"{label}: {value:.4f}" for label, value in zip(labels, loglik, strict=True))
    return Reading.of_scores(exchange_answer(joined, context), [float(v) for v in loglik if v is not None])


def _joined(exchanges: list[Exchange]) -> Exchange:
    """An example's requests as one exchange: usage and latencies added, from the cache only if all were."""
    usage = {
        key: None
        if any(e.body is None or e.body["usage"].get(key) is None for e in exchanges)
        else sum(e.body["usage"][key] for e in exchanges if e.body is not None)
        for key in ("prompt_tokens", "completion_tokens")
    }
    latencies = [e.latency_s for e in exchanges]
    return Exchange(
        body={"content": "", "logprobs": None, "usage": usage},
        latency_s=None if any(x is None for x in latencies) else sum(x for x in latencies if x is not None),
        from_cache=all(e.from_cache for e in exchanges),
        tries=sum(e.tries for e in exchanges),
    )


def _span_loglik(body: dict[str, Any] | None, start: int, end: int) -> float | None:
    """The summed log-probability of the echoed tokens overlapping characters ``start:end`` of the prompt
    (a token that merges the prompt's last characters with the label's first counts as the label's);
    ``None`` when the response holds no such log-probabilities."""
    logprobs = body.get("logprobs") if body is not None else None
    if not isinstance(logprobs, dict):
        return None
    try:
        tokens, values, offsets = logprobs["tokens"], logprobs["token_logprobs"], logprobs["text_offset"]
        spans = [(int(o), int(o) + len(str(t)), v) for t, v, o in zip(tokens, values, offsets, strict=True)]
    except (KeyError, TypeError, ValueError):
        return None
    inside = [v for first, last, v in spans if first < end and last > start]
    if not inside or any(v is None for v in inside):
        return None
    return float(sum(float(v) for v in inside))


def _token_choices(content: Any) -> list[TokenChoice] | None:
    """The ``logprobs.content`` list of a response as :class:`TokenChoice` (``None`` when absent or malformed)."""
    if isinstance(content, dict):
        return _legacy_choices(content)
    if not isinstance(content, list) or not content:
        return None
    try:
        return [
            TokenChoice(
                str(item["token"]),
                float(item["logprob"]),
                tuple((str(alt["token"]), float(alt["logprob"])) for alt in item.get("top_logprobs") or [])
                or ((str(item["token"]), float(item["logprob"])),),
            )
            for item in content[:8]
        ]
    except (KeyError, TypeError, ValueError):
        return None


def _legacy_choices(logprobs: dict[str, Any]) -> list[TokenChoice] | None:
    """A (legacy) completions ``logprobs`` object — ``tokens``, ``token_logprobs``, ``top_logprobs`` (a
    ``{token: logprob}`` per position) — as :class:`TokenChoice` (``None`` when absent or malformed)."""
    try:
        tokens, values = list(logprobs["tokens"]), list(logprobs["token_logprobs"])
        tops = list(logprobs.get("top_logprobs") or [None] * len(tokens))
        return [
            TokenChoice(
                str(token),
                float(value),
                tuple((str(t), float(v)) for t, v in (top or {}).items()) or ((str(token), float(value)),),
            )
            for token, value, top in list(zip(tokens, values, tops, strict=True))[:8]
        ] or None
    except (KeyError, TypeError, ValueError, AttributeError):
        return None


def _network_reason(exc: httpx.HTTPError) -> str:
    """Why a connection failed, in a few words (an httpx message never holds the request's headers)."""
    if isinstance(exc, httpx.TimeoutException):
        return "no answer in time"
    if isinstance(exc, httpx.ConnectError):
        return "connection refused" if "refused" in str(exc).lower() else f"cannot connect: {exc}"
    return f"{type(exc).__name__}: {exc}"
