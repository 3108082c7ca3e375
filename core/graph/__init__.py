"""Intent-graph construction: classify, retrieve, enumerate, execute, admit and rank."""
