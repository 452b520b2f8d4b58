"""Reading a repository with the real ``git`` binary: commits as records, a handful of processes in all.

``git rev-list`` lists the commits, one ``git cat-file --batch`` reads their raw objects (so the
message bytes and the ``encoding`` header are exact), one ``git diff-tree --stdin`` lists the paths
each changed against its first parent.

A repository is data, never code: it may come from anyone, and its configuration can name commands
(an fsmonitor, hooks, filter and diff drivers, a pager, a promisor remote's upload-pack...). Every
git call here runs with the system and global config files unread, ``HOME`` pointing nowhere, each
such key of the repository's config (and of the files it includes) overridden from the command
line's scope, every transport refused (so nothing is ever fetched), no work tree, and the
repository's alternates never followed. ``docs/security.md`` lists the keys and why each is safe.
"""

from __future__ import annotations

import codecs
import contextlib
import os
import re
import shutil
import subprocess
import tempfile
import warnings
from collections.abc import Callable, Iterator
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

# Keys whose value git runs as a command or that make it read from elsewhere, each with the value
# that turns it off. They are given in the command line's scope (GIT_CONFIG_COUNT), which git reads
# last, so they win over the repository's config and every file it includes. Keys git honours only
# from the system and global files (uploadpack.packObjectsHook, safe.directory, trace2.*) need
# nothing: those files are never read. core.gitProxy and remote.<name>.* (upload-pack, a remote
# helper, a promisor remote's lazy fetch) cannot be overridden by name; GIT_ALLOW_PROTOCOL="" refuses
# every transport, so none is ever reached.
_OFF: tuple[tuple[str, str], ...] = (
    ("core.fsmonitor", "false"),          # run by any command that refreshes the index (diff-tree --stdin)
    ("core.hooksPath", os.devnull),       # hooks: neither the configured folder nor $GIT_DIR/hooks
    ("core.sshCommand", ""),
    ("core.askPass", ""),
    ("credential.helper", ""),            # an empty helper empties the list
    ("core.pager", "cat"),
    ("core.editor", ":"),                 # ":" is git's "never launch an editor"
    ("sequence.editor", ":"),
    ("diff.external", ""),
    ("core.attributesFile", os.devnull),
    ("protocol.allow", "never"),
    ("log.showSignature", "false"),       # would run gpg.program
    ("diff.submodule", "short"),          # "log" would run git inside a submodule, on its config
    ("submodule.recurse", "false"),
    ("gc.auto", "0"),                     # an automatic gc would run hooks and write
    ("maintenance.auto", "false"),
)
# Per driver or command named in the repository's config: the keys of that section that run one.
_DRIVER_OFF: dict[str, tuple[tuple[str, str], ...]] = {
    "filter": (("clean", ""), ("smudge", ""), ("process", ""), ("required", "false")),
    "diff": (("textconv", ""), ("command", "")),
    "merge": (("driver", ""),),
}
# The environment every git call gets, whatever the user's: no GIT_* variable of theirs (GIT_DIR,
# GIT_CONFIG_PARAMETERS, GIT_SSH_COMMAND, GIT_ALTERNATE_OBJECT_DIRECTORIES, GIT_EXTERNAL_DIFF...).
_FIXED_ENV: dict[str, str] = {
    "LC_ALL": "C",                        # git's messages are matched below
    "HOME": os.devnull,                   # "~/..." in any path of a config names nothing
    "XDG_CONFIG_HOME": os.devnull,
    "GIT_CONFIG_NOSYSTEM": "1",
    "GIT_CONFIG_GLOBAL": os.devnull,
    "GIT_ATTR_NOSYSTEM": "1",
    "GIT_TERMINAL_PROMPT": "0",
    "GIT_OPTIONAL_LOCKS": "0",            # read, never write (not even the index's stat cache)
    "GIT_ALLOW_PROTOCOL": "",             # an empty list: every transport refused, config or not
    "GIT_NO_LAZY_FETCH": "1",             # git >= 2.44 also refuses a promisor's lazy fetch by name
    "GIT_NO_REPLACE_OBJECTS": "1",        # a record holds the commit its sha names, not a replacement
    "GIT_PAGER": "cat",
    "GIT_EDITOR": ":",
}
_DROPPED_ENV = ("SSH_ASKPASS", "PAGER", "EDITOR", "VISUAL")


@attrs.frozen
class Repo:
    """A repository as the ingest reads it: where it is, the name its record ids use, and what git
    needs to read it safely."""

    path: Path  # the work tree's top folder, else the git folder: what messages name
    name: str
    git_dir: Path  # every call names it (--git-dir): no discovery, no work tree
    objects: Path  # its object store
    alternates: Path | None = None  # objects/info/alternates, when there is one: never followed
    overrides: tuple[tuple[str, str], ...] = ()  # its config's drivers and pagers, turned off


