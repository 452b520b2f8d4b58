"""A repository is data, never code: nothing a repository's configuration names ever runs, and the
ingest reads only the repository's own objects."""

from __future__ import annotations

import os
import subprocess
from pathlib import Path

import pytest

from episteme_core.testing import invoke

from .conftest import GitRun, make_git

# every hook git 2.39 knows: whichever a command might run, it finds one here
HOOKS = (
    "applypatch-msg", "pre-applypatch", "post-applypatch", "pre-commit", "pre-merge-commit",
    "prepare-commit-msg", "commit-msg", "post-commit", "pre-rebase", "post-checkout", "post-merge",
    "pre-push", "pre-receive", "update", "proc-receive", "post-receive", "post-update",
    "reference-transaction", "push-to-checkout", "pre-auto-gc", "post-rewrite", "sendemail-validate",
    "fsmonitor-watchman", "p4-changelist", "p4-prepare-changelist", "p4-post-changelist",
    "p4-pre-submit", "post-index-change",
)


class Traps:
    """Scripts that leave a marker file named for themselves when anything runs them."""

    def __init__(self, root: Path) -> None:
        self.bin = root / "traps"
        self.markers = root / "markers"
        self.bin.mkdir()
        self.markers.mkdir()

    def __call__(self, name: str, *, then: str = "exit 0") -> str:
        """The path of a script that records ``name`` when run, then does ``then`` (a filter passes
        its input through; the others read nothing: an upload-pack would wait for ever)."""
        script = self.bin / name
        script.write_text(f'#!/bin/sh\necho "$0 $*" > "{self.markers}/{name}-$$"\n{then}\n', encoding="utf-8")
        script.chmod(0o755)
        return str(script)

    def fired(self) -> list[str]:
        return sorted(p.name.rsplit("-", 1)[0] for p in self.markers.iterdir())

    def clear(self) -> None:
        for marker in self.markers.iterdir():
            marker.unlink()


def _commit(repo: Path, git: GitRun, name: str, content: str, message: str) -> str:
    (repo / name).write_text(content, encoding="utf-8")
    git("-c", "core.hooksPath=/dev/null", "-c", "core.fsmonitor=false", "add", name)
    git("-c", "core.hooksPath=/dev/null", "-c", "core.fsmonitor=false", "commit", "-q", "-m", message)
    return git("rev-parse", "HEAD").decode().strip()


def _arm(repo: Path, git: GitRun, traps: Traps) -> None:
    """Plant every key of .git/config that runs a command or reads from elsewhere, in ``repo``."""
    hooks = repo / ".git" / "trap-hooks"
    hooks.mkdir()
    for hook in HOOKS:
        for folder in (hooks, repo / ".git" / "hooks"):
            (folder / hook).symlink_to(traps(f"hook-{hook}"))
    included = repo.parent / f"{repo.name}-included.gitconfig"
    included.write_text(
        f"[core]\n\tfsmonitor = {traps('include-fsmonitor')}\n"
        f"[filter \"inc\"]\n\tclean = {traps('include-clean', then='cat')}\n"
        f"\tsmudge = {traps('include-smudge', then='cat')}\n"
        f"[diff \"inc\"]\n\ttextconv = {traps('include-textconv', then='cat')}\n",
        encoding="utf-8",
    )
    settings = {
        "core.fsmonitor": traps("fsmonitor"),
        "core.hooksPath": str(hooks),
        "core.sshCommand": traps("ssh"),
        "core.gitProxy": traps("git-proxy"),
        "core.askPass": traps("askpass"),
        "core.pager": traps("pager"),
        "core.editor": traps("editor"),
        "core.alternateRefsCommand": traps("alternate-refs"),
        "sequence.editor": traps("sequence-editor"),
        "pager.log": traps("pager-log"),
        "pager.diff-tree": traps("pager-diff-tree"),
        "pager.rev-list": traps("pager-rev-list"),
        "pager.cat-file": traps("pager-cat-file"),
        "filter.trap.clean": traps("filter-clean", then="cat"),
        "filter.trap.smudge": traps("filter-smudge", then="cat"),
        "filter.trap.required": "true",
        "filter.proc.process": traps("filter-process"),
        "diff.trap.textconv": traps("textconv", then="cat"),
        "diff.trap.command": traps("diff-command"),
        "diff.external": traps("external-diff"),
        "merge.trap.driver": traps("merge-driver"),
        "credential.helper": traps("credential"),
        "uploadpack.packObjectsHook": traps("pack-objects-hook"),
        "gpg.program": traps("gpg"),
        "log.showSignature": "true",
        "remote.origin.url": "ext::" + traps("ext-remote"),
        "remote.origin.uploadpack": traps("upload-pack"),
        "remote.origin.promisor": "true",
        "protocol.allow": "always",
        "protocol.ext.allow": "always",
        "safe.directory": "*",
        "include.path": str(included),
        f"includeIf.gitdir:{repo}/.path": str(included),
    }
    for key, value in settings.items():
        git("config", key, value)
    (repo / ".git" / "info" / "attributes").write_text("* filter=trap diff=trap\n", encoding="utf-8")


