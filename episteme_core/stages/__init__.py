"""The committed stages of a home: snapshots, documents, chunks and shards, each read and written
as one atomic commit, and the diff between two committed document stages."""
