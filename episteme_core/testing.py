"""Helpers for tests of episteme and of its plugins: run the real CLI, validate against schemas.

Public so that plugin test suites use the same tools as the kernel's.
"""

from __future__ import annotations

import contextlib
import io
import json
import os
import subprocess
import sys
from collections.abc import Iterator, Mapping, Sequence
from functools import cache
from pathlib import Path
from typing import Any

import attrs

# The crash matrix harness (kill a writing command at each write step, then check the home).
from episteme_core.crashmatrix import (  # noqa: F401  (re-exported for plugin test suites)
    CrashCase,
    CrashReport,
    CrashScenario,
    home_state,
    run_crash_matrix,
)


@attrs.frozen
class CliResult:
    """What one CLI run did: exit status, stdout, stderr, and the parsed envelope (``--json``)."""

    exit_code: int
    stdout: str
    stderr: str

    @property
    def envelope(self) -> dict[str, Any]:
        """The one envelope of a ``--json`` run (stdout on success, stderr's last line on failure)."""
        text = self.stdout if self.exit_code == 0 else self.stderr.strip().splitlines()[-1]
        return json.loads(text)  # type: ignore[no-any-return]


@contextlib.contextmanager
def _environment(env: Mapping[str, str] | None) -> Iterator[None]:
    saved = dict(os.environ)
    try:
        if env:
            os.environ.update(env)
        yield
    finally:
        os.environ.clear()
        os.environ.update(saved)


def invoke(
    *args: str,
    stdin: bytes | None = None,
    env: Mapping[str, str] | None = None,
) -> CliResult:
    """Run the CLI in this process (fast); stdout/stderr captured, plugins loaded afresh."""
    from episteme_core.cli.main import run
    from episteme_core.plugins import get_plugins

    get_plugins.cache_clear()
    out, err = io.StringIO(), io.StringIO()
    fake_stdin = io.TextIOWrapper(io.BytesIO(stdin or b""), encoding="utf-8")
    with _environment(env), contextlib.redirect_stdout(out), contextlib.redirect_stderr(err):
        saved_stdin = sys.stdin
        sys.stdin = fake_stdin
        try:
            code = run(list(args))
        finally:
            sys.stdin = saved_stdin
            get_plugins.cache_clear()
    return CliResult(code, out.getvalue(), err.getvalue())


def run_cli(
    args: Sequence[str],
    *,
    stdin: bytes | None = None,
    env: Mapping[str, str] | None = None,
    timeout: float = 120,
    cwd: str | os.PathLike[str] | None = None,
) -> CliResult:
    """Run ``python -m episteme_core ARGS`` as a new process, as a user would."""
    full_env = {**os.environ, **(env or {})}
    proc = subprocess.run(
        [sys.executable, "-m", "episteme_core", *args],
        input=stdin or b"",
        capture_output=True,
        env=full_env,
        timeout=timeout,
        cwd=cwd,
    )
    return CliResult(
        proc.returncode, proc.stdout.decode("utf-8", "replace"), proc.stderr.decode("utf-8", "replace")
    )


def schema_dir() -> Path:
    """Where the JSON Schemas are: inside the installed package, else the repository's ``schema/``."""
    packaged = Path(__file__).parent / "schemas"
    if packaged.is_dir():
        return packaged
    return Path(__file__).resolve().parent.parent / "schema"


@cache
def _validator(name: str) -> Any:
    import jsonschema
    from referencing import Registry, Resource

    directory = schema_dir()
    resources = []
    for path in sorted(directory.glob("*.schema.json")):
        contents = json.loads(path.read_text("utf-8"))
        resources.append((path.name, Resource.from_contents(contents)))
        if "$id" in contents:
            resources.append((contents["$id"], Resource.from_contents(contents)))
    registry: Any = Registry().with_resources(resources)
    schema = json.loads((directory / f"{name}.schema.json").read_text("utf-8"))
    cls = jsonschema.validators.validator_for(schema)
    cls.check_schema(schema)
    return cls(schema, registry=registry, format_checker=cls.FORMAT_CHECKER)


def validate(instance: Any, name: str) -> None:
    """Raise ``jsonschema.ValidationError`` unless ``instance`` fits ``schema/NAME.schema.json``."""
    _validator(name).validate(instance)


# -- Conformance: what a plugin's own tests call. --------------------------------------------------


