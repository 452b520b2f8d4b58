"""Extraction: snapshots to evidence documents (see docs/extraction.md)."""
