"""The onnx reader's defaults and limits, constants only (imported at every ``episteme`` start)."""

# The model's share of the fused score: fused = (1 - weight) * bm25 / best_bm25 + weight * cosine.
DEFAULT_WEIGHT = 0.3
# Tokens of a text the model reads (its start); sentence-transformers' own limit for MiniLM models.
DEFAULT_MAX_TOKENS = 256
# Texts per onnxruntime call (batched by length). On 2 CPU cores all-MiniLM-L6-v2 took the same CPU
# time for 10 passages of 256 tokens in batches of 1, 4 or 16, and batches of 16 raised the peak
# memory by 300 MB (onnxruntime's arena): 4 bounds it.
DEFAULT_BATCH_SIZE = 4
DEFAULT_THREADS = 1  # intra-op threads per session: fixed, never "all cores", so runs compare
DEFAULT_TOP = 10  # as the builtin bm25 reader: at weight 0 the onnx reader names what bm25 names
DEFAULT_RATIO = 0.4  # as the builtin bm25 reader (its coverage gate)
MAX_PREFIX = 64  # characters of query_prefix / passage_prefix
# What the model reads of a candidate: "paragraphs", one window per paragraph (each cut at max_tokens;
# the candidate's cosine is its best paragraph's), or "passage", one window, the passage's start. A
# candidate is a run of paragraphs of up to 3,000 characters: its start alone missed answers that sat
# past the first 256 tokens (docs/readers.md).
WINDOWS = ("paragraphs", "passage")
DEFAULT_WINDOWS = "paragraphs"
# name: (low, high, integer?)
RANGES: dict[str, tuple[float, float, bool]] = {
    "threads": (1, 64, True),
    "max_tokens": (8, 8192, True),
    "batch_size": (1, 256, True),
    "weight": (0.0, 1.0, False),
    "top": (1, 50, True),
    "ratio": (0.0, 1.0, False),
    "min_score": (0.0, 1e9, False),
}
PREFIXES = ("query_prefix", "passage_prefix")
KEYS = {"model", "windows", *RANGES, *PREFIXES}
