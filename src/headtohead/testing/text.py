"""Tiny text classifiers made on the fly: a tokenizer trained on a few sentences and a
randomly initialised BERT or RoBERTa with a few thousand parameters, saved as a folder that
``kind: transformers`` loads. No network; each folder takes well under a second once
transformers is imported.

::

    folder = make_tiny_bert(tmp_path / "bert", ["negative", "positive"])
    model_settings(name="bert", kind="transformers", source=str(folder))
"""

from __future__ import annotations

from collections.abc import Iterable, Sequence
from pathlib import Path
from typing import Any, Literal

__all__ = [
    "DEFAULT_TEXTS",
    "DEFAULT_LABELS",
    "train_wordpiece_tokenizer",
    "train_bpe_tokenizer",
    "make_tiny_bert",
    "make_tiny_roberta",
    "make_tiny_text_classifier",
]

#: Default class names of the tiny models (sentiment, like the default corpus).
DEFAULT_LABELS: tuple[str, ...] = ("negative", "positive")

#: A small English corpus (short movie and product reviews) to train tokenizers on.
DEFAULT_TEXTS: tuple[str, ...] = (
    "The movie was wonderful and the acting was superb.",
    "I loved every minute of this charming film.",
    "A delightful story with a warm heart and great music.",
    "The plot was clever, funny and surprisingly moving.",
    "An excellent performance by the whole cast.",
    "This is one of the best books I have read this year.",
    "The food was fresh, tasty and reasonably priced.",
    "Great service, friendly staff and a lovely view.",
    "The new phone is fast and the battery lasts all day.",
    "I would happily recommend this hotel to my friends.",
    "A beautiful, thoughtful and inspiring documentary.",
    "The sequel is even better than the original.",
    "Bright colours, sharp picture and easy to set up.",
    "She gave a brilliant speech that moved the audience.",
    "The concert was amazing and the crowd was joyful.",
    "What a pleasant surprise, everything worked perfectly.",
    "The movie was boring and far too long.",
    "I hated the ending; it made no sense at all.",
    "A dull story with flat characters and bad dialogue.",
    "The acting was terrible and the jokes fell flat.",
    "This is the worst film I have seen in years.",
    "The food was cold, bland and overpriced.",
    "Slow service, rude staff and a dirty table.",
    "The phone keeps crashing and the battery dies quickly.",
    "I would not recommend this hotel to anyone.",
    "A confusing, lazy and forgettable documentary.",
    "The sequel is a pale copy of the original.",
    "Washed out colours and the remote broke after a week.",
    "He mumbled through a speech that bored everyone.",
    "The concert started late and the sound was awful.",
    "What a disappointment, nothing worked as promised.",
    "It was fine, neither good nor bad, just average.",
    "The weather today is cloudy with a chance of rain.",
    "Please send the report before the meeting on Monday.",
    "The train leaves the station at half past seven.",
    "Cats and dogs are the most popular pets in the city.",
    "Does this premise entail the hypothesis or contradict it?",
    "A man is playing a guitar on the stage.",
    "Nobody is playing any instrument.",
    "Two children are reading books in the library.",
)


def _corpus(texts: Iterable[str] | None) -> list[str]:
    corpus = list(DEFAULT_TEXTS if texts is None else texts)
    if not corpus or not all(isinstance(t, str) for t in corpus):
        raise ValueError("texts must be a non-empty iterable of strings")
    return corpus


def train_wordpiece_tokenizer(
    texts: Iterable[str] | None = None, *, vocab_size: int = 400, lowercase: bool = True, model_max_length: int = 128
) -> Any:
    """Train a BERT-style WordPiece tokenizer on ``texts`` and wrap it as a ``BertTokenizer``.

    Parameters
    ----------
    texts : iterable of str, optional
        Training corpus; :data:`DEFAULT_TEXTS` when ``None``.
    vocab_size : int
        Upper bound of the vocabulary (a tiny corpus yields fewer entries).
    lowercase : bool
        Lower-case and strip accents, like ``bert-base-uncased``.
    model_max_length : int
        Longest input the tokenizer reports it can handle.

    Returns
    -------
    transformers.BertTokenizer
        With ``[PAD]=0, [UNK]=1, [CLS]=2, [SEP]=3, [MASK]=4``.

    Examples
    --------
    >>> tok = train_wordpiece_tokenizer()
    >>> tok("the movie")["input_ids"][0] == tok.cls_token_id
    True
    """
    from tokenizers import Tokenizer, models, normalizers, pre_tokenizers, trainers
    from transformers import BertTokenizer

    specials = ["[PAD]", "[UNK]", "[CLS]", "[SEP]", "[MASK]"]
    backend = Tokenizer(models.WordPiece(unk_token="[UNK]"))  # noqa: S106 - a token, not a password
    backend.normalizer = normalizers.BertNormalizer(lowercase=lowercase)
    backend.pre_tokenizer = pre_tokenizers.BertPreTokenizer()
    trainer = trainers.WordPieceTrainer(vocab_size=vocab_size, special_tokens=specials, show_progress=False)
    backend.train_from_iterator(_corpus(texts), trainer)
    # BertTokenizer builds the [CLS] … [SEP] post-processor and the decoder around the vocabulary.
    return BertTokenizer(vocab=backend.get_vocab(), do_lower_case=lowercase, model_max_length=model_max_length)


