"""The plugin module named by the entry point: the ``onnx`` reader kind.

Nothing heavy is imported here (this module loads at every ``episteme`` start): onnxruntime,
tokenizers and numpy load when a question first needs the model.
"""

from __future__ import annotations

from episteme_core.api import Register, hookimpl


@hookimpl
def episteme_readers(register: Register) -> None:
    from episteme_onnx.kind import OnnxKind

    register(OnnxKind())