def check_component(component: Any, kind: str | None = None) -> str:
    """Assert that ``component`` keeps its kind's contract; returns the kind.

    ``kind`` defaults to the most specific kind ``component`` fully satisfies. Beyond the members the
    registry checks (``episteme_core.components``), a chunker is run over a sample document (its
    chunks must be valid, sealed, bounded and reproducible), a family's hooks are called once, and an
    indexer builds and opens a sample home (its set and shards must keep their Protocols, name the
    indexer, rank by (-score, chunk id), apply filters, hold only committed chunks, and refuse shards
    a capture made stale).
    """
    from episteme_core.components import CONTRACTS, missing_members

    if kind is None:
        fitting = [k for k in CONTRACTS if not missing_members(component, k)]
        if not fitting:
            closest = min(CONTRACTS, key=lambda k: len(missing_members(component, k)))
            raise AssertionError(
                f"{component!r} is no component: as a {closest} it lacks "
                f"{', '.join(missing_members(component, closest))}"
            )
        kind = max(fitting, key=lambda k: len(CONTRACTS[k].attributes) + len(CONTRACTS[k].methods))
    missing = missing_members(component, kind)
    assert not missing, f"{kind} {getattr(component, 'name', component)!r} lacks {', '.join(missing)}"
    if kind == "chunker":
        _check_chunker(component)
    elif kind == "family":
        _check_family(component)
    elif kind == "indexer":
        _check_indexer(component)
    return kind


def sample_document(document_type: str | None = "text") -> Any:
    """A small sealed document (two sections, a long paragraph, a diagnostic and a limit)."""
    from episteme_core.document import Block, Diagnostic, Document, Provenance, Section, Span, seal

    sha = "0" * 64
    long_text = " ".join(f"Sentence {n} of a long paragraph." for n in range(1, 400))
    sections = [
        Section(id="intro", heading="Introduction", path=["Introduction"], anchor="intro", blocks=[
            Block(id="intro/1", kind="paragraph", text="A short first paragraph.", section_id="intro",
                  span=Span(0, 24)),
            Block(id="intro/2", kind="paragraph", text=long_text, section_id="intro",
                  normativity="normative"),
        ]),
        Section(id="more", heading="More", path=["More"], blocks=[
            Block(id="more/1", kind="note", text="A note.", section_id="more", normativity="informative"),
        ]),
    ]
    return seal(Document(
        id="", source="https://sample.example/doc", source_kind="http", snapshot_id="1" * 64,
        source_sha256=sha, content_type="text/plain", document_type=document_type, family="generic",
        authority="informative", title="Sample", status="ok", sections=sections,
        provenance=Provenance("episteme", "0", "text", "1", "generic", "1", sha, sha),
        url="https://sample.example/doc", diagnostics=[Diagnostic("SAMPLE", "info", "a sample")],
        limits=["no-layout"],
    ))


def _check_chunker(chunker: Any) -> None:
    from episteme_core.chunk import chunk_id

    for document_type in ("text", "record", "spec", None):
        document = sample_document(document_type)
        if not chunker.accepts(document):
            continue
        options = {"max_chars": 512, "overlap_chars": 64, "verbatim": frozenset()}
        chunks = chunker.chunk(document, **options)
        again = chunker.chunk(document, **options)
        assert [c.to_json() for c in chunks] == [c.to_json() for c in again], "chunks are not reproducible"
        for chunk in chunks:
            data = chunk.to_json()
            validate(data, "chunk")
            assert chunk.id == chunk_id(data), f"chunk {chunk.id} is not sealed (build it with build_chunks)"
            assert chunk.document_id == document.id and chunk.source == document.source
            assert chunk.chunker == f"{chunker.name}/{chunker.version}", chunk.chunker
        if callable(getattr(chunker, "accepts_json", None)):
            assert chunker.accepts_json(document.to_json()) is True
        if callable(getattr(chunker, "chunk_rows", None)):
            rows = chunker.chunk_rows(document.to_json(), **options)
            assert [json.loads(row) for row in rows] == [c.to_json() for c in chunks], (
                "chunk_rows and chunk disagree")


def _check_family(family: Any) -> None:
    from episteme_core.document import Block

    for url in ("https://example.org/", "https://sample.example/a#b", "not a url"):
        assert isinstance(family.matches(url), bool), f"matches({url!r}) is not a bool"
    number = family.section_number("1. Introduction", "intro")
    assert number is None or isinstance(number, str)
    refine = getattr(family, "refine_block", None)
    if callable(refine):
        block = Block(id="b", kind="paragraph", text="It MUST be so.")
        assert isinstance(refine(block, None), Block), "refine_block must return a Block"


