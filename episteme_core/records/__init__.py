"""The records: what the kernel stores and hands between stages, and their one JSON form.

attrs records (documents, chunks, snapshot and stage records, search hits, reader requests), the one
cattrs converter, canonical JSON, and strict, bounded reading of input. Nothing here touches the home.
"""
