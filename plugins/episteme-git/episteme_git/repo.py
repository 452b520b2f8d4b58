"""Reading a repository with the real ``git`` binary: commits as records, three processes in all.

``git rev-list`` lists the commits, one ``git cat-file --batch`` reads their raw objects (so the
message bytes and the ``encoding`` header are exact), one ``git diff-tree --stdin`` lists the paths
each changed against its first parent.
"""

from __future__ import annotations

import codecs
import os
import re
import shutil
import subprocess
import warnings
from collections.abc import Callable
from pathlib import Path
from typing import Any

import attrs

from episteme_core.api import (
    EpistemeError,
    Paragraph,
    Record,
    build_record,
    decode_text,
    from_timestamp,
    id_segment,
    safe_name,
    split_paragraphs,
)

SOURCE = "git"
_PERSON = re.compile(rb"^(?P<name>.*?) ?<(?P<email>[^>]*)> (?P<seconds>-?\d+)(?: (?P<tz>[+-]\d{4}))?$")
_SHA = re.compile(r"^[0-9a-f]{40}([0-9a-f]{24})?$")

Warn = Callable[..., None]  # a run's ctx.warn: (code, message, **details)


@attrs.frozen
class Repo:
    """A work tree (or bare repository) and the name its record ids use."""

    path: Path
    name: str


def git_binary() -> str:
    found = shutil.which("git")
    if found is None:
        raise EpistemeError(
            "INVALID_USAGE", "the git binary was not found on the PATH",
            hint="install git, or put it on the PATH",
        )
    return found


def run_git(repo: Path, *args: str, stdin: bytes | None = None, check: bool = True) -> bytes:
    """Run ``git -C repo ARGS`` and return stdout; a failure is ``INVALID_INPUT`` with git's words."""
    env = {**os.environ, "LC_ALL": "C", "GIT_TERMINAL_PROMPT": "0", "GIT_PAGER": "cat"}
    try:
        proc = subprocess.run(
            [git_binary(), "-C", str(repo), "--no-pager", "-c", "core.quotepath=off", *args],
            input=stdin, capture_output=True, env=env, check=False,
        )
    except OSError as exc:
        raise EpistemeError("INVALID_USAGE", f"cannot run git: {exc.strerror or exc}") from exc
    if check and proc.returncode != 0:
        message = proc.stderr.decode("utf-8", "replace").strip().splitlines()
        raise EpistemeError(
            "INVALID_INPUT",
            f"{repo}: git {args[0]} failed: {message[-1] if message else 'exit ' + str(proc.returncode)}",
            details={"path": str(repo), "exitStatus": proc.returncode},
        )
    return proc.stdout


def open_repo(path: Path, name: str | None = None) -> Repo:
    """The repository at ``path``; not a folder or not a repository is ``INVALID_INPUT``."""
    if not path.is_dir():
        raise EpistemeError(
            "INVALID_INPUT", f"{path}: not a folder", details={"path": str(path)}
        )
    probe = subprocess.run(
        [git_binary(), "-C", str(path), "rev-parse", "--is-bare-repository", "--show-toplevel"],
        capture_output=True, env={**os.environ, "LC_ALL": "C"}, check=False,
    )
    if probe.returncode != 0:
        said = probe.stderr.decode("utf-8", "replace").strip().splitlines()
        reason = said[0].removeprefix("fatal: ") if said else "not a git repository"
        dubious = "dubious ownership" in reason
        raise EpistemeError(
            "INVALID_INPUT",
            f"{path}: {'git refuses it (dubious ownership)' if dubious else 'not a git repository'}",
            details={"path": str(path), "git": reason},
            hint="add it to git's safe.directory list" if dubious
            else "pass the folder of a git work tree or bare repository",
        )
    lines = probe.stdout.decode("utf-8", "replace").splitlines()
    if lines and lines[0] == "true" or len(lines) < 2:
        top = path.absolute().resolve()
        default = top.name.removesuffix(".git")
    else:
        top = Path(lines[1])
        default = top.name
    # a name the user gives must be plain; a folder's name is made id-safe (spaces percent-encoded)
    chosen = (name if name and safe_name(name) else "") if name else (id_segment(default) or "")
    if not chosen:
        raise EpistemeError(
            "INVALID_INPUT", f"{name or default!r} cannot name a repository in record ids",
            details={"name": name or default}, hint="pass --name with a plain name",
        )
    return Repo(top, chosen)


