"""Hugging Face datasets: ``hf:<saved folder>`` (offline) or ``hf:<hub name>`` (online).

See ``docs/api/config.md``, the section of this title.
"""

from __future__ import annotations

import io
import os
from collections import Counter
from pathlib import Path
from typing import Any, cast

import numpy as np

from headtohead.config.schema import DataConfig
from headtohead.data.base import Dataset, encode_labels
from headtohead.data.columns import check_ids, normalise_value, refuse_label_ok, require_extra_columns
from headtohead.data.images import HF_SAVED_MARKERS, check_image
from headtohead.data.tables import DEFAULT_TEXT_COLUMN, is_missing, rows_to_dataset, skipped_ids_of, warn_skipped
from headtohead.errors import DataError, default_choice, did_you_mean, listing
from headtohead.runtime.offline import unreachable

__all__ = ["load_hf", "parse_hf_spec", "choose_split"]

PREFIX = "hf:"
_DEFAULT_SPLITS = ("validation", "test")
_TRUE = {"1", "on", "yes", "true"}


def load_hf(spec: str, config: DataConfig) -> Dataset:
    """Load one split of a Hugging Face dataset.

    Parameters
    ----------
    spec : str
        ``"hf:<folder or hub name>[:<split>]"``.
    config : DataConfig
        ``hf_split``, ``text_column``, ``text_pair_column``, ``label_column``, ``label_names``.

    Returns
    -------
    Dataset
        Modality ``"text"``, ``"text_pair"`` or ``"image"``.

    Raises
    ------
    DataError
        ``datasets`` not installed; the folder or Hub dataset cannot be read (offline, unknown,
        needs a config name); the split is ambiguous or missing; a column is missing.

    Examples
    --------
    >>> import tempfile, pathlib
    >>> from headtohead.testing.data import save_hf_dataset
    >>> rows = [{"text": "fine", "label": 1}, {"text": "poor", "label": 0}]
    >>> root = save_hf_dataset(pathlib.Path(tempfile.mkdtemp()) / "saved",
    ...                        {"train": rows, "validation": rows}, label_names=["neg", "pos"])
    >>> ds = load_hf(f"hf:{root}", DataConfig(path=f"hf:{root}"))
    >>> ds.label_names
    ('neg', 'pos')
    """
    datasets = _import_datasets(spec)
    source, split = parse_hf_spec(spec)
    if spec == config.train == config.path and split is None:
        raise DataError(
            f"data.path and data.train are both {spec}, so they would read the same split; name the "
            f"splits, e.g. data.path: {spec}:validation and data.train: {spec}:train"
        )
    is_train = spec == config.train and spec != config.path
    loaded = _load_source(spec, source, split, datasets)
    if isinstance(loaded, datasets.DatasetDict):
        requested = split or ("train" if is_train else config.hf_split)
        part = loaded[choose_split(spec, list(loaded), requested)]
    else:
        requested = split or (None if is_train else config.hf_split)
        if requested is not None and not _named_split(loaded, requested):
            raise DataError(
                f"{spec}: this dataset has no splits (a single saved Dataset), but split "
                f"'{requested}' was asked for; remove data.hf_split / the ':<split>' suffix"
            )
        part = loaded
    return _to_dataset(spec, part.with_format(None), config, datasets)


def parse_hf_spec(spec: str) -> tuple[str, str | None]:
    """Split ``hf:<source>[:<split>]`` into the source and the split (``None`` when absent).

    An existing local path is taken whole, so a folder whose name holds ``:`` still works.

    Examples
    --------
    >>> parse_hf_spec("hf:imdb:test")
    ('imdb', 'test')
    >>> parse_hf_spec("hf:imdb")
    ('imdb', None)
    """
    rest = spec[len(PREFIX) :] if spec.startswith(PREFIX) else spec
    if not rest:
        raise DataError(f"{spec}: give a folder or a Hub dataset name after 'hf:' (e.g. hf:data/sst2_saved)")
    if Path(rest).expanduser().exists() or ":" not in rest:
        return rest, None
    source, split = rest.rsplit(":", 1)
    if not source or not split:
        raise DataError(f"{spec}: write hf:<folder or name> or hf:<folder or name>:<split>")
    return source, split


