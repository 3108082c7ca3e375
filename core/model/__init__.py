"""Pydantic models for everything that crosses a boundary (files, store, pages, CLI)."""
