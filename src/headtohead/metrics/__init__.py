"""Quality metrics computed from predictions (scikit-learn underneath)."""

from headtohead.metrics.quality import compute_quality

__all__ = ["compute_quality"]
