"""episteme-onnx: a local sentence-embedding reader for ``episteme ask`` (onnxruntime), fused with BM25."""

__version__ = "0.1.0"
