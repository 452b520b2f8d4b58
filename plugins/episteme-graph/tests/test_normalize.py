"""graph normalize: accepted formats become segments with selectors; everything else is refused by name."""

from __future__ import annotations

import json
import os
from pathlib import Path
from typing import Any

import pytest

from episteme_core.testing import invoke


def _run(root: Path, *paths: str, extra: tuple[str, ...] = ()) -> Any:
    return invoke("graph", "normalize", *paths, "--root", str(root), "--json", *extra)


def test_text_paragraphs_carry_position_and_quote_selectors(tmp_path: Path) -> None:
    text = "\ufeffFirst paragraph,\r\nstill first.\r\n\r\n  Second one.  \n\n\n"
    (tmp_path / "a.txt").write_text(text, "utf-8")
    result = _run(tmp_path, "a.txt")
    assert result.exit_code == 0, result.stderr
    [source] = result.envelope["data"]["sources"]
    decoded = text[1:]
    segments = source["segments"]
    assert [s["text"] for s in segments] == ["First paragraph,\r\nstill first.", "Second one."]
    for segment in segments:
        position, quote = segment["selectors"]
        assert decoded[position["start"] : position["end"]] == segment["text"] == quote["exact"]
    assert segments[1]["selectors"][1]["prefix"].endswith("\r\n\r\n  ")
    assert source["source"]["id"].startswith("source-") and len(source["source"]["id"]) == 31


def test_ids_follow_bytes_not_names(tmp_path: Path) -> None:
    (tmp_path / "a.md").write_text("# Title\n\nBody text.\n", "utf-8")
    (tmp_path / "b.md").write_text("# Title\n\nBody text.\n", "utf-8")
    one, two = _run(tmp_path, "a.md", "b.md").envelope["data"]["sources"]
    assert [s["id"] for s in one["segments"]] == [s["id"] for s in two["segments"]]
    assert one["source"]["id"] == two["source"]["id"]
    (tmp_path / "b.md").write_text("# Title\n\nBody text!\n", "utf-8")
    three = _run(tmp_path, "b.md").envelope["data"]["sources"][0]
    assert (
        three["source"]["id"] != one["source"]["id"]
        and three["segments"][0]["id"] != one["segments"][0]["id"]
    )


def test_html_blocks_keep_their_ids_and_skip_scripts(tmp_path: Path) -> None:
    (tmp_path / "p.html").write_text(
        "<html><head><title>T</title><script>var x = '<p>not text</p>';</script></head><body>"
        "<section id='s1'><p>Inside   the\n section.</p></section><p id='p2'>Own &amp; id.</p>"
        "<template><p>never</p></template><pre>  kept\n  as is</pre></body></html>",
        "utf-8",
    )
    segments = _run(tmp_path, "p.html").envelope["data"]["sources"][0]["segments"]
    texts = [s["text"] for s in segments]
    assert texts == ["T", "Inside the section.", "Own & id.", "  kept\n  as is"]
    assert segments[1]["selectors"][0] == {"type": "FragmentSelector", "fragment": "#s1"}
    assert segments[2]["selectors"][0] == {"type": "FragmentSelector", "fragment": "#p2"}


def test_csv_rows_and_json_leaves(tmp_path: Path) -> None:
    (tmp_path / "t.csv").write_text("name,value\n=SUM(A1),3\n\n,\nlast,row\n", "utf-8")
    (tmp_path / "d.json").write_text(json.dumps({"b": [1, {"c/d": "x"}], "a": "", "e": {}}), "utf-8")
    csv_source, json_source = _run(tmp_path, "t.csv", "d.json").envelope["data"]["sources"]
    assert [(s["text"], s["selectors"][0]["cell_range"]) for s in csv_source["segments"]] == [
        ("name\tvalue", "A1:B1"),
        ("=SUM(A1)\t3", "A2:B2"),
        ("last\trow", "A5:B5"),
    ]
    assert [(s["selectors"][0]["json_pointer"], s["text"]) for s in json_source["segments"]] == [
        ("/b/0", "1"),
        ("/b/1/c~1d", "x"),
        ("/e", "{}"),
    ]