def git_binary() -> str:
    """The ``git`` on the PATH; none is ``INVALID_USAGE``."""
    found = shutil.which("git")
    if found is None:
        raise EpistemeError(
            "INVALID_USAGE", "the git binary was not found on the PATH",
            hint="install git, or put it on the PATH",
        )
    return found


def _environment(config: tuple[tuple[str, str], ...]) -> dict[str, str]:
    """The user's environment less every GIT_* variable, with ours and ``config`` in command scope."""
    env = {
        key: value for key, value in os.environ.items()
        if not key.startswith("GIT_") and key not in _DROPPED_ENV
    }
    env.update(_FIXED_ENV)
    env["GIT_CONFIG_COUNT"] = str(len(config))
    for index, (key, value) in enumerate(config):
        env[f"GIT_CONFIG_KEY_{index}"] = key
        env[f"GIT_CONFIG_VALUE_{index}"] = value
    return env


def git_environment(repo: Repo) -> dict[str, str]:
    """The environment the plugin runs git with on ``repo``: nothing it names can run."""
    return _environment(_OFF + repo.overrides)


def _spawn(argv: list[str], env: dict[str, str], cwd: Path | None = None,
           stdin: bytes | None = None) -> subprocess.CompletedProcess[bytes]:
    try:
        return subprocess.run([git_binary(), *argv], input=stdin, capture_output=True, env=env,
                              cwd=cwd, check=False)
    except OSError as exc:
        raise EpistemeError("INVALID_USAGE", f"cannot run git: {exc.strerror or exc}") from exc


def _last_words(proc: subprocess.CompletedProcess[bytes], *, first: bool = False) -> str:
    """git's reason for failing: the last line it wrote (``first``: the first), less ``fatal:``."""
    said = proc.stderr.decode("utf-8", "replace").strip().splitlines()
    return said[0 if first else -1].removeprefix("fatal: ") if said else f"exit {proc.returncode}"


@contextlib.contextmanager
def _object_store(repo: Repo) -> Iterator[dict[str, str]]:
    """Variables that make git read only the repository's own objects.

    git has no switch to ignore ``objects/info/alternates``, so when there is one git is pointed
    (``GIT_OBJECT_DIRECTORY``) at a temporary folder of links to every entry of the object store
    but ``info`` (whose commit-graph is linked too): the same objects, no alternates.
    """
    if repo.alternates is None:
        yield {}
        return
    with tempfile.TemporaryDirectory(prefix="episteme-git-") as scratch:
        view = Path(scratch) / "objects"
        (view / "info").mkdir(parents=True)
        with os.scandir(repo.objects) as entries:
            for entry in entries:
                if entry.name != "info":
                    (view / entry.name).symlink_to(entry.path)
        for name in ("commit-graph", "commit-graphs"):
            if (repo.objects / "info" / name).exists():
                (view / "info" / name).symlink_to(repo.objects / "info" / name)
        yield {"GIT_OBJECT_DIRECTORY": str(view)}


def git_process(repo: Repo, *args: str, stdin: bytes | None = None) -> subprocess.CompletedProcess[bytes]:
    """Run ``git ARGS`` on ``repo``: disarmed, on its git folder, with no work tree."""
    # a work tree that cannot hold a file: the commands read objects and refs, never a checkout
    argv = [f"--git-dir={repo.git_dir}", f"--work-tree={os.devnull}", "--no-pager",
            "-c", "core.quotepath=off", *args]
    with _object_store(repo) as store:
        return _spawn(argv, {**git_environment(repo), **store}, cwd=repo.git_dir, stdin=stdin)


def run_git(repo: Repo, *args: str, stdin: bytes | None = None, check: bool = True) -> bytes:
    """``git ARGS`` on ``repo``, its stdout; a failure is ``INVALID_INPUT`` with git's words."""
    proc = git_process(repo, *args, stdin=stdin)
    if check and proc.returncode != 0:
        raise EpistemeError(
            "INVALID_INPUT", f"{repo.path}: git {args[0]} failed: {_last_words(proc)}",
            details={"path": str(repo.path), "exitStatus": proc.returncode},
            hint=_alternates_hint(repo),
        )
    return proc.stdout


def _alternates_hint(repo: Repo) -> str | None:
    if repo.alternates is None:
        return None
    return (f"{repo.alternates} borrows objects from another repository and is not followed; "
            "make the repository self-contained (git repack -a -d, then remove that file)")


