"""Build the models the offline examples compare, from ../shared/data (no network needed).

* SST-2: TF-IDF + logistic regression vs TF-IDF + complement naive Bayes, trained on the
  first 20,000 sentences of sst2/train.tsv, saved with skops (no pickles).
* ants/bees: timm ResNet-18 vs EfficientNet-B0 trained identically (same seed, same shuffled
  batches, same hyperparameters) on hymenoptera/train at 96 px, saved as safetensors with their
  label names. ``--pretrained`` starts both from ImageNet weights (needs the network once).

Usage::

    .venv/bin/python examples/build_offline_models.py [--pretrained] [--epochs 6]
    .venv/bin/h2h run examples/sst2-tfidf-offline.yaml
    .venv/bin/h2h run examples/antsbees-resnet-vs-efficientnet.yaml
"""

from __future__ import annotations

import argparse
from pathlib import Path

import pandas as pd

from headtohead.adapters import LoadContext, create_adapter
from headtohead.adapters.weights import save_checkpoint
from headtohead.config import DataConfig, model_settings
from headtohead.data import create_dataset
from headtohead.engines.train_simple import TrainSettings, train_classifier

HERE = Path(__file__).resolve().parent
SHARED = HERE.parent.parent / "shared" / "data"
MODELS = HERE / "models"


def build_sst2(limit: int = 20_000) -> None:
    import csv

    import skops.io as sio
    from sklearn.feature_extraction.text import TfidfVectorizer
    from sklearn.linear_model import LogisticRegression
    from sklearn.naive_bayes import ComplementNB
    from sklearn.pipeline import make_pipeline

    train = pd.read_csv(SHARED / "sst2" / "train.tsv", sep="\t", quoting=csv.QUOTE_NONE).head(limit)
    texts, labels = train["text"].astype(str), train["label"].astype(str)
    for name, classifier in (("logreg", LogisticRegression(max_iter=1000, C=4.0)), ("nb", ComplementNB())):
        pipeline = make_pipeline(TfidfVectorizer(ngram_range=(1, 2), min_df=2, sublinear_tf=True), classifier)
        pipeline.fit(texts, labels)
        sio.dump(pipeline, MODELS / f"sst2-{name}.skops")
        print(f"sst2-{name}: trained on {len(texts)} sentences")


def build_antsbees(pretrained: bool, epochs: int) -> None:
    splits = create_dataset(DataConfig(path=str(SHARED / "hymenoptera" / "train")))
    data = splits.eval
    settings = TrainSettings(epochs=epochs, batch_size=16, learning_rate=1e-3 if pretrained else 3e-3, seed=0)
    context = LoadContext(label_names=data.label_names, modality=data.modality, device="cpu", seed=0)
    for arch in ("resnet18", "efficientnet_b0"):
        config = model_settings(name=arch, kind="timm", source=arch, image_size=96, pretrained=pretrained)
        adapter = create_adapter(config, context)
        log = train_classifier(
            adapter, data, settings, on_epoch=lambda e, loss, a=arch: print(f"{a}: epoch {e} loss {loss:.3f}")
        )
        save_checkpoint(adapter.module, MODELS / f"{arch}-antsbees.safetensors", label_names=data.label_names)
        print(f"{arch}: {len(data)} images, {log.seconds:.0f} s")


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__, formatter_class=argparse.RawDescriptionHelpFormatter)
    parser.add_argument("--pretrained", action="store_true", help="start the image models from ImageNet weights")
    parser.add_argument("--epochs", type=int, default=6)
    args = parser.parse_args()
    if not SHARED.is_dir():
        raise SystemExit(f"{SHARED} not found: these examples use the shared public datasets")
    MODELS.mkdir(exist_ok=True)
    build_sst2()
    build_antsbees(args.pretrained, args.epochs)


if __name__ == "__main__":
    main()
