"""ONNX models run with ONNX Runtime (``kind: onnx``).

See ``docs/api/adapters.md``, "ONNX models run with ONNX Runtime (`kind: onnx`)".
"""

from __future__ import annotations

import json
from collections.abc import Mapping, Sequence
from pathlib import Path
from typing import Any, ClassVar, cast

import numpy as np

from headtohead.adapters.base import LoadContext, ModelAdapter
from headtohead.adapters.weights import error_summary
from headtohead.config.models.onnx import OnnxSettings
from headtohead.config.schema import ModelConfig
from headtohead.errors import ModelError

__all__ = [
    "OnnxRuntimeAdapter",
    "create_session",
    "session_feed",
    "onnx_weight_stats",
    "LABELS_METADATA_KEY",
    "ort_providers",
]

#: Metadata key holding the output names (a JSON list) in files headtohead exports.
LABELS_METADATA_KEY = "h2h.label_names"
_DEFAULT_IMAGE_SIZE = 224
_FALLBACK_MAX_LENGTH = 512
_NUMPY_TYPES = {
    "tensor(int64)": np.int64,
    "tensor(int32)": np.int32,
    "tensor(float)": np.float32,
    "tensor(double)": np.float64,
    "tensor(float16)": np.float16,
    "tensor(bool)": np.bool_,
}


def ort_providers(device: str, *, model: str) -> list[Any]:
    """The execution providers for ``device``: CPU, or CUDA (device id set) with CPU as fallback.

    Raises
    ------
    ModelError
        A GPU is asked for but this onnxruntime has no CUDA provider, or the device has no provider at all.
    """
    import onnxruntime

    if device == "cpu":
        return ["CPUExecutionProvider"]
    if device.startswith("cuda"):
        if "CUDAExecutionProvider" not in onnxruntime.get_available_providers():
            raise ModelError(
                f"model '{model}': this onnxruntime has no CUDA provider (available: "
                f"{', '.join(onnxruntime.get_available_providers())}); install onnxruntime-gpu or "
                f"set eval.device: cpu"
            )
        index = int(device.split(":", 1)[1]) if ":" in device else 0
        return [("CUDAExecutionProvider", {"device_id": index}), "CPUExecutionProvider"]
    raise ModelError(f"model '{model}': ONNX Runtime cannot run on device '{device}' here; use cpu or cuda")


def create_session(path: str | Path, *, device: str, model: str, threads: int | None = None) -> Any:
    """An ``onnxruntime.InferenceSession`` for ``path`` on ``device``.

    Parameters
    ----------
    path : str or Path
        The ``.onnx`` file.
    device : str
        A resolved device (``cpu``, ``cuda:0``).
    model : str
        The model's name, for messages.
    threads : int, optional
        Intra-op threads; by default torch's current setting, so that PyTorch and ONNX Runtime
        models of one run use the same number of cores.

    Returns
    -------
    onnxruntime.InferenceSession

    Raises
    ------
    ModelError
        The file is not a valid ONNX model.
    ModuleNotFoundError
        onnxruntime is not installed (``create_adapter`` and the CLI name the extra that brings it).
    """
    import onnxruntime

    if threads is None:
        import torch

        threads = torch.get_num_threads()
    options = onnxruntime.SessionOptions()
    options.intra_op_num_threads = int(threads)
    options.log_severity_level = 3  # errors only: its warnings about unused initialisers are noise here
    # Idle ORT threads busy-wait for the next call by default; beside other models in the same
    # process (interleaved speed rounds, sweeps) that spinning steals their cores.
    options.add_session_config_entry("session.intra_op.allow_spinning", "0")
    try:
        return onnxruntime.InferenceSession(str(path), options, providers=ort_providers(device, model=model))
    except ModelError:
        raise
    except Exception as exc:  # onnxruntime raises its own Fail/InvalidGraph/InvalidProtobuf types
        raise ModelError(
            f"model '{model}': ONNX Runtime cannot load {path} ({error_summary(exc)}); check that it is "
            f"an .onnx model file (export it again if it is truncated)"
        ) from exc