def test_a_booby_trapped_repository_runs_nothing_and_still_ingests(tmp_path: Path, home: Path) -> None:
    traps = Traps(tmp_path)
    path = tmp_path / "trapped"
    path.mkdir()
    git = make_git(path)
    git("init", "-q", "-b", "main")
    first = _commit(path, git, "a.txt", "one\n", "First commit")
    (path / ".gitattributes").write_text("*.txt filter=trap diff=trap\n*.bin filter=proc diff=inc\n")
    git("add", ".gitattributes")
    second = _commit(path, git, "b.bin", "two\n", "Second commit")
    _arm(path, git, traps)
    # the traps are armed: plain git runs them
    subprocess.run(["git", "-C", str(path), "status"], capture_output=True, check=False)
    assert "fsmonitor" in traps.fired() or "include-fsmonitor" in traps.fired()
    traps.clear()

    result = invoke("ingest", "git", str(path), "--stat", "--no-pack", "--json", "--home", str(home))
    assert result.exit_code == 0, result.stderr
    assert sorted(result.envelope["data"]["records"]) == sorted(f"git:trapped@{s}" for s in (first, second))
    assert traps.fired() == []
    shown = invoke("show", f"git:trapped@{second}", "--stale-ok", "--json", "--home", str(home))
    record = shown.envelope["data"]["record"]
    assert record["metadata"]["diffStat"] == [
        {"path": ".gitattributes", "added": 2, "deleted": 0},
        {"path": "b.bin", "added": 1, "deleted": 0},
    ]
    assert traps.fired() == []


def _trapped(tmp_path: Path, name: str, traps: Traps) -> Path:
    """A repository with a commit, every trap planted, and changes waiting in its work tree."""
    path = tmp_path / name
    path.mkdir()
    git = make_git(path)
    git("init", "-q", "-b", "main")
    _commit(path, git, "a.txt", "one\n", "First commit")
    (path / ".gitattributes").write_text("*.txt filter=trap diff=trap\n*.bin filter=proc diff=inc\n")
    _arm(path, git, traps)
    (path / "c.txt").write_text("three\n")
    (path / "d.bin").write_text("four\n")
    return path


# porcelain commands that run what the keys name: an fsmonitor, filters, hooks, textconv, diff
# drivers, an editor, a remote's transport, a proxy, ssh, a credential helper and askpass
PORCELAIN = [
    ["status"], ["add", "-A"], ["commit", "-q", "-m", "Third"], ["log", "-p", "--textconv"],
    ["log", "-p", "--ext-diff", "-1"], ["diff", "HEAD~1"], ["show", "--textconv", "HEAD:c.txt"],
    ["commit", "--amend", "-q"], ["checkout", "-q", "-b", "other"], ["checkout", "-q", "HEAD", "--", "."],
    ["rebase", "-q", "-i", "HEAD~1"], ["merge", "-q", "main"], ["gc", "--auto"],
    ["fetch", "-q", "origin"], ["ls-remote", "ssh://example.invalid/x"],
    ["ls-remote", "git://example.invalid/x"], ["ls-remote", "https://example.invalid/x"],
    ["verify-commit", "HEAD"], ["log", "--show-signature", "-1"],
]


def _run_porcelain(path: Path, env: dict[str, str], traps: Traps) -> set[str]:
    """Run every command of PORCELAIN (and a credential fill) in ``path``; the traps that fired."""
    for args in PORCELAIN:
        subprocess.run(["git", "-C", str(path), *args], env=env, capture_output=True, check=False,
                       stdin=subprocess.DEVNULL, timeout=60)
    subprocess.run(["git", "-C", str(path), "credential", "fill"], env=env, capture_output=True,
                   input=b"protocol=https\nhost=example.invalid\n\n", check=False, timeout=60)
    fired = set(traps.fired())
    traps.clear()
    return fired


def test_our_git_environment_disarms_every_key_even_for_commands_that_run_them(tmp_path: Path) -> None:
    """The overrides themselves work, whatever command the plugin may come to run: porcelain
    commands that run the planted keys from the user's environment run none of them from ours."""
    from episteme_git.repo import git_environment, open_repo

    traps = Traps(tmp_path)
    identity = {"GIT_AUTHOR_NAME": "A", "GIT_AUTHOR_EMAIL": "a@e.org", "GIT_COMMITTER_NAME": "A",
                "GIT_COMMITTER_EMAIL": "a@e.org"}
    plain = _trapped(tmp_path, "plain", traps)
    armed = _run_porcelain(plain, {**os.environ, **identity}, traps)
    assert {
        "include-fsmonitor", "filter-clean", "filter-smudge", "textconv", "diff-command", "editor",
        "sequence-editor", "hook-pre-commit", "hook-commit-msg", "hook-post-checkout",
        "hook-reference-transaction", "ext-remote", "git-proxy", "ssh", "credential", "askpass",
    } <= armed
    disarmed = _trapped(tmp_path, "disarmed", traps)
    assert _run_porcelain(disarmed, {**git_environment(open_repo(disarmed)), **identity}, traps) == set()


