"""Which ``pip install "headtohead[…]"`` extra brings an optional dependency, and the one-line error saying so.

The base install compares prediction files and scikit-learn models, computes every statistic,
runs the gate and writes every report, without torch, transformers or timm. Model families
that need more come as extras. Which extra lists which distribution is read from the installed
package's own metadata (``pyproject.toml``'s ``[project.optional-dependencies]``, as
``importlib.metadata.requires("headtohead")`` gives it), so it cannot drift from what ``pip``
installs; what is kept here is only the import name of a distribution whose name differs
(``sklearn`` is scikit-learn's).
"""

from __future__ import annotations

import functools
import importlib.metadata
import importlib.util
import re
from collections.abc import Mapping
from dataclasses import dataclass

from headtohead.errors import ModelError

__all__ = ["DISTRIBUTIONS", "Extras", "declared_extras", "distribution", "extra_for", "installed", "missing_dependency"]

#: Import name → the distribution ``pyproject.toml`` lists for it, where the two names differ
#: (beyond ``_`` for ``-`` and case). A test checks each against ``pyproject.toml``.
DISTRIBUTIONS: Mapping[str, str] = {
    "sklearn": "scikit-learn",
    "PIL": "pillow",
    "yaml": "pyyaml",
    "pynvml": "nvidia-ml-py",
    "mlflow": "mlflow-skinny",
    "mlperf_loadgen": "mlcommons-loadgen",
    "inspect_ai": "inspect-ai",
    "lm_eval": "lm-eval",
}
_IMPORT_NAMES = {dist: module for module, dist in DISTRIBUTIONS.items()}
#: Extras that are no user's way to a module (the developer's tools list every optional package).
_NOT_OFFERED = ("dev",)
_REQUIREMENT = re.compile(r"^\s*([A-Za-z0-9][A-Za-z0-9._-]*)\s*(?:\[([^\]]*)\])?")
_EXTRA_MARKER = re.compile(r"""extra\s*==\s*["']([^"']+)["']""")


def _normalised(name: str) -> str:
    """A distribution name as PEP 503 compares it: ``Nvidia_ML.py`` → ``nvidia-ml-py``."""
    return re.sub(r"[-_.]+", "-", name).lower()


def distribution(module: str) -> str:
    """The (normalised) distribution that installs ``module`` (``"sklearn.svm"`` → ``"scikit-learn"``).

    Examples
    --------
    >>> distribution("pynvml"), distribution("onnxruntime.capi"), distribution("huggingface_hub")
    ('nvidia-ml-py', 'onnxruntime', 'huggingface-hub')
    """
    top = module.split(".")[0]
    return DISTRIBUTIONS.get(top) or _normalised(top)


@dataclass(frozen=True)
class Extras:
    """The extras a package declares: the distributions each lists, and the extras of its own it includes."""

    #: Extra → the distributions it lists itself (normalised), in the order written.
    direct: Mapping[str, tuple[str, ...]]
    #: Extra → this package's extras it includes (``text = ["headtohead[torch]", …]``), sorted.
    nested: Mapping[str, tuple[str, ...]]

    @classmethod
    def parse(cls, requirements: list[str], package: str = "headtohead") -> Extras:
        """The extras of ``requirements`` (``Requires-Dist`` strings); a requirement without ``extra ==`` is the base.

        Examples
        --------
        >>> e = Extras.parse(['numpy>=1', 'torch>=2; extra == "torch"', 'headtohead[torch]; extra == "text"',
        ...                   'transformers>=4; extra == "text"'])
        >>> dict(e.direct), dict(e.nested), sorted(e.brings("text"))
        ({'torch': ('torch',), 'text': ('transformers',)}, {'text': ('torch',)}, ['torch', 'transformers'])
        """
        direct: dict[str, list[str]] = {}
        nested: dict[str, list[str]] = {}
        for text in requirements:
            requirement, _, marker = text.partition(";")
            named, extra = _REQUIREMENT.match(requirement), _EXTRA_MARKER.search(marker)
            if named is None or extra is None:
                continue
            name = _normalised(named.group(1))
            if name == _normalised(package):
                included = [part.strip() for part in (named.group(2) or "").split(",") if part.strip()]
                nested.setdefault(extra.group(1), []).extend(included)
            else:
                direct.setdefault(extra.group(1), []).append(name)
        # the metadata writes headtohead[torch,text] as headtohead[text,torch]: their order says nothing
        return cls({k: tuple(v) for k, v in direct.items()}, {k: tuple(sorted(set(v))) for k, v in nested.items()})

    def brings(self, extra: str) -> frozenset[str]:
        """Every distribution ``pip install "headtohead[extra]"`` installs of the ones declared, nested extras too."""
        seen: set[str] = set()
        todo, found = [extra], set[str]()
        while todo:
            name = todo.pop()
            if name not in seen:
                seen.add(name)
                found.update(self.direct.get(name, ()))
                todo.extend(self.nested.get(name, ()))
        return frozenset(found)

    def listing(self, dist: str) -> list[str]:
        """The extras that list ``dist`` themselves, in the order declared (``dev`` never)."""
        return [extra for extra, names in self.direct.items() if dist in names and extra not in _NOT_OFFERED]


