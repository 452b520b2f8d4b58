"""Kill -9 at every write step of a capture: the previous commit stays readable and verified."""

from __future__ import annotations

import json
import shutil
import signal
from pathlib import Path

from episteme_core.stages.snapshots import read_catalog
from episteme_core.store.home import Home
from episteme_core.testing import run_cli

URL = "https://example.org/"


def _state(home: Path) -> dict[str, str]:
    catalog = read_catalog(Home(home))
    state = {}
    for source in catalog.sources():
        record = catalog.latest(source)
        catalog.content(record)  # every byte verified
        state[source] = record.id
    return state


def test_kill_at_every_write_step_keeps_a_whole_commit(tmp_path: Path) -> None:
    files = tmp_path / "files"
    files.mkdir()
    (files / "a.txt").write_text("a, first version")
    map_path = files / "map.json"
    map_path.write_text(json.dumps([{"sourceUrl": URL + "a", "localPath": "a.txt"}]))
    base = tmp_path / "base"
    assert run_cli(["manual-ingest", "--home", str(base), "--map", str(map_path)]).exit_code == 0
    old = _state(base)

    (files / "a.txt").write_text("a, second version")
    (files / "b.txt").write_text("b")
    map_path.write_text(json.dumps([{"sourceUrl": URL + "a", "localPath": "a.txt"},
                                    {"sourceUrl": URL + "b", "localPath": "b.txt"}]))
    clean = tmp_path / "clean"
    shutil.copytree(base, clean)
    assert run_cli(["manual-ingest", "--home", str(clean), "--map", str(map_path)]).exit_code == 0
    new = _state(clean)
    assert new != old

    outcomes = set()
    for step in range(1, 40):
        home = tmp_path / f"crash{step}"
        shutil.copytree(base, home)
        result = run_cli(["manual-ingest", "--home", str(home), "--map", str(map_path)],
                         env={"EPISTEME_CRASH_AT": str(step)})
        if result.exit_code == 0:
            break
        assert result.exit_code == -signal.SIGKILL, result.stderr
        state = _state(home)
        assert state in (old, new), step
        outcomes.add("old" if state == old else "new")
        verify = run_cli(["verify", "--json", "--home", str(home)])
        assert verify.exit_code == 0, verify.stdout + verify.stderr
        again = run_cli(["manual-ingest", "--json", "--home", str(home), "--map", str(map_path)])
        assert again.exit_code == 0, again.stderr  # the dead writer's lock is broken
        assert _state(home) == new
    else:
        raise AssertionError("the run never completed")
    assert step > 5 and outcomes == {"old", "new"}
