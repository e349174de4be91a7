"""Any OpenAI-compatible chat-completions endpoint as a model (``kind: openai``).

::

    - {name: llm, kind: openai, source: qwen2.5-7b-instruct, base_url: http://127.0.0.1:8000/v1,
       api_key_env: OPENAI_API_KEY, few_shot: 2, max_concurrency: 8,
       price: {input_per_1m: 0.15, output_per_1m: 0.60}}

vLLM, llama.cpp's server, Ollama, TGI, ``transformers serve`` and hosted APIs speak this
protocol. Each example becomes one request: the system prompt, ``few_shot`` examples per class
from ``data.train`` (drawn with the run's seed, in a seeded order) as user/assistant turns, and
the example's own prompt (the template's ``{text}`` and ``{labels}`` filled in). The answer is
read as a label (:mod:`~headtohead.adapters.prompting`); an unparseable answer, like a request
that failed after its retries, leaves the example without a prediction — a wrong answer in
every statistic — and is kept with its raw text for the report. Class probabilities come from
the answer's log-probabilities when the server returns them for every answered example;
otherwise the model is label-only and its calibration is *not available*.

The model has no forward pass to time here: the quality pass asks all its examples at once
(:meth:`OpenAIChatAdapter.fetch_outputs`, ``feeds = "ids"``) with bounded concurrency, and
what the requests cost and took (latency per request, tokens, cache hits) is kept in
:attr:`OpenAIChatAdapter.exchanges` for the run's records (:mod:`headtohead.engines.endpoint`).
Answers are cached on disk (:mod:`~headtohead.adapters.response_cache`).

The API key is read from the environment variable named by ``api_key_env`` when the model
loads, kept in memory only, and sent only in the ``Authorization`` header.
"""

from __future__ import annotations

import os
from collections.abc import Callable
from typing import Any, ClassVar

import httpx
import numpy as np

from headtohead.adapters.prompting import LabelMass, TokenChoice, label_probabilities, parse_answer
from headtohead.adapters.base import LoadContext, LookedUpAdapter, StoredOutputs
from headtohead.adapters.chat_client import EndpointRefused, Exchange, PassStats, ask_all
from headtohead.adapters.response_cache import ResponseCache, cache_key, default_cache_path
from headtohead.config.models.openai import OpenAISettings
from headtohead.config.schema import ModelConfig
from headtohead.data.base import Dataset
from headtohead.errors import ConfigError, ModelError

__all__ = ["OpenAIChatAdapter", "Reading"]

NO_PREDICTION = -1  # results.predictions.NO_PREDICTION (adapters come before results)
_REACH_TIMEOUT_S = 10.0


class Reading:
    """One example's exchange read as a label: the prediction (or ``None``) and the probabilities."""

    __slots__ = ("exchange", "pred", "mass")

    def __init__(self, exchange: Exchange, pred: int | None, mass: LabelMass | None) -> None:
        self.exchange, self.pred, self.mass = exchange, pred, mass

    @property
    def unparseable(self) -> bool:
        """An answer came back but names no label (or several)."""
        return self.exchange.body is not None and self.pred is None


