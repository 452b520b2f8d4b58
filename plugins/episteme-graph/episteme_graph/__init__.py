"""episteme-graph: evidence-backed knowledge graphs (``.knowledge.json``), verified against the store."""

__version__ = "0.1.0"
