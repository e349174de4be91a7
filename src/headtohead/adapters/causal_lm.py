"""A causal language model run in this process as a classifier (``kind: causal-lm``).

Both ways of answering keep every example's answer as any LLM family does
(:class:`~headtohead.adapters.prompting.Answer`, read into a
:class:`~headtohead.adapters.prompting.Reading`; :meth:`CausalLMAdapter.answer_record`): the
rendered prompt, the raw answer (generated) or each label's log-likelihood (scored), tokens in and
out counted by the model's tokenizer. See ``docs/llm.md``, "A causal LM in this process (`kind: causal-lm`)".
"""

from __future__ import annotations

import contextlib
import importlib.util
import inspect
import io
from collections.abc import Sequence
from typing import Any, ClassVar, Literal

import numpy as np

from headtohead.adapters.base import LoadContext, ModelAdapter, StoredOutputs
from headtohead.adapters.hf_hub import (
    hub_kwargs,
    hub_offline,
    hub_reachable_or_cached,
    looks_like_path,
    quiet_transformers,
)
from headtohead.adapters.prompt_variants import pass_prompt
from headtohead.adapters.prompting import (
    Answer,
    AnswerLog,
    Prompter,
    Reading,
    answers_as_outputs,
    completion_prompt,
    draw_few_shot,
    plain_prompt,
)
from headtohead.config.models.causal_lm import CausalLMSettings
from headtohead.config.schema import ModelConfig
from headtohead.data.base import Dataset
from headtohead.errors import ModelError

__all__ = ["CausalLMAdapter", "LabelScorer", "AnswerGenerator", "scoring_batch", "length_groups"]

#: model_args keys that would bypass a field of the model entry, or what headtohead sets itself.
_RESERVED_ARGS = ("trust_remote_code", "revision", "gguf_file", "use_safetensors", "local_files_only", "weights_only")
#: Why an example scored by its labels has no answer: a label's log-likelihood came out NaN or infinite.
NAN_SCORES = "NaN or infinite label scores"


