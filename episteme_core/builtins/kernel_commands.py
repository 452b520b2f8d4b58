"""Builtin commands of the kernel: ``plugins`` (what is loaded), ``init``, ``verify`` (audit the home)
and ``doctor`` (check the whole setup)."""

from __future__ import annotations

import argparse
from typing import TYPE_CHECKING

from episteme_core.hookspecs import Register, hookimpl
from episteme_core.kernel.context import Outcome
from episteme_core.kernel.contracts import Command

if TYPE_CHECKING:
    from episteme_core.kernel.context import Context


def _configure_plugins(parser: argparse.ArgumentParser) -> None:
    """``plugins`` takes only the global options."""


def _run_plugins(args: argparse.Namespace, ctx: Context) -> Outcome:
    from episteme_core.records.convert import unstructure

    infos = sorted(ctx.plugins.load_all().infos.values(), key=lambda i: (not i.builtin, i.name))
    data = {"plugins": [unstructure(info) for info in infos]}
    lines = []
    for info in infos:
        origin = "builtin" if info.builtin else info.module
        lines.append(f"{info.name} {info.version} ({origin})")
        if info.error:
            lines.append(f"  failed to load: {info.error}")
        for kind in sorted(info.components):
            lines.append(f"  {kind}: {', '.join(info.components[kind])}")
        for refusal in info.refused:
            lines.append(f"  refused: {refusal.message}")
    return Outcome(data=data, text="\n".join(lines))


def _configure_verify(parser: argparse.ArgumentParser) -> None:
    """``verify`` takes only the global options."""


def _run_verify(args: argparse.Namespace, ctx: Context) -> Outcome:
    from episteme_core.records.convert import unstructure, words
    from episteme_core.store.verify import check_home

    report = check_home(ctx.home, ctx.warn)
    checked = ", ".join(f"{n} {words(what)}" for what, n in sorted(report.checked.items())) or "nothing"
    return Outcome(
        data=unstructure(report),
        text=f"{report.home}: no problems ({checked} checked)",
    )


def _configure_init(parser: argparse.ArgumentParser) -> None:
    """``init`` takes only the global options."""


def _run_init(args: argparse.Namespace, ctx: Context) -> Outcome:
    from episteme_core.store.init import init_home

    with ctx.writing() as home:
        created = init_home(home)
    state = "created" if created else "already present"
    return Outcome(
        data={"home": str(ctx.home.root), "created": created},
        text=f"{ctx.home.root}: home {state}",
    )


def _configure_doctor(parser: argparse.ArgumentParser) -> None:
    parser.add_argument("--token-file", metavar="FILE",
                        help="also check FILE as serve --token-file would read it (private to you, "
                             "mode 0600 or 0400)")


def _run_doctor(args: argparse.Namespace, ctx: Context) -> Outcome:
    from pathlib import Path

    from episteme_core.doctor.render import render_report
    from episteme_core.doctor.run import check_setup
    from episteme_core.records.convert import unstructure

    token_file = Path(args.token_file).expanduser() if args.token_file else None
    report = check_setup(ctx, token_file)
    return Outcome(data=unstructure(report), text=render_report(report))


@hookimpl
def episteme_commands(register: Register) -> None:
    register(Command(
        name="plugins",
        help="list plugins, their versions and the components they register",
        configure=_configure_plugins,
        run=_run_plugins,
    ))
    register(Command(
        name="init",
        help="create the home (stages, config.json) if it does not exist; safe to repeat",
        configure=_configure_init,
        run=_run_init,
    ))
    register(Command(
        name="doctor",
        help="check the setup: Python, package, plugins, readers and their models, the home, shards, "
             "a token file; exit 0 only when all is well",
        description=(
            "Check the whole setup and say what to do: the Python and package versions, every plugin\n"
            "(loaded, or refused with its reason), each reader of config.json (healthy; a model reader\n"
            "loads its model), the home's verify, whether the shards are current, and with --token-file\n"
            "the token file serve would read. Exit 0 only when no check fails; --json lists every check\n"
            "(in error.details when one fails, exit 3)."
        ),
        configure=_configure_doctor,
        run=_run_doctor,
    ))
    register(Command(
        name="verify",
        help="audit the whole home: every hash, index, log line and lock; list every problem",
        configure=_configure_verify,
        run=_run_verify,
    ))
