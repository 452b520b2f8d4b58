"""Search over any indexer's shards: the shard set, the indexer seam, scored units, the rerank,
snippets, and ``query`` itself. Nothing here knows how an indexer stores its shards."""
