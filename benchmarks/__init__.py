"""Speed benchmarks, run with ``python -m benchmarks`` (or ``make bench``).

Each benchmark measures Lucid and, when importable, the reference systems side by side in the
same process, and prints a table with ratios.  Targets live in the issues, not in unit tests.
"""
