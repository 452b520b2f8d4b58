"""Run tox envs in parallel and say what is happening from the first minute (``scripts/test`` runs this).

tox's own ``run-parallel`` prints nothing until an env finishes. This runs one ``tox run -e ENV`` per
env instead, at most ``--jobs`` at once, each writing its whole output to ``.tox/log/ENV.log``, and
prints a line when an env starts, a line per running env every ``--every`` seconds (its phase: the
install step it is in, or pytest's percentage and the test file it is at), and a line when it ends
(passed, failed or skipped, with pytest's summary and its time). At the end: a table of every env's
time, the slowest tests of each (pytest ``--durations``), the tail of each failed env's log, and the
total. The wheel of episteme-core is built once first and every env installs that file
(``--installpkg``), so parallel tox processes never rebuild it under each other.

    python scripts/run_tox.py [--discover PYTHON]... [--jobs N] [-e ENV[,ENV]] [tox run options] [-- posargs]

Exit status: 0 when every env passed or was skipped (a missing interpreter), 1 when one failed,
130 or 143 when interrupted (the running envs are stopped).
"""

from __future__ import annotations

import argparse
import configparser
import json
import os
import re
import signal
import subprocess
import sys
import time
from dataclasses import dataclass, field
from pathlib import Path
from typing import IO

ROOT = Path(__file__).resolve().parents[1]
PYTEST_PROGRESS = re.compile(r"^(\S+?\.py)\s.*\[\s*(\d+)%\]\s*$")
PYTEST_FILE = re.compile(r"^(\S+?\.py) [.sxXFE]*$")  # a file's line while its tests run
PYTEST_SUMMARY = re.compile(r"^=+ (.*(?:passed|failed|error|skipped|deselected|no tests ran).*) =+$")
TOX_STEP = re.compile(r"^(?:\S+: )?(install_deps|install_package|install_package_deps|commands\[\d+\]|"
                      r"commands_pre\[\d+\]|py_info|create_virtual_env)> (.*)$")
DURATIONS_HEADER = re.compile(r"^=+ slowest \d+ durations =+$")
TAIL_LINES = 80
SLOWEST_SHOWN = 5


@dataclass
class Env:
    """One tox env: its process and log while it runs, its outcome once it ends."""

    name: str
    description: str = ""
    depends: tuple[str, ...] = ()  # envs of this run that must end before it starts (tox's depends)
    process: subprocess.Popen[bytes] | None = None
    log: Path | None = None
    handle: IO[bytes] | None = None
    started: float = 0.0
    ended: float = 0.0
    status: str = "waiting"  # waiting | running | passed | failed | skipped
    summary: str = ""
    slowest: list[str] = field(default_factory=list)


def clock(seconds: float) -> str:
    minutes, rest = divmod(int(seconds), 60)
    return f"{minutes}m{rest:02d}s"


def say(began: float, text: str) -> None:
    print(f"[{clock(time.monotonic() - began)}] {text}", flush=True)


def tox_config() -> configparser.ConfigParser:
    parser = configparser.ConfigParser(interpolation=None)
    parser.read(ROOT / "tox.ini", encoding="utf-8")
    return parser


def default_envs(config: configparser.ConfigParser) -> list[str]:
    raw = config.get("tox", "env_list", fallback="") or config.get("tox", "envlist", fallback="")
    return [name.strip() for name in re.split(r"[,\s]+", raw) if name.strip()]


def description(config: configparser.ConfigParser, name: str) -> str:
    text = config.get(f"testenv:{name}", "description", fallback="")
    if not text:
        text = config.get("testenv", "description", fallback="").replace("{base_python}", name)
    return " ".join(text.split())[:100]


def depends(config: configparser.ConfigParser, name: str) -> tuple[str, ...]:
    raw = config.get(f"testenv:{name}", "depends", fallback="")
    return tuple(n.strip() for n in re.split(r"[,\s]+", raw) if n.strip())


