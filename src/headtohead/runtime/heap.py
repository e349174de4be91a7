"""Python's cycle collector during a run: the imported libraries set aside while models come and go.

After torch and transformers are imported a process holds some two million objects that
live until it exits (functions, classes, docstrings). Every full collection of the cycle
collector walks all of them: 0.3 s on the developers' 2-core machine, several times a run,
about a second of a ten-second ``h2h run`` (docs/performance.md). :func:`libraries_set_aside`
moves the objects that exist when it is entered, and again at each :meth:`~SetAside.mark`,
into the collector's permanent generation (:func:`gc.freeze`); collections then walk only
what the run made since — the models, their batches, their reference cycles, all still
freed as before. On exit everything set aside goes back to the collector
(:func:`gc.unfreeze`), so a Python session calling :func:`headtohead.run` in a loop loses
nothing: garbage that existed before the run is collected after it.
"""

from __future__ import annotations

import contextlib
import gc
from collections.abc import Iterator

__all__ = ["SetAside", "libraries_set_aside"]


class SetAside:
    """Handle of :func:`libraries_set_aside`: :meth:`mark` sets aside what was imported since."""

    def mark(self) -> None:
        """Set aside every object alive now (call after a stage that imports libraries)."""
        gc.freeze()


@contextlib.contextmanager
def libraries_set_aside() -> Iterator[SetAside]:
    """Within the block, full collections skip the objects alive at entry and at each ``mark()``.

    Yields
    ------
    SetAside
        Call ``mark()`` after a stage that imported libraries (torch, a model family).

    Examples
    --------
    >>> import gc
    >>> with libraries_set_aside() as heap:
    ...     heap.mark()
    ...     gc.get_freeze_count() > 0
    True
    """
    already = gc.get_freeze_count()
    gc.freeze()
    try:
        yield SetAside()
    finally:
        if not already:  # an outer caller froze its own heap on purpose: leave it as it was
            gc.unfreeze()
