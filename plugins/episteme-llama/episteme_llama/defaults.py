"""The llama reader's defaults and limits, in a module of constants that costs nothing to import
(the ``reader`` command's parser is built at every ``episteme --help``)."""

MODES = ("fuse", "generate")
DEFAULT_MODE = "fuse"
DEFAULT_N_CTX = 4096
DEFAULT_BATCH_SIZE = 8
DEFAULT_TOP = 10  # as the builtin bm25 reader: fuse with weight 0 names what bm25 names
# The model reads at most this many tokens of each candidate (its start): reading cost grows with
# it, and a small model judges a long passage no better. The answer always quotes the whole paragraph.
DEFAULT_MAX_CANDIDATE_TOKENS = 512
# The fusion weight, chosen on the 77 dev questions with SmolLM2-135M-Instruct over BM25's top 10
# (docs/readers.md): of 0, 0.1, 0.2, 0.3, 0.4, 0.5, 0.7 and 1 the best MRR (ties to the smaller),
# and neither hit@1 nor hit@5 below bm25's. A stronger model earns a higher weight: measure it with
# bench/readers.py --model F.
DEFAULT_WEIGHT = 0.1
DEFAULT_RATIO = 0.4  # as the builtin bm25 reader (its coverage gate)
DEFAULT_SCORE_RATIO = 0.5  # as the builtin bm25 reader (its score floor: half the question's best)
# name: (low, high, integer?)
RANGES: dict[str, tuple[float, float, bool]] = {
    "n_ctx": (256, 1 << 20, True),
    "threads": (1, 1024, True),
    "n_gpu_layers": (-1, 100_000, True),
    "seed": (0, 2**31 - 1, True),
    "batch_size": (1, 64, True),
    "top": (1, 50, True),
    "weight": (0.0, 1.0, False),
    "ratio": (0.0, 1.0, False),
    "score_ratio": (0.0, 1.0, False),
    "min_score": (0.0, 1e9, False),
    "max_candidate_tokens": (16, 1 << 20, True),
}
KEYS = {"model", "mode", *RANGES}

# reader serve: where it listens and how much it accepts.
DEFAULT_PORT = 8090
DEFAULT_MAX_BODY = 8 << 20
MIN_MAX_BODY, MAX_MAX_BODY = 1024, 256 << 20
