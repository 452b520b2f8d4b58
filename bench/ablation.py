"""Judge each tuned rule with and without it: query's whole-passage ranks on both halves of the dev set.

Takes a home that ``bench/quality.py --home DIR`` built (``DIR/home`` and ``DIR/owners.json``), and
for each variant copies it, changes one rule (an index setting in ``config.json`` and ``index
--reshard``, or a ranking constant set in this process), asks the 77 dev questions through the
library's ``query`` (the ranks the CLI gives) and prints hit@1 / hit@5 / hit@10 / MRR@10 for the
questions of even and of odd number and for all. A rule is worth keeping when removing it hurts
both halves. SciFact is not measured here: no wheel on PyPI ships its files (docs/benchmarks.md).

``--questions FILE`` judges them on another set over the same corpus (``bench/questions/second-set.jsonl``).

    python bench/ablation.py --home DIR [--eval DIR] [--questions FILE] [--only NAME,...]
"""

from __future__ import annotations

import argparse
import contextlib
import json
import shutil
import sys
import tempfile
from collections.abc import Callable, Iterator
from pathlib import Path
from typing import Any

HERE = Path(__file__).resolve().parent
sys.path.insert(0, str(HERE))
from quality import DEFAULT_SHARED, _number, first_hit  # noqa: E402

Patch = Callable[[], contextlib.AbstractContextManager[None]]


@contextlib.contextmanager
def setting(module: str, name: str, value: Any) -> Iterator[None]:
    """A module constant set for the duration (the ranking rules read them at call time)."""
    import importlib

    target = importlib.import_module(module)
    old = getattr(target, name)
    setattr(target, name, value)
    try:
        yield
    finally:
        setattr(target, name, old)


@contextlib.contextmanager
def no_identifier_weights() -> Iterator[None]:
    """Every query term weighs 1 (no half weight for the parts an identifier adds)."""
    from episteme_core.search import query as query_module

    old = query_module.query_term_weights
    query_module.query_term_weights = lambda text, languages: {}
    try:
        yield
    finally:
        query_module.query_term_weights = old


def nothing() -> contextlib.AbstractContextManager[None]:
    return contextlib.nullcontext()


# name -> (config.json index settings, or None for the built index; a patch of the ranking)
VARIANTS: dict[str, tuple[dict[str, Any] | None, Patch]] = {
    "as built (all rules)": (None, nothing),
    "field title 1 -> 0": ({"fields": {"title": 0}}, nothing),
    "field url 2 -> 0": ({"fields": {"url": 0}}, nothing),
    "field path 1 -> 0": ({"fields": {"path": 0}}, nothing),
    "field heading 3 -> 1": ({"fields": {"heading": 1}}, nothing),
    "field terms 2 -> 0": ({"fields": {"terms": 0}}, nothing),
    "no fields (body only)": ({"fields": dict.fromkeys(("title", "url", "path", "heading", "terms"), 0)},
                              nothing),
    "record runs 1,500 -> 0 (each paragraph alone)": ({"runs": {"records": 0}}, nothing),
    "section runs 3,000 -> 0 (each chunk alone)": ({"runs": {"sections": 0}}, nothing),
    "proximity rerank off": (None, lambda: setting("episteme_core.search.proximity", "WEIGHT", 0.0)),
    "joined runs 3,000 -> 0 (no joining)": (
        None, lambda: setting("episteme_core.search.units", "MERGED_CHARS", 0)),
    "identifier parts weigh 1 (not 0.5)": (None, no_identifier_weights),
    "book contents weigh 1 (not 0.5)": (
        None, lambda: setting("episteme_core.search.passages", "NON_PROSE_WEIGHT", 1.0)),
}


def ranks_of(home: Path, questions: list[dict[str, Any]], owners: dict[str, str]) -> list[int | None]:
    from episteme_core.kernel.loader import load_plugins
    from episteme_core.search.query import query
    from episteme_core.store.home import Home

    plugins = load_plugins()
    out = []
    for q in questions:
        result = query(Home(home), q["question"], limit=10, max_chars=20_000, plugins=plugins)
        out.append(first_hit([(r.source, r.snippet) for r in result.results], q, owners))
    return out


def cells(ranks: list[int | None], members: list[int]) -> str:
    n = len(members) or 1
    hits = [sum(1 for i in members if ranks[i] is not None and ranks[i] <= k) for k in (1, 5, 10)]
    mrr = sum(1 / ranks[i] for i in members if ranks[i] is not None) / n
    return " / ".join(str(h) for h in hits) + f" / {mrr:.3f}"


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__,
                                     formatter_class=argparse.RawDescriptionHelpFormatter)
    parser.add_argument("--home", type=Path, required=True, help="the folder bench/quality.py --home built")
    parser.add_argument("--eval", type=Path, default=DEFAULT_SHARED / "eval")
    parser.add_argument("--questions", type=Path, help="another questions file over the same corpus "
                        "(bench/questions/second-set.jsonl: written apart from the tuning)")
    parser.add_argument("--only", help="comma-separated variant names")
    args = parser.parse_args()
    from episteme_core.testing import invoke

    lines = (args.questions or args.eval / "dev-questions.jsonl").read_text("utf-8").splitlines()
    questions = [json.loads(line) for line in lines if line.strip()]
    owners = json.loads((args.home / "owners.json").read_text("utf-8"))
    even = [i for i, q in enumerate(questions) if _number(q["id"]) % 2 == 0]
    odd = [i for i, q in enumerate(questions) if _number(q["id"]) % 2 == 1]
    wanted = set(args.only.split(",")) if args.only else set(VARIANTS)
    print(f"cells: counts hit@1 / hit@5 / hit@10 of {len(even)} even, {len(odd)} odd, {len(questions)} all; "
          "MRR@10\n")
    print("| variant | even half | odd half | all |")
    print("|---|---|---|---|")
    with tempfile.TemporaryDirectory() as tmp:
        for name, (config, patch) in VARIANTS.items():
            if name not in wanted:
                continue
            home = args.home / "home"
            if config is not None:
                home = Path(tmp) / "home"
                if home.exists():
                    shutil.rmtree(home)
                shutil.copytree(args.home / "home", home)
                (home / "config.json").write_text(json.dumps(config), "utf-8")
                rebuilt = invoke("--home", str(home), "index", "--reshard", "--json")
                if rebuilt.exit_code != 0:
                    raise SystemExit(f"{name}: index --reshard failed: {rebuilt.stderr[-500:]}")
            with patch():
                ranks = ranks_of(home, questions, owners)
            every = list(range(len(ranks)))
            row = f"| {name} | {cells(ranks, even)} | {cells(ranks, odd)} | {cells(ranks, every)} |"
            print(row, flush=True)


if __name__ == "__main__":
    main()
