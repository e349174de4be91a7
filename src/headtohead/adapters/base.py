"""The one small interface every model family implements.

See ``docs/api/adapters.md``, the section of this title.
"""

from __future__ import annotations

from abc import ABC, abstractmethod
from collections.abc import Callable, Mapping, Sequence
from dataclasses import dataclass, field
from pathlib import Path
from typing import TYPE_CHECKING, Any, ClassVar, Literal

import numpy as np

from headtohead.adapters.prompting import AnswerLog
from headtohead.config.schema import ModelConfig
from headtohead.data.base import Dataset
from headtohead.errors import ModelError

if TYPE_CHECKING:  # httpx is an extra: only the endpoint family builds a LoadTarget
    from headtohead.adapters.chat_stream import LoadTarget

__all__ = ["ModelAdapter", "LookedUpAdapter", "LoadContext", "StoredOutputs", "move_to_device"]


@dataclass(frozen=True)
class LoadContext:
    """What an adapter may know about the run when it loads.

    Parameters
    ----------
    label_names : tuple of str
        The dataset's classes, in label order. A model built at random init (timm,
        torchvision) gets exactly this many outputs, named this way.
    modality : str
        ``text``, ``text_pair``, ``image`` or ``features``.
    device : str
        A resolved device (``cpu``, ``cuda:0`` …), see :func:`headtohead.runtime.devices.resolve_device`.
    seed : int
        Seed for anything random at load time (fresh classifier heads).
    base_dir : Path
        Folder relative model paths are read from (the experiment file's folder).
    id_column : str
        The column prediction files are matched to the data by (``data.id_column``, ``"id"`` when unset).
    partial_data : bool
        The evaluated examples are only part of the data file (``data.limit``): a prediction
        file may hold rows for examples left out, which are then ignored (and counted).
    objects : mapping of str to object
        Models handed over in memory (:func:`headtohead.compare`), by model name; families
        that accept objects use them instead of reading ``source``.
    train : Dataset, optional
        The training split (``data.train`` / ``data.split``), for families that show examples
        in their prompt (``kind: openai``'s ``few_shot``).
    response_cache : bool
        Families that ask a server may answer from their on-disk cache (``False``: ``--no-cache``,
        every answer asked again).
    pass_index : int, optional
        Which pass of a model measured several ways this load makes (from 0; see
        :meth:`~headtohead.config.models.base.ModelConfig.pass_specs`): the family makes it (a
        prompt's template, a pass's file). ``None``: a model measured once, or the first pass.
    run_seed : int, optional
        The seed of this repeat of a model run several times (``repeats:``); Python, NumPy and torch
        are seeded with it before the load, and a family that asks a server sends it where the API takes
        one (``kind: openai``), so a repeat is a run of its own (and no cached answer of another repeat).
        ``None``: the model is run once.
    """

    label_names: tuple[str, ...]
    modality: str
    device: str = "cpu"
    seed: int = 42
    base_dir: Path = Path(".")
    id_column: str = "id"
    partial_data: bool = False
    objects: Mapping[str, Any] = field(default_factory=dict)
    train: Dataset | None = None
    response_cache: bool = True
    pass_index: int | None = None
    run_seed: int | None = None

    def resolve_path(self, path: str) -> Path:
        """``path`` made absolute against :attr:`base_dir` (absolute paths pass unchanged)."""
        p = Path(path).expanduser()
        return p if p.is_absolute() else (self.base_dir / p)


@dataclass(frozen=True)
class StoredOutputs:
    """Outputs a model stored for some examples (:meth:`ModelAdapter.stored_outputs`).

    Attributes
    ----------
    pred : ndarray of shape (n,), int64
        Predicted class, an index into the dataset's label names. Taken as it is (not
        recomputed from ``proba``: a system may predict with a threshold of its own).
    proba : ndarray of shape (n, K), or None
        Probabilities in the dataset's label order, or ``None`` when the model stored none
        (its calibration is then *not available*: never computed from one-hot vectors).
    """

    pred: np.ndarray
    proba: np.ndarray | None = None


