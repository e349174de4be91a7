"""Image folders in the ImageFolder layout: ``root/<class>/**/<image files>``.

See ``docs/api/config.md``, the section of this title.
"""

from __future__ import annotations

import os
from collections import Counter
from concurrent.futures import ThreadPoolExecutor
from pathlib import Path

import numpy as np

from headtohead.config.schema import DataConfig
from headtohead.data.base import Dataset
from headtohead.data.columns import refuse_extra_columns
from headtohead.data.tables import warn_skipped
from headtohead.errors import DataError, listing

__all__ = ["load_image_folder", "check_image", "HF_SAVED_MARKERS"]

#: Files that mark a ``datasets.save_to_disk`` folder (read those with ``hf:<folder>``).
HF_SAVED_MARKERS = ("dataset_info.json", "state.json", "dataset_dict.json")

# Folder names that mean "a folder of splits", not "a folder of classes".
_SPLIT_NAMES = {"train", "training", "val", "valid", "validation", "test", "testing", "dev", "eval"}


def load_image_folder(spec: str, config: DataConfig) -> Dataset:
    """Read an ImageFolder tree into a :class:`Dataset` of image paths.

    Parameters
    ----------
    spec : str
        The root folder; each subfolder is a class, its images may lie in nested folders.
    config : DataConfig
        ``label_names``, if given, must name exactly the class folders; it sets the label order.

    Returns
    -------
    Dataset
        Modality ``"image"``; examples are absolute paths (``str``); ids are the paths inside
        the folder (``ants/0013035.jpg``, always with ``/``), which prediction files use to name
        their rows; unusable files counted in ``skipped``.

    Raises
    ------
    DataError
        A saved Hugging Face dataset, a folder without class subfolders or without images, a
        folder of splits (``train/``, ``val/``) instead of classes, a class with no readable
        image, ``label_names`` that do not match the folders, or ``slice_columns`` (a folder has
        no columns).

    Examples
    --------
    >>> import tempfile, pathlib
    >>> from headtohead.testing.data import make_image_folder
    >>> root = make_image_folder(pathlib.Path(tempfile.mkdtemp()), classes=("cat", "dog"), n_per_class=2)
    >>> ds = load_image_folder(str(root), DataConfig(path=str(root)))
    >>> ds.label_names, ds.labels.tolist()
    (('cat', 'dog'), [0, 0, 1, 1])
    """
    root = Path(spec)
    _refuse_hf_folder(spec, root)
    refuse_extra_columns(spec, config, "an image folder")
    class_dirs = _class_dirs(spec, root)
    names = _label_order(spec, [d.name for d in class_dirs], config.label_names)
    skipped: Counter[str] = Counter()
    skipped["file outside class folders"] = sum(1 for p in root.iterdir() if p.is_file() and not _hidden(p))
    files: list[tuple[str, int]] = []
    for class_dir in class_dirs:
        for path in _files_below(class_dir):
            if _hidden(path):
                skipped["hidden file"] += 1
            else:
                files.append((os.path.abspath(path), names.index(class_dir.name)))
    if not files:
        raise DataError(
            f"{spec}: the class folders ({listing(d.name for d in class_dirs)}) hold no files; "
            f"put the images in {spec}/<class>/"
        )
    with ThreadPoolExecutor(max_workers=min(8, (os.cpu_count() or 1) + 2)) as pool:
        problems = list(pool.map(lambda item: check_image(item[0]), files))
    kept = [item for item, problem in zip(files, problems, strict=True) if problem is None]
    skipped.update(problem for problem in problems if problem is not None)
    _require_every_class(spec, names, kept)
    counts = {reason: n for reason, n in skipped.items() if n}

    def file_id(path: str) -> str:
        return Path(os.path.relpath(path, os.path.abspath(root))).as_posix()

    unreadable = tuple(file_id(path) for (path, _), problem in zip(files, problems, strict=True) if problem is not None)
    warn_skipped(spec, counts, unit="files", ids=unreadable)
    return Dataset(
        spec,
        "image",
        [path for path, _ in kept],
        np.array([label for _, label in kept]),
        tuple(names),
        counts,
        ids=tuple(file_id(path) for path, _ in kept),
        skipped_ids=unreadable,
    )