def test_a_partial_clone_never_fetches_what_it_lacks(tmp_path: Path, home: Path) -> None:
    """A lazy fetch runs the promisor remote's upload-pack: a command the repository names."""
    traps = Traps(tmp_path)
    origin = tmp_path / "origin"
    origin.mkdir()
    git = make_git(origin)
    git("init", "-q", "-b", "main")
    git("config", "uploadpack.allowFilter", "true")
    first = _commit(origin, git, "a.txt", "one\ntwo\n", "First commit")
    second = _commit(origin, git, "a.txt", "one\nthree\n", "Second commit")
    clone = tmp_path / "partial"
    make_git(tmp_path)("clone", "-q", "--no-local", "--filter=blob:none", "--no-checkout",
                       f"file://{origin}", str(clone))
    make_git(clone)("config", "remote.origin.uploadpack", traps("upload-pack"))
    result = invoke("ingest", "git", str(clone), "--stat", "--no-pack", "--json", "--home", str(home))
    assert result.exit_code == 0, result.stderr
    assert sorted(result.envelope["data"]["records"]) == sorted(f"git:partial@{s}" for s in (first, second))
    assert traps.fired() == []
    assert "GIT_LINE_COUNTS_UNAVAILABLE" in {w["code"] for w in result.envelope["warnings"]}
    record = invoke("show", f"git:partial@{second}", "--stale-ok", "--json", "--home", str(home))
    metadata = record.envelope["data"]["record"]["metadata"]
    assert metadata["changedPaths"] == ["a.txt"]  # the paths come from the trees, which it has
    assert metadata["diffStat"] == [{"path": "a.txt", "added": None, "deleted": None}]


def test_alternates_are_never_followed(tmp_path: Path, home: Path) -> None:
    """objects/info/alternates names another store: its objects are not this repository's."""
    elsewhere = tmp_path / "elsewhere"
    elsewhere.mkdir()
    other = make_git(elsewhere)
    other("init", "-q", "-b", "main")
    secret = _commit(elsewhere, other, "s.txt", "secret\n", "A commit of another repository")
    path = tmp_path / "borrower"
    path.mkdir()
    git = make_git(path)
    git("init", "-q", "-b", "main")
    own = _commit(path, git, "a.txt", "one\n", "Its own commit")
    (path / ".git" / "objects" / "info" / "alternates").write_text(f"{elsewhere}/.git/objects\n")
    git("update-ref", "refs/heads/borrowed", secret)  # git itself reads it through the alternates

    result = invoke("ingest", "git", str(path), "--no-pack", "--json", "--home", str(home))
    assert result.exit_code == 0, result.stderr
    assert result.envelope["data"]["records"] == [f"git:borrower@{own}"]
    [warning] = [w for w in result.envelope["warnings"] if w["code"] == "GIT_ALTERNATES_IGNORED"]
    assert str(path / ".git" / "objects" / "info" / "alternates") in warning["message"]
    borrowed = invoke("ingest", "git", str(path), "--rev", "borrowed", "--no-pack", "--json",
                      "--home", str(home))
    assert borrowed.exit_code == 3 and borrowed.envelope["error"]["code"] == "INVALID_INPUT"
    assert "alternates" in (borrowed.envelope["error"].get("hint") or "")
    assert secret not in (home / "log.jsonl").read_text(encoding="utf-8")


@pytest.mark.skipif(not hasattr(os, "geteuid") or os.geteuid() != 0, reason="needs root to chown")
def test_a_repository_of_another_user_is_refused_unless_listed_in_safe_directory(
    repo: tuple[Path, GitRun], home: Path
) -> None:
    """git's own ownership check stays: the user's safe.directory list (and only that of their
    config) decides."""
    path, git = repo
    sha = _commit(path, git, "a.txt", "one\n", "First commit")
    for folder, _dirs, files in os.walk(path):
        for name in [folder, *(os.path.join(folder, f) for f in files)]:
            os.lchown(name, 65534, 65534)
    refused = invoke("ingest", "git", str(path), "--no-pack", "--json", "--home", str(home))
    assert refused.exit_code == 3 and refused.envelope["error"]["code"] == "INVALID_INPUT"
    assert "dubious ownership" in refused.envelope["error"]["message"]
    assert "safe.directory" in refused.envelope["error"]["hint"]
    with open(os.environ["GIT_CONFIG_GLOBAL"], "a", encoding="utf-8") as config:
        config.write(f"[safe]\n\tdirectory = {path}\n")
    taken = invoke("ingest", "git", str(path), "--no-pack", "--json", "--home", str(home))
    assert taken.exit_code == 0, taken.stderr
    assert taken.envelope["data"]["records"] == [f"git:proj@{sha}"]
