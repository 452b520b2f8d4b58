"""Strict manifests and maps: every refusal names the entry index and the field, and stores nothing."""

from __future__ import annotations

import json
from pathlib import Path
from typing import Any

import pytest
from hypothesis import given, settings
from hypothesis import strategies as st

from episteme_core.capture.manifest import parse_manifest, parse_map
from episteme_core.capture.urls import UrlError, normalise_url
from episteme_core.errors import EpistemeError
from episteme_core.testing import invoke, validate

OK = "https://example.org/spec"


def _error(value: Any, max_sources: int = 1000) -> EpistemeError:
    with pytest.raises(EpistemeError) as info:
        parse_manifest(json.dumps(value).encode(), max_sources=max_sources)
    return info.value


@pytest.mark.parametrize(
    ("manifest", "index", "field"),
    [
        ([{"url": OK, "label": "x"}], 0, "label"),
        ([{"url": OK}, {}], 1, "url"),
        ([{"url": 3}], 0, "url"),
        ([{"url": ""}], 0, "url"),
        ([{"url": "ftp://example.org/x"}], 0, "url"),
        ([{"url": "file:///etc/passwd"}], 0, "url"),
        ([{"url": "https://user:pw@example.org/"}], 0, "url"),
        ([{"url": "https://exa mple.org/"}], 0, "url"),
        ([{"url": "not a url"}], 0, "url"),
        ([{"url": OK}, {"url": "HTTPS://EXAMPLE.org:443/spec#part"}], 1, "url"),
        ([{"url": OK, "family": "W3C"}], 0, "family"),
        ([{"url": OK, "family": None}], 0, "family"),
        ([{"url": OK, "authority": "binding"}], 0, "authority"),
        ([{"url": OK, "extractor": "docx"}], 0, "extractor"),
        ([{"url": OK, "extractor": ["html"]}], 0, "extractor"),
        ([{"url": OK}, "https://example.org/b"], 1, None),
    ],
)
def test_bad_entries_name_index_and_field(manifest: Any, index: int, field: str | None) -> None:
    error = _error(manifest)
    assert error.code == "INVALID_INPUT"
    assert error.details is not None
    assert (error.details["entry"], error.details["field"]) == (index, field)
    assert f"[{index}]" in error.message
    if field:
        assert field in error.message


@pytest.mark.parametrize("value", [{"url": OK}, "[]", 3, None])
def test_not_an_array(value: Any) -> None:
    assert _error(value).code == "INVALID_INPUT"


def test_malformed_json_and_duplicate_keys() -> None:
    for raw in (b"[{", b'[{"url": "a", "url": "b"}]', b"\xff\xfe"):
        with pytest.raises(EpistemeError) as info:
            parse_manifest(raw)
        assert info.value.code == "INVALID_INPUT"


def test_max_sources_at_and_past_the_bound() -> None:
    entries = [{"url": f"https://example.org/{n}"} for n in range(3)]
    assert len(parse_manifest(json.dumps(entries).encode(), max_sources=3)) == 3
    error = _error(entries, max_sources=2)
    assert error.code == "LIMIT_EXCEEDED" and error.details and error.details["entry"] == 2


def test_normalised_entries() -> None:
    [entry] = parse_manifest(json.dumps([{"url": "HTTP://Example.ORG:80#Sec-2", "family": "w3c",
                                          "authority": "informative", "extractor": "html"}]).encode())
    assert entry.url == "http://example.org/" and entry.fragment == "Sec-2"
    assert entry.options == {"family": "w3c", "authority": "informative", "extractor": "html",
                             "fragment": "Sec-2"}


def test_schema_accepts_what_the_parser_accepts() -> None:
    manifest = [{"url": OK, "family": "rfc", "authority": "normative", "extractor": "pdf"}]
    parse_manifest(json.dumps(manifest).encode())
    validate(manifest, "manifest")
    validate([{"sourceUrl": OK, "localPath": "docs/a.html", "contentType": "text/html"}], "map")


