"""The temp files a killed writer leaves, found and removed by the next writer under the lock.

Atomic writes go through ``.NAME.PID.UUID.tmp`` next to their target; a writer killed between
writing and renaming leaves that file behind. Readers never look at temp files, so a leftover is
harmless but wastes space: the next writer sweeps every folder a write can leave one in (the home,
``blobs/sha256/`` and its ``xx/`` folders, each stage folder, its ``buckets/``, its ``objects/`` and
their ``xx/`` folders) and ``verify`` reports any it finds.

The sweep runs only when it can find something: a writer that finishes removes the lock file, and
one that is killed leaves it naming its (now gone) process, so a writer that takes the lock over
such a file sweeps (``lock.holding``'s ``recover``: ``recover_home``, which also deletes the
objects its unfinished prune left), and one that takes a fresh lock lists no folder (listing every
objects folder was a tenth of an unchanged re-run of 20,000 files).
"""

from __future__ import annotations

from pathlib import Path

from episteme_core.store.atomic import fan_out, is_temp_file, sweep_temp_files
from episteme_core.store.home import STAGES, Home


def temp_folders(home: Home) -> list[Path]:
    """Every folder an atomic write of the store can leave a temp file in."""
    folders = [home.root, *fan_out(home.blobs_dir)]
    for stage in STAGES:
        directory = home.stage_dir(stage)
        folders.append(directory)
        folders.append(directory / "buckets")
        folders.extend(fan_out(directory / "objects"))
    return folders


def sweep_home(home: Home) -> int:
    """Remove the temp files killed writers left in the store; call only under the writer lock."""
    return sweep_temp_files(temp_folders(home))


def recover_home(home: Home) -> None:
    """What a writer that did not finish may have left, removed under the lock by the next one: its
    temp files, and the objects a commit no longer names that its prune had not deleted yet (every
    committed stage's objects folder walked; a stage whose index cannot be read is left for
    ``verify`` to report)."""
    from episteme_core.errors import EpistemeError
    from episteme_core.store.commits import Stage

    sweep_home(home)
    for name in STAGES:
        stage = Stage(home, name)
        try:
            index = stage.read_index()
            if index is not None:
                stage.prune_walking(index)
        except EpistemeError:
            continue


def leftover_temp_files(home: Home) -> list[Path]:
    """The temp files in the store's folders (what ``sweep_home`` would remove), sorted."""
    found: list[Path] = []
    for folder in temp_folders(home):
        try:
            found.extend(p for p in folder.iterdir() if p.is_file() and is_temp_file(p))
        except (FileNotFoundError, NotADirectoryError):
            continue
    return sorted(found)


__all__ = ["leftover_temp_files", "recover_home", "sweep_home", "temp_folders"]
