"""Benchmarks: ``python -m bench`` runs them all and rewrites docs/PERFORMANCE.md."""
