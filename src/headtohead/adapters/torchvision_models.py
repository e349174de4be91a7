"""torchvision image classifiers (``kind: torchvision``).

See ``docs/api/adapters.md``, the section of this title.
"""

from __future__ import annotations

from collections.abc import Callable
from pathlib import Path
from typing import Any, ClassVar, cast

from headtohead.adapters.vision import TorchImageAdapter, reachable, standard_transform
from headtohead.adapters.weights import error_summary, output_layer_name
from headtohead.errors import ModelError, did_you_mean
from headtohead.runtime.offline import offline_requested

__all__ = ["TorchvisionAdapter"]

# ImageNet evaluation resizes the short side to 256 before a 224 crop; keep that ratio.
_RESIZE_RATIO = 256 / 224


class TorchvisionAdapter(TorchImageAdapter):
    """A classification model of ``torchvision.models``; see
    :class:`~headtohead.adapters.vision.TorchImageAdapter` for how the class count and the
    label names are decided."""

    kind: ClassVar[str] = "torchvision"
    load_imports: ClassVar[tuple[str, ...]] = ("torch", "torchvision")

    def _architecture(self) -> str:
        import torchvision

        source = self.config.source
        classifiers = torchvision.models.list_models(module=torchvision.models)
        if source in classifiers:
            return source
        if source in torchvision.models.list_models():
            raise ModelError(
                f"model '{self.name}': torchvision '{source}' is not an image classifier "
                f"(detection/segmentation/video models are not supported); pick a classifier "
                f"such as resnet18"
            )
        raise ModelError(
            f"model '{self.name}': torchvision has no classification model '{source}'"
            f"{did_you_mean(source, classifiers)} (see torchvision.models.list_models())"
        )

    def _weights(self) -> Any:
        """The ``DEFAULT`` weights entry of the architecture (an enum value of torchvision)."""
        import torchvision

        return torchvision.models.get_model_weights(self._architecture()).DEFAULT

    def _build(self, num_classes: int, pretrained: bool) -> Any:
        import torchvision

        name = self._architecture()
        args = {k: v for k, v in self.config.model_args.items() if k != "num_classes"}
        try:
            if not pretrained:
                return torchvision.models.get_model(name, weights=None, num_classes=num_classes, **args)
            weights = self._weights()
            if num_classes == len(weights.meta["categories"]):
                return self._download(lambda: torchvision.models.get_model(name, weights=weights, **args))
            state = self._download(lambda: weights.get_state_dict(progress=False, check_hash=True))
            return self._new_head(name, num_classes, args, state)
        except (TypeError, ValueError) as exc:
            raise ModelError(
                f"model '{self.name}': torchvision '{name}' cannot be built with model_args "
                f"{sorted(args)} ({error_summary(exc)}); remove or rename them"
            ) from exc

    def _download(self, fetch: Callable[[], Any]) -> Any:
        """Run ``fetch`` (which reads the pretrained weights), failing fast and clearly offline."""
        import torch

        url = self._weights().url
        cached = Path(torch.hub.get_dir()) / "checkpoints" / Path(url).name
        if not cached.is_file():
            if offline_requested():
                raise self._offline_error("HF_HUB_OFFLINE is set and they are not in the torch hub cache")
            if not reachable(url):
                raise self._offline_error(f"not in the torch hub cache and {url} cannot be reached")
        try:
            return fetch()
        except OSError as exc:  # URLError and friends: no network
            raise self._offline_error(error_summary(exc)) from exc
        except RuntimeError as exc:  # a damaged file in the cache fails its hash check or unzip
            raise ModelError(
                f"model '{self.name}': cached pretrained weights {cached} are damaged "
                f"({error_summary(exc)}); delete the file and download again"
            ) from exc

    def _new_head(self, name: str, num_classes: int, args: dict[str, Any], state: dict[str, Any]) -> Any:
        """Pretrained backbone, fresh head: load every weight except the classifier's."""
        import torchvision

        module = torchvision.models.get_model(name, weights=None, num_classes=num_classes, **args)
        head = output_layer_name(module, num_classes) or ""
        own = module.state_dict()
        keep = {k: v for k, v in state.items() if k in own and own[k].shape == v.shape}
        missing = [k for k in module.load_state_dict(keep, strict=False).missing_keys if not k.startswith(head + ".")]
        if missing:
            raise ModelError(
                f"model '{self.name}': pretrained weights of torchvision '{name}' do not fit the "
                f"architecture built with model_args {sorted(args)} (e.g. {missing[:3]}); "
                f"drop model_args that change the backbone"
            )
        return module

    def _offline_error(self, why: str) -> ModelError:
        return ModelError(
            f"model '{self.name}': pretrained weights for torchvision '{self.config.source}' are not "
            f"available offline ({why}); set pretrained: false and give a checkpoint, or run once "
            f"with network access to cache them"
        )

    def _make_transform(self) -> Callable[[Any], Any]:
        size = self.config.image_size
        if not (self.config.pretrained and self.config.checkpoint is None):
            return standard_transform(size)
        weights = self._weights()
        if size:
            return cast(
                "Callable[[Any], Any]", weights.transforms(crop_size=size, resize_size=round(size * _RESIZE_RATIO))
            )
        return cast("Callable[[Any], Any]", weights.transforms())

    def _pretrained_head_size(self, module: Any) -> int | None:
        return len(self._weights().meta["categories"])

    def _pretrained_labels(self) -> tuple[str, ...] | None:
        return tuple(self._weights().meta["categories"])
