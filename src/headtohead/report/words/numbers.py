"""p-values written for reading, shared by every sentence module (a leaf: it imports no other report module)."""

from __future__ import annotations

__all__ = ["format_p"]


def format_p(p: float) -> str:
    """A p-value for reading: ``< 0.001``, three decimals below 0.01, two otherwise.

    Examples
    --------
    >>> format_p(0.0004), format_p(0.0031), format_p(0.512)
    ('< 0.001', '= 0.003', '= 0.51')
    """
    if p < 0.001:
        return "< 0.001"
    return f"= {p:.3f}" if p < 0.01 else f"= {p:.2f}"