def check_image(path: str | Path) -> str | None:
    """Decode ``path`` with PIL; return ``None`` when it is a usable image, else the skip reason.

    JPEGs are decoded at reduced scale (``draft``), which still reads the whole file, so
    truncation is found at a fraction of the cost of a full decode.

    Returns
    -------
    str or None
        ``None``, ``"unreadable image"`` (an image suffix PIL cannot decode) or ``"not an image"``.
    """
    from PIL import Image

    try:
        with Image.open(path) as image:
            image.verify()
        with Image.open(path) as image:
            image.draft("RGB", (64, 64))  # only JPEG honours this; other formats decode fully
            image.load()
    except Exception:  # PIL raises many types (OSError, SyntaxError, ValueError …) for bad files
        suffix = Path(path).suffix.lower()
        return "unreadable image" if suffix in Image.registered_extensions() else "not an image"
    return None


def _refuse_hf_folder(spec: str, root: Path) -> None:
    markers = [name for name in HF_SAVED_MARKERS if (root / name).is_file()]
    if markers:
        raise DataError(
            f"{spec}: this is a saved Hugging Face dataset ({markers[0]}), not an image folder; "
            f"write data.path: hf:{spec}"
        )


def _class_dirs(spec: str, root: Path) -> list[Path]:
    class_dirs = sorted((p for p in root.iterdir() if p.is_dir() and not _hidden(p)), key=lambda p: p.name)
    if not class_dirs:
        loose = sum(1 for p in root.iterdir() if p.is_file())
        where = f" ({loose} files lie directly in it)" if loose else " (it is empty)"
        raise DataError(
            f"{spec}: no class subfolders{where}; an image folder needs one subfolder per class, "
            f"e.g. {spec}/cat/*.jpg and {spec}/dog/*.jpg"
        )
    split_like = [d.name for d in class_dirs if d.name.lower() in _SPLIT_NAMES]
    if (
        split_like
        and len(split_like) == len(class_dirs)
        and all(any(c.is_dir() for c in d.iterdir()) for d in class_dirs)
    ):
        raise DataError(
            f"{spec}: the subfolders ({listing(split_like)}) look like splits, not classes; "
            f"point data.path at one split (e.g. {spec}/{split_like[-1]}) and data.train at another"
        )
    return class_dirs


def _label_order(spec: str, folders: list[str], label_names: list[str] | None) -> list[str]:
    if label_names is None:
        return folders
    missing = sorted(set(folders) - set(label_names))
    extra = sorted(set(label_names) - set(folders))
    if missing or extra or len(set(label_names)) != len(label_names):
        raise DataError(
            f"{spec}: data.label_names ({listing(label_names, quote=True)}) must name exactly the class folders "
            f"({listing(folders, quote=True)}; folders not in label_names: {listing(missing, quote=True) or 'none'}; "
            f"names without a folder: {listing(extra, quote=True) or 'none'})"
        )
    return list(label_names)


def _files_below(folder: Path) -> list[Path]:
    found: list[Path] = []
    for directory, subdirs, filenames in os.walk(folder, followlinks=True):
        subdirs[:] = sorted(d for d in subdirs if not d.startswith("."))
        found.extend(Path(directory) / name for name in filenames)
    return sorted(found)


def _hidden(path: Path) -> bool:
    return path.name.startswith(".")


def _require_every_class(spec: str, names: list[str], kept: list[tuple[str, int]]) -> None:
    present = {label for _, label in kept}
    empty = [name for i, name in enumerate(names) if i not in present]
    if empty:
        raise DataError(f"{spec}: class folder(s) {empty} hold no readable image; add images or remove the folder")
