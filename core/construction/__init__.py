"""Benchmark construction: worlds to build on, the build pipeline, and release import.

- :mod:`core.construction.worlds`: which host world a benchmark builds on (imported or bundled).
- :mod:`core.construction.pipeline`: graphs → verified samples, the bundled benchmark, reports.
- :mod:`core.construction.release`: importing the Drift-Bench++ release's graphs and samples.
"""
