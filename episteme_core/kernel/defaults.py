"""Defaults and ranges of options that both the library and the CLI use, defined once.

A module of constants only, so the CLI can show them in ``--help`` without importing the modules
that use them (those cost milliseconds a new process does not need).
"""

# Chunking (``chunk``, ``pipeline``, ``ingest``).
DEFAULT_MAX_CHARS = 6000
DEFAULT_OVERLAP_CHARS = 400
MIN_MAX_CHARS, MAX_MAX_CHARS = 256, 100_000
MAX_OVERLAP_CHARS = 10_000

# Ask (``ask``, ``eval``).
DEFAULT_BUDGET = 3_000  # characters: an answer for an agent's context, not a haystack
MIN_BUDGET, MAX_BUDGET = 1, 10_000_000
DEFAULT_CANDIDATES = 10  # passages (runs of paragraphs) per shard
MIN_CANDIDATES, MAX_CANDIDATES = 1, 200

# Index files (``query --index FILE|-``): larger than a manifest's 64 MiB; a tar file is mapped, JSON
# and stdin are held in memory (about three times their size at the peak: under 512 MiB at the default).
DEFAULT_MAX_INDEX_BYTES = 128 * 1024 * 1024
MAX_INDEX_BYTES = 16 * 1024 * 1024 * 1024

# Serve (``serve``).
DEFAULT_HOST = "127.0.0.1"
DEFAULT_PORT = 18113
DEFAULT_MAX_INFLIGHT, MIN_INFLIGHT, MAX_INFLIGHT = 32, 1, 1024
DEFAULT_MAX_BODY_BYTES, MIN_BODY_BYTES, MAX_BODY_BYTES = 64 * 1024, 1024, 16 * 1024 * 1024
# A connection's deadlines, in seconds: its request's headers (and the longest silence within a
# body), and its whole body after the headers.
DEFAULT_REQUEST_TIMEOUT, MIN_REQUEST_TIMEOUT, MAX_REQUEST_TIMEOUT = 5, 1, 300
DEFAULT_BODY_TIMEOUT, MIN_BODY_TIMEOUT, MAX_BODY_TIMEOUT = 30, 1, 3600