def trusted_directories() -> tuple[str, ...]:
    """The user's ``safe.directory`` list, from their system and global config (the only place git
    itself takes it from, with the command line): the one thing of their config the probe keeps."""
    env = {**os.environ, "LC_ALL": "C"}
    for key in ("GIT_DIR", "GIT_WORK_TREE", "GIT_COMMON_DIR"):
        env.pop(key, None)
    proc = _spawn(["config", "--show-scope", "-z", "--get-all", "safe.directory"], env, cwd=Path("/"))
    fields = proc.stdout.split(b"\0") if proc.returncode == 0 else []
    return tuple(
        value.decode("utf-8", "surrogateescape")
        for scope, value in zip(fields[0::2], fields[1::2], strict=False)
        if scope in (b"system", b"global", b"command")
    )


def _disarm(names: list[str]) -> tuple[tuple[str, str], ...]:
    """Override keys for every driver and pager the repository's config names (``filter.<x>``,
    ``diff.<x>``, ``merge.<x>``, ``pager.<command>``): their names are the config's to choose."""
    overrides: dict[str, str] = {}
    for key in names:
        section, _, rest = key.partition(".")
        subsection, _, _variable = rest.rpartition(".")
        section = section.lower()
        if section in _DRIVER_OFF and subsection:
            for variable, value in _DRIVER_OFF[section]:
                overrides[f"{section}.{subsection}.{variable}"] = value
        elif section == "pager" and rest and not subsection:
            overrides[f"pager.{rest}"] = "false"
    return tuple(sorted(overrides.items()))


def _default_name(git_dir: Path, top: Path | None) -> str:
    """A work tree's folder name; else the git folder's, less ``.git`` (``proj.git`` -> ``proj``,
    ``proj/.git`` -> ``proj``)."""
    if top is not None:
        return top.name
    if git_dir.name == ".git":
        return git_dir.parent.name
    return git_dir.name.removesuffix(".git") or git_dir.name


def open_repo(path: Path, name: str | None = None) -> Repo:
    """The repository at ``path`` (a work tree or a folder in one, a ``.git`` folder, a linked
    worktree, a bare repository); not a folder or not a repository is ``INVALID_INPUT``."""
    if not path.is_dir():
        raise EpistemeError(
            "INVALID_INPUT", f"{path}: not a folder", details={"path": str(path)}
        )
    # Finding the repository is git's own discovery, so its ownership check (safe.directory)
    # stays; rev-parse runs nothing. Later calls name the git folder found (--git-dir), which also
    # takes a bare repository however safe.bareRepository is set.
    probe_env = _environment(_OFF + tuple(("safe.directory", d) for d in trusted_directories()))
    probe = _spawn(["-C", str(path), "rev-parse", "--absolute-git-dir", "--is-inside-work-tree",
                    "--path-format=absolute", "--git-path", "objects"], probe_env)
    lines = probe.stdout.decode("utf-8", "surrogateescape").splitlines()
    if probe.returncode != 0 or len(lines) != 3:
        reason = _last_words(probe, first=True) if probe.returncode != 0 else "not a git repository"
        dubious = "dubious ownership" in reason
        raise EpistemeError(
            "INVALID_INPUT",
            f"{path}: {'git refuses it (dubious ownership)' if dubious else 'not a git repository'}",
            details={"path": str(path), "git": reason},
            hint="add it to git's safe.directory list (git config --global --add safe.directory PATH)"
            if dubious else "pass the folder of a git work tree or bare repository",
        )
    git_dir, objects = Path(lines[0]), Path(lines[2])
    top: Path | None = None
    if lines[1] == "true":
        shown = _spawn(["-C", str(path), "rev-parse", "--show-toplevel"], probe_env)
        if shown.returncode == 0 and shown.stdout.strip():
            top = Path(shown.stdout.decode("utf-8", "surrogateescape").strip())
    default = _default_name(git_dir, top)
    # a name the user gives must be plain; a folder's name is made id-safe (spaces percent-encoded)
    chosen = (name if name and safe_name(name) else "") if name else (id_segment(default) or "")
    if not chosen:
        raise EpistemeError(
            "INVALID_INPUT", f"{name or default!r} cannot name a repository in record ids",
            details={"name": name or default}, hint="pass --name with a plain name",
        )
    alternates = objects / "info" / "alternates"
    repo = Repo(top or git_dir, chosen, git_dir, objects,
                alternates if alternates.is_file() else None)
    names = run_git(repo, "config", "--list", "--name-only", "-z").decode("utf-8", "surrogateescape")
    return attrs.evolve(repo, overrides=_disarm([n for n in names.split("\0") if n]))


