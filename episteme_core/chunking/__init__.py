"""Chunking: the chunkers (``window`` for documents, ``paragraph`` for records), the one row builder
they share, and ``run``, the chunks stage's writer. The committed stage is read through
``episteme_core.stages.chunks``."""
