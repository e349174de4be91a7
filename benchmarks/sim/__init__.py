"""Simulators and quick fixtures for the benchmarks, the statistical audit and the tests; not shipped.

``latency`` (speed benchmarks of any number of models on steady or drifting machines, and their
records), ``queueing`` (the Server queue computed exactly), ``simulated`` (a model whose forward
pass takes a set time on the fake clock or GPU), ``sample`` (a complete sample run for report
tests and previews), ``tfidf`` (TF-IDF models fitted in seconds), ``prompts`` (an LLM's prompts of known
accuracies against a model of one pass, for ``prompt_noise.py``, the audit and the tests). The benchmarks import them as
``sim.*`` (their folder is on ``sys.path`` when run as scripts); the tests through
``tests/conftest.py``, which puts ``benchmarks/`` on ``sys.path``.
"""