def phase(log: Path) -> str:
    """Where an env is, from the end of its log: pytest's percentage and file, else tox's step."""
    try:
        with log.open("rb") as handle:
            handle.seek(0, os.SEEK_END)
            handle.seek(max(0, handle.tell() - 16384))
            lines = handle.read().decode("utf-8", "replace").splitlines()
    except FileNotFoundError:
        return "starting"
    current = PYTEST_FILE.match(lines[-1].strip()) if lines else None
    for line in reversed(lines):
        found = PYTEST_PROGRESS.match(line.strip())
        if found:
            where = f"now in {current.group(1)}" if current else f"after {found.group(1)}"
            return f"pytest {found.group(2)}% done, {where}"
        step = TOX_STEP.match(line.strip())
        if step:
            return f"{step.group(1)}: {step.group(2)[:90]}"
    return "starting"


def outcome(env: Env, code: int) -> None:
    """The env's status, pytest's summary line and slowest tests, from its log and exit code."""
    assert env.log is not None
    text = env.log.read_text("utf-8", "replace")
    lines = text.splitlines()
    summaries = [m.group(1) for m in map(PYTEST_SUMMARY.match, lines) if m]
    env.summary = "; ".join(summaries[-3:])
    for i, line in enumerate(lines):
        if DURATIONS_HEADER.match(line):
            env.slowest = [ln.strip() for ln in lines[i + 1:i + 1 + SLOWEST_SHOWN] if re.match(r"^\d", ln)]
    if code == 0 and re.search(rf"^\s*{re.escape(env.name)}: SKIP", text, re.M):
        env.status = "skipped"
        reason = re.search(r"skipped because (.*)", text)
        env.summary = reason.group(1) if reason else "skipped"
    else:
        env.status = "passed" if code == 0 else "failed"


def start(env: Env, tox: list[str], wheel: Path | None, extra: list[str], logs: Path) -> None:
    env.log = logs / f"{env.name}.log"
    env.handle = env.log.open("wb")
    command = [*tox, "run", "-e", env.name, *(["--installpkg", str(wheel)] if wheel else []), *extra]
    env.handle.write(("$ " + " ".join(command) + "\n").encode())
    env.handle.flush()
    env.process = subprocess.Popen(command, cwd=ROOT, stdout=env.handle, stderr=subprocess.STDOUT,
                                   stdin=subprocess.DEVNULL, start_new_session=True)
    env.started = time.monotonic()
    env.status = "running"


def stop_all(envs: list[Env]) -> None:
    for env in envs:
        if env.process is not None and env.process.poll() is None:
            try:
                os.killpg(env.process.pid, signal.SIGTERM)
            except ProcessLookupError:
                pass
    for env in envs:
        if env.process is not None:
            try:
                env.process.wait(30)
            except subprocess.TimeoutExpired:
                os.killpg(env.process.pid, signal.SIGKILL)


def build_wheel(tox: list[str], began: float, logs: Path) -> Path:
    """The episteme-core wheel, built once by tox's own packaging env."""
    say(began, "packaging: the episteme-core wheel every env installs (tox -b; about 10 s)")
    log = logs / "package.log"
    with log.open("wb") as handle:
        code = subprocess.call([*tox, "run", "-b", "-e", "py311"], cwd=ROOT, stdout=handle,
                               stderr=subprocess.STDOUT, stdin=subprocess.DEVNULL)
    dist = ROOT / ".tox" / ".pkg" / "dist"
    wheels = sorted(dist.glob("episteme_core-*.whl"), key=lambda p: p.stat().st_mtime)
    if code != 0 or not wheels:
        sys.stdout.write(log.read_text("utf-8", "replace")[-6000:])
        raise SystemExit(f"packaging failed (exit {code}); the log is {log}")
    return wheels[-1]


