"""timm image classifiers (``kind: timm``).

See ``docs/api/adapters.md``, "timm image classifiers (`kind: timm`)".
"""

from __future__ import annotations

from collections.abc import Callable
from typing import Any, ClassVar, cast

from headtohead.adapters.vision import TorchImageAdapter, reachable
from headtohead.adapters.weights import error_summary
from headtohead.errors import ModelError, did_you_mean
from headtohead.runtime.offline import offline_requested

__all__ = ["TimmAdapter"]


class TimmAdapter(TorchImageAdapter):
    """A model of the timm library; see :class:`~headtohead.adapters.vision.TorchImageAdapter`
    for how the class count and the label names are decided."""

    kind: ClassVar[str] = "timm"
    load_imports: ClassVar[tuple[str, ...]] = ("torch", "timm")

    def _build(self, num_classes: int, pretrained: bool) -> Any:
        import timm

        source = self.config.source
        kwargs = {**self.config.model_args, "num_classes": num_classes}
        size = self.config.image_size
        pretrained_cfg = _pretrained_cfg(source)
        if size and pretrained_cfg is not None and pretrained_cfg.fixed_input_size and "img_size" not in kwargs:
            # Models with a fixed input (ViT position embeddings) must be built for the new size.
            kwargs["img_size"] = size
        if pretrained and not _hf_cached(pretrained_cfg):
            if offline_requested():
                raise _offline_error(self.name, source, "HF_HUB_OFFLINE is set and they are not in the local cache")
            endpoint = _hub_endpoint()
            if not reachable(endpoint):
                raise _offline_error(self.name, source, f"not in the local cache and {endpoint} cannot be reached")
        try:
            return timm.create_model(source, pretrained=pretrained, **kwargs)
        except RuntimeError as exc:
            if str(exc).startswith("Unknown model"):
                base = source.split(".", 1)[0]
                raise ModelError(
                    f"model '{self.name}': timm has no architecture '{source}'"
                    f"{did_you_mean(base, timm.list_models())} (list them with "
                    f"python -c \"import timm; print(timm.list_models('*{base[:4]}*'))\")"
                ) from None
            raise ModelError(
                f"model '{self.name}': timm could not build '{source}' ({error_summary(exc)}); check model_args"
            ) from exc
        except TypeError as exc:
            raise ModelError(
                f"model '{self.name}': timm '{source}' does not accept model_args "
                f"{sorted(self.config.model_args)} ({error_summary(exc)}); remove or rename them"
            ) from exc
        except OSError as exc:  # huggingface_hub and urllib errors: no file, no network
            raise _offline_error(self.name, source, error_summary(exc)) from exc

    def _make_transform(self) -> Callable[[Any], Any]:
        from timm.data import create_transform, resolve_data_config

        size = self.config.image_size
        overrides = {"input_size": (3, size, size)} if size else {}
        data_config = resolve_data_config(overrides, model=self.module)
        return cast("Callable[[Any], Any]", create_transform(**data_config, is_training=False))

    def _pretrained_head_size(self, module: Any) -> int | None:
        cfg = getattr(module, "pretrained_cfg", None) or {}
        n = cfg.get("num_classes")
        return int(n) if n else None


def _pretrained_cfg(source: str) -> Any:
    """timm's default configuration for ``source`` (``None`` for hub ids and unknown names)."""
    import timm

    if source.startswith(("hf-hub:", "hf_hub:", "local-dir:")):
        return None
    try:
        return timm.get_pretrained_cfg(source)
    except (RuntimeError, ValueError):
        return None


def _hf_cached(pretrained_cfg: Any) -> bool:
    """Whether the pretrained weights are already in the Hugging Face cache."""
    hub_id = getattr(pretrained_cfg, "hf_hub_id", None)
    if not hub_id:
        return False
    from huggingface_hub import try_to_load_from_cache

    return any(
        isinstance(try_to_load_from_cache(hub_id, name), str)
        for name in ("model.safetensors", "pytorch_model.bin", "open_clip_pytorch_model.bin")
    )


def _hub_endpoint() -> str:
    from huggingface_hub import constants

    return str(constants.ENDPOINT)


def _offline_error(model: str, source: str, why: str) -> ModelError:
    return ModelError(
        f"model '{model}': pretrained weights for timm '{source}' are not available offline ({why}); "
        f"set pretrained: false and give a checkpoint, or run once with network access to cache them"
    )