class CausalLMAdapter(ModelAdapter):
    """A causal LM and its tokenizer; :meth:`load` gives a :class:`LabelScorer` or an :class:`AnswerGenerator`.

    Attributes
    ----------
    settings : CausalLMSettings
        The model's keys: the base, every LLM family's prompting keys and its own.
    tokenizer : transformers tokenizer
        Padding on the left (generation and scoring both end every row at its last position).
    prompter : Prompter
        The conversation of each example, with the few-shot turns drawn once at load (as ``kind: openai``'s).
    readings : dict of int to Reading
        Dataset index → its answer read, for every example answered in this run.
    """

    #: Both ways of answering read their outputs back by example (:meth:`stored_outputs`); the speed pass
    #: times :meth:`preprocess` and :meth:`forward`. The family's class says ``examples``: it runs here.
    feeds: ClassVar[Literal["examples", "ids"]] = "examples"

    kind: ClassVar[str] = "causal-lm"
    load_imports: ClassVar[tuple[str, ...]] = (
        "torch",
        "transformers.modeling_utils",
        "transformers.models.auto.modeling_auto",
        "transformers.models.auto.tokenization_auto",
    )

    def __init__(self, config: ModelConfig, context: LoadContext) -> None:
        super().__init__(config, context)
        assert isinstance(config, CausalLMSettings)
        self.settings = config
        self.tokenizer: Any = None
        settings, variant = pass_prompt(config, context.pass_index)  # one of several prompts: its own
        self.prompter = Prompter(settings, context.label_names, variant)
        #: The optional arguments of the model's forward used when scoring (not every architecture takes them).
        self.forward_args: set[str] = set()
        self.readings: dict[int, Reading] = {}

    @classmethod
    def load(cls, config: ModelConfig, context: LoadContext) -> CausalLMAdapter:
        """Load tokenizer and model onto ``context.device`` (eval mode) and draw the few-shot turns.

        Raises
        ------
        ModelError
            Missing files, a file that is not ``.gguf``, weights that are not safetensors,
            ``model_args`` that bypass a key, ``few_shot`` without training data.
        ModuleNotFoundError
            torch, transformers, or ``gguf`` for a ``.gguf`` file, not installed (``create_adapter``
            turns it into one line naming the extra).
        """
        assert isinstance(config, CausalLMSettings)
        answering: type[CausalLMAdapter] = AnswerGenerator if config.answer == "generate" else LabelScorer
        adapter = answering(config, context)
        adapter.label_names = context.label_names
        adapter.tokenizer, adapter.module = _load(config, context)
        adapter.module.to(context.device)
        adapter.module.eval()
        accepted = inspect.signature(adapter.module.forward).parameters
        adapter.forward_args = {k for k in ("position_ids", "logits_to_keep") if k in accepted}
        adapter.prompter.few_shot = draw_few_shot(
            adapter.prompter, context.train, context.seed, adapter.name, adapter.warn
        )
        return adapter

    @property
    def chat(self) -> bool:
        """Whether the conversation is rendered with the tokenizer's chat template (it has one, and
        ``chat_template: false`` does not refuse it); else the prompt is plain text."""
        return bool(self.settings.chat_template and self.tokenizer.chat_template)

    def prompt_text(self, example: Any) -> str:
        """The conversation for ``example`` as the model reads it, up to where its answer begins: the chat
        template's, lm-evaluation-harness's plain text (``chat_template: false``), or plain turns ending ``Answer:``."""
        messages = self.prompter.messages(example)
        if self.chat:
            return str(self.tokenizer.apply_chat_template(messages, tokenize=False, add_generation_prompt=True))
        return completion_prompt(messages) if self.settings.chat_template else plain_prompt(messages)

    @property
    def answer_prefix(self) -> str:
        """What goes between the prompt and a label: nothing in a chat turn, a space after plain text
        (lm-evaluation-harness's ``target_delimiter``)."""
        return "" if self.chat else " "

    def encode_kwargs(self) -> dict[str, Any]:
        """A chat template writes its own special tokens (BOS …); a plain prompt gets the tokenizer's."""
        return {"add_special_tokens": not self.chat}

    def training_logits(self, inputs: Any) -> Any:
        raise ModelError(f"model '{self.name}' (kind causal-lm) is evaluated as it is; headtohead does not train it")

    def stored_outputs(self, dataset: Dataset, indices: np.ndarray) -> StoredOutputs:
        """The labels (and class probabilities) read from the answers at ``indices`` (answered now, as one batch,
        if not yet)."""
        wanted = [int(i) for i in indices if int(i) not in self.readings]
        if wanted:
            self.readings.update(zip(wanted, self.read([dataset.examples[i] for i in wanted]), strict=True))
        rows = [self.readings[int(i)] for i in indices]
        return StoredOutputs(*answers_as_outputs(rows, len(self.prompter.answers), self.has_probabilities()))

    def read(self, examples: Sequence[Any]) -> list[Reading]:
        """``examples`` answered as one batch and read (each family's own way)."""
        raise NotImplementedError

    def has_probabilities(self) -> bool:
        """Whether the answers give class probabilities (scored labels do; generated answers do not)."""
        return False

    def answer_record(self) -> AnswerLog:
        """Every example answered in this run, read as a label, and where the model ran (for the run's records)."""
        return AnswerLog(
            model=self.config.source,
            readings=self.readings,
            probabilities=self.has_probabilities(),
            scored=self.settings.answer == "score",
            device=str(self.device),
        )

    def _prompt_lengths(self, mask: Any) -> list[int]:
        """Each row's prompt tokens: those its (left-padded) attention mask keeps."""
        return [int(n) for n in mask.sum(-1).tolist()]


