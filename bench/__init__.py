"""Retrieval-quality and scale benchmarks for lore (run from the repo root, see README.md)."""
