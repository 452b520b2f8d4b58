"""One module per export format; each has ``render(graph, options) -> bytes``, byte-deterministic."""