class LabelScorer(CausalLMAdapter):
    """``answer: score``: each label's log-likelihood after the conversation (see the module docstring).

    The quality pass reads each example's scores from :meth:`stored_outputs` (``feeds = "ids"``),
    which keeps them as its answer: the class probabilities (their softmax) and the label mass
    (``Σ exp``, the probability the model gave the labels at all; unknown with ``length_norm: chars``).
    """

    output_kind = "logits"
    feeds: ClassVar[Literal["examples", "ids"]] = "ids"

    def has_probabilities(self) -> bool:
        return True

    def read(self, examples: Sequence[Any]) -> list[Reading]:
        """Each example's labels scored (one batch): their log-likelihoods as its answer, or NaN ones as a failure."""
        prompts = [self.prompt_text(e) for e in examples]
        inputs = self.preprocess(examples)
        scores = self.forward(self.to_device(inputs)).double().cpu().numpy()
        read_in = self._tokens_read(inputs)
        likelihoods = self.settings.length_norm == "none"
        readings = []
        for prompt, row, tokens in zip(prompts, scores, read_in, strict=True):
            if not np.isfinite(row).all():  # the example's own failure (an fp16 overflow …), not an answer
                failed = Answer(prompt=prompt, tokens_in=tokens, tokens_out=0, error=NAN_SCORES)
                readings.append(Reading(failed, None, None, "no answer"))
                continue
            said = "; ".join(f"{label}: {value:.4f}" for label, value in zip(self.prompter.answers, row, strict=True))
            answer = Answer(text=said, prompt=prompt, tokens_in=tokens, tokens_out=0)
            readings.append(Reading.of_scores(answer, row.tolist(), likelihoods=likelihoods))
        return readings

    def _tokens_read(self, inputs: dict[str, Any]) -> list[int]:
        """Each example's tokens the model read: its prompt once and every label's own tokens after it."""
        k = len(self.prompter.answers)
        context = self._prompt_lengths(inputs["context_mask"])
        tails = [int(n) for n in inputs["tail_mask"].sum(-1).tolist()]
        return [context[i] + sum(tails[i * k : (i + 1) * k]) for i in range(len(context))]

    def preprocess(self, examples: Sequence[Any]) -> dict[str, Any]:
        """The batch's conversations and each label after them, tokenised and padded: see :func:`scoring_batch`."""
        labels = [self.answer_prefix + name for name in self.prompter.answers]
        prompts = [self.prompt_text(example) for example in examples]
        return scoring_batch(
            lambda texts: self.tokenizer(texts, **self.encode_kwargs())["input_ids"],
            prompts,
            labels,
            pad_id=int(self.tokenizer.pad_token_id),
            as_lm_eval=not self.chat,
        )

    def forward(self, inputs: dict[str, Any]) -> Any:
        """The labels' log-likelihoods, shape ``(batch, K)`` (per character with ``length_norm: chars``).

        On a CPU the batch runs as groups of prompts of about one length (:func:`length_groups`: padding
        is computed like any token, and a CPU gains little from more rows than a group holds; measured
        on SmolLM2-135M and SST-2, 0.77 of the time of the batch as one); elsewhere as one group (a GPU's
        rows run in parallel, and each pass costs kernel launches). In each, the prompts run once
        (only their last position's logits computed), their key/value cache is repeated for each label,
        and the labels' tokens but the last run on it (the last is only predicted); labels of one
        token each need no second pass. Positions count from each row's first real token (left padding).
        """
        import torch

        k = len(self.context.label_names)
        lengths = inputs["context_mask"].sum(-1)
        total = torch.empty((len(lengths), k), dtype=torch.float32, device=lengths.device)
        with torch.inference_mode():
            grouped = length_groups(lengths.tolist()) if lengths.device.type == "cpu" else [list(range(len(lengths)))]
            for rows in grouped:
                width = int(lengths[rows].max())
                index = torch.tensor(rows, dtype=torch.int64, device=lengths.device)
                tails = (index[:, None] * k + torch.arange(k, device=lengths.device)[None, :]).reshape(-1)
                tail_mask = inputs["tail_mask"][tails]
                tail_width = max(1, int(tail_mask.sum(-1).max()))
                total[index] = self._scored(
                    inputs["context_ids"][index, -width:],
                    inputs["context_mask"][index, -width:],
                    inputs["tail_ids"][tails, :tail_width],
                    tail_mask[:, :tail_width],
                    inputs["target_lengths"][tails],
                )
        if self.settings.length_norm == "chars":
            chars = [max(1, len(name)) for name in self.prompter.answers]
            total = total / torch.tensor(chars, dtype=total.dtype, device=total.device)
        return total

    def _scored(self, context_ids: Any, context: Any, tail_ids: Any, tail: Any, target_lengths: Any) -> Any:
        """Each label's summed log-probability for one group of prompts, shape ``(rows, K)`` (see :meth:`forward`)."""
        import torch

        k = tail_ids.shape[0] // context_ids.shape[0]
        first_args = {"logits_to_keep": 1} if "logits_to_keep" in self.forward_args else {}
        more = tail.shape[1] > 1  # a tail's token j > 0 is predicted by its token j - 1, run on the cache
        prompt = self.module(
            input_ids=context_ids,
            attention_mask=context,
            use_cache=more,
            **self._positions((context.cumsum(-1) - 1).clamp(min=0)),
            **first_args,
        )
        # token 0 of a row's tail is predicted by the prompt's last position, the same for all its labels
        first = torch.log_softmax(prompt.logits[:, -1].float(), dim=-1)
        logp = first.gather(-1, tail_ids[:, 0].view(-1, k)).view(-1, 1)
        if more:
            cache = prompt.past_key_values
            cache.batch_repeat_interleave(k)
            start = context.sum(-1).repeat_interleave(k)[:, None]
            labels = self.module(
                input_ids=tail_ids[:, :-1],
                attention_mask=torch.cat([context.repeat_interleave(k, dim=0), tail[:, :-1]], dim=1),
                past_key_values=cache,
                **self._positions(start + torch.arange(tail.shape[1] - 1, device=tail.device)[None, :]),
            )
            rest = torch.log_softmax(labels.logits.float(), dim=-1).gather(-1, tail_ids[:, 1:, None]).squeeze(-1)
            logp = torch.cat([logp, rest], dim=1)
        lengths, targets = tail.sum(-1, keepdim=True), target_lengths[:, None]
        j = torch.arange(tail.shape[1], device=tail.device)[None, :]
        scored = (j < lengths) & (j >= lengths - targets)
        return torch.where(scored, logp, torch.zeros_like(logp)).sum(-1).view(-1, k)

    def _positions(self, position_ids: Any) -> dict[str, Any]:
        """``position_ids`` for a model that takes them (those that do not read positions from the mask)."""
        return {"position_ids": position_ids} if "position_ids" in self.forward_args else {}


