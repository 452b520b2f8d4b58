"""One function per check of ``episteme doctor``: the interpreter, the package, each plugin, each
configured reader (and the model it loads), the home's audit, the shards' currency, a token file.

Every check returns ``Check`` records and never raises for what it finds: a failure is a record with
the reason and what to do, so one broken part never hides the others.
"""

from __future__ import annotations

import sys
import time
from collections.abc import Callable
from pathlib import Path
from typing import TYPE_CHECKING, Any

from episteme_core.doctor.report import FAIL, OK, SKIP, WARN, Check
from episteme_core.errors import EpistemeError

if TYPE_CHECKING:
    from episteme_core.kernel.registry import PluginInfo, Plugins
    from episteme_core.records.reading import ReaderSpec
    from episteme_core.store.home import Home

MIN_PYTHON = (3, 11)
NAMED_COMPONENTS = 3  # components of one kind named in a plugin's line; more are counted
SHOWN_PROBLEMS = 5  # problems of verify named in the summary line; details hold them all
# The plugin that provides each reader kind episteme knows of, for a kind nothing registered.
READER_PLUGINS = {"onnx": "episteme-onnx", "llama": "episteme-llama"}


def python_check() -> Check:
    """The interpreter: its version (episteme needs 3.11 or later) and where it is."""
    import platform

    version = platform.python_version()
    details = {"version": version, "executable": sys.executable,
               "implementation": platform.python_implementation()}
    if sys.version_info[:2] < MIN_PYTHON:
        return Check("python", FAIL, f"Python {version} is older than 3.11", details=details,
                     hint="install Python 3.11 or 3.12 and reinstall episteme with it")
    return Check("python", OK, f"Python {version} ({sys.executable})", details=details)


def package_check() -> Check:
    """The package: its version, where it is imported from, and whether its installed metadata agrees."""
    from importlib.metadata import PackageNotFoundError, version

    import episteme_core

    location = str(Path(episteme_core.__file__).resolve().parent)
    details: dict[str, Any] = {"version": episteme_core.__version__, "location": location}
    try:
        installed: str | None = version("episteme-core")
    except PackageNotFoundError:
        installed = None
    details["installed"] = installed
    summary = f"episteme-core {episteme_core.__version__} ({location})"
    if installed is None:
        return Check("episteme", WARN, f"{summary}: imported from a folder, not installed", details=details,
                     hint="pip install episteme-core (or pip install -e . in a clone) so plugins find it")
    if installed != episteme_core.__version__:
        return Check("episteme", WARN, f"{summary}: installed as {installed}", details=details,
                     hint="reinstall episteme-core: the code and its installed metadata disagree")
    return Check("episteme", OK, summary, details=details)


def plugin_checks(plugins: Plugins) -> list[Check]:
    """The builtins in one check (one per builtin that failed), then each plugin: loaded with its
    components, or refused with the reason."""
    infos = sorted(plugins.infos.values(), key=lambda i: (not i.builtin, i.name))
    builtins = [info for info in infos if info.builtin]
    checks = [_plugin_check(info) for info in builtins if info.error or info.refused]
    if not checks:
        checks.append(Check("builtins", OK, f"{len(builtins)} builtin plugins loaded",
                            details={"plugins": [info.name for info in builtins]}))
    checks.extend(_plugin_check(info) for info in infos if not info.builtin)
    return checks


def _plugin_check(info: PluginInfo) -> Check:
    details: dict[str, Any] = {"version": info.version, "module": info.module, "builtin": info.builtin,
                               "components": info.components}
    name = f"plugin {info.name}"
    if info.error:
        details["error"] = info.error
        return Check(name, FAIL, f"{info.name} {info.version}: failed to load: {info.error}", details=details,
                     hint=f"reinstall or upgrade the distribution that provides {info.module}, or "
                          "uninstall it; the other plugins work without it")
    if info.refused:
        reasons = [refusal.message for refusal in info.refused]
        details["refused"] = reasons
        return Check(name, FAIL, f"{info.name} {info.version}: {len(reasons)} component(s) refused: "
                     + "; ".join(reasons), details=details,
                     hint="a plugin's mistake: upgrade the plugin or tell its author; the rest of it works")
    parts = [f"{kind} {', '.join(names)}" if len(names) <= NAMED_COMPONENTS else f"{len(names)} {kind}s"
             for kind, names in sorted(info.components.items())]
    return Check(name, OK, f"{info.name} {info.version}: {'; '.join(parts) or 'no components'}",
                 details=details)


def reader_checks(home: Home, plugins: Plugins) -> list[Check]:
    """Each reader of ``config.json``: opened, asked for its health (a model reader loads its model
    then), described; with none configured, the builtin bm25 reader that ask uses."""
    from episteme_core.ask.config import reader_specs

    try:
        specs = reader_specs(home.config())
    except EpistemeError as exc:
        return [Check("readers", FAIL, exc.message, details={"config": str(home.config_path)},
                      hint=exc.hint or f"fix {home.config_path}: strict JSON, readers as docs/ask.md shows")]
    if not specs:
        return [Check("readers", OK, "none configured: ask uses the builtin bm25 reader",
                      details={"config": str(home.config_path)})]
    return [_reader_check(spec, plugins) for spec in specs]


