"""Running a personal source: collect records, store what changed, then bring the stages up to date.

Public for plugins (git, honcho): ``run_ingest(ctx, source, collect, merge=..., pack=...)`` runs under
``ctx.writing()``, which is re-entrant, so ``ingest --all`` and ``ingest --reshard`` hold one lock for
every source.
"""

from __future__ import annotations

from collections.abc import Callable, Iterable, Iterator
from pathlib import Path
from typing import TYPE_CHECKING, Any

import attrs

from episteme_core.personal.model import Record
from episteme_core.personal.stored import Merge, save_records

if TYPE_CHECKING:
    from episteme_core.kernel.context import RunContext
    from episteme_core.store.home import Home


@attrs.define
class Collected:
    """What a source's scan found: the records, and what it skipped or noticed (for the report).

    ``records`` may be a generator: each record is stored and let go before the next is read, so a
    run holds one record at a time. ``skipped`` and ``extra`` (a mapping, or a function giving one)
    are read once every record was stored, so a generator may fill them as it goes."""

    records: Iterable[Record]
    skipped: dict[str, int] = attrs.field(factory=dict)
    extra: dict[str, Any] | Callable[[], dict[str, Any]] = attrs.field(factory=dict)

    def extras(self) -> dict[str, Any]:
        return self.extra() if callable(self.extra) else self.extra


def run_ingest(
    ctx: RunContext,
    source: str,
    collect: Callable[[], Collected],
    *,
    merge: Merge | None = None,
    pack: bool = True,
) -> dict[str, Any]:
    """Under the writer lock: collect, save what changed, then pack; the report as JSON data."""
    with ctx.writing() as home:
        ctx.progress.update(source, 0, None, "started", "reading")
        collected = collect()
        found = 0

        def counted() -> Iterator[Record]:
            nonlocal found
            for record in collected.records:
                found += 1
                ctx.progress.update(source, found, None, "started", "storing")
                yield record

        report = save_records(home, ctx.command, counted(), merge=merge, warn=ctx.warn)
        ctx.progress.update(source, found, found, "completed", "stored")
        data: dict[str, Any] = {
            "source": source,
            "found": found,
            **report.to_json(),
            "skipped": dict(sorted(collected.skipped.items())),
            **collected.extras(),
        }
        if pack:
            from episteme_core.personal.pack import pack_stages

            data["pack"] = pack_stages(ctx)
    return data


def describe(data: dict[str, Any]) -> str:
    """One line for people: what an ingest of one source did."""
    text = (
        f"{data['source']}: {data['found']} record(s), {data['captured']} captured, "
        f"{data['unchanged']} unchanged"
    )
    if data.get("appendedParagraphs"):
        text += f", {data['appendedParagraphs']} paragraph(s) appended"
    if data.get("forgotten"):
        text += f", {data['forgotten']} forgotten record(s) refused (--allow-forgotten captures them)"
    if data.get("redactedParagraphs"):
        text += f", {data['redactedParagraphs']} forgotten paragraph(s) kept redacted"
    skipped = data.get("skipped") or {}
    if skipped:
        text += "; skipped " + ", ".join(f"{n} {reason_words(reason)}"
                                         for reason, n in sorted(skipped.items()))
    pack = data.get("pack")
    if isinstance(pack, dict) and pack.get("summary"):
        text += f"\n{pack['summary']}"
    return text


# What a skip count's key means, for people (the JSON keeps the key).
REASONS = {
    "emptyText": "empty message",
    "loneSurrogate": "line with a cut character",
    "notText": "not text",
    "notRegular": "not a regular file",
    "badName": "bad name",
    "tooLarge": "too large",
    "untyped": "line without a type",
}


def reason_words(reason: str) -> str:
    """A skip reason as words: a known key's meaning, a line type's name with its last part apart
    (``file-history-snapshot`` -> ``file-history snapshot``), else camelCase split into words."""
    from episteme_core.records.convert import words

    if reason in REASONS:
        return REASONS[reason]
    if "-" in reason:
        head, _, tail = reason.rpartition("-")
        return f"{head} {tail}"
    return words(reason)


# the builtin sources ------------------------------------------------------------------------


def ingest_books(
    ctx: RunContext, directories: list[Path], *, max_bytes: int, max_paragraphs: int | None = None,
    pack: bool = True,
) -> dict[str, Any]:
    """``episteme ingest books DIR...`` (``max_paragraphs`` None: the default bound)."""
    from episteme_core.personal.books import DEFAULT_MAX_PARAGRAPHS, BooksScan, iter_books

    most = DEFAULT_MAX_PARAGRAPHS if max_paragraphs is None else max_paragraphs

    def collect() -> Collected:
        scan = BooksScan()
        books = iter_books(directories, scan, max_bytes=max_bytes, max_paragraphs=most, warn=ctx.warn)
        return Collected(books, scan.skipped, scan.extra)

    return run_ingest(ctx, "books", collect, pack=pack)


def default_projects(home: Home) -> Path:
    """``claude_projects`` in config.json, else ``~/.claude/projects``."""
    from episteme_core.personal.claude import DEFAULT_PROJECTS

    configured = home.config().get("claude_projects") if home.config_path.exists() else None
    return Path(str(configured or DEFAULT_PROJECTS)).expanduser()


def ingest_claude(
    ctx: RunContext, projects: Path, *, max_line_bytes: int, max_bytes: int, pack: bool = True
) -> dict[str, Any]:
    """``episteme ingest claude [--projects DIR]``: grown transcripts append only what is new."""
    from episteme_core.personal.claude import ClaudeScan, iter_sessions
    from episteme_core.personal.model import merge_grown

    def collect() -> Collected:
        scan = ClaudeScan()
        records = iter_sessions(projects, scan, max_line_bytes=max_line_bytes, max_bytes=max_bytes,
                                warn=ctx.warn)
        return Collected(records, scan.skipped, scan.extra)

    return run_ingest(ctx, "claude", collect, merge=merge_grown, pack=pack)


def intent_path(home: Home) -> Path:
    from episteme_core.personal.intent import FILE_NAME

    return home.root / FILE_NAME


def ingest_intent(ctx: RunContext, *, pack: bool = True) -> dict[str, Any]:
    """``episteme ingest intent``: the home's ``intent.md``."""
    from episteme_core.personal.intent import read_intent

    path = intent_path(ctx.home)

    def collect() -> Collected:
        return Collected([read_intent(path)])

    return run_ingest(ctx, "intent", collect, pack=pack)
