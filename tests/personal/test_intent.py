"""Intent: the home's intent.md as the record ``intent``, one paragraph per heading."""

from __future__ import annotations

from pathlib import Path

from episteme_core.personal.intent import read_intent, split_sections

from .conftest import Cli

INTENT = """---
date: 2025-01-02T03:04:05+02:00
---
Why I keep this store.

# Learn
Read the specs I implement,
and cite them.

```
# not a heading inside a fence
```

## Ship
Small commits.
"""


def test_paragraphs_by_heading_verbatim(tmp_path: Path) -> None:
    path = tmp_path / "intent.md"
    path.write_text(INTENT, encoding="utf-8")
    record = read_intent(path)
    assert record.id == "intent" and record.source == "intent"
    assert record.time == "2025-01-02T01:04:05Z" and record.title == "Learn"
    assert [p.text for p in record.paragraphs] == [
        "Why I keep this store.",
        "# Learn\nRead the specs I implement,\nand cite them.\n\n```\n# not a heading inside a fence\n```",
        "## Ship\nSmall commits.",
    ]
    assert [p.attributes.get("heading") for p in record.paragraphs] == [None, "Learn", "Ship"]
    assert [p.attributes["line"] for p in record.paragraphs] == [4, 6, 14]


def test_split_sections_without_headings() -> None:
    assert split_sections("\n\nonly text\n\n") == [("only text", None, 3)]


def test_cli_ingest_intent_and_missing_file(home: Path, cli: Cli) -> None:
    missing = cli("ingest", "intent", "--json")
    assert missing.exit_code == 3 and missing.envelope["error"]["code"] == "INVALID_INPUT"
    assert "intent.md" in missing.envelope["error"]["message"]
    (home / "intent.md").write_text(INTENT, encoding="utf-8")
    done = cli("ingest", "intent", "--no-pack", "--json")
    assert done.exit_code == 0 and done.envelope["data"]["records"] == ["intent"]
    shown = cli("show", "intent#3", "--stale-ok", "--json").envelope["data"]
    assert shown["paragraph"]["text"] == "## Ship\nSmall commits."


def test_a_symlinked_intent_is_refused(tmp_path: Path) -> None:
    real = tmp_path / "real.md"
    real.write_text("# x\n", encoding="utf-8")
    (tmp_path / "intent.md").symlink_to(real)
    try:
        read_intent(tmp_path / "intent.md")
    except Exception as exc:  # noqa: BLE001 - the code is what matters
        assert getattr(exc, "code", None) == "INVALID_INPUT"
    else:
        raise AssertionError("a symlinked intent.md was read")
