"""Benchmarks: each case is a ratio against a baseline measured in the same run.

Run ``python -m benchmarks`` (all suites) or ``python -m benchmarks framing``
(suites by name). Each suite module exposes ``cases() -> list[Case]``.
"""