class AnswerGenerator(CausalLMAdapter):
    """``answer: generate``: greedy answers read as labels, batch by batch of the plan (see the module docstring).

    The quality pass reads the labels from :meth:`stored_outputs` (``feeds = "ids"``); the speed
    pass times :meth:`preprocess` and :meth:`forward`, which generate the answers' tokens.
    """

    feeds: ClassVar[Literal["examples", "ids"]] = "ids"

    @property
    def answers(self) -> dict[int, str]:
        """Dataset index → the decoded answer, for every example answered in this run (the unparseable ones
        are those :func:`~headtohead.adapters.prompting.parse_answer` reads as ``None``)."""
        return {i: str(r.answer.text) for i, r in self.readings.items()}

    def read(self, examples: Sequence[Any]) -> list[Reading]:
        """The greedy answers to ``examples`` (one batch), read as labels."""
        return [Reading.of(answer, self.prompter.answers, None) for answer in self.answered(examples)]

    def generate(self, examples: Sequence[Any]) -> list[str]:
        """The greedy answers to ``examples`` (one left-padded batch), decoded without special tokens."""
        return [str(answer.text) for answer in self.answered(examples)]

    def answered(self, examples: Sequence[Any]) -> list[Answer]:
        """The greedy answers to ``examples`` (one left-padded batch): the text decoded without special tokens,
        the prompt, its tokens and those generated (up to the end of sequence), counted by the tokenizer."""
        prompts = [self.prompt_text(e) for e in examples]
        inputs = self.preprocess(examples)
        tokens = self.forward(self.to_device(inputs))
        texts = self.tokenizer.batch_decode(tokens, skip_special_tokens=True)
        # a completion prompt's model goes on with the next example after a blank line
        texts = [str(t) if self.chat else str(t).split("\n\n")[0] for t in texts]
        lengths = zip(self._prompt_lengths(inputs["prompt_mask"]), self._generated(tokens), strict=True)
        return [
            Answer(text=text, prompt=prompt, tokens_in=n_in, tokens_out=n_out)
            for text, prompt, (n_in, n_out) in zip(texts, prompts, lengths, strict=True)
        ]

    def _generated(self, tokens: Any) -> list[int]:
        """Each row's generated tokens: up to and with its first end-of-sequence token (the rest is padding)."""
        ends = self._eos_ids()
        counts = []
        for row in tokens.tolist():
            end = next((j for j, t in enumerate(row) if t in ends), None)
            counts.append(len(row) if end is None else end + 1)
        return counts

    def _eos_ids(self) -> set[int]:
        """The ids that end an answer (the model's generation config may name several)."""
        eos = self.module.generation_config.eos_token_id
        eos = self.tokenizer.eos_token_id if eos is None else eos
        return {int(e) for e in (eos if isinstance(eos, (list, tuple)) else [eos]) if e is not None}

    def preprocess(self, examples: Sequence[Any]) -> dict[str, Any]:
        """The conversations, tokenised and left-padded: ``prompt_ids`` and ``prompt_mask``.

        Not named ``input_ids``: a speed pass with a fixed sequence length would pad those on
        the right or cut the prompt's end, where the answer begins.
        """
        encoded = self.tokenizer(
            [self.prompt_text(e) for e in examples], padding=True, return_tensors="pt", **self.encode_kwargs()
        )
        return {"prompt_ids": encoded["input_ids"], "prompt_mask": encoded["attention_mask"]}

    def forward(self, inputs: dict[str, Any]) -> Any:
        """The answers' token ids, shape ``(batch, at most max_tokens)``, until the end of sequence: greedy, or
        sampled at ``temperature`` from the whole distribution (no top-k, no top-p: as an API samples) when the
        model is run several times (``repeats:``; torch is seeded per repeat before the load)."""
        import torch
        from transformers import GenerationConfig

        eos = self.module.generation_config.eos_token_id
        temperature = self.settings.temperature
        sampling: dict[str, Any] = (
            {"do_sample": True, "temperature": temperature, "top_k": 0, "top_p": 1.0}
            if temperature > 0
            else {"do_sample": False}
        )
        greedy = GenerationConfig(
            max_new_tokens=self.settings.max_tokens,
            num_beams=1,
            eos_token_id=self.tokenizer.eos_token_id if eos is None else eos,
            pad_token_id=self.tokenizer.pad_token_id,
            **sampling,
        )
        prompt = inputs["prompt_ids"]
        with torch.inference_mode():
            out = self.module.generate(prompt, attention_mask=inputs["prompt_mask"], generation_config=greedy)
        return out[:, prompt.shape[1] :]


