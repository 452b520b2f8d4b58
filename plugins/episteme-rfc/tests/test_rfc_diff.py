"""``episteme diff`` over two versions of RFC 2119 cut by the rfc family: one word changed in
section 1 is one changed block and one changed section; the blocks and sections after it, whose
text did not change but whose offsets moved, are ``moved``, never ``changed``."""

from __future__ import annotations

from pathlib import Path

from episteme_core.testing import invoke, store_snapshot, validate

FIXTURES = Path(__file__).parent / "fixtures"
URL = "https://www.rfc-editor.org/rfc/rfc2119.txt"
BEFORE = b'This word, or the terms "REQUIRED" or "SHALL", mean that the'
AFTER = b'This word, or the terms "REQUIRED" or "SHALL", means that the'


def test_one_word_changed_is_one_block_and_one_section_changed(tmp_path: Path) -> None:
    text = (FIXTURES / "rfc2119.txt").read_bytes()
    homes = []
    for name, body in (("old", text), ("new", text.replace(BEFORE, AFTER))):
        home = tmp_path / name
        store_snapshot(home, URL, body, content_type="text/plain")
        assert invoke("extract", "--home", str(home)).exit_code == 0
        homes.append(home)
    result = invoke("diff", "--from", str(homes[0]), "--to", str(homes[1]), "--out", "-", "--json")
    artifact = result.envelope["data"]["artifact"]
    validate(artifact, "diff")
    summary = artifact["summary"]
    assert summary["sections"]["changed"] == 1 and summary["sections"]["moved"] >= 5
    assert summary["blocks"]["changed"] == 1 and summary["blocks"]["moved"] >= 10
    [change] = artifact["documents"][0]["changes"]
    assert change["section"] == "section-1" and change["edits"] == [{"removed": "mean", "added": "means"}]
    assert change["before"].startswith(BEFORE.decode()) and change["after"].startswith(AFTER.decode())
