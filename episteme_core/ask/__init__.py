"""Ask: BM25 candidates per shard, readers that only name paragraphs, a verbatim cited answer.

The reader contract (``episteme_core.ask.base_reader``) is public: plugins such as episteme-llama build
on ``Candidate``, ``ReadRequest``, ``ReadReply``, ``ReadError``, ``ReaderSpec`` and ``BaseReader``,
and may render the shared prompt with ``episteme_core.ask.prompt``.
"""
