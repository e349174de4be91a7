"""How this process runs, below every stage: the device layer (``devices``), ``--deterministic``
(``determinism``), ``--offline`` (``offline``), interrupts and out-of-memory (``faults``), and
crash-safe files (``files``). Imports nothing else of headtohead but :mod:`headtohead.errors`.
"""