@pytest.mark.parametrize(
    "name,data,reason",
    [
        ("doc.pdf", b"%PDF-1.7 ...", "pdf"),
        ("fake.txt", b"%PDF-1.4 hidden", "pdf"),
        ("photo.png", b"\x89PNG", "image"),
        ("clip.mp4", b"x", "media"),
        ("bundle.zip", b"PK\x03\x04", "archive"),
        ("macro.docm", b"PK", "office-macros"),
        ("report.docx", b"PK", "office"),
        ("script.py", b"print(1)", "unsupported"),
        ("nul.txt", b"a\x00b", "binary"),
        ("latin.txt", "caf\u00e9".encode("latin-1"), "encoding"),
    ],
)
def test_each_kind_of_file_is_refused_by_name(tmp_path: Path, name: str, data: bytes, reason: str) -> None:
    (tmp_path / name).write_bytes(data)
    result = _run(tmp_path, name)
    assert result.exit_code == 3
    [rejected] = result.envelope["error"]["details"]["rejected"]
    assert rejected["reason"] == reason and rejected["path"] == name


def test_urls_symlinks_and_escapes_are_refused(tmp_path: Path) -> None:
    root = tmp_path / "root"
    root.mkdir()
    (root / "ok.txt").write_text("fine\n")
    (tmp_path / "outside.txt").write_text("secret\n")
    (root / "link.txt").symlink_to(tmp_path / "outside.txt")
    (root / "dir").symlink_to(tmp_path, target_is_directory=True)
    result = _run(
        root,
        "https://example.org/a.txt",
        "file:///etc/passwd",
        "../outside.txt",
        "link.txt",
        "dir/outside.txt",
        str(tmp_path / "outside.txt"),
        "ok.txt",
    )
    assert result.exit_code == 3
    reasons = [r["reason"] for r in result.envelope["error"]["details"]["rejected"]]
    assert reasons == ["url", "url", "outside-root", "symlink", "symlink", "outside-root"]


def test_limits_at_and_just_past(tmp_path: Path) -> None:
    data = "word " * 100
    (tmp_path / "a.txt").write_text(data, "utf-8")
    size = len(data.encode())
    assert _run(tmp_path, "a.txt", extra=("--max-bytes", str(size))).exit_code == 0
    past = _run(tmp_path, "a.txt", extra=("--max-bytes", str(size - 1)))
    assert past.exit_code == 5 and past.envelope["error"]["details"]["rejected"][0]["reason"] == "too-large"
    (tmp_path / "many.txt").write_text("\n\n".join(f"p{i}" for i in range(3)), "utf-8")
    assert _run(tmp_path, "many.txt", extra=("--max-segments", "3")).exit_code == 0
    assert _run(tmp_path, "many.txt", extra=("--max-segments", "2")).exit_code == 5


def test_a_long_paragraph_is_split_at_a_space(tmp_path: Path) -> None:
    text = " ".join(["abcdefghi"] * 60)  # 599 characters, one paragraph
    (tmp_path / "long.txt").write_text(text, "utf-8")
    segments = _run(tmp_path, "long.txt", extra=("--max-segment-chars", "256")).envelope["data"]["sources"][
        0
    ]["segments"]
    assert all(len(s["text"]) <= 256 for s in segments) and len(segments) == 3
    assert " ".join(s["text"] for s in segments) == text


def test_nothing_is_written(tmp_path: Path) -> None:
    (tmp_path / "a.txt").write_text("x\n")
    before = sorted(os.listdir(tmp_path))
    assert _run(tmp_path, "a.txt").exit_code == 0
    assert sorted(os.listdir(tmp_path)) == before