def train_bpe_tokenizer(
    texts: Iterable[str] | None = None, *, vocab_size: int = 400, model_max_length: int = 128
) -> Any:
    """Train a RoBERTa-style byte-level BPE tokenizer on ``texts`` and wrap it as a ``RobertaTokenizer``.

    Parameters
    ----------
    texts : iterable of str, optional
        Training corpus; :data:`DEFAULT_TEXTS` when ``None``.
    vocab_size : int
        Upper bound of the vocabulary (at least the 256 byte symbols plus 5 special tokens).
    model_max_length : int
        Longest input the tokenizer reports it can handle.

    Returns
    -------
    transformers.RobertaTokenizer
        With ``<s>=0, <pad>=1, </s>=2, <unk>=3, <mask>=4`` (RoBERTa's ids).
    """
    import json

    from tokenizers import ByteLevelBPETokenizer
    from transformers import RobertaTokenizer

    backend = ByteLevelBPETokenizer()
    backend.train_from_iterator(
        _corpus(texts),
        vocab_size=vocab_size,
        show_progress=False,
        special_tokens=["<s>", "<pad>", "</s>", "<unk>", "<mask>"],
    )
    merges = json.loads(backend.to_str())["model"]["merges"]
    merges = [tuple(m.split(" ", 1)) if isinstance(m, str) else tuple(m) for m in merges]
    return RobertaTokenizer(vocab=backend.get_vocab(), merges=merges, model_max_length=model_max_length)


def _save_classifier(path: str | Path, config: Any, tokenizer: Any, seed: int) -> Path:
    import torch
    from transformers import AutoModelForSequenceClassification
    from transformers.utils import logging as hf_logging

    folder = Path(path)
    folder.mkdir(parents=True, exist_ok=True)
    with torch.random.fork_rng(devices=[]):
        torch.manual_seed(seed)
        model = AutoModelForSequenceClassification.from_config(config)
    bars = hf_logging.is_progress_bar_enabled()
    hf_logging.disable_progress_bar()
    try:
        model.save_pretrained(folder)  # safetensors (the only format transformers 5 writes)
        tokenizer.save_pretrained(folder)
    finally:
        if bars:
            hf_logging.enable_progress_bar()
    return folder


def _label_maps(label_names: Sequence[str]) -> dict[str, Any]:
    names = [str(n) for n in label_names]
    if not names or len(set(names)) != len(names):
        raise ValueError(f"label_names must be non-empty and unique, got {names}")
    return {"id2label": dict(enumerate(names)), "label2id": {n: i for i, n in enumerate(names)}}


