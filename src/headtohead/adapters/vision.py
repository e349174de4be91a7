"""What the timm and torchvision adapters share: building an image classifier with the right
number of outputs, fitting a checkpoint to it, naming its outputs, and the image batches.

A family subclass supplies :meth:`TorchImageAdapter._build` (architecture with ``n``
outputs), :meth:`TorchImageAdapter._make_transform` (PIL image → tensor) and, optionally,
what it knows of the pretrained head (``_pretrained_head_size``, ``_pretrained_labels``).
Everything else — the order in
which ``model_args``, the checkpoint and the dataset decide the class count, and the rules
for label names — is written once here.
"""

from __future__ import annotations

import functools
from abc import abstractmethod
from collections.abc import Callable, Sequence
from typing import Any

from headtohead.adapters.base import LoadContext, ModelAdapter
from headtohead.adapters.weights import Checkpoint, apply_state_dict, checkpoint_num_outputs, read_checkpoint
from headtohead.config.models.vision import ArchitectureSettings
from headtohead.config.schema import ModelConfig
from headtohead.errors import ModelError
from headtohead.runtime.offline import unreachable

__all__ = [
    "TorchImageAdapter",
    "images_to_batch",
    "standard_transform",
    "plain_transform",
    "reachable",
    "count_outputs",
    "IMAGENET_MEAN",
    "IMAGENET_STD",
]

IMAGENET_MEAN = (0.485, 0.456, 0.406)
IMAGENET_STD = (0.229, 0.224, 0.225)
# Classic ImageNet evaluation: resize to 256, centre-crop 224 (timm's crop_pct 0.875).
_CROP_RATIO = 224 / 256


def reachable(url: str, timeout: float = 3.0) -> bool:
    """Whether ``url``'s host accepts a TCP connection within ``timeout`` seconds.

    Checked before a download so that a machine without network fails in seconds
    instead of waiting through the download libraries' retries (about 50 s for the Hub).
    """
    return unreachable(url, timeout) is None


def images_to_batch(examples: Sequence[Any], transform: Callable[[Any], Any]) -> Any:  # a torch.Tensor
    """Open each image example, apply ``transform`` and stack into a ``float32`` batch.

    Parameters
    ----------
    examples : sequence
        Paths or ``uint8`` arrays (see :func:`headtohead.data.image_io.to_pil`).
    transform : callable
        PIL image → ``C×H×W`` tensor.

    Returns
    -------
    torch.Tensor of shape (batch, C, H, W)
    """
    import torch

    from headtohead.data.image_io import to_pil

    return torch.stack([transform(to_pil(example)) for example in examples]).float()


def standard_transform(image_size: int | None = None) -> Callable[[Any], Any]:
    """ImageNet-style evaluation transform: resize, centre crop to ``image_size`` (224), normalise.

    The short side is resized to ``image_size / 0.875`` first, as in the standard
    ImageNet evaluation (256 → 224).
    """
    from torchvision import transforms

    size = image_size or 224
    transform: Callable[[Any], Any] = transforms.Compose(
        [
            transforms.Resize(round(size / _CROP_RATIO)),
            transforms.CenterCrop(size),
            transforms.ToTensor(),
            transforms.Normalize(IMAGENET_MEAN, IMAGENET_STD),
        ]
    )
    return transform


def plain_transform(image_size: int) -> Callable[[Any], Any]:
    """Resize to ``image_size × image_size`` and scale to ``[0, 1]``; no normalisation."""
    from torchvision import transforms

    transform: Callable[[Any], Any] = transforms.Compose(
        [transforms.Resize((image_size, image_size)), transforms.ToTensor()]
    )
    return transform