def _reader_check(spec: ReaderSpec, plugins: Plugins) -> Check:
    name = f"reader {spec.name}"
    details: dict[str, Any] = {"kind": spec.kind, "slots": spec.slots, "timeout": spec.timeout}
    model = spec.options.get("model") if spec.kind not in ("http", "bm25") else None
    if model is not None:
        details["model"] = model
    try:
        kind = plugins.get("reader", spec.kind)
    except EpistemeError:
        known = sorted(plugins.components.get("reader", {}))
        provider = READER_PLUGINS.get(spec.kind)
        return Check(name, FAIL, f"reader kind {spec.kind!r} is not registered (known: {', '.join(known)})",
                     details=details,
                     hint=f"pip install {provider}" if provider else "install the plugin that provides it")
    started = time.monotonic()
    reader: Any = None
    try:
        reader = kind.open(spec)
        reader.health()
        describe: Callable[[], dict[str, Any]] | None = getattr(reader, "describe", None)
        if callable(describe):
            details["describe"] = describe()
    except Exception as exc:  # whatever a reader kind raises is this reader's failure, not doctor's
        if isinstance(exc, EpistemeError) and exc.code == "CANCELLED":
            raise
        message = exc.message if isinstance(exc, EpistemeError) else str(exc) or type(exc).__name__
        hint = exc.hint if isinstance(exc, EpistemeError) and exc.hint else (
            "fix the model files or the readers section of config.json (docs/readers.md)" if model is not None
            else "start the reader, or fix its entry in config.json (docs/ask.md)")
        what = "its model did not load" if model is not None else "it is not healthy"
        return Check(name, FAIL, f"{spec.kind}: {what}: {message}", hint=hint, details=details)
    finally:
        if reader is not None:
            reader.close()
    details["ms"] = round((time.monotonic() - started) * 1000)
    loaded = f"; model {model} loaded" if model is not None else ""
    return Check(name, OK, f"{spec.kind}: healthy in {details['ms']} ms{loaded}", details=details)


def home_check(home: Home) -> Check:
    """``verify`` of the whole home: problems fail, notes (a killed writer's leftovers) warn."""
    from episteme_core.records.convert import unstructure
    from episteme_core.store.verify import verify_home

    if not home.root.is_dir():
        return Check("home", FAIL, f"no home at {home.root}", details={"home": str(home.root)},
                     hint="run episteme init (every writing command also creates it), or give --home DIR")
    try:
        report = verify_home(home)
    except EpistemeError as exc:
        return Check("home", FAIL, exc.message, hint=exc.hint, details={"home": str(home.root)})
    details: dict[str, Any] = unstructure(report)
    if report.problems:
        named = "; ".join(f"{p.code} {p.path}" for p in report.problems[:SHOWN_PROBLEMS])
        more = len(report.problems) - SHOWN_PROBLEMS
        named += f"; and {more} more" if more > 0 else ""
        return Check("home", FAIL, f"{home.root}: {len(report.problems)} problem(s): {named}",
                     details=details,
                     hint="episteme verify lists each; restore the named files from a backup or re-run "
                          "the stage that wrote them")
    from episteme_core.records.convert import words

    checked = ", ".join(f"{n} {words(what)}" for what, n in sorted(report.checked.items())) or "nothing"
    if report.notes:
        return Check("home", WARN, f"{home.root}: no problems, {len(report.notes)} note(s): "
                     + "; ".join(f"{n.code} {n.path}" for n in report.notes[:SHOWN_PROBLEMS]),
                     details=details, hint="the next writing command sweeps what a killed writer left")
    return Check("home", OK, f"{home.root}: verified ({checked})", details=details)


def shards_check(home: Home, plugins: Plugins) -> Check:
    """Whether every source's shards are current with the log, and open as query and ask open them."""
    from episteme_core.personal.library import list_sources

    if not home.root.is_dir():
        return Check("shards", SKIP, "no home, so no shards")
    try:
        listing = list_sources(home)
    except EpistemeError as exc:
        return Check("shards", FAIL, exc.message, hint=exc.hint)
    rows = listing["sources"]
    status = {row["source"]: row["shardStatus"] for row in rows}
    details: dict[str, Any] = {"sources": status, "shards": sum(row["shards"] for row in rows)}
    if not rows:
        return Check("shards", SKIP, "nothing captured yet", details=details,
                     hint="episteme ingest SOURCE, or episteme pipeline --map MAP")
    late = sorted(source for source, state in status.items() if state != "current")
    if late:
        return Check("shards", FAIL, "shards of " + ", ".join(f"{s} ({status[s]})" for s in late)
                     + " are not current with the log", details=details,
                     hint="run episteme ingest (or episteme index) so that query and ask answer")
    from episteme_core.ask.run import open_home_shards

    try:
        open_home_shards(home, plugins)
    except EpistemeError as exc:
        return Check("shards", FAIL, exc.message, hint=exc.hint, details=details)
    return Check("shards", OK, f"current for {', '.join(sorted(status))} ({details['shards']} shard(s))",
                 details=details)


def token_file_check(path: Path | None) -> Check:
    """The token file ``serve --token-file`` would read: a private regular file of this user."""
    from episteme_core.serve.guards import read_token_file

    if path is None:
        return Check("token file", SKIP, "none given: serve binds loopback only without one "
                     "(doctor --token-file FILE checks the file serve would read)")
    try:
        read_token_file(path)
    except EpistemeError as exc:
        return Check("token file", FAIL, exc.message, hint=exc.hint, details={"path": str(path)})
    mode = path.stat().st_mode & 0o777
    return Check("token file", OK, f"{path}: private to this user (mode {mode:04o})",
                 details={"path": str(path), "mode": f"{mode:04o}"})