def _check_indexer(indexer: Any) -> None:
    import tempfile

    from episteme_core.components import SearchableShard, SearchableShards
    from episteme_core.context import RunContext
    from episteme_core.errors import EpistemeError
    from episteme_core.plugins import load_plugins
    from episteme_core.search import Filters

    with tempfile.TemporaryDirectory() as folder:
        sample = make_sample_home(Path(folder) / "home")
        ctx = RunContext(command="check", home=sample.home, plugins=load_plugins())
        with ctx.writing():
            indexer.build(ctx, reshard=False)
        opened = indexer.open(sample.home)
        assert isinstance(opened, SearchableShards), f"open() of {indexer.name} is no SearchableShards"
        assert opened.indexer == indexer.name and opened.meta.get("indexer") == indexer.name, (
            "the commit must name its indexer (ShardsWriter does)")
        for shard in opened.shards:
            name = getattr(shard, "name", shard)
            assert isinstance(shard, SearchableShard), f"shard {name!r} is no SearchableShard"
        hits, total = opened.search("paragraph", 10)
        assert hits and total >= len(hits), "a word of the sample home finds nothing"
        ordered = sorted(hits, key=lambda hit: (-hit.score, hit.chunk_id))
        assert hits == ordered, "hits are not sorted by (-score, chunk id)"
        committed = {chunk.id for chunk in sample.chunks}
        for hit in hits:
            shard = opened.shard(hit.shard)
            assert {shard.row_json(row)["id"] for row in shard.shown_rows(hit)} <= committed
            assert shard.chunk(hit.chunk_id).id == hit.chunk_id
        assert opened.search("paragraph", 10, Filters(family="no-such-family")) == ([], 0), "filters ignored"
        store_snapshot(sample.home, "https://sample.example/later", b"A later capture.\n")
        try:
            indexer.open(sample.home)
        except EpistemeError as exc:
            assert exc.code == "STALE_INDEX", exc.code
        else:
            raise AssertionError(f"{indexer.name} answers from shards older than a capture "
                                 "(open_committed refuses them)")


# -- A home with a snapshot, a document and chunks. ------------------------------------------------


def _home(root: Any) -> Any:
    from episteme_core.store.home import Home

    return root if isinstance(root, Home) else Home(Path(root))


def store_snapshot(
    home: Any, url: str, content: bytes, *, content_type: str = "text/plain", capture_kind: str = "http",
    options: Mapping[str, Any] | None = None,
) -> str:
    """Commit one snapshot of ``content`` for ``url`` to ``home`` (a path or ``Home``); its id."""
    from episteme_core.snapshots import SnapshotWriter, make_identity

    home = _home(home)
    home.root.mkdir(parents=True, exist_ok=True)
    with SnapshotWriter(home, "test") as writer:
        identity = make_identity(capture_kind, url, content, final_url=url, content_type=content_type)
        observed = writer.observe(identity, content, options=dict(options or {}))
        writer.commit()
    return observed.record.id


def read_documents(home: Any) -> list[Any]:
    """Every committed document of ``home`` (a path or ``Home``)."""
    from episteme_core.documents import read_documents as read

    return read(_home(home))


def read_chunks(home: Any) -> list[Any]:
    """Every committed chunk of ``home`` (a path or ``Home``)."""
    from episteme_core.chunking import read_chunks as read

    return read(_home(home))


def text_in_order(text: str, source: str, start: int, end: int) -> bool:
    """True when every non-space character of ``text`` occurs in ``source[start:end]`` in order
    (how a family's test checks that a block's span holds its text through markup)."""
    from episteme_core.extract.html import in_order

    return in_order(text, source, start, end)


SAMPLE_TEXT = (
    b"A sample document\n\nIts first paragraph says what it is about.\n\n"
    b"Its second paragraph MUST be found by a query for these words.\n"
)


@attrs.frozen
class SampleHome:
    """A home with one committed snapshot, its extracted document and the document's chunks."""

    home: Any  # episteme_core.api.Home
    snapshot_id: str
    document: Any
    chunks: list[Any]

    @property
    def root(self) -> Path:
        return Path(self.home.root)


def make_sample_home(root: Any, *, url: str = "https://sample.example/doc", content: bytes = SAMPLE_TEXT,
                     content_type: str = "text/plain") -> SampleHome:
    """Capture ``content`` as a snapshot of ``url``, extract and chunk it with the loaded plugins."""
    from episteme_core.chunking import chunk_home
    from episteme_core.context import RunContext
    from episteme_core.extract.run import extract_documents
    from episteme_core.plugins import load_plugins

    home = _home(root)
    snapshot_id = store_snapshot(home, url, content, content_type=content_type)
    ctx = RunContext(command="test", home=home, plugins=load_plugins())
    with ctx.writing():
        extract_documents(home, ctx.plugins, warn=ctx.warn)
        chunk_home(home, ctx.plugins.all("chunker"), max_chars=6000, overlap_chars=400, warn=ctx.warn)
    documents = read_documents(home)
    document = next(d for d in documents if d.source == url)
    chunks = [c for c in read_chunks(home) if c.document_id == document.id]
    return SampleHome(home=home, snapshot_id=snapshot_id, document=document, chunks=chunks)


try:  # the fixture, for plugin test suites (``from episteme_core.testing import sample_home``)
    import pytest

    @pytest.fixture
    def sample_home(tmp_path: Path) -> SampleHome:
        """A fresh home with one snapshot, its document and its chunks (see ``make_sample_home``)."""
        return make_sample_home(tmp_path / "sample-home")
except ImportError:  # pragma: no cover - pytest is a test dependency
    pass