class TorchImageAdapter(ModelAdapter):
    """Base of the torch image-classifier families (timm, torchvision).

    The class count is decided in this order: ``model_args.num_classes`` (the user said
    so); the label names stored in the checkpoint; ``label_names`` of the model config;
    the dataset's class count. A checkpoint whose classifier has another size overrides
    the last three (the model is rebuilt to fit it). A checkpoint replaces every weight,
    so ``pretrained`` is ignored when one is given.

    Output names, in order: the config's ``label_names``; the checkpoint's; the pretrained
    weights' own categories when their head is kept (``None`` if the family does not name
    them); the dataset's names when the model has as many outputs as the dataset has
    classes; else ``None``.
    """

    config: ArchitectureSettings  # the family's keys (timm, torchvision)

    def __init__(self, config: ModelConfig, context: LoadContext) -> None:
        super().__init__(config, context)
        self.transform: Callable[[Any], Any] | None = None
        self.num_outputs = 0

    # -- what a family supplies -------------------------------------------------------
    @abstractmethod
    def _build(self, num_classes: int, pretrained: bool) -> Any:  # an nn.Module
        """The architecture with ``num_classes`` outputs, with pretrained weights when asked."""

    @abstractmethod
    def _make_transform(self) -> Callable[[Any], Any]:
        """PIL image → normalised tensor, for :attr:`module`."""

    def _pretrained_head_size(self, module: Any) -> int | None:
        """Outputs of the pretrained weights' own classifier (``None`` when unknown)."""
        return None

    def _pretrained_labels(self) -> tuple[str, ...] | None:
        """Names of the pretrained classifier's outputs, when the family knows them."""
        return None

    # -- shared loading ---------------------------------------------------------------
    @classmethod
    def load(cls, config: ModelConfig, context: LoadContext) -> TorchImageAdapter:
        """Build the architecture, load the checkpoint if any, and prepare preprocessing."""
        adapter = cls(config, context)
        adapter._load()
        return adapter

    def _load(self) -> None:
        import torch

        config, context = self.config, self.context
        checkpoint = None
        if config.checkpoint:
            checkpoint = read_checkpoint(
                context.resolve_path(config.checkpoint), model=config.name, allow_pickle=config.allow_pickle
            )
        # A checkpoint replaces every weight, so pretrained weights would be downloaded for nothing.
        pretrained = config.pretrained and checkpoint is None
        requested = self._requested_classes(checkpoint)
        with torch.random.fork_rng(devices=[]):
            # A fresh head is random; seed it so every run (and every model) starts the same way.
            torch.manual_seed(context.seed)
            module = self._build(requested, pretrained)
            if checkpoint is not None:
                module = self._fit_checkpoint(module, checkpoint)
        self.num_outputs = count_outputs(module)
        head_kept = pretrained and self._pretrained_head_size(module) == self.num_outputs
        self.label_names = self._choose_label_names(checkpoint, head_kept)
        if checkpoint is None and not pretrained:
            self.warn(
                f"model '{self.name}' has random weights (no checkpoint, pretrained: false); its scores "
                f"are chance-level unless it is trained first"
            )
        elif pretrained and not head_kept:
            self.warn(
                f"model '{self.name}': pretrained backbone with a new, randomly initialised "
                f"{self.num_outputs}-class head; train it before comparing quality"
            )
        self.module = module.to(self.device).eval()
        self.transform = self._make_transform()

    def _requested_classes(self, checkpoint: Checkpoint | None) -> int:
        if "num_classes" in self.config.model_args:
            return int(self.config.model_args["num_classes"])
        if checkpoint is not None and checkpoint.label_names:
            return len(checkpoint.label_names)
        if self.config.label_names:
            return len(self.config.label_names)
        return len(self.context.label_names)

    def _fit_checkpoint(self, module: Any, checkpoint: Checkpoint) -> Any:
        built = count_outputs(module)
        found = checkpoint_num_outputs(module, checkpoint.state_dict, built)
        if found is not None and found != built and "num_classes" not in self.config.model_args:
            # The checkpoint's classifier decides the class count; rebuild with its size.
            module = self._build(found, False)
        apply_state_dict(module, checkpoint.state_dict, model=self.name, source=str(checkpoint.path))
        return module

    def _choose_label_names(self, checkpoint: Checkpoint | None, head_kept: bool) -> tuple[str, ...] | None:
        n = self.num_outputs
        for names, where in (
            (self.config.label_names, "label_names in the experiment"),
            (checkpoint.label_names if checkpoint else None, f"checkpoint {self.config.checkpoint}"),
        ):
            if names:
                if len(names) != n:
                    raise ModelError(
                        f"model '{self.name}': {where} gives {len(names)} names but the model has "
                        f"{n} outputs; give one name per output, in output order"
                    )
                return tuple(str(x) for x in names)
        if head_kept:
            return self._pretrained_labels()
        if n == len(self.context.label_names):
            return tuple(self.context.label_names)
        return None

    # -- the ModelAdapter interface ---------------------------------------------------
    def preprocess(self, examples: Sequence[Any]) -> Any:
        """Images → a ``float32`` batch ``(n, 3, H, W)`` through the model's eval transform."""
        assert self.transform is not None, "load() sets the transform"
        return images_to_batch(examples, self.transform)

    def preprocess_function(self) -> Callable[[Sequence[Any]], Any]:
        """:meth:`preprocess` without the model, for worker processes (decoding, resizing)."""
        assert self.transform is not None, "load() sets the transform"
        return functools.partial(images_to_batch, transform=self.transform)

    def forward(self, inputs: Any) -> Any:
        """Logits ``(n, num_outputs)`` under ``torch.inference_mode``."""
        import torch

        with torch.inference_mode():
            return self.module(inputs)


def count_outputs(module: Any) -> int:
    """Class count of a built classifier: its ``num_classes`` or the last layer's rows."""
    n = getattr(module, "num_classes", None)
    if isinstance(n, int) and n > 0:
        return n
    for _, sub in reversed(list(module.named_modules())):
        weight = getattr(sub, "weight", None)
        if weight is not None and getattr(weight, "ndim", 0) >= 2:
            return int(weight.shape[0])
    raise ModelError(f"cannot tell how many outputs {type(module).__name__} has; set label_names on the model")