def session_feed(session: Any, inputs: Any, *, model: str) -> dict[str, np.ndarray]:
    """Turn a batch (a mapping of tensors/arrays, or one tensor/array) into ONNX Runtime's input dict.

    Each graph input takes the entry of the same name, cast to the graph's type; a single
    tensor goes to the first input. A missing ``token_type_ids`` is filled with zeros (one
    sentence per example), as the PyTorch models do.

    Raises
    ------
    ModelError
        The graph needs an input the batch does not have.
    """
    graph_inputs = session.get_inputs()
    if not isinstance(inputs, Mapping):
        inputs = {graph_inputs[0].name: inputs}
    feed: dict[str, np.ndarray] = {}
    for spec in graph_inputs:
        value = inputs.get(spec.name)
        if value is None and spec.name == "token_type_ids" and "input_ids" in inputs:
            value = np.zeros(np.shape(_as_numpy(inputs["input_ids"])), dtype=np.int64)
        if value is None:
            raise ModelError(
                f"model '{model}': the ONNX graph needs input '{spec.name}' but the batch has "
                f"{sorted(inputs)}; export the model with the inputs its preprocessing produces"
            )
        feed[spec.name] = np.ascontiguousarray(_as_numpy(value), dtype=_NUMPY_TYPES.get(spec.type))
    return feed


def onnx_weight_stats(path: str | Path) -> tuple[int, int]:
    """``(number of weights, bytes)`` of an ONNX file's initialisers (its parameters)."""
    import onnx
    from onnx.helper import tensor_dtype_to_np_dtype

    graph = onnx.load(str(path), load_external_data=False).graph
    count = size = 0
    for init in graph.initializer:
        n = int(np.prod(init.dims)) if len(init.dims) else 1
        count += n
        size += n * np.dtype(tensor_dtype_to_np_dtype(init.data_type)).itemsize
    return count, size


def _as_numpy(value: Any) -> np.ndarray:
    if hasattr(value, "detach"):
        return cast(np.ndarray, value.detach().cpu().numpy())
    return np.asarray(value)


class OnnxRuntimeAdapter(ModelAdapter):
    """An ``.onnx`` classifier run by ONNX Runtime (see the module docstring).

    Attributes
    ----------
    session : onnxruntime.InferenceSession
    tokenizer : transformers tokenizer or None
        Text models only.
    max_length : int or None
        Truncation length of text models.
    """

    kind: ClassVar[str] = "onnx"
    load_imports: ClassVar[tuple[str, ...]] = ("onnxruntime",)
    config: OnnxSettings

    def __init__(self, config: ModelConfig, context: LoadContext) -> None:
        super().__init__(config, context)
        self.session: Any = None
        self.path: Path | None = None
        self.tokenizer: Any = None
        self.max_length: int | None = None
        self.transform: Any = None
        self._weights = (0, 0)

    @classmethod
    def load(cls, config: ModelConfig, context: LoadContext) -> OnnxRuntimeAdapter:
        """Open ``config.source`` with ONNX Runtime and prepare the preprocessing of the data's modality.

        Raises
        ------
        ModelError
            Missing or invalid file, missing tokenizer for text, bad mean/std, unavailable provider.
        """
        self = cls(config, context)
        self.path = _check_file(config, context)
        self.session = create_session(self.path, device=context.device, model=config.name)
        self.output_kind = self.config.outputs
        self.label_names = self._label_names()
        if context.modality in ("text", "text_pair"):
            self._setup_text()
        elif context.modality == "image":
            self._setup_image()
        self._weights = onnx_weight_stats(self.path)
        return self

    def _label_names(self) -> tuple[str, ...] | None:
        if self.config.label_names:
            return tuple(str(n) for n in self.config.label_names)
        stored = self.session.get_modelmeta().custom_metadata_map.get(LABELS_METADATA_KEY)
        if stored:
            try:
                names = json.loads(stored)
            except json.JSONDecodeError:
                names = None
            if isinstance(names, list) and names:
                return tuple(str(n) for n in names)
        return None

    def _setup_text(self) -> None:
        config = self.config
        if not config.tokenizer:
            raise ModelError(
                f"model '{self.name}': an ONNX text model needs its tokenizer; set tokenizer: to the "
                f"local folder of the Hugging Face tokenizer it was exported with"
            )
        folder = self.context.resolve_path(config.tokenizer)
        if not folder.is_dir():
            raise ModelError(
                f"model '{self.name}': tokenizer folder {folder} not found; point tokenizer: at the "
                f"folder tokenizer.save_pretrained wrote"
            )
        from transformers import AutoTokenizer

        try:
            self.tokenizer = AutoTokenizer.from_pretrained(str(folder), local_files_only=True)
        except (OSError, ValueError, KeyError, TypeError) as exc:
            raise ModelError(
                f"model '{self.name}': cannot load the tokenizer in {folder} ({error_summary(exc)}); "
                f"save it there with tokenizer.save_pretrained"
            ) from exc
        stated = getattr(self.tokenizer, "model_max_length", None)
        limit = stated if isinstance(stated, int) and stated < 10**9 else _FALLBACK_MAX_LENGTH
        if config.max_length is not None and config.max_length > limit:
            raise ModelError(
                f"model '{self.name}': max_length {config.max_length} is beyond its tokenizer's limit "
                f"of {limit} tokens; set max_length to {limit} or less"
            )
        self.max_length = config.max_length or limit

    def _setup_image(self) -> None:
        from torchvision import transforms

        from headtohead.adapters.vision import IMAGENET_MEAN, IMAGENET_STD

        config = self.config
        mean, std = config.mean or list(IMAGENET_MEAN), config.std or list(IMAGENET_STD)
        if len(mean) != len(std) or any(s <= 0 for s in std):
            raise ModelError(
                f"model '{self.name}': mean {mean} and std {std} must have one value per channel and "
                f"std must be positive; e.g. mean: [0.485, 0.456, 0.406], std: [0.229, 0.224, 0.225]"
            )
        shape = self.session.get_inputs()[0].shape
        fixed = shape[-1] if len(shape) == 4 and isinstance(shape[-1], int) else None
        if config.image_size and fixed and config.image_size != fixed:
            raise ModelError(
                f"model '{self.name}': image_size {config.image_size} does not fit the graph's fixed "
                f"input of {fixed}×{fixed} pixels; remove image_size or export for that size"
            )
        size = config.image_size or fixed or _DEFAULT_IMAGE_SIZE
        self.transform = transforms.Compose(
            [
                transforms.Resize(round(size / 0.875)),
                transforms.CenterCrop(size),
                transforms.ToTensor(),
                transforms.Normalize(mean, std),
            ]
        )

    def preprocess(self, examples: Sequence[Any]) -> Any:
        """Token ids (text), a ``float32`` NCHW array (images) or ``float32`` rows (features)."""
        modality = self.context.modality
        if modality in ("text", "text_pair"):
            first, second = _texts(examples, self.name)
            encoded = self.tokenizer(
                first, second, truncation=True, max_length=self.max_length, padding="longest", return_tensors="np"
            )
            names = {spec.name for spec in self.session.get_inputs()}
            return {k: np.asarray(v, dtype=np.int64) for k, v in encoded.items() if k in names}
        if modality == "image":
            return image_array(examples, self.transform)
        return np.asarray(examples, dtype=np.float32).reshape(len(examples), -1)

    def preprocess_function(self) -> Any:
        """For images: decoding and resizing in worker processes (see :meth:`preprocess`)."""
        if self.context.modality != "image":
            return None
        import functools

        return functools.partial(image_array, transform=self.transform)

    def to_device(self, inputs: Any) -> Any:
        """Inputs stay on the host; ONNX Runtime copies them to its device itself."""
        return session_feed(self.session, inputs, model=self.name)

    def forward(self, inputs: Any) -> np.ndarray:
        """Scores ``(batch, n_outputs)``: the graph's first output."""
        names = [spec.name for spec in self.session.get_inputs()]
        ready = (
            isinstance(inputs, dict)
            and list(inputs) == names
            and all(isinstance(v, np.ndarray) for v in inputs.values())
        )  # already a feed (from to_device)
        feed = inputs if ready else session_feed(self.session, inputs, model=self.name)
        return cast(np.ndarray, self.session.run([self.session.get_outputs()[0].name], feed)[0])

    def num_parameters(self) -> int:
        return self._weights[0]

    def parameter_bytes(self) -> int:
        return self._weights[1]


