"""Judge each tuned rule with and without it: query's whole-passage ranks on both halves of the dev set.

Takes a home that ``bench/quality.py --home DIR`` built (``DIR/home`` and ``DIR/owners.json``), and
for each variant copies it, changes one rule (an index setting in ``config.json`` and ``index
--reshard``, or a ranking constant set in this process), asks the 77 dev questions through the
library's ``query`` (the ranks the CLI gives) and prints hit@1 / hit@5 / hit@10 / MRR@10 for the
questions of even and of odd number and for all; with ``--ask`` also `ask`'s answers (how many hold
the answer, how many among the first three paragraphs named, MRR@10), where ``ask:`` variants
switch off one of its own rules. A rule is worth keeping when removing it hurts
both halves. SciFact is not measured here: no wheel on PyPI ships its files (docs/benchmarks.md).

``--questions FILE`` judges them on another set over the same corpus (``bench/questions/second-set.jsonl``
or ``third-set.jsonl``, written apart from the tuning).

    python bench/ablation.py --home DIR [--eval DIR] [--questions FILE] [--only TEXT ...]
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
from quality import DEFAULT_SHARED, _number, ask_rank, first_hit  # noqa: E402

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
def first_passage_share(value: float) -> Iterator[None]:
    """The share of ``ask``'s budget the passage named first may fill (0: it shows what bears, as
    every other passage does)."""
    from episteme_core.ask import answer, run

    old = answer.FIRST_PASSAGE_SHARE
    answer.FIRST_PASSAGE_SHARE = run.FIRST_PASSAGE_SHARE = value
    try:
        yield
    finally:
        answer.FIRST_PASSAGE_SHARE = run.FIRST_PASSAGE_SHARE = old


@contextlib.contextmanager
def no_most_held_in_first() -> Iterator[None]:
    """The first passage, when it does not fit whole, shows only what bears (not also its paragraph
    holding the most of the question): ``widened`` sees the others' ``held`` as -1, and what it
    returns keeps their own."""
    import attrs

    from episteme_core.ask import candidates

    old = candidates.widened

    def widened(paragraphs: Any, compact: Any, chars: int) -> tuple[Any, ...]:
        masked = [c if c.bearing else attrs.evolve(c, held=-1.0) for c in compact]
        back = {id(m): c for m, c in zip(masked, compact, strict=True)}
        return tuple(back.get(id(p), p) for p in old(paragraphs, masked, chars))

    candidates.widened = widened
    try:
        yield
    finally:
        candidates.widened = old


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
    "record runs 1,500 -> 3,000": ({"runs": {"records": 3000}}, nothing),
    "record runs 1,500 -> 6,000": ({"runs": {"records": 6000}}, nothing),
    "section runs 3,000 -> 0 (each chunk alone)": ({"runs": {"sections": 0}}, nothing),
    "proximity rerank off": (None, lambda: setting("episteme_core.search.proximity", "WEIGHT", 0.0)),
    "joined runs 3,000 -> 0 (no joining)": (
        None, lambda: setting("episteme_core.search.units", "MERGED_CHARS", 0)),
    "identifier parts weigh 1 (not 0.5)": (
        None, lambda: setting("episteme_core.text.analyzer", "IDENTIFIER_TERM_WEIGHT", 1.0)),
    "book contents weigh 1 (not 0.5)": (
        None, lambda: setting("episteme_core.search.passages", "NON_PROSE_WEIGHT", 1.0)),
    # ask's own rules (they change `ask` only; with --ask)
    "ask: first passage's share 2/3 -> 0 (shows what bears)": (None, lambda: first_passage_share(0.0)),
    "ask: first passage without its most-held paragraph": (None, no_most_held_in_first),
    "ask: bm25 reader's coverage ratio 0.4 -> 0": (
        None, lambda: setting("episteme_core.ask.bm25_reader", "DEFAULT_RATIO", 0.0)),
    "ask: bm25 reader's score ratio 0.5 -> 0": (
        None, lambda: setting("episteme_core.ask.bm25_reader", "DEFAULT_SCORE_RATIO", 0.0)),
    "ask: bearing run 450 -> 900 characters": (
        None, lambda: setting("episteme_core.ask.candidates", "BEARING_SPAN", 900)),
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


def ask_ranks(home: Path, questions: list[dict[str, Any]], owners: dict[str, str]) -> list[int | None]:
    """Each question's answer-bearing place in `ask`'s answer (``quality.ask_rank``), through the CLI
    in this process (so the patches apply)."""
    from episteme_core.testing import invoke

    out = []
    for q in questions:
        result = invoke("--home", str(home), "ask", "--reader", "bm25", q["question"], "--json")
        if result.exit_code != 0:
            raise SystemExit(f"ask failed for {q['id']}: {result.stderr[-500:]}")
        out.append(ask_rank(json.loads(result.stdout)["data"], q, owners))
    return out


def ask_cells(ranks: list[int | None], members: list[int]) -> str:
    """Held / among the first three / MRR@10 of `ask`'s answers."""
    n = len(members) or 1
    held = sum(1 for i in members if ranks[i] is not None)
    first = sum(1 for i in members if ranks[i] is not None and ranks[i] <= 3)
    mrr = sum(1 / ranks[i] for i in members if ranks[i] is not None and ranks[i] <= 10) / n
    return f"{held} / {first} / {mrr:.3f}"


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
                        "(bench/questions/second-set.jsonl, third-set.jsonl: written apart from the tuning)")
    parser.add_argument("--only", action="append", metavar="TEXT",
                        help="run the variants whose name contains TEXT (repeatable; names hold commas)")
    parser.add_argument("--ask", action="store_true",
                        help="also ask every question: `ask`'s held / first three / MRR per half")
    args = parser.parse_args()
    from episteme_core.testing import invoke

    lines = (args.questions or args.eval / "dev-questions.jsonl").read_text("utf-8").splitlines()
    questions = [json.loads(line) for line in lines if line.strip()]
    owners = json.loads((args.home / "owners.json").read_text("utf-8"))
    even = [i for i, q in enumerate(questions) if _number(q["id"]) % 2 == 0]
    odd = [i for i, q in enumerate(questions) if _number(q["id"]) % 2 == 1]
    wanted = {name for name in VARIANTS if not args.only or any(text in name for text in args.only)}
    print(f"cells: `query` counts hit@1 / hit@5 / hit@10 of {len(even)} even, {len(odd)} odd, "
          f"{len(questions)} all; MRR@10" + ("; `ask` counts held / among the first three; MRR@10" if args.ask
                                             else "") + "\n")
    if args.ask:
        print("| variant | even half | odd half | all | ask, even | ask, odd | ask, all |")
        print("|---|---|---|---|---|---|---|")
    else:
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
                asked = ask_ranks(home, questions, owners) if args.ask else None
            every = list(range(len(ranks)))
            row = f"| {name} | {cells(ranks, even)} | {cells(ranks, odd)} | {cells(ranks, every)} |"
            if asked is not None:
                row += f" {ask_cells(asked, even)} | {ask_cells(asked, odd)} | {ask_cells(asked, every)} |"
            print(row, flush=True)


if __name__ == "__main__":
    main()