def choose_split(spec: str, available: list[str], requested: str | None) -> str:
    """Pick the split to read: ``requested``, else ``validation``, ``test``, or the only one.

    Raises
    ------
    DataError
        ``requested`` is not there, or there is no default among several splits.

    Examples
    --------
    >>> choose_split("hf:x", ["train", "validation", "test"], None)
    'validation'
    """
    if requested is not None:
        if requested not in available:
            raise DataError(
                f"{spec}: no split '{requested}'{did_you_mean(requested, available)} "
                f"(splits: {listing(available)}); set data.hf_split or the ':<split>' suffix"
            )
        return requested
    chosen = default_choice(available, _DEFAULT_SPLITS)
    if chosen is not None:
        return chosen
    raise DataError(
        f"{spec}: several splits ({listing(available)}) and none is 'validation' or 'test'; "
        f"choose one with data.hf_split"
    )


def _import_datasets(spec: str) -> Any:
    try:
        import datasets
    except ImportError as error:
        raise DataError(
            f"{spec}: reading Hugging Face datasets needs the 'datasets' package; pip install 'headtohead[hf]'"
        ) from error
    return datasets


def _load_source(spec: str, source: str, split: str | None, datasets: Any) -> Any:
    folder = Path(source).expanduser()
    if folder.is_dir():
        if any((folder / marker).is_file() for marker in HF_SAVED_MARKERS):
            try:
                return datasets.load_from_disk(str(folder))
            except (OSError, ValueError) as error:
                raise DataError(
                    f"{spec}: cannot read the saved dataset ({_first_line(error)}); save it again with save_to_disk"
                ) from error
        return _load_dataset(spec, str(folder), datasets, local=True)
    if folder.exists():
        raise DataError(
            f"{spec}: {source} is a file; hf: reads a save_to_disk folder or a Hub name "
            f"(use data.path: {source} to read a table file directly)"
        )
    if _looks_like_path(source):
        raise DataError(
            f"{spec}: folder {source} not found (relative paths are read from the experiment "
            f"file's folder); check the path"
        )
    return _load_dataset(spec, source, datasets, local=False)


def _load_dataset(spec: str, name: str, datasets: Any, *, local: bool) -> Any:
    if not local and not _offline():
        _require_hub_reachable(spec, name)
    try:
        return datasets.load_dataset(name)
    except ConnectionError as error:  # also what datasets raises in offline mode
        raise DataError(_offline_message(spec, name)) from error
    except (OSError, ValueError) as error:  # DatasetNotFoundError is a FileNotFoundError
        raise DataError(
            f"{spec}: cannot load '{name}' ({_first_line(error)}); for a dataset with several "
            f"configs, save the one you want with save_to_disk and use hf:<folder>"
        ) from error


def _offline() -> bool:
    flags = (os.environ.get("HF_HUB_OFFLINE", ""), os.environ.get("HF_DATASETS_OFFLINE", ""))
    return any(flag.strip().lower() in _TRUE for flag in flags)


def _require_hub_reachable(spec: str, name: str) -> None:
    # Without a connection huggingface_hub retries for most of a minute; one short probe fails fast.
    from huggingface_hub import constants

    if unreachable(constants.ENDPOINT) is not None:
        raise DataError(_offline_message(spec, name) + " (set HF_HUB_OFFLINE=1 to use a cached copy)")


def _offline_message(spec: str, name: str) -> str:
    return (
        f"{spec}: the Hub dataset '{name}' is not available offline; on a machine with network run "
        f"datasets.load_dataset('{name}').save_to_disk('<folder>') and use data.path: hf:<folder>"
    )


def _looks_like_path(source: str) -> bool:
    # Hub names are "name" or "owner/name"; anything else path-like is a missing folder.
    return source.startswith((".", "/", "~", "\\")) or source.count("/") > 1 or "\\" in source


def _named_split(dataset: Any, name: str) -> bool:
    return dataset.split is not None and str(dataset.split) == name