class OpenAIChatAdapter(LookedUpAdapter):
    """A chat model behind an OpenAI-compatible endpoint, asked one request per example."""

    kind: ClassVar[str] = "openai"
    no_forward_reason: ClassVar[str] = "is asked over the network, not run here; its answers are looked up by example"

    def __init__(self, config: ModelConfig, context: LoadContext) -> None:
        super().__init__(config, context)
        assert isinstance(config, OpenAISettings)  # the registry builds this adapter for kind: openai only
        self.settings = config
        self._headers: dict[str, str] = {}
        self.few_shot_messages: list[dict[str, str]] = []
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
        settings = adapter.settings
        if settings.api_key_env is not None:
            key = os.environ.get(settings.api_key_env, "")
            if not key.strip():
                raise ConfigError(
                    f"model '{config.name}' (kind openai): the environment variable "
                    f"{settings.api_key_env} named by api_key_env is not set; export it with the API "
                    f"key, or remove api_key_env for a server that needs no key"
                )
            adapter._headers = {"Authorization": f"Bearer {key.strip()}"}
        adapter.few_shot_messages = adapter._few_shot(context)
        adapter._check_reachable()
        return adapter

    def _few_shot(self, context: LoadContext) -> list[dict[str, str]]:
        """``few_shot`` examples of each class from the training data, as user/assistant turns, seeded."""
        k = self.settings.few_shot
        if not k:
            return []
        train = context.train
        if train is None or not len(train):
            raise ConfigError(
                f"model '{self.name}' asks for few_shot: {k} examples per class but the experiment has "
                f"no training data; set data.train (or data.split), or few_shot: 0"
            )
        rng = np.random.default_rng(context.seed)
        labels = list(context.label_names)
        chosen: list[int] = []
        for name in labels:
            if name not in train.label_names:
                continue
            pool = np.flatnonzero(train.labels == list(train.label_names).index(name))
            if len(pool) < k:
                self.warn(f"few_shot: {k} but data.train has {len(pool)} example(s) of class '{name}'; all are shown")
            chosen.extend(rng.choice(pool, size=min(k, len(pool)), replace=False).tolist())
        messages = []
        for i in rng.permutation(len(chosen)):
            index = chosen[int(i)]
            messages.append({"role": "user", "content": self._prompt(train.examples[index])})
            messages.append({"role": "assistant", "content": str(train.label_names[int(train.labels[index])])})
        return messages

    def _check_reachable(self) -> None:
        """One GET of ``…/models``: any HTTP answer means the server is there (some answer it with an error)."""
        url = self.settings.base_url.rstrip("/") + "/models"
        try:
            response = httpx.get(url, headers=self._headers, timeout=min(_REACH_TIMEOUT_S, self.settings.timeout_s))
        except httpx.HTTPError as exc:
            raise ModelError(
                f"model '{self.name}' (kind openai): cannot reach base_url {self.settings.base_url} "
                f"({_network_reason(exc)}); start the server or correct base_url"
            ) from None
        if response.status_code in (401, 403):
            raise ModelError(
                f"model '{self.name}' (kind openai): {self.settings.base_url} refused the key "
                f"(HTTP {response.status_code}); check the key in "
                f"{self.settings.api_key_env or 'api_key_env (none is set)'}"
            )

    def _prompt(self, example: Any) -> str:
        text = "\n".join(str(part) for part in example) if isinstance(example, (tuple, list)) else str(example)
        labels = ", ".join(str(name) for name in self.context.label_names)
        return self.settings.prompt.format(text=text, labels=labels)

    def messages(self, example: Any) -> list[dict[str, str]]:
        """The whole conversation sent for ``example``: system prompt, few-shot turns, its prompt."""
        system = [{"role": "system", "content": self.settings.system_prompt}] if self.settings.system_prompt else []
        return [*system, *self.few_shot_messages, {"role": "user", "content": self._prompt(example)}]

    def sampling(self) -> dict[str, Any]:
        """The sampling parameters sent with every request (and part of every cache key)."""
        s = self.settings
        params: dict[str, Any] = {"temperature": s.temperature, "max_tokens": s.max_tokens}
        if s.logprobs:
            params.update(logprobs=True, top_logprobs=s.top_logprobs)
        return params

    def fetch_outputs(self, dataset: Dataset, indices: np.ndarray, progress: Callable[..., None] | None = None) -> None:
        """Ask the endpoint (or the cache) about every example at ``indices`` not asked yet in this run."""
        wanted = [int(i) for i in indices if int(i) not in self.readings]
        if not wanted:
            return
        sampling = self.sampling()
        conversations = [self.messages(dataset.examples[i]) for i in wanted]
        payloads = [{"model": self.config.source, "messages": m, **sampling} for m in conversations]
        keys = [cache_key(self.settings.base_url, self.config.source, m, sampling) for m in conversations]
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
            )
        except EndpointRefused as exc:
            raise ModelError(
                f"model '{self.name}' (kind openai): {self.settings.base_url} answered {exc}; check "
                f"source (the model name the server expects), base_url and the key"
            ) from None
        self.passes.append(stats)
        labels = list(self.context.label_names)
        for index, exchange in zip(wanted, exchanges, strict=True):
            self.readings[index] = _read(exchange, labels, self.settings.logprobs)
        # decided once per fetch, not per batch read: the readings change only here
        answered = [r for r in self.readings.values() if r.pred is not None]
        self._probabilities = bool(answered) and all(r.mass is not None and r.mass.proba is not None for r in answered)

    def stored_outputs(self, dataset: Dataset, indices: np.ndarray) -> StoredOutputs:
        """The labels read from the answers at ``indices`` (asked now if not yet), and their probabilities."""
        self.fetch_outputs(dataset, indices)
        rows = [self.readings[int(i)] for i in indices]
        pred = np.array([NO_PREDICTION if r.pred is None else r.pred for r in rows], dtype=np.int64)
        if not self.has_probabilities():
            return StoredOutputs(pred)
        k = len(self.context.label_names)
        proba = np.full((len(rows), k), np.nan, dtype=np.float32)
        for row, reading in enumerate(rows):
            if reading.pred is not None and reading.mass is not None:
                proba[row] = reading.mass.proba
        return StoredOutputs(pred, proba)

    def has_probabilities(self) -> bool:
        """Every answered example of this run came with log-probabilities naming a label."""
        return self._probabilities


def _read(exchange: Exchange, labels: list[str], logprobs: bool) -> Reading:
    """An exchange as a label (``None``: no answer or an unparseable one) and its label probabilities."""
    if exchange.body is None:
        return Reading(exchange, None, None)
    pred = parse_answer(exchange.body["content"], labels)
    positions = _token_choices(exchange.body.get("logprobs")) if logprobs else None
    return Reading(exchange, pred, label_probabilities(positions, labels) if positions else None)


def _token_choices(content: Any) -> list[TokenChoice] | None:
    """The ``logprobs.content`` list of a response as :class:`TokenChoice` (``None`` when absent or malformed)."""
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


def _network_reason(exc: httpx.HTTPError) -> str:
    """Why a connection failed, in a few words (an httpx message never holds the request's headers)."""
    if isinstance(exc, httpx.TimeoutException):
        return "no answer in time"
    if isinstance(exc, httpx.ConnectError):
        return "connection refused" if "refused" in str(exc).lower() else f"cannot connect: {exc}"
    return f"{type(exc).__name__}: {exc}"