def image_array(examples: Sequence[Any], transform: Any) -> np.ndarray:
    """Images → a ``float32`` NCHW array through ``transform`` (picklable, for workers)."""
    from headtohead.adapters.vision import images_to_batch

    return cast(np.ndarray, images_to_batch(examples, transform).numpy())


def _check_file(config: ModelConfig, context: LoadContext) -> Path:
    path = context.resolve_path(config.source)
    if not path.is_file():
        hint = (
            "it is a folder; name the .onnx file inside it"
            if path.is_dir()
            else "check source (relative paths are read from the experiment file's folder)"
        )
        raise ModelError(f"model '{config.name}': ONNX file {path} not found ({hint})")
    if path.suffix.lower() != ".onnx":
        raise ModelError(
            f"model '{config.name}': source {path} is not an .onnx file; export the model to ONNX "
            f"(h2h sweep with backend: onnxruntime writes one) or use another kind"
        )
    return path


def _texts(examples: Sequence[Any], model: str) -> tuple[list[str], list[str] | None]:
    """Texts, or (first texts, second texts) for sentence pairs."""
    if examples and isinstance(examples[0], (tuple, list)):
        if not all(isinstance(e, (tuple, list)) and len(e) == 2 for e in examples):
            raise ModelError(f"model '{model}': a batch mixes sentence pairs with single texts; check the dataset")
        return [str(a) for a, _ in examples], [str(b) for _, b in examples]
    return [str(e) for e in examples], None
