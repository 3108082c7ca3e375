"""Communication faults: taxonomy, plans, writers, extractors and the three-step verifier."""
