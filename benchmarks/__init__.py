"""Benchmarks: `python -m benchmarks` measures every page's budgets on this machine."""