@functools.lru_cache(maxsize=1)
def declared_extras() -> Extras:
    """The extras of the installed headtohead, from its metadata (none when it is run from an uninstalled copy)."""
    try:
        requirements = importlib.metadata.requires("headtohead") or []
    except importlib.metadata.PackageNotFoundError:
        requirements = []
    return Extras.parse(requirements)


def extra_for(module: str | None, family_extra: str | None = None) -> str | None:
    """The extra to install for ``module`` (``"torch.nn"`` → ``"torch"``), or ``None`` when no extra brings it.

    The model family's own extra when it brings the module, nested extras included (``timm``'s
    family installs ``vision``, which brings torch too): a new user installs the family once,
    not one module at a time. Else the first extra that lists the module's distribution itself.
    A module no extra names (``huggingface_hub``, which transformers brings) is the family's
    extra's while that extra is not installed.

    Examples
    --------
    >>> extra_for("transformers.models.bert"), extra_for("torch"), extra_for("torch", "vision"), extra_for("numpy")
    ('text', 'torch', 'vision', None)
    """
    if not module:
        return None
    extras, dist = declared_extras(), distribution(module)
    if family_extra is not None and dist in extras.brings(family_extra):
        return family_extra
    listing = extras.listing(dist)
    if listing:
        return listing[0]
    if family_extra is not None and not installed(family_extra):
        return family_extra
    return None


def missing_dependency(exc: ModuleNotFoundError, what: str, family_extra: str | None = None) -> ModelError | None:
    """One line naming the extra to install when ``exc`` is an optional dependency missing; ``None`` otherwise.

    Parameters
    ----------
    exc : ModuleNotFoundError
    what : str
        What needed it (``"model 'bert' (kind transformers)"``).
    family_extra : str, optional
        The extra of the model family that needed it (its registry row's): see :func:`extra_for`.

    Examples
    --------
    >>> str(missing_dependency(ModuleNotFoundError("No module named 'timm'", name="timm"), "model 'r' (kind timm)"))
    'model \\'r\\' (kind timm) needs timm, which is not installed; install it with: pip install "headtohead[vision]"'
    """
    extra = extra_for(exc.name, family_extra)
    if extra is None or exc.name is None:
        return None
    return ModelError(
        f"{what} needs {exc.name.split('.')[0]}, which is not installed; install it with: "
        f'pip install "headtohead[{extra}]"'
    )


def installed(extra: str) -> bool:
    """Every module ``pip install "headtohead[extra]"`` brings can be imported (found, not imported)."""
    for dist in declared_extras().brings(extra):
        module = _IMPORT_NAMES.get(dist, dist.replace("-", "_"))
        try:
            if importlib.util.find_spec(module) is None:
                return False
        except (ImportError, ValueError):  # ValueError: a module set to None in sys.modules
            return False
    return True