def list_commits(repo: Repo, rev: str = "HEAD") -> list[str]:
    """Commit shas reachable from ``rev``, oldest first; an empty repository has none."""
    if rev.startswith("-"):
        raise EpistemeError("INVALID_USAGE", f"--rev {rev!r} must not start with '-'")
    verify = subprocess.run(
        [git_binary(), "-C", str(repo.path), "rev-parse", "--verify", "--quiet", f"{rev}^{{commit}}"],
        capture_output=True, check=False, env={**os.environ, "LC_ALL": "C"},
    )
    if verify.returncode != 0:
        if rev == "HEAD":
            return []  # a repository without commits yet
        raise EpistemeError(
            "INVALID_INPUT", f"{repo.path}: {rev!r} is not a commit", details={"rev": rev}
        )
    out = run_git(repo.path, "rev-list", "--reverse", "--topo-order", rev, "--")
    return [line for line in out.decode("ascii").split("\n") if line]


def read_objects(repo: Repo, shas: list[str]) -> dict[str, bytes]:
    """Raw commit objects, by sha, from one ``git cat-file --batch`` (one it lacks is left out)."""
    if not shas:
        return {}
    out = run_git(repo.path, "cat-file", "--batch", stdin=("\n".join(shas) + "\n").encode("ascii"))
    objects: dict[str, bytes] = {}
    position = 0
    while position < len(out):
        header_end = out.index(b"\n", position)
        header = out[position:header_end].decode("ascii", "replace").split(" ")
        if len(header) == 2 and header[1] in ("missing", "ambiguous"):
            position = header_end + 1
            continue
        if len(header) != 3 or not header[2].isdigit():
            raise EpistemeError("PROCESSING_FAILED", f"{repo.path}: unexpected git cat-file output")
        size = int(header[2])
        start = header_end + 1
        if header[1] == "commit":
            objects[header[0]] = out[start:start + size]
        position = start + size + 1
    return objects


def changed_paths(repo: Repo, shas: list[str]) -> dict[str, list[dict[str, Any]]]:
    """Per commit, the paths it changed against its first parent (with added/deleted line counts)."""
    if not shas:
        return {}
    out = run_git(
        repo.path, "diff-tree", "--stdin", "-r", "-z", "--numstat", "--no-renames", "--root", "-m",
        stdin=("\n".join(shas) + "\n").encode("ascii"),
    )
    changes: dict[str, list[dict[str, Any]]] = {}
    current: str | None = None
    done: set[str] = set()
    for token in out.split(b"\0"):
        if not token:
            continue
        text = token.decode("utf-8", "surrogateescape")
        if "\t" not in text:
            sha = text.strip()
            # a merge repeats its sha once per parent: keep only the first (first parent)
            current = None if sha in done else sha
            done.add(sha)
            if current is not None:
                changes[current] = []
            continue
        if current is None:
            continue
        added, deleted, path = text.split("\t", 2)
        changes[current].append({
            "path": path.encode("utf-8", "surrogateescape").decode("utf-8", "replace"),
            "added": int(added) if added.isdigit() else None,
            "deleted": int(deleted) if deleted.isdigit() else None,
        })
    return changes


@attrs.define
class Notes:
    """What reading one repository's commits noticed: one warning per kind, not one per commit."""

    guessed: list[str] = attrs.field(factory=list)  # messages neither UTF-8 nor in a declared encoding
    odd_people: list[str] = attrs.field(factory=list)  # author or committer lines git's form lacks


def _decode(raw: bytes, declared: str | None) -> tuple[str, str]:
    """Text in its declared encoding when that decodes it to storable text; else the usual guess
    (UTF-8, Windows-1252, Latin-1). A header naming ``unicode_escape`` or ``base64`` is text anyone
    can write: what it decodes to must still be valid Unicode."""
    if declared:
        try:
            codecs.lookup(declared)
            with warnings.catch_warnings():  # unicode_escape warns on odd escapes: not ours to show
                warnings.simplefilter("ignore")
                text = raw.decode(declared)
            text.encode("utf-8")  # no lone surrogate
            return text, declared.lower()
        except (LookupError, UnicodeError, ValueError, TypeError):
            pass
    return decode_text(raw)


_GUESSED = ("windows-1252", "utf-8+windows-1252")


def _person(value: bytes, declared: str | None) -> tuple[dict[str, Any], bool]:
    """An author or committer line (``Name <email> seconds tz``), its text in the commit's encoding;
    and whether it was in that form (else it is kept whole as the name, its time unknown)."""
    match = _PERSON.match(value)
    if match is None:
        return {"name": _decode(value, declared)[0], "time": None}, False
    try:
        time: str | None = from_timestamp(int(match.group("seconds")))
    except (OverflowError, OSError, ValueError):  # a time no calendar holds: kept as unknown
        time = None
    return {
        "name": _decode(match.group("name"), declared)[0],
        "email": _decode(match.group("email"), declared)[0],
        "time": time,
        "timezone": (match.group("tz") or b"+0000").decode("ascii"),
    }, time is not None


def _headers(head: bytes) -> list[tuple[str, bytes]]:
    headers: list[tuple[str, bytes]] = []
    for line in head.split(b"\n"):
        if line.startswith(b" ") and headers:
            continue  # continuation of a multi-line header (gpgsig, mergetag)
        key, _, value = line.partition(b" ")
        headers.append((key.decode("ascii", "replace"), value))
    return headers


