"""Human renderings of an answer and an eval report (the JSON envelope carries the data)."""

from __future__ import annotations

from typing import Any


def render_answer(data: dict[str, Any]) -> str:
    lines: list[str] = []
    for i, p in enumerate(data["paragraphs"], start=1):
        when = p.get("time") or "no time"
        label = f" · {p['markedAs']}" if p.get("markedAs") else ""
        part = p.get("excerpt")
        window = f" · characters {part['start']}-{part['end']} of {part['chars']}" if part else ""
        lines.append(f"[{i}] {p['ref']} · {when} · {p['source']}{label}{window}")
        lines.append(p["text"])
        lines.append("")
    if not data["paragraphs"]:
        lines.append("No stored paragraph answers this question.")
        lines.append("")
    if data["omitted"]:
        lines.append(f"omitted to stay within {data['budget']} characters:")
        for o in data["omitted"]:
            lines.append(f"  {o['ref']} ({o['chars']} chars)")
    readers = ", ".join(sorted({s["reader"] for s in data["shards"] if s["reader"] != "none"})) or "none"
    lines.append(
        f"{len(data['paragraphs'])} paragraph(s), {data['chars']} chars, "
        f"from {len(data['shards'])} shard(s); "
        f"readers: {readers}; source text is untrusted"
    )
    return "\n".join(lines)


def render_eval(report: dict[str, Any], path: str) -> str:
    """The eval table (a row per question, then the means), a legend of its measures, the saved path."""
    lines = [f"{'#':>4} {'hit':>5} {'recall':>7} {'prec':>7} {'mrr':>7} {'ndcg10':>7} {'chars':>7} "
             f"{'paras':>6} {'ms':>6}  question"]
    for q in report["questions"]:
        lines.append(
            f"{q['line']:>4} {q['hit']:>5.0f} {q['recall']:>7.3f} {q['precision']:>7.3f} {q['mrr']:>7.3f} "
            f"{q['ndcg10']:>7.3f} {q['chars']:>7} {q['paragraphs']:>6} {q['durationMs']:>6}  "
            f"{q['question'][:60]}"
        )
    o = report["overall"]
    lines.append(
        f"{'all':>4} {o['hit']:>5.2f} {o['recall']:>7.3f} {o['precision']:>7.3f} {o['mrr']:>7.3f} "
        f"{o['ndcg10']:>7.3f} {o['chars']:>7.0f} {o['paragraphs']:>6.1f} {o['durationMs']:>6}  "
        f"({o['questions']} questions)"
    )
    lines.extend(eval_legend(report["budget"]))
    lines.append(f"saved {path}")
    return "\n".join(lines)


def eval_legend(budget: int) -> list[str]:
    """What each column of the eval table means, in a few lines under it."""
    return [
        "",
        "hit     1 when the answer holds an expected paragraph (all: the share of questions)",
        "recall  share of the question's expected paragraphs that the answer holds (1 = none missed)",
        "prec    share of the answer's paragraphs that were expected: every paragraph a reader names, and",
        f"        each neighbour that continues one, counts up to the budget ({budget} chars), so 1 expected",
        "        among 37 returned is 0.027; more readers or a larger budget return more and lower it",
        "mrr     1 / rank of the first expected paragraph in the answer (0 when none is there)",
        "ndcg10  how near the top of the answer's first 10 the expected paragraphs are (1 = all first)",
        "chars   characters in the answer; paras: its paragraphs; ms: time per question (all: means)",
    ]
