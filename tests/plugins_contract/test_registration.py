"""Each component is checked against its kind's contract as it registers; an incomplete one is refused
there, named on ``episteme plugins``, and the plugin's other components, and other plugins, still work."""

from __future__ import annotations

import pytest

from episteme_core.kernel.contracts import CONTRACTS, missing_members
from episteme_core.kernel.loader import load_plugins
from episteme_core.testing import check_component, invoke, sample_document, validate


def test_an_incomplete_component_is_refused_naming_the_plugin_and_what_is_missing(plugin_site) -> None:
    plugin_site("incomplete")
    listing = invoke("--json", "plugins")
    assert listing.exit_code == 0, listing.stderr
    validate(listing.envelope["data"], "plugins")
    info = next(p for p in listing.envelope["data"]["plugins"] if p["name"] == "incomplete")
    refused = {(r["kind"], r["name"]): r["missing"] for r in info["refused"]}
    assert refused == {
        ("chunker", "no-chunk"): ["chunk() (a method)"],
        ("source", "half-source"): ["configure() (a method)"],
        ("exporter", None): ["name (a non-empty string)", "help (a non-empty string)",
                             "media_type (a non-empty string)", "configure() (a method)",
                             "export() (a method)"],
    }
    assert info["components"] == {"command": ["incomplete-ok"]} and info["error"] is None
    warnings = [w for w in listing.envelope["warnings"] if w["code"] == "COMPONENT_REFUSED"]
    assert len(warnings) == 3 and all("plugin incomplete" in w["message"] for w in warnings)
    human = invoke("plugins")
    assert "  refused: chunker 'no-chunk', which lacks chunk() (a method)" in human.stdout
    assert "refused an exporter without a name, which lacks name" in human.stderr


def test_the_rest_keeps_working_when_a_component_is_refused(plugin_site, home) -> None:
    plugin_site("incomplete")
    assert invoke("incomplete-ok").stdout == "ok\n"
    ingest_help = invoke("ingest", "--help")
    assert ingest_help.exit_code == 0 and "half-source" not in ingest_help.stdout
    store = home / "notes.txt"
    home.mkdir()
    store.write_text("one paragraph\n\nanother paragraph\n")
    (home / "map.json").write_text('[{"sourceUrl": "https://e.org/n", "localPath": "notes.txt"}]')
    result = invoke("--home", str(home), "--json", "pipeline", "--map", str(home / "map.json"))
    assert result.exit_code == 0, result.stderr
    assert result.envelope["data"]["chunk"]["chunks"] >= 1


@pytest.mark.parametrize("kind", sorted(CONTRACTS))
def test_every_builtin_component_keeps_its_contract(kind: str) -> None:
    plugins = load_plugins()
    assert plugins.refusals() == []
    components = plugins.all(kind)
    assert components, f"no builtin {kind}"
    for component in components:
        assert missing_members(component, kind) == []
        if kind == "reader" and component.name == "http":  # it reads through a real server
            from episteme_core.ask.reference_server import ReferenceServer

            with ReferenceServer() as server:
                assert check_component(component, kind, options={"url": server.url}) == kind
            continue
        assert check_component(component, kind) == kind


def test_check_component_names_what_is_missing_and_infers_the_kind() -> None:
    class Half:
        name = "half"
        version = "1"

        def accepts(self, document: object) -> bool:
            return True

    with pytest.raises(AssertionError, match=r"chunker 'half' lacks chunk\(\) \(a method\)"):
        check_component(Half(), "chunker")
    with pytest.raises(AssertionError, match="is no component"):
        check_component(object())
    from episteme_core.chunking.window import WindowChunker

    assert check_component(WindowChunker()) == "chunker"


def test_check_component_runs_a_chunker_and_catches_unsealed_chunks() -> None:
    import attrs

    from episteme_core.chunking.window import WindowChunker

    class Unsealed:
        name = "unsealed"
        version = "1"

        def accepts(self, document):  # type: ignore[no-untyped-def]
            return True

        def chunk(self, document, **options):  # type: ignore[no-untyped-def]
            chunks = WindowChunker().chunk(document, **options)
            return [attrs.evolve(c, id="0" * 64, chunker="unsealed/1") for c in chunks]

    assert sample_document().document_type == "text"
    with pytest.raises(AssertionError, match="is not sealed"):
        check_component(Unsealed(), "chunker")


def test_check_component_runs_an_indexer_and_catches_one_that_ignores_filters(plugin_site) -> None:
    from episteme_core.search.shardset import ShardSet

    plugin_site("sample")
    sample = load_plugins().get("indexer", "sample-indexer")
    assert check_component(sample) == "indexer"

    class Careless(type(sample)):  # type: ignore[misc]
        def open(self, home):  # type: ignore[no-untyped-def]
            opened = super().open(home)
            for shard in opened.shards:
                plain = shard.ranked
                shard.ranked = lambda terms, k, filters=None, _plain=plain, **kw: _plain(terms, k, None, **kw)
            assert isinstance(opened, ShardSet)
            return opened

    with pytest.raises(AssertionError, match="filters ignored"):
        check_component(Careless(), "indexer")


class _RaisingExtractor:
    name, version, content_types, limits = "raising", "1", ("text/plain",), ()

    def extract(self, request):  # type: ignore[no-untyped-def]
        raise ValueError("cannot read this")


class _FortyTwoKind:
    name, description = "forty-two", "a reader kind whose open() gives no reader"

    def open(self, spec):  # type: ignore[no-untyped-def]
        return 42


class _StringExporter:
    name, help, media_type = "stringly", "an exporter that returns a string", "text/plain"

    def configure(self, parser):  # type: ignore[no-untyped-def]
        return None

    def export(self, args, ctx, out):  # type: ignore[no-untyped-def]
        out.write(b"x")
        return "done"


class _ReaderWithoutDescription:
    name = "nameless-reader"

    def open(self, spec):  # type: ignore[no-untyped-def]
        return 42


def test_check_component_runs_every_kind_and_catches_what_the_members_alone_pass() -> None:
    with pytest.raises(AssertionError, match="extractor 'raising' raised ValueError"):
        check_component(_RaisingExtractor(), "extractor")
    with pytest.raises(AssertionError, match="open\\(\\) of reader kind 'forty-two' gave 42"):
        check_component(_FortyTwoKind(), "reader")
    with pytest.raises(AssertionError, match="export\\(\\) of 'stringly' returned 'done', not a mapping"):
        check_component(_StringExporter(), "exporter")


def test_check_component_infers_the_kind_each_builtin_and_fixture_has() -> None:
    for component, kind in ((_FortyTwoKind(), "reader"), (_StringExporter(), "exporter"),
                            (_RaisingExtractor(), "extractor")):
        with pytest.raises(AssertionError) as raised:
            check_component(component)
        assert kind in str(raised.value), (kind, raised.value)
    with pytest.raises(AssertionError, match="as a reader it lacks description"):
        check_component(_ReaderWithoutDescription())


def test_check_component_runs_an_exporter_that_writes_text_through_a_wrapper() -> None:
    import csv
    import io

    class CsvExporter:
        name, help, media_type = "csv-rows", "rows as CSV", "text/csv"

        def configure(self, parser):  # type: ignore[no-untyped-def]
            parser.add_argument("--label", default="x")

        def export(self, args, ctx, out):  # type: ignore[no-untyped-def]
            text = io.TextIOWrapper(out, encoding="utf-8", newline="")
            csv.writer(text).writerows([["label", "n"], [args.label, 1]])
            text.flush()
            text.detach()
            return {"rows": 2}

    assert check_component(CsvExporter(), argv=["--label", "y"]) == "exporter"
