"""The finished chunks of a sequential run (``--until-decided``), kept so ``--resume`` goes on from the last one.

See ``docs/statistics.md``, "In a run: `h2h run --until-decided`".
"""

from __future__ import annotations

import hashlib
import io
import json
import logging
import shutil
from collections.abc import Sequence
from pathlib import Path
from typing import Any

import numpy as np

from headtohead.results import ModelPredictions
from headtohead.runtime.files import write_bytes_atomic

__all__ = ["ChunkStore", "ChunkResult", "sequential_key"]

log = logging.getLogger("headtohead")
_FORMAT = 1
_PREFIX = "sequential-"

#: One chunk's outcome: each model's predictions and the seconds its pass over the chunk took.
ChunkResult = tuple[dict[str, ModelPredictions], dict[str, float]]


def sequential_key(model_keys: Sequence[str], alpha: float) -> str:
    """SHA-256 of the run's model keys (in experiment order) and α: the identity of a sequential run."""
    payload = json.dumps({"format": _FORMAT, "models": list(model_keys), "alpha": alpha}, sort_keys=True)
    return hashlib.sha256(payload.encode("utf-8")).hexdigest()


class ChunkStore:
    """Chunks of one sequential run under ``<resume folder>/sequential-<key[:16]>/``.

    Parameters
    ----------
    resume_dir : Path
        The run's resume folder (``<out>/.h2h-resume``).
    key : str
        From :func:`sequential_key`.
    """

    def __init__(self, resume_dir: str | Path, key: str) -> None:
        self.root = Path(resume_dir)
        self.folder = self.root / f"{_PREFIX}{key[:16]}"

    def _path(self, index: int) -> Path:
        return self.folder / f"chunk-{index:06d}.npz"

    def save(self, index: int, order: np.ndarray, result: ChunkResult) -> None:
        """Keep chunk ``index`` (all models' predictions for the examples ``order``) atomically."""
        predictions, seconds = result
        arrays: dict[str, Any] = {
            "order": np.asarray(order, dtype=np.int64),  # Any: numpy's stubs and **arrays
            "names": np.array(list(predictions), dtype=np.str_),
        }
        for i, (name, model) in enumerate(predictions.items()):
            arrays[f"pred{i}"], arrays[f"proba{i}"] = model.pred, model.proba
            arrays[f"seconds{i}"] = np.array(seconds[name], dtype=np.float64)
        buffer = io.BytesIO()
        np.savez_compressed(buffer, **arrays)
        write_bytes_atomic(self._path(index), buffer.getvalue())

    def load(self, orders: Sequence[np.ndarray], names: Sequence[str], n_classes: int) -> list[ChunkResult]:
        """The finished chunks in order, from the first, up to the first one missing, damaged or not fitting.

        Parameters
        ----------
        orders : sequence of ndarray
            The example indices every chunk of this run must hold, in order.
        names : sequence of str
            The run's models, in experiment order.
        n_classes : int

        Returns
        -------
        list of ChunkResult
            Chunk 0, 1, … as saved; a chunk that does not fit is reported and the run goes on from it.
        """
        found: list[ChunkResult] = []
        for index, order in enumerate(orders):
            path = self._path(index)
            if not path.is_file():
                break
            chunk = self._read(path, order, names, n_classes)
            if chunk is None:
                break
            found.append(chunk)
        return found

    def _read(self, path: Path, order: np.ndarray, names: Sequence[str], n_classes: int) -> ChunkResult | None:
        try:
            with np.load(path, allow_pickle=False) as data:
                fits = list(data["names"]) == list(names) and np.array_equal(data["order"], order)
                predictions, seconds = {}, {}
                for i, name in enumerate(names if fits else ()):
                    pred, proba = data[f"pred{i}"].astype(np.int64), data[f"proba{i}"].astype(np.float32)
                    fits = fits and pred.shape == (len(order),) and proba.shape == (len(order), n_classes)
                    predictions[name], seconds[name] = ModelPredictions(pred, proba), float(data[f"seconds{i}"])
        except Exception as exc:  # any damage means "not finished": evaluate the chunk again
            log.warning(
                "resume: %s is damaged (%s: %s); evaluating from that chunk again", path, type(exc).__name__, exc
            )
            return None
        if not fits:
            log.warning("resume: %s does not fit this run; evaluating from that chunk again", path)
            return None
        return predictions, seconds

    def kept(self) -> int:
        """How many chunks, from the first on, are on disk (what a ``--resume`` would find, if they fit)."""
        index = 0
        while self._path(index).is_file():
            index += 1
        return index

    def clear(self) -> None:
        """Forget this run's chunks (a run without ``--resume`` starts from the first chunk)."""
        shutil.rmtree(self.folder, ignore_errors=True)

    def prune(self) -> None:
        """Delete the chunks of other sequential runs (earlier versions of the experiment) in the same folder."""
        if not self.root.is_dir():
            return
        for path in self.root.iterdir():
            if path.is_dir() and path.name.startswith(_PREFIX) and path != self.folder:
                shutil.rmtree(path, ignore_errors=True)  # cleaning up is a courtesy, never a reason to fail