def scoring_batch(
    encode: Any, prompts: Sequence[str], labels: Sequence[str], *, pad_id: int, as_lm_eval: bool = False
) -> dict[str, Any]:
    """Each prompt and each label, tokenised together, split into a shared context and one tail per label.

    ``prompt + label`` is tokenised whole, and its last tokens are the label's:

    - after a chat template (``as_lm_eval`` false), those after the longest run of tokens it
      shares with ``prompt`` alone, so a token that merges the prompt's last characters with the
      label's first is scored as the label's;
    - after plain text (``as_lm_eval``), those after as many tokens as the prompt has once its
      trailing whitespace is moved to the label: lm-evaluation-harness's ``_encode_pair``
      (``HFLM.loglikelihood`` of the prompt and the label gives the same sum).

    At least one token is left to condition on and one to score. An example's context is the
    run of tokens all its labels' texts share, up to where the first label's scored tokens
    begin; each label's tail is the rest (its scored tokens, after any it is conditioned on).

    Parameters
    ----------
    encode : callable
        Texts → lists of token ids (the tokenizer, special tokens as the prompt needs them).
    prompts : sequence of str
        One per example.
    labels : sequence of str
        The answers to score, each as it follows a prompt.
    pad_id : int
        The id padding is written with (masked out: any id gives the same scores).
    as_lm_eval : bool
        Split ``prompt + label`` as lm-evaluation-harness does (see above).

    Returns
    -------
    dict of str to torch int64 tensors
        ``context_ids``, ``context_mask``: ``(len(prompts), C)``, left-padded; ``tail_ids``,
        ``tail_mask``: ``(len(prompts) * len(labels), T)``, example-major, right-padded;
        ``target_lengths``: ``(len(prompts) * len(labels),)``, how many of each tail's last real
        tokens are the label's.
    """
    import torch

    k = len(labels)
    joint = encode([p + label for p in prompts for label in labels])
    if as_lm_eval:  # the prompt's trailing whitespace belongs to the label; the prompt's token count splits them
        counts = [len(ids) for ids in encode([p.rstrip() for p in prompts])]
        split = [counts[row // k] for row in range(len(joint))]
    else:
        prompt_ids = encode(list(prompts))
        split = [_shared_prefix(prompt_ids[row // k], ids) for row, ids in enumerate(joint)]
    own = [max(1, min(n, len(ids) - 1)) for n, ids in zip(split, joint, strict=True)]
    shared = [min(*own[i * k : (i + 1) * k], _common_prefix(joint[i * k : (i + 1) * k])) for i in range(len(prompts))]
    contexts = [joint[i * k][: shared[i]] for i in range(len(prompts))]
    tails = [ids[shared[row // k] :] for row, ids in enumerate(joint)]
    context_ids, context_mask = _padded(contexts, pad_id, left=True)
    tail_ids, tail_mask = _padded(tails, pad_id, left=False)
    targets = torch.tensor([len(ids) - n for ids, n in zip(joint, own, strict=True)], dtype=torch.int64)
    return {
        "context_ids": context_ids,
        "context_mask": context_mask,
        "tail_ids": tail_ids,
        "tail_mask": tail_mask,
        "target_lengths": targets,
    }


#: The share of a group's computed prompt tokens that may be padding (:func:`length_groups`).
PADDING_SHARE = 0.1


def length_groups(lengths: Sequence[int], padding_share: float = PADDING_SHARE) -> list[list[int]]:
    """Row indices grouped by length, shortest first, each group padded by at most ``padding_share`` of its tokens.

    Examples
    --------
    >>> length_groups([30, 10, 11, 29, 12, 50])
    [[1, 2, 4], [3, 0], [5]]
    >>> length_groups([7, 7, 7])
    [[0, 1, 2]]
    """
    order = sorted(range(len(lengths)), key=lambda i: (lengths[i], i))
    groups: list[list[int]] = []
    real = 0
    for i in order:
        n = lengths[i]
        group = groups[-1] if groups else None
        if group is not None and (len(group) + 1) * n - (real + n) <= padding_share * (len(group) + 1) * n:
            group.append(i)
            real += n
        else:
            groups.append([i])
            real = n
    return groups


def _padded(rows: Sequence[Sequence[int]], pad_id: int, *, left: bool) -> tuple[Any, Any]:
    """Rows of ids as one tensor padded with ``pad_id`` on the left or the right, and its attention mask."""
    import torch

    width = max(len(ids) for ids in rows)
    ids = torch.full((len(rows), width), pad_id, dtype=torch.int64)
    mask = torch.zeros((len(rows), width), dtype=torch.int64)
    for row, values in enumerate(rows):
        place = slice(width - len(values), width) if left else slice(0, len(values))
        ids[row, place] = torch.tensor(values, dtype=torch.int64)
        mask[row, place] = 1
    return ids, mask


def _common_prefix(rows: Sequence[Sequence[int]]) -> int:
    """How many leading ids all ``rows`` share."""
    return min(_shared_prefix(rows[0], row) for row in rows)


def _shared_prefix(a: Sequence[int], b: Sequence[int]) -> int:
    """How many leading ids ``a`` and ``b`` share."""
    n = 0
    for x, y in zip(a, b):  # noqa: B905 - the shorter one ends the shared run
        if x != y:
            break
        n += 1
    return n


def _load(config: Any, context: LoadContext) -> tuple[Any, Any]:
    """The tokenizer (left padding, a pad token) and the model, read safely from ``config.source``."""
    import torch
    from transformers import AutoModelForCausalLM, AutoTokenizer

    bypassing = [key for key in _RESERVED_ARGS if key in config.model_args]
    if bypassing:
        raise ModelError(
            f"model '{config.name}': model_args.{bypassing[0]} is not allowed for causal-lm models; remove it "
            f"(source, revision and trust_remote_code say it)"
        )
    source, gguf_file = _locate(config, context)
    from_hub = gguf_file is None and not context.resolve_path(config.source).exists()
    kwargs = hub_kwargs(config, hub_offline() or (from_hub and hub_reachable_or_cached(config)))
    kwargs.update({"gguf_file": gguf_file} if gguf_file else {"use_safetensors": True})
    precision = {} if {"dtype", "torch_dtype"} & set(config.model_args) else {"dtype": torch.float32}
    what = "tokenizer"
    try:
        with quiet_transformers():
            tokenizer = AutoTokenizer.from_pretrained(source, **kwargs, padding_side="left")
            what = "model"
            # a GGUF file is de-quantised under a tqdm bar of its own, which quiet_transformers does not reach
            with contextlib.redirect_stderr(io.StringIO()) if gguf_file else contextlib.nullcontext():
                model = AutoModelForCausalLM.from_pretrained(source, **precision, **config.model_args, **kwargs)
    except (OSError, ValueError, KeyError, TypeError, ImportError, RuntimeError) as exc:
        hint = (
            "kind: causal-lm reads safetensors weights only (save_pretrained(..., safe_serialization=True)); "
            if "safetensors" in str(exc) and not gguf_file
            else ""
        )
        raise ModelError(
            f"model '{config.name}' (kind causal-lm): cannot load its {what} from {source} "
            f"({str(exc).strip().splitlines()[0] if str(exc).strip() else type(exc).__name__}); {hint}point source "
            f"at a .gguf file or at a folder written by save_pretrained"
        ) from exc
    if tokenizer.pad_token is None:  # padding is masked out: any token will do
        if tokenizer.eos_token is None:
            raise ModelError(
                f"model '{config.name}': its tokenizer has neither a pad nor an end-of-sequence token, so "
                f"batches cannot be padded; use a tokenizer that defines pad_token"
            )
        tokenizer.pad_token = tokenizer.eos_token
    return tokenizer, model


def _locate(config: Any, context: LoadContext) -> tuple[str, str | None]:
    """``(folder or hub id, GGUF file name in it or None)``; a local path wins over a hub id."""
    path = context.resolve_path(config.source)
    if path.is_file():
        if path.suffix.lower() != ".gguf":
            raise ModelError(
                f"model '{config.name}': source {path} is a file but not a .gguf; give a .gguf file or a "
                f"folder written by save_pretrained"
            )
        if importlib.util.find_spec("gguf") is None:  # create_adapter names the extra that brings it
            raise ModuleNotFoundError(f"No module named 'gguf' (it reads {path.name})", name="gguf")
        return str(path.parent), path.name
    if path.is_dir():
        return str(path), None
    if looks_like_path(config.source) or path.suffix.lower() == ".gguf":
        raise ModelError(
            f"model '{config.name}': {path} not found; check source (relative paths are read from the "
            f"experiment file's folder)"
        )
    return str(config.source), None