def main(argv: list[str] | None = None) -> int:
    parser = argparse.ArgumentParser(description=__doc__.split("\n\n")[0])
    parser.add_argument("-e", "--env", action="append", default=[], help="envs to run (default: env_list)")
    parser.add_argument("--jobs", type=int, default=os.cpu_count() or 2, help="envs at once (default: cores)")
    parser.add_argument("--every", type=float, default=60.0, help="seconds between progress lines")
    parser.add_argument("--discover", action="append", default=[], help="an interpreter for tox to use")
    parser.add_argument("--tox", default=None,
                        help="the tox executable to run (default: this Python's tox module, `python -m tox`, "
                             "which works wherever the venv was copied, unlike bin/tox's fixed first line)")
    args, extra = parser.parse_known_args(argv)
    config = tox_config()
    names = [n for group in args.env for n in group.split(",") if n] or default_envs(config)
    logs = ROOT / ".tox" / "log"
    logs.mkdir(parents=True, exist_ok=True)
    times_file = logs / "durations.json"
    try:
        previous = json.loads(times_file.read_text("utf-8"))
    except (FileNotFoundError, ValueError):
        previous = {}
    # Longest first (by the last run; an env never timed counts as long, in tox.ini's order), so the
    # long envs do not start last.
    order = sorted(names, key=lambda n: -float(previous.get(n, float("inf"))))
    envs = [Env(name, description(config, name), tuple(d for d in depends(config, name) if d in names))
            for name in order]
    discover = [item for path in args.discover for item in ("--discover", path)]
    tox = [*([args.tox] if args.tox else [sys.executable, "-m", "tox"]), *discover]
    began = time.monotonic()
    say(began, f"{len(envs)} env(s), {args.jobs} at a time: {', '.join(order)}; "
               f"each env's whole output goes to {logs.relative_to(ROOT)}/ENV.log")
    interrupted: list[int] = []

    def on_signal(number: int, _frame: object) -> None:
        interrupted.append(number)

    signal.signal(signal.SIGINT, on_signal)
    signal.signal(signal.SIGTERM, on_signal)
    os.environ["PYTEST_ADDOPTS"] = " ".join(
        p for p in (os.environ.get("PYTEST_ADDOPTS", ""), "--durations=15") if p)
    wheel = build_wheel(tox, began, logs)
    last_report = time.monotonic()
    while not interrupted:
        running = [e for e in envs if e.status == "running"]
        waiting = [e for e in envs if e.status == "waiting"]
        ended = {e.name for e in envs if e.status in ("passed", "failed", "skipped")}
        ready = [e for e in waiting if set(e.depends) <= ended]
        for env in ready[: max(0, args.jobs - len(running))]:
            start(env, tox, wheel, extra, logs)
            running.append(env)
            waiting.remove(env)
            say(began, f"start  {env.name:<8} ({len(running)} running, {len(waiting)} waiting): "
                       f"{env.description}")
        if not running:
            break
        time.sleep(1.0)
        for env in running:
            assert env.process is not None
            code = env.process.poll()
            if code is None:
                continue
            env.ended = time.monotonic()
            assert env.handle is not None
            env.handle.close()
            outcome(env, code)
            mark = {"passed": "ok    ", "failed": "FAILED", "skipped": "skip  "}[env.status]
            say(began, f"{mark} {env.name:<8} in {clock(env.ended - env.started)}"
                       + (f": {env.summary}" if env.summary else "")
                       + (f" (log {env.log})" if env.status == "failed" else ""))
        if time.monotonic() - last_report >= args.every:
            last_report = time.monotonic()
            for env in envs:
                if env.status == "running" and env.log is not None:
                    took = clock(time.monotonic() - env.started)
                    say(began, f"...    {env.name:<8} {took}: {phase(env.log)}")
    if interrupted:
        say(began, "interrupted: stopping the running envs")
        stop_all(envs)
        return 128 + interrupted[0]
    report(envs, began)
    durations = {**previous, **{e.name: round(e.ended - e.started, 1) for e in envs if e.status != "skipped"}}
    times_file.write_text(json.dumps(durations, indent=1, sort_keys=True) + "\n", "utf-8")
    return 1 if any(e.status == "failed" for e in envs) else 0


def report(envs: list[Env], began: float) -> None:
    """The table of envs and their times, each one's slowest tests, the tails of failed logs."""
    total = time.monotonic() - began
    print("\nenv       result   time    pytest")
    for env in envs:
        print(f"{env.name:<9} {env.status:<8} {clock(env.ended - env.started):>7}  {env.summary}")
    for env in envs:
        if env.slowest:
            print(f"\nslowest of {env.name}:")
            for line in env.slowest:
                print(f"  {line}")
    for env in envs:
        if env.status == "failed" and env.log is not None:
            tail = env.log.read_text("utf-8", "replace").splitlines()[-TAIL_LINES:]
            print(f"\n---- {env.name} failed: the last {len(tail)} lines of {env.log} ----")
            print("\n".join(tail))
    failed = [e.name for e in envs if e.status == "failed"]
    verdict = f"FAILED: {', '.join(failed)}" if failed else "all passed"
    print(f"\n{verdict}; the whole run took {clock(total)}", flush=True)


if __name__ == "__main__":
    sys.exit(main())