def make_tiny_bert(
    path: str | Path,
    label_names: Sequence[str] = DEFAULT_LABELS,
    *,
    texts: Iterable[str] | None = None,
    seed: int = 0,
    hidden_size: int = 32,
    layers: int = 2,
    heads: int = 2,
    intermediate_size: int | None = None,
    max_position_embeddings: int = 128,
    vocab_size: int = 400,
    initializer_range: float = 0.5,
) -> Path:
    """Save a tiny randomly initialised BERT sequence classifier and its tokenizer in ``path``.

    Parameters
    ----------
    path : str or Path
        Folder to write (created if needed): ``config.json``, ``model.safetensors``, tokenizer files.
    label_names : sequence of str
        The classes, in output order (``id2label``).
    texts : iterable of str, optional
        Tokenizer training corpus; :data:`DEFAULT_TEXTS` when ``None``.
    seed : int
        Seed of the random weights: the same seed gives the same model.
    hidden_size, layers, heads : int
        Width, depth and attention heads (``hidden_size`` must be divisible by ``heads``).
    intermediate_size : int, optional
        Feed-forward width; ``2 * hidden_size`` by default.
    max_position_embeddings : int
        Longest input the model reads (BERT: all positions usable).
    vocab_size : int
        Upper bound of the WordPiece vocabulary.
    initializer_range : float
        Standard deviation of the random weights. Far above BERT's 0.02, so that an
        untrained tiny model gives varied predictions rather than one constant class.

    Returns
    -------
    Path
        The folder, ready for ``model_settings(kind="transformers", source=str(folder))``.

    Examples
    --------
    >>> import tempfile
    >>> folder = make_tiny_bert(tempfile.mkdtemp(), ["neg", "pos"])
    >>> (folder / "model.safetensors").is_file()
    True
    """
    from transformers import BertConfig

    tokenizer = train_wordpiece_tokenizer(texts, vocab_size=vocab_size, model_max_length=max_position_embeddings)
    config = BertConfig(
        vocab_size=len(tokenizer),
        hidden_size=hidden_size,
        num_hidden_layers=layers,
        num_attention_heads=heads,
        intermediate_size=intermediate_size or 2 * hidden_size,
        max_position_embeddings=max_position_embeddings,
        pad_token_id=tokenizer.pad_token_id,
        initializer_range=initializer_range,
        **_label_maps(label_names),
    )
    return _save_classifier(path, config, tokenizer, seed)


def make_tiny_roberta(
    path: str | Path,
    label_names: Sequence[str] = DEFAULT_LABELS,
    *,
    texts: Iterable[str] | None = None,
    seed: int = 0,
    hidden_size: int = 32,
    layers: int = 2,
    heads: int = 2,
    intermediate_size: int | None = None,
    max_position_embeddings: int = 130,
    vocab_size: int = 400,
    initializer_range: float = 0.5,
) -> Path:
    """Save a tiny randomly initialised RoBERTa sequence classifier and its BPE tokenizer in ``path``.

    Same parameters as :func:`make_tiny_bert`. RoBERTa numbers positions from
    ``pad_token_id + 1 = 2``, so the model reads ``max_position_embeddings - 2`` tokens
    (128 by default), and the tokenizer's ``model_max_length`` says so.

    Returns
    -------
    Path
        The folder.
    """
    from transformers import RobertaConfig

    usable = max_position_embeddings - 2
    if usable < 1:
        raise ValueError(f"max_position_embeddings must be at least 3 for RoBERTa, got {max_position_embeddings}")
    tokenizer = train_bpe_tokenizer(texts, vocab_size=max(vocab_size, 262), model_max_length=usable)
    config = RobertaConfig(
        vocab_size=len(tokenizer),
        hidden_size=hidden_size,
        num_hidden_layers=layers,
        num_attention_heads=heads,
        intermediate_size=intermediate_size or 2 * hidden_size,
        max_position_embeddings=max_position_embeddings,
        pad_token_id=tokenizer.pad_token_id,
        bos_token_id=tokenizer.bos_token_id,
        eos_token_id=tokenizer.eos_token_id,
        type_vocab_size=1,
        initializer_range=initializer_range,
        **_label_maps(label_names),
    )
    return _save_classifier(path, config, tokenizer, seed)


def make_tiny_text_classifier(
    path: str | Path,
    arch: Literal["bert", "roberta"] = "bert",
    label_names: Sequence[str] = DEFAULT_LABELS,
    **kwargs: Any,
) -> Path:
    """Save a tiny ``arch`` classifier in ``path``: :func:`make_tiny_bert` or :func:`make_tiny_roberta`.

    Parameters
    ----------
    path : str or Path
        Folder to write.
    arch : {"bert", "roberta"}
        Architecture (WordPiece or byte-level BPE tokenizer).
    label_names : sequence of str
        The classes, in output order.
    **kwargs
        Passed on (``seed``, ``hidden_size``, ``layers`` …).

    Returns
    -------
    Path
        The folder.
    """
    builders = {"bert": make_tiny_bert, "roberta": make_tiny_roberta}
    if arch not in builders:
        raise ValueError(f"arch must be one of {sorted(builders)}, got {arch!r}")
    return builders[arch](path, label_names, **kwargs)