@pytest.mark.parametrize(
    ("item", "field"),
    [
        ({"sourceUrl": OK}, "localPath"),
        ({"localPath": "a"}, "sourceUrl"),
        ({"sourceUrl": OK, "localPath": "a", "extra": 1}, "extra"),
        ({"sourceUrl": OK, "localPath": "../secret"}, "localPath"),
        ({"sourceUrl": OK, "localPath": "a/../../b"}, "localPath"),
        ({"sourceUrl": OK, "localPath": "~/x"}, "localPath"),
        ({"sourceUrl": OK, "localPath": "a", "contentType": ""}, "contentType"),
        ({"sourceUrl": OK, "localPath": "a", "contentType": "not a type"}, "contentType"),
        ({"sourceUrl": "mailto:x@example.org", "localPath": "a"}, "sourceUrl"),
    ],
)
def test_bad_map_entries(item: dict[str, Any], field: str) -> None:
    with pytest.raises(EpistemeError) as info:
        parse_map(json.dumps([{"sourceUrl": "https://example.org/first", "localPath": "f"}, item]).encode())
    assert info.value.code == "INVALID_INPUT"
    assert info.value.details and (info.value.details["entry"], info.value.details["field"]) == (1, field)


def test_map_duplicates_ignore_the_fragment() -> None:
    raw = json.dumps([{"sourceUrl": OK, "localPath": "a"}, {"sourceUrl": OK + "#dup", "localPath": "b"}])
    with pytest.raises(EpistemeError) as info:
        parse_map(raw.encode())
    assert info.value.details and info.value.details["duplicateOf"] == 0


def test_cli_refuses_bad_manifest_and_stores_nothing(home: Path, tmp_path: Path) -> None:
    manifest = tmp_path / "m.json"
    manifest.write_text(json.dumps([{"url": OK}, {"url": OK, "authority": "x"}]))
    result = invoke("snapshot", "--json", "--home", str(home), "--manifest", str(manifest))
    assert result.exit_code == 3
    error = result.envelope["error"]
    assert error["code"] == "INVALID_INPUT" and error["details"]["entry"] == 1
    assert not home.exists()


def test_cli_number_options_are_ranged(home: Path, tmp_path: Path) -> None:
    manifest = tmp_path / "m.json"
    manifest.write_text("[]")
    for option, value in [("--retries", "9"), ("--timeout", "0"), ("--max-bytes", "0"),
                          ("--max-sources", "100001"), ("--retries", "-1")]:
        result = invoke("snapshot", "--json", "--home", str(home), "--manifest", str(manifest), option, value)
        assert result.exit_code == 2, (option, value)
    ok = invoke("snapshot", "--json", "--home", str(home), "--manifest", str(manifest), "--retries", "8")
    assert ok.exit_code == 0 and ok.envelope["data"]["sources"] == []


@settings(max_examples=200, deadline=None)
@given(st.recursive(
    st.none() | st.booleans() | st.integers() | st.text(max_size=30),
    lambda children: st.lists(children, max_size=4) | st.dictionaries(
        st.sampled_from(["url", "family", "authority", "extractor", "sourceUrl", "localPath", "x"]),
        children, max_size=4),
    max_leaves=12,
))
def test_parsers_never_crash(value: Any) -> None:
    """Fuzz: any JSON value is parsed or refused with INVALID_INPUT / LIMIT_EXCEEDED, nothing else."""
    raw = json.dumps(value).encode()
    for parse in (parse_manifest, parse_map):
        try:
            parse(raw, max_sources=3)
        except EpistemeError as error:
            assert error.code in ("INVALID_INPUT", "LIMIT_EXCEEDED")


@settings(max_examples=300, deadline=None)
@given(st.text(max_size=60))
def test_normalise_url_is_idempotent(text: str) -> None:
    try:
        url, _ = normalise_url(text)
    except UrlError:
        return
    assert normalise_url(url) == (url, None)