class ModelAdapter(ABC):
    """Base class of the model families. Subclasses set :attr:`kind`; what a family reads is its registry row's."""

    #: The ``kind:`` value in the experiment file.
    kind: ClassVar[str]
    #: Whether :meth:`forward` returns logits (softmax applied by the engine) or probabilities.
    output_kind: Literal["logits", "probabilities"] = "logits"
    #: What the quality pass hands the model: raw examples to :meth:`preprocess` and
    #: :meth:`forward` (``"examples"``), or the examples' positions and ids to
    #: :meth:`stored_outputs` (``"ids"``: outputs looked up, not computed; no speed to measure).
    feeds: ClassVar[Literal["examples", "ids"]] = "examples"
    #: The libraries :meth:`load` imports (lazily, inside it): a fresh process that will load the
    #: model again to measure its memory imports them ahead, while the run does other work.
    load_imports: ClassVar[tuple[str, ...]] = ()

    def __init__(self, config: ModelConfig, context: LoadContext) -> None:
        self.config = config
        self.context = context
        self.device = context.device
        self.warnings: list[str] = []
        self.label_names: tuple[str, ...] | None = None
        self.module: Any = None

    @property
    def name(self) -> str:
        return self.config.name

    @classmethod
    @abstractmethod
    def load(cls, config: ModelConfig, context: LoadContext) -> ModelAdapter:
        """Build the adapter, loading weights; raise :class:`~headtohead.errors.ModelError` on bad input."""

    @abstractmethod
    def preprocess(self, examples: Sequence[Any]) -> Any:
        """Turn raw examples into the model's CPU-side inputs (a batch)."""

    def preprocess_function(self) -> Callable[[Sequence[Any]], Any] | None:
        """A picklable function doing exactly what :meth:`preprocess` does, or ``None``.

        When it is given and the machine has spare cores, the quality pass runs it in
        worker processes (image decoding and resizing hold the GIL, so a thread would not
        help); otherwise :meth:`preprocess` runs in a background thread of this process.
        """
        return None

    @classmethod
    def check_inputs(cls, config: ModelConfig, context: LoadContext, dataset: Dataset) -> None:
        """Check the model's own input files against the data, as the data loads (default: nothing to check).

        Called for every model (and pass) before the run resolves the device and seeds the random
        state, which import torch: a family whose input is a file the pass only looks up (stored
        predictions) reads it here, so that a mistake in it is one line in a second, not after the
        imports the models need. Raises an :class:`~headtohead.errors.H2HError`; what it reads is
        read again by the pass (a lookup file is cheap to read). ``context.device`` is not the
        run's device yet: nothing here may use it.
        """
        return None

    @classmethod
    def check_before_run(cls, config: ModelConfig) -> list[str]:
        """Check what a model needs from outside this process (a key, a server), before any model runs.

        Called once per run for every model about to run, so that a missing key or a server that
        is down stops the run before the other models spend their time. Raises an
        :class:`~headtohead.errors.H2HError` for what would stop the model; returns warnings for
        what would not (e.g. a model name the server does not list). Default: nothing to check.
        """
        return []

    @classmethod
    def length_counter(
        cls, config: ModelConfig, context: LoadContext
    ) -> Callable[[Sequence[Any]], Sequence[int]] | None:
        """A function giving each example's length in this model's own units, or ``None``.

        Called before any model is loaded, to order the run's one batch plan so that batches
        hold examples of similar length (less padding). It must be cheap to build (a
        tokenizer, never weights) and must not raise for a model that will load.
        """
        return None

    def to_device(self, inputs: Any) -> Any:
        """Move a preprocessed batch to :attr:`device` (tensors, dicts of tensors; others unchanged)."""
        return move_to_device(inputs, self.device)

    @abstractmethod
    def forward(self, inputs: Any) -> Any:
        """Scores of shape ``(batch, n_outputs)`` — a torch tensor or a NumPy array — without grad."""

    def stored_outputs(self, dataset: Dataset, indices: np.ndarray) -> StoredOutputs:
        """The stored outputs of ``dataset``'s examples at ``indices`` (families with ``feeds = "ids"`` only).

        Parameters
        ----------
        dataset : Dataset
            The whole evaluation data: its ids (``dataset.ids``), length and labels, which the
            stored outputs are matched and checked against.
        indices : ndarray of int64
            Positions of the examples wanted, in the order wanted (a batch of the plan).

        Raises
        ------
        ModelError
            The stored outputs do not fit the data (missing or unknown ids, labels …).
        """
        raise NotImplementedError(f"{type(self).__name__} computes its outputs (feeds = 'examples')")

    def fetch_outputs(self, dataset: Dataset, indices: np.ndarray, progress: Callable[..., None] | None = None) -> None:
        """Fetch the outputs of every example at ``indices`` at once, before :meth:`stored_outputs` reads them.

        Families with ``feeds = "ids"`` whose outputs come from elsewhere (an endpoint asked
        with many requests in flight) fetch the whole plan here; the default does nothing.
        ``progress(done, total)`` (or with ``rates=`` a mapping of name to value per second).
        """
        return None

    def answer_record(self) -> AnswerLog | None:
        """What the model answered in words, for the run's records (LLM families); ``None`` for the others."""
        return None

    def load_target(self, dataset: Dataset, indices: np.ndarray) -> LoadTarget | None:
        """This model under load (the capacity scenario): the examples at ``indices`` asked at a rate; ``None``
        for a family that serves no requests (its settings' ``serves_requests`` is false)."""
        return None

    def training_logits(self, inputs: Any) -> Any:
        """Logits with autograd on, for training (torch families only).

        The default calls :attr:`module` with the preprocessed batch (``**inputs`` for dicts)
        and unwraps a ``.logits`` attribute, which fits timm, torchvision and transformers.
        """
        if self.module is None:
            raise ModelError(f"model '{self.name}' (kind {self.kind}) has no torch module; headtohead cannot train it")
        output = self.module(**inputs) if isinstance(inputs, dict) else self.module(inputs)
        return getattr(output, "logits", output)

    def num_parameters(self) -> int | None:
        """Number of parameters; ``None`` when headtohead cannot read them (reports say "unknown", never 0).

        The default counts the parameters of :attr:`module`; a model without one (a plain
        callable that may wrap any network) has a size headtohead cannot see.
        """
        if self.module is None:
            return None
        return int(sum(p.numel() for p in self.module.parameters()))

    def parameter_bytes(self) -> int | None:
        """Bytes taken by parameters and buffers; ``None`` when unknown (see :meth:`num_parameters`)."""
        if self.module is None:
            return None
        tensors = list(self.module.parameters()) + list(self.module.buffers())
        return int(sum(t.numel() * t.element_size() for t in tensors))

    def warn(self, message: str) -> None:
        """Record a warning about this model; it is shown to the user and kept in the results."""
        self.warnings.append(message)


