"""The ``h2h`` command line: a thin layer that turns arguments into library calls and prints."""
