"""The statistical audit's sections (``benchmarks/audit_statistics.py`` runs them)."""
