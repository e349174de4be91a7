"""Python's cycle collector during a run: the imported libraries set aside while models come and go.

See ``docs/architecture.md``, the section of this title.
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