def _to_dataset(spec: str, part: Any, config: DataConfig, datasets: Any) -> Dataset:
    columns = list(part.column_names)
    label_column = config.label_column
    _require_column(spec, "data.label_column", label_column, columns)
    label_feature = part.features[label_column]
    names = _class_names(spec, label_feature, config, datasets)
    labels = [None if _is_no_label(v, label_feature, datasets) else v for v in part[label_column][:]]
    require_extra_columns(spec, config, columns)
    ids = part[config.id_column][:] if config.id_column is not None else None
    extra = {name: part[name][:] for name in config.kept_columns}
    image_column = _image_column(part, datasets)
    if config.text_column is None and DEFAULT_TEXT_COLUMN not in columns and image_column is not None:
        refuse_label_ok(spec, config, "an image dataset")
        return _image_dataset(spec, part, image_column, labels, names, config, datasets, ids=ids, extra=extra)
    text_column = config.text_column or DEFAULT_TEXT_COLUMN
    _require_column(spec, "data.text_column", text_column, columns)
    pairs = None
    if config.text_pair_column is not None:
        _require_column(spec, "data.text_pair_column", config.text_pair_column, columns)
        pairs = part[config.text_pair_column][:]
    return rows_to_dataset(
        spec,
        part[text_column][:],
        labels,
        pairs=pairs,
        label_column=label_column,
        label_names=names,
        ids=ids,
        id_column=config.id_column or "id",
        columns=extra,
        all_columns=columns,
        label_ok=part[config.label_ok][:] if config.label_ok is not None else None,
        label_ok_column=config.label_ok or "label_ok",
    )


def _require_column(spec: str, key: str, column: str, columns: list[str]) -> None:
    if column not in columns:
        raise DataError(
            f"{spec}: no column '{column}' ({key}){did_you_mean(column, columns)}; the dataset has "
            f"columns: {listing(columns)}; set {key} to one of them"
        )


def _class_names(spec: str, feature: Any, config: DataConfig, datasets: Any) -> list[str] | None:
    if not isinstance(feature, datasets.ClassLabel):
        return config.label_names
    if config.label_names is not None and len(config.label_names) != feature.num_classes:
        raise DataError(
            f"{spec}: data.label_names has {len(config.label_names)} names but the label feature has "
            f"{feature.num_classes} classes ({listing(feature.names)}); fix or drop data.label_names"
        )
    return config.label_names if config.label_names is not None else list(feature.names)


def _is_no_label(value: Any, feature: Any, datasets: Any) -> bool:
    return isinstance(feature, datasets.ClassLabel) and value is not None and int(value) < 0


def _image_column(part: Any, datasets: Any) -> str | None:
    found = [name for name, feature in part.features.items() if isinstance(feature, datasets.Image)]
    preferred = [name for name in found if name in ("image", "img")]
    return cast("str | None", (preferred or found or [None])[0])


def _image_dataset(
    spec: str,
    part: Any,
    column: str,
    labels: list[Any],
    names: list[str] | None,
    config: DataConfig,
    datasets: Any,
    *,
    ids: list[Any] | None,
    extra: dict[str, list[Any]],
) -> Dataset:
    raw = part.cast_column(column, datasets.Image(decode=False))[column][:]
    skipped: Counter[str] = Counter()
    examples: list[Any] = []
    kept: list[Any] = []
    rows: list[int] = []
    for i, (item, label) in enumerate(zip(raw, labels, strict=True)):
        if is_missing(label):
            skipped["missing label"] += 1
            continue
        example = _image_example(item)
        if example is None:
            skipped["unreadable image"] += 1
            continue
        examples.append(example)
        kept.append(label)
        rows.append(i)
    encoded, label_names = encode_labels(kept, source=spec, column=config.label_column, names=names)
    kept_ids = None
    skipped_rows = sorted(set(range(len(raw))) - set(rows))
    skipped_ids = skipped_ids_of(ids, skipped_rows)
    if ids is not None:
        kept_ids = check_ids(spec, config.id_column or "id", [ids[i] for i in rows], [i + 1 for i in rows])
    columns = {name: [normalise_value(values[i]) for i in rows] for name, values in extra.items()}
    warn_skipped(spec, skipped, unit="rows", ids=skipped_ids if ids is not None else None)
    return Dataset(
        spec,
        "image",
        examples,
        encoded,
        label_names,
        dict(skipped),
        kept_ids,
        columns,
        skipped_ids,
        tuple(skipped_rows),
    )


def _image_example(item: Any) -> Any:
    """A file path when the image is a file on disk, else the decoded ``uint8`` array; ``None`` if unreadable."""
    from PIL import Image

    if item is None:
        return None
    data, path = item.get("bytes"), item.get("path")
    if data is None:
        if path and os.path.isfile(path) and check_image(path) is None:
            return os.path.abspath(path)
        return None
    try:
        with Image.open(io.BytesIO(data)) as image:
            image.load()
            grey = image.mode in ("L", "1")
            return np.asarray(image.convert("L" if grey else "RGB"), dtype=np.uint8)
    except Exception:  # PIL raises many types for undecodable bytes
        return None


def _first_line(error: BaseException) -> str:
    text = str(error).strip()
    return text.splitlines()[0] if text else type(error).__name__
