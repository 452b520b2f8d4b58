"""``episteme diff`` as a change review, on two versions of RFC 2119 (one word changed near the
start, which moves every later offset): one block changed, with its text before and after and the
word that changed; the others, whose text did not change, moved."""

from __future__ import annotations

import json
from pathlib import Path

from episteme_core.testing import invoke, validate

RFC = Path(__file__).resolve().parents[1] / "fixtures" / "extract" / "rfc2119.txt"  # IETF Trust / BCP 78
URL = "https://www.rfc-editor.org/rfc/rfc2119.txt"
BEFORE = 'This word, or the terms "REQUIRED" or "SHALL", mean that the'
AFTER = 'This word, or the terms "REQUIRED" or "SHALL", means that the'


def versions(tmp_path: Path) -> tuple[Path, Path]:
    """Two homes: RFC 2119 as published, and with one word changed in its first definition."""
    text = RFC.read_bytes()
    assert text.count(BEFORE.encode()) == 1
    homes = []
    for name, body in (("v1", text), ("v2", text.replace(BEFORE.encode(), AFTER.encode()))):
        folder = tmp_path / name
        folder.mkdir()
        (folder / "rfc2119.txt").write_bytes(body)
        (folder / "map.json").write_text(json.dumps([{"sourceUrl": URL, "localPath": "rfc2119.txt"}]))
        home = tmp_path / f"home-{name}"
        assert invoke("--home", str(home), "pipeline", "--map", str(folder / "map.json")).exit_code == 0
        homes.append(home)
    return homes[0], homes[1]


def test_one_word_changed_is_one_changed_block_and_the_rest_moved(tmp_path: Path) -> None:
    old, new = versions(tmp_path)
    data = invoke("diff", "--from", str(old), "--to", str(new), "--out", "-", "--json").envelope["data"]
    artifact = data["artifact"]
    validate(artifact, "diff")
    blocks = artifact["summary"]["blocks"]
    assert blocks["changed"] == 1 and blocks["added"] == 0 and blocks["removed"] == 0
    assert blocks["moved"] > 10  # every block after the edit: same text, other offsets
    [document] = artifact["documents"]
    [change] = document["changes"]
    assert change["status"] == "changed" and change["block"] == change["fromBlock"]
    assert BEFORE in change["before"] and AFTER in change["after"] and change["truncated"] is False
    assert change["edits"] == [{"removed": "mean", "added": "means"}]
    assert change["wordsRemoved"] == 1 and change["wordsAdded"] == 1
    assert document["blocks"]["changed"] == [change["block"]]
    assert change["block"] not in document["blocks"]["moved"]
    again = invoke("diff", "--from", str(old), "--to", str(new), "--out", "-", "--json").envelope["data"]
    assert again["artifact"] == artifact  # deterministic


def test_the_human_review_shows_the_changed_text_and_max_chars_bounds_it(tmp_path: Path) -> None:
    old, new = versions(tmp_path)
    human = invoke("diff", "--from", str(old), "--to", str(new), "--out", str(tmp_path / "d.json"))
    assert human.exit_code == 0
    assert "Blocks: 0 added, 0 removed, 1 changed," in human.stdout
    assert ": mean -> means" in human.stdout
    assert f"- 1. MUST   {BEFORE}" in human.stdout and f"+ 1. MUST   {AFTER}" in human.stdout
    for limit, cut in ((20, True), (100_000, False)):
        data = invoke("diff", "--from", str(old), "--to", str(new), "--out", "-", "--max-chars", str(limit),
                      "--json").envelope["data"]["artifact"]
        [change] = data["documents"][0]["changes"]
        assert change["truncated"] is cut and len(change["before"]) <= limit and data["maxChars"] == limit
    for bad in ("0", "100001"):
        assert invoke("diff", "--from", str(old), "--to", str(new), "--max-chars", bad).exit_code == 2
    assert invoke("diff", "--from", str(old), "--to", str(new), "--max-chars", "1", "--out", "-",
                  "--json").exit_code == 0


def test_blocks_match_by_id_and_text_then_text_then_id() -> None:
    from episteme_core.stages.diff import diff_blocks, match_blocks

    def block(id: str, text: str, start: int) -> tuple[str, dict[str, object]]:
        return "s1", {"id": id, "text": text, "span": {"start": start, "end": start + len(text)}}

    before = [block("p1", "kept", 0), block("p2", "renamed", 10), block("p3", "edited", 20),
              block("p4", "same", 30), block("p5", "same", 40), block("p6", "dropped", 50)]
    after = [block("p1", "kept", 0), block("q2", "renamed", 10), block("p3", "edited now", 20),
             block("p4", "same", 35), block("p5", "same", 45), block("p7", "new", 60)]
    pairs, gone, new = match_blocks(before, after)
    assert sorted(pairs) == [(0, 0), (1, 1), (2, 2), (3, 3), (4, 4)] and gone == [5] and new == [5]
    found, changes = diff_blocks(before, after, 1200)
    assert found == {"added": ["p7"], "removed": ["p6"], "changed": ["p3"], "moved": ["p4", "p5", "q2"]}
    assert [(c["status"], c["block"], c["before"], c["after"]) for c in changes] == [
        ("changed", "p3", "edited", "edited now"), ("removed", "p6", "dropped", None),
        ("added", "p7", None, "new")]
    assert changes[0]["edits"] == [{"removed": "", "added": "now"}]
    assert (changes[0]["wordsRemoved"], changes[0]["wordsAdded"]) == (0, 1)


def test_the_review_is_the_same_bytes_under_any_hash_seed(tmp_path: Path) -> None:
    from episteme_core.testing.crashmatrix import episteme

    old, new = versions(tmp_path)
    written = []
    for seed in ("1", "2"):
        out = tmp_path / f"diff-{seed}.json"
        args = ["diff", "--from", str(old), "--to", str(new), "--out", str(out)]
        proc = episteme(tmp_path / "unused", args, {"PYTHONHASHSEED": seed})
        assert proc.returncode == 0, proc.stderr
        written.append(out.read_bytes())
    assert written[0] == written[1]
