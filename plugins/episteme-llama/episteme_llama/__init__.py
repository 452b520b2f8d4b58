"""episteme-llama: local GGUF model readers for ``episteme ask`` (llama.cpp), and ``reader serve``."""

__version__ = "0.1.0"
