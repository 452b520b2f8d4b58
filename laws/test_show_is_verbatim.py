"""ShowIsVerbatim: `show ID#n` returns paragraph n exactly as the source wrote it, for any text.

Any message text (unicode, emoji, blank lines, leading spaces, CRLF inside a JSON string) written into
a Claude Code transcript or a book comes back from `show --json` byte for byte; the same text is what
the record stored.
"""

from __future__ import annotations

import json
import tempfile
from pathlib import Path

from hypothesis import HealthCheck, given, settings
from hypothesis import strategies as st

from episteme_core.testing import invoke

TEXT = st.text(
    alphabet=st.characters(blacklist_categories=("Cs",), blacklist_characters="\x00"), min_size=1, max_size=300
).filter(lambda t: t.strip() != "")
LINE = st.text(
    alphabet=st.characters(blacklist_categories=("Cs", "Cc", "Zl", "Zp"), blacklist_characters="\ufeff"),
    min_size=1, max_size=80,
).filter(lambda t: t.strip() != "" and not t.lstrip().startswith("*** "))


@settings(max_examples=20, deadline=None, suppress_health_check=[HealthCheck.too_slow])
@given(messages=st.lists(TEXT, min_size=1, max_size=6))
def test_chat_paragraphs_come_back_verbatim(messages: list[str]) -> None:
    with tempfile.TemporaryDirectory() as tmp:
        root = Path(tmp)
        project = root / "projects" / "-p"
        project.mkdir(parents=True)
        lines = [
            json.dumps({"type": "user", "uuid": f"u{i}", "timestamp": f"2025-01-01T00:00:{i:02d}Z",
                        "message": {"role": "user", "content": text}})
            for i, text in enumerate(messages)
        ]
        (project / "s.jsonl").write_text("\n".join(lines) + "\n", encoding="utf-8")
        home = str(root / "home")
        assert invoke("ingest", "claude", "--projects", str(root / "projects"), "--no-pack",
                      "--home", home).exit_code == 0
        for n, text in enumerate(messages, start=1):
            shown = invoke("show", f"chat:claude/-p/s#{n}", "--stale-ok", "--json", "--home", home)
            assert shown.exit_code == 0, shown.stderr
            assert shown.envelope["data"]["paragraph"]["text"] == text


@settings(max_examples=20, deadline=None, suppress_health_check=[HealthCheck.too_slow])
@given(paragraphs=st.lists(st.lists(LINE, min_size=1, max_size=3), min_size=1, max_size=5),
       crlf=st.booleans())
def test_book_paragraphs_come_back_verbatim(paragraphs: list[list[str]], crlf: bool) -> None:
    with tempfile.TemporaryDirectory() as tmp:
        root = Path(tmp)
        corpus = root / "shelf"
        corpus.mkdir()
        newline = "\r\n" if crlf else "\n"
        body = (newline * 2).join(newline.join(lines) for lines in paragraphs) + newline
        (corpus / "b.txt").write_bytes(body.encode("utf-8"))
        home = str(root / "home")
        assert invoke("ingest", "books", str(corpus), "--no-pack", "--home", home).exit_code == 0
        for n, lines in enumerate(paragraphs, start=1):
            shown = invoke("show", f"book:shelf/b#{n}", "--stale-ok", "--json", "--home", home)
            assert shown.exit_code == 0, shown.stderr
            assert shown.envelope["data"]["paragraph"]["text"] == "\n".join(lines)