def list_commits(repo: Repo, rev: str = "HEAD") -> list[str]:
    """Commit shas reachable from ``rev``, oldest first; an empty repository has none."""
    if rev.startswith("-"):
        raise EpistemeError("INVALID_USAGE", f"--rev {rev!r} must not start with '-'")
    verify = run_git(repo, "rev-parse", "--verify", "--quiet", f"{rev}^{{commit}}", check=False)
    if not verify.strip():
        named = run_git(repo, "rev-parse", "--verify", "--quiet", rev, check=False)
        if rev == "HEAD" and not named.strip():
            return []  # a repository without commits yet
        raise EpistemeError(
            "INVALID_INPUT", f"{repo.path}: {rev!r} is not a commit it holds", details={"rev": rev},
            hint=_alternates_hint(repo),
        )
    out = run_git(repo, "rev-list", "--reverse", "--topo-order", rev, "--")
    return [line for line in out.decode("ascii", "replace").split("\n") if line]


def object_sizes(repo: Repo, shas: list[str]) -> dict[str, int]:
    """The size in bytes of each commit object of ``shas`` (headers and message), from one ``git
    cat-file --batch-check``, which reads no object whole; a sha git lacks, or not a commit, is left
    out (``read_commits`` reports it)."""
    if not shas:
        return {}
    out = run_git(repo, "cat-file", "--batch-check", stdin=("\n".join(shas) + "\n").encode("ascii"))
    sizes: dict[str, int] = {}
    for line in out.decode("ascii", "replace").splitlines():
        parts = line.split(" ")
        if len(parts) == 3 and parts[1] == "commit" and parts[2].isdigit():
            sizes[parts[0]] = int(parts[2])
    return sizes


def read_objects(repo: Repo, shas: list[str]) -> dict[str, bytes]:
    """Raw commit objects, by sha, from one ``git cat-file --batch`` (one it lacks is left out)."""
    if not shas:
        return {}
    out = run_git(repo, "cat-file", "--batch", stdin=("\n".join(shas) + "\n").encode("ascii"))
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


_DIFF_TREE = ("diff-tree", "--stdin", "-r", "-z", "--no-renames", "--root", "-m", "--no-textconv",
              "--no-ext-diff")


Changes = dict[str, list[dict[str, Any]]]


def changed_paths(repo: Repo, shas: list[str], warn: Warn | None = None) -> tuple[Changes, bool]:
    """Per commit, the paths it changed against its first parent, with added/deleted line counts
    (and whether it could count them).

    Counting lines reads the blobs: a partial clone lacks them (and fetches nothing here), so then
    the paths come from the trees alone, without counts; a repository that lacks trees too gives none.
    """
    if not shas:
        return {}, True
    stdin = ("\n".join(shas) + "\n").encode("ascii")
    counted = git_process(repo, *_DIFF_TREE, "--numstat", stdin=stdin)
    if counted.returncode == 0:
        return _numstat(counted.stdout), True
    listed = git_process(repo, *_DIFF_TREE, "--raw", stdin=stdin)
    if listed.returncode == 0:
        if warn is not None:
            warn("GIT_LINE_COUNTS_UNAVAILABLE",
                 f"{repo.path}: git cannot read the files' contents ({_last_words(counted)}); changed "
                 "paths are listed without line counts", repo=repo.name)
        return _raw(listed.stdout), False
    if warn is not None:
        warn("GIT_PATHS_UNAVAILABLE",
             f"{repo.path}: git cannot read the commits' trees ({_last_words(listed)}); no changed "
             "paths are listed", repo=repo.name)
    return {}, False


def _numstat(out: bytes) -> Changes:
    changes: Changes = {}
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
            "path": _path_text(path),
            "added": int(added) if added.isdigit() else None,
            "deleted": int(deleted) if deleted.isdigit() else None,
        })
    return changes


def _raw(out: bytes) -> Changes:
    changes: Changes = {}
    current: str | None = None
    done: set[str] = set()
    tokens = out.split(b"\0")
    index = 0
    while index < len(tokens):
        token = tokens[index]
        index += 1
        if not token:
            continue
        if token.startswith(b":"):  # ":mode mode sha sha status", then the path
            path = tokens[index] if index < len(tokens) else b""
            index += 1
            if current is not None:
                text = _path_text(path.decode("utf-8", "surrogateescape"))
                changes[current].append({"path": text, "added": None, "deleted": None})
            continue
        sha = token.decode("ascii", "replace").strip()
        current = None if sha in done else sha
        done.add(sha)
        if current is not None:
            changes[current] = []
    return changes


def _path_text(path: str) -> str:
    return path.encode("utf-8", "surrogateescape").decode("utf-8", "replace")
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
    changes, counted = changed_paths(repo, shas, say)
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
