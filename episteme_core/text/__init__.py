"""Text handling shared by every stage and indexer: decoding bytes to text, and the analyzer that turns
text into the terms search matches (Unicode folding, stems, identifiers)."""
