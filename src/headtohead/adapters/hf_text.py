"""Text inputs of ``transformers`` models: texts or pairs, and token counts for the batch plan."""

from __future__ import annotations

from collections.abc import Callable, Sequence
from typing import Any

from headtohead.errors import ModelError

__all__ = ["split_pairs", "token_counter", "NO_TOKENIZER_LIMIT", "FALLBACK_MAX_LENGTH"]

#: Tokenizers without a configured limit report this sentinel (transformers' VERY_LARGE_INTEGER).
NO_TOKENIZER_LIMIT = 10**9
#: Truncation length when neither the tokenizer nor the model states one.
FALLBACK_MAX_LENGTH = 512


def token_counter(tokenizer: Any, max_length: int | None, *, model: str) -> Callable[[Sequence[Any]], list[int]]:
    """A function counting each example's tokens (special tokens included, truncated) with ``tokenizer``.

    The tokenizer must be the caller's own copy: its Rust backend is set to count without
    padding (about twice as fast as calling the tokenizer, which builds Python lists of ids).

    Parameters
    ----------
    tokenizer : transformers tokenizer
    max_length : int, optional
        Truncation length; the tokenizer's own limit (or 512) when ``None``.
    model : str
        For error messages.
    """
    stated = getattr(tokenizer, "model_max_length", None) or 0
    limit = max_length or (stated if 0 < stated < NO_TOKENIZER_LIMIT else FALLBACK_MAX_LENGTH)
    backend = getattr(tokenizer, "backend_tokenizer", None)
    if backend is None:  # no Rust tokenizer: the ordinary call
        return lambda examples: [
            len(ids) for ids in tokenizer(*split_pairs(examples, model), truncation=True, max_length=limit)["input_ids"]
        ]
    backend.no_padding()
    backend.enable_truncation(limit)
    encode = getattr(backend, "encode_batch_fast", backend.encode_batch)
    return lambda examples: [len(e) for e in encode(_texts_or_pairs(examples, model))]


def split_pairs(examples: Sequence[Any], model: str) -> tuple[list[str], list[str] | None]:
    """Texts, or (first texts, second texts) for pairs; every example must be of the same form."""
    pairs = bool(examples) and isinstance(examples[0], (tuple, list))
    for i, example in enumerate(examples):
        if pairs:
            fits = isinstance(example, (tuple, list)) and len(example) == 2 and all(isinstance(t, str) for t in example)
        else:
            fits = isinstance(example, str)
        if not fits:
            expected = "a (text, pair) tuple of two strings" if pairs else "a string"
            raise ModelError(
                f"model '{model}': example {i} of the batch is {type(example).__name__} {example!r:.60}, "
                f"expected {expected}; check the dataset's text columns"
            )
    if pairs:
        return [first for first, _ in examples], [second for _, second in examples]
    return list(examples), None


def _texts_or_pairs(examples: Sequence[Any], model: str) -> list[Any]:
    first, second = split_pairs(examples, model)
    return first if second is None else list(zip(first, second, strict=True))
