"""Helpers for the retrieval tests: real documents committed to a real home, and a pipeline-built home."""

from __future__ import annotations

import shutil
from collections.abc import Callable, Sequence
from pathlib import Path

import pytest

from episteme_core.records.evidence import Block, Document, Provenance, Section, Span, seal
from episteme_core.stages.documents import write_documents
from episteme_core.store.home import Home
from episteme_core.testing import invoke

FIXTURES = Path(__file__).resolve().parent.parent / "fixtures" / "retrieval"
SHA = "a" * 64


def make_document(
    source: str,
    sections: Sequence[tuple[str, Sequence[str]]],
    *,
    kind: str = "http",
    document_type: str | None = "text",
    family: str = "generic",
    authority: str = "informative",
    normativity: Sequence[str] | None = None,
    times: Sequence[str] | None = None,
) -> Document:
    """A sealed document: one section per (heading, paragraph texts), blocks with spans."""
    built = []
    position = 0
    number = 0
    for s, (heading, texts) in enumerate(sections, start=1):
        blocks = []
        for text in texts:
            number += 1
            blocks.append(Block(
                id=f"b{number}", kind="paragraph", text=text,
                normativity=(normativity[number - 1] if normativity else "unknown"),
                section_id=f"s{s}", section_path=[heading], section_heading=heading, anchor=f"b{number}",
                span=Span(position, position + len(text)),
                time=times[number - 1] if times else None,
                attributes={"n": number} if document_type == "record" else {},
            ))
            position += len(text) + 2
        built.append(Section(id=f"s{s}", heading=heading, path=[heading], anchor=f"s{s}", blocks=blocks))
    provenance = Provenance("episteme", "0", "text", "1", family, "1", SHA, "b" * 64)
    return seal(Document(
        id="", source=source, source_kind=kind, snapshot_id="c" * 64, source_sha256=SHA,
        content_type="text/plain", document_type=document_type, family=family, authority=authority,
        title=source, status="ok", sections=built, provenance=provenance,
        url=None if document_type == "record" else source,
    ))


def commit(root: Path, documents: Sequence[Document], *, replace: bool = True) -> Home:
    home = Home(root)
    root.mkdir(parents=True, exist_ok=True)
    write_documents(home, documents, replace=replace)
    return home


def ok(*args: str) -> dict:  # type: ignore[type-arg]
    result = invoke(*args, "--json")
    assert result.exit_code == 0, result.stderr
    return result.envelope["data"]  # type: ignore[no-any-return]


@pytest.fixture
def build(tmp_path: Path) -> Callable[..., Path]:
    """Commit documents to a fresh home, then chunk and index it through the CLI; returns the home."""

    def run(documents: Sequence[Document], *chunk_args: str, name: str = "home") -> Path:
        root = tmp_path / name
        commit(root, documents)
        ok("--home", str(root), "chunk", *chunk_args)
        ok("--home", str(root), "index")
        return root

    return run


@pytest.fixture(scope="session")
def _pipeline_template(tmp_path_factory: pytest.TempPathFactory) -> Path:
    root = tmp_path_factory.mktemp("pipeline") / "home"
    result = invoke("--home", str(root), "pipeline", "--map", str(FIXTURES / "map.json"), "--json")
    assert result.exit_code == 0, result.stderr
    return root


@pytest.fixture
def corpus(_pipeline_template: Path, tmp_path: Path) -> Path:
    """A home built by ``pipeline --map`` over tests/fixtures/retrieval (a private copy per test)."""
    root = tmp_path / "corpus"
    shutil.copytree(_pipeline_template, root)
    return root
