"""The onnx reader's defaults and limits, constants only (imported at every ``episteme`` start)."""

# The model's share of the fused score: fused = (1 - weight) * bm25 / best_bm25 + weight * cosine.
# Chosen on the 77 dev questions with all-MiniLM-L6-v2 (int8) over BM25's candidates
# (docs/readers.md): of 0.1, 0.15, 0.2, 0.3 and 0.5, the best MRR with neither hit@1, hit@5 nor
# hit@10 below bm25's on either half of the set (questions of even and of odd number). For ask
# (``weight``) that is 0.15; for query's results (``rerank_weight``, query --rerank) 0.2.
# 0.3, the weight first planned, moved ask's answers below bm25's on both halves.
DEFAULT_WEIGHT = 0.15
DEFAULT_RERANK_WEIGHT = 0.2
# Tokens of a text the model reads (its start); sentence-transformers' own limit for MiniLM models.
DEFAULT_MAX_TOKENS = 256
# Texts per onnxruntime call (batched by length). On 2 CPU cores all-MiniLM-L6-v2 took the same CPU
# time for 10 passages of 256 tokens in batches of 1, 4 or 16, and batches of 16 raised the peak
# memory by 300 MB (onnxruntime's arena): 4 bounds it.
DEFAULT_BATCH_SIZE = 4
DEFAULT_THREADS = 1  # intra-op threads per session: fixed, never "all cores", so runs compare
DEFAULT_TOP = 10  # as the builtin bm25 reader: at weight 0 the onnx reader names what bm25 names
DEFAULT_RATIO = 0.4  # as the builtin bm25 reader (its coverage gate)
DEFAULT_SCORE_RATIO = 0.5  # as the builtin bm25 reader (its score floor: half the question's best)
MAX_PREFIX = 64  # characters of query_prefix / passage_prefix
# What the model reads of a candidate: "passage", one window, the passage's start (its first
# max_tokens tokens), or "paragraphs", one window per paragraph (each cut at max_tokens; the
# candidate's cosine is its best paragraph's). On the dev questions at weight 0.3 with
# all-MiniLM-L6-v2, paragraphs found one answer past the first 256 tokens but moved five others
# down (a short paragraph matching by chance) and cost 1.7x the CPU (docs/readers.md): passage.
WINDOWS = ("passage", "paragraphs")
DEFAULT_WINDOWS = "passage"
# name: (low, high, integer?)
RANGES: dict[str, tuple[float, float, bool]] = {
    "threads": (1, 64, True),
    "max_tokens": (8, 8192, True),
    "batch_size": (1, 256, True),
    "weight": (0.0, 1.0, False),
    "rerank_weight": (0.0, 1.0, False),
    "top": (1, 50, True),
    "ratio": (0.0, 1.0, False),
    "score_ratio": (0.0, 1.0, False),
    "min_score": (0.0, 1e9, False),
}
PREFIXES = ("query_prefix", "passage_prefix")
KEYS = {"model", "windows", *RANGES, *PREFIXES}
