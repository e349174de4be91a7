"""What an :class:`~headtohead.results.records.Environment` record means: the one list of the
software whose versions matter, the fingerprint of a kind of machine, a short description.

See ``docs/api/results.md``, "What an `Environment` record means".
"""

from __future__ import annotations

import hashlib
import json
from collections.abc import Iterable, Mapping

from headtohead.results.records import Environment

__all__ = [
    "SOFTWARE_VERSIONS",
    "HARDWARE_FIELDS",
    "FINGERPRINT_FIELDS",
    "software_versions",
    "environment_fingerprint",
    "group_by_environment",
    "describe_environment",
]

#: The software whose version can change a prediction or a timing: :class:`Environment` field → its name.
SOFTWARE_VERSIONS: dict[str, str] = {
    "python": "Python",
    "torch": "torch",
    "torchvision": "torchvision",
    "transformers": "transformers",
    "timm": "timm",
    "sklearn": "scikit-learn",
    "numpy": "numpy",
    "onnxruntime": "onnxruntime",
    "headtohead": "headtohead",
}
#: The hardware fields that make two machines different kinds (GPUs count too: see :func:`environment_fingerprint`).
HARDWARE_FIELDS: tuple[str, ...] = ("os", "cpu_model", "cpu_cores_logical", "cuda_available")
#: The fields of :class:`Environment` that make two workers different kinds of machine.
FINGERPRINT_FIELDS: tuple[str, ...] = (*SOFTWARE_VERSIONS, *HARDWARE_FIELDS)


def software_versions(environment: Environment) -> dict[str, str | None]:
    """The versions that matter (:data:`SOFTWARE_VERSIONS`) plus the first GPU's CUDA and driver versions.

    Returns
    -------
    dict of str to str or None
        ``None`` for what is not installed (``cuda``/``driver`` without a GPU).
    """
    gpu = environment.gpus[0] if environment.gpus else None
    values = {field: getattr(environment, field, None) for field in SOFTWARE_VERSIONS}
    values.update(cuda=gpu.cuda if gpu else None, driver=gpu.driver if gpu else None)
    return values


def environment_fingerprint(environment: Environment) -> str:
    """A 12-character hash of the hardware and software that matter (see :data:`FINGERPRINT_FIELDS`).

    GPUs count by name, driver, CUDA version and memory, not by index, so two nodes with
    the same cards share a fingerprint.

    Parameters
    ----------
    environment : Environment
        A worker's environment (:func:`headtohead.engines.environment.capture_environment`).

    Returns
    -------
    str
        Hex digits; equal for identical stacks on identical hardware.
    """
    payload = {name: getattr(environment, name) for name in FINGERPRINT_FIELDS}
    payload["gpus"] = sorted([g.name, g.driver, g.cuda, g.memory_total_mb] for g in environment.gpus)
    text = json.dumps(payload, sort_keys=True, default=str)
    return hashlib.sha256(text.encode()).hexdigest()[:12]


def describe_environment(environment: Environment) -> str:
    """A short human label: GPU names (× count) or the CPU model, and the torch version.

    Examples
    --------
    ``2× NVIDIA A100-SXM4-80GB, torch 2.14.1``
    """
    names = [g.name for g in environment.gpus]
    if names:
        hardware = ", ".join(f"{names.count(n)}× {n}" for n in dict.fromkeys(names))
    else:
        hardware = environment.cpu_model
    return f"{hardware}, torch {environment.torch}" if environment.torch else hardware


def group_by_environment(environments: Mapping[str, Iterable[Environment]]) -> dict[str, list[str]]:
    """Group names (models) by the fingerprints of the workers that produced them.

    Parameters
    ----------
    environments : mapping of str to iterable of Environment
        Model name → the environments of its workers (one per shard).

    Returns
    -------
    dict of str to list of str
        Fingerprint → model names, in first-seen order. A model sharded over workers of
        different kinds appears under each of their fingerprints.

    Examples
    --------
    >>> group_by_environment({"a": [env1], "b": [env1], "c": [env2]})  # doctest: +SKIP
    {'3f2a9c1b7d4e': ['a', 'b'], '91c0e5aa02f8': ['c']}
    """
    groups: dict[str, list[str]] = {}
    for name, envs in environments.items():
        for fingerprint in dict.fromkeys(environment_fingerprint(e) for e in envs):
            groups.setdefault(fingerprint, []).append(name)
    return groups