def _parents(headers: list[tuple[str, bytes]]) -> list[str]:
    """The parents as git reads them: the ``parent`` lines right after ``tree`` (a ``parent`` line
    further down is only text to git, and may not even be ASCII)."""
    parents: list[str] = []
    for key, value in headers[1:] if headers and headers[0][0] == "tree" else headers:
        if key != "parent":
            break
        sha = value.decode("ascii", "replace")
        if _SHA.match(sha):
            parents.append(sha)
    return parents


def parse_commit(repo: Repo, sha: str, raw: bytes, changes: list[dict[str, Any]], *, stat: bool,
                 counted: bool = True, notes: Notes | None = None) -> Record:
    """One raw commit object as the record ``git:<repo>@<sha>`` (``counted``: whether ``changes``
    have line counts; ``notes`` collects what was odd about it)."""
    head, _, message = raw.partition(b"\n\n")
    headers = _headers(head)
    parents = _parents(headers)
    declared = next((v.decode("ascii", "replace") for k, v in headers if k == "encoding"), None)
    author, author_ok = _person(next((v for k, v in headers if k == "author"), b""), declared)
    committer, committer_ok = _person(next((v for k, v in headers if k == "committer"), b""), declared)
    text, encoding = _decode(message, declared)
    if notes is not None:
        if encoding in _GUESSED:
            notes.guessed.append(sha)
        if not (author_ok and committer_ok):
            notes.odd_people.append(sha)
    text = text.replace("\r\n", "\n").strip("\n")
    time = author["time"] or committer["time"] or from_timestamp(0)
    paragraphs: list[Paragraph] = []
    for index, (piece, _line) in enumerate(split_paragraphs(text)):
        paragraphs.append(Paragraph(
            n=0, text=piece, time=time, kind="subject" if index == 0 else "body",
            attributes={"author": author["name"]},
        ))
    if stat and changes:
        lines = [
            c["path"] if not counted else f"{c['path']} | "
            + ("binary" if c["added"] is None else f"+{c['added']} -{c['deleted']}")
            for c in changes
        ]
        paragraphs.append(Paragraph(n=0, text="\n".join(lines), time=time, kind="diff_stat"))
    metadata: dict[str, Any] = {
        "repo": repo.name,
        "sha": sha,
        "parents": parents,
        "merge": len(parents) > 1,
        "author": author,
        "committer": committer,
        "committerTime": committer["time"],
        "messageEncoding": encoding,
        "emptyMessage": not text.strip(),
        "changedPaths": [c["path"] for c in changes],
        "diffStat": changes,
    }
    subject = paragraphs[0].text.split("\n", 1)[0] if paragraphs and paragraphs[0].kind == "subject" else None
    return build_record(
        id=f"git:{repo.name}@{sha}", source=SOURCE, time=time, paragraphs=paragraphs,
        title=subject, metadata=metadata,
    )


def _some(shas: list[str]) -> str:
    return ", ".join(sha[:12] for sha in shas[:3]) + (", ..." if len(shas) > 3 else "")


def read_commits(
    repo: Repo, shas: list[str], *, stat: bool = False, warn: Warn | None = None
) -> list[Record]:
    """Records for ``shas`` (in that order). An odd commit is read as well as it can be, with a
    warning; one git cannot return is skipped with a warning: neither fails the run."""
    say: Warn = warn if warn is not None else (lambda *_args, **_extra: None)
    objects = read_objects(repo, shas)
    changes = changed_paths(repo, shas)
    counted = True
    notes = Notes()
    records = []
    missing = [sha for sha in shas if not _SHA.match(sha) or sha not in objects]
    for sha in shas:
        if sha in objects and _SHA.match(sha):
            records.append(parse_commit(repo, sha, objects[sha], changes.get(sha, []), stat=stat,
                                        counted=counted, notes=notes))
    if missing:
        say("GIT_COMMIT_SKIPPED", f"{repo.path}: git did not return {len(missing)} commit(s) "
            f"({_some(missing)}); skipped", repo=repo.name, commits=missing)
    if notes.guessed:
        say("GIT_MESSAGE_NOT_UTF8", f"{repo.path}: {len(notes.guessed)} commit message(s) are not "
            f"UTF-8 and declare no encoding that reads them ({_some(notes.guessed)}); read as "
            "Windows-1252 (metadata.messageEncoding)", repo=repo.name, commits=notes.guessed)
    if notes.odd_people:
        say("GIT_ODD_PERSON", f"{repo.path}: {len(notes.odd_people)} commit(s) have an author or "
            f"committer line without a name, email and time ({_some(notes.odd_people)}); kept as "
            "written, time unknown", repo=repo.name, commits=notes.odd_people)
    return records