def move_to_device(inputs: Any, device: str) -> Any:
    """Move tensors (alone, in dicts, lists or tuples) to ``device``; leave anything else as is."""
    if hasattr(inputs, "to") and hasattr(inputs, "device"):
        return inputs.to(device, non_blocking=True)
    if isinstance(inputs, dict):
        return {k: move_to_device(v, device) for k, v in inputs.items()}
    if isinstance(inputs, (list, tuple)):
        return type(inputs)(move_to_device(v, device) for v in inputs)
    return inputs


class LookedUpAdapter(ModelAdapter):
    """Base of the families whose outputs are looked up by example (``feeds = "ids"``), never computed here.

    Subclasses implement :meth:`stored_outputs` and say in :attr:`no_forward_reason` why there is
    no forward pass; :meth:`preprocess` and :meth:`forward` refuse with that sentence.
    """

    feeds: ClassVar[Literal["examples", "ids"]] = "ids"
    #: The end of the error a forward pass gets, after "model 'x' (kind k) ".
    no_forward_reason: ClassVar[str]

    def preprocess(self, examples: Sequence[Any]) -> Any:
        raise ModelError(f"model '{self.name}' (kind {self.kind}) {self.no_forward_reason}")

    def forward(self, inputs: Any) -> Any:
        raise ModelError(f"model '{self.name}' (kind {self.kind}) {self.no_forward_reason}")
