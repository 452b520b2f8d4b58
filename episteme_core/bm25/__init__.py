"""The builtin ``bm25`` indexer: shard files built with bm25s's scoring, memory-mapped, searched by term.

Commands reach it only through the registered indexer (``search.indexers``): ``writer.index_home``
builds the shards stage, ``shards.open_shards`` opens it (refusing, with ``STALE_INDEX``, shards that
are missing, of another indexer or analyzer, or behind the chunks or the log). ``build`` makes one
shard's bytes, ``shardfile`` is their frozen layout, ``fields`` the fields a chunk is scored on.
"""
