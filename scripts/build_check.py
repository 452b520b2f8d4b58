"""Build the sdist and wheel of episteme-core and of every plugin, check their metadata, install them
into a fresh venv with no source tree beside it, and run the demo's commands and ``doctor`` there.

    python scripts/build_check.py [--out DIST] [--keep]       (scripts/build and tox -e wheels run it)

Each step prints a line of what it does. The metadata checks: ``twine check --strict`` (the readme
renders, the fields are well formed), then for every distribution a licence (``License-Expression``
and the licence file inside both archives), a readme, classifiers naming Python 3.11 and 3.12, a
project URL, ``Requires-Python >=3.11``, a plugin's entry point in the group ``episteme`` and its
``episteme-core`` requirement, and the core's extras ``test``, ``dask`` and ``all`` (``all`` naming
every plugin). The fresh venv is made in a temporary folder; the demo runs from a copy of
``scripts/demo`` and ``examples/`` (data, no code) with the venv's ``bin`` first on PATH, and the
check fails unless ``episteme_core`` and every plugin are imported from the venv's site-packages.
``episteme-llama`` is built and checked always, installed only with ``EPISTEME_BUILD_LLAMA=1``
(it compiles llama-cpp-python, 4-8 minutes, unless pip's wheel cache holds it); then the core goes in
as ``episteme-core[all]``, so the extra is what brings every plugin and Dask.
"""

from __future__ import annotations

import argparse
import email.parser
import json
import os
import shutil
import subprocess
import sys
import tarfile
import tempfile
import time
import zipfile
from pathlib import Path

ROOT = Path(__file__).resolve().parents[1]
PYTHONS = ("3.11", "3.12")
CORE_EXTRAS = ("test", "dask", "all")


def say(began: float, text: str) -> None:
    print(f"[{time.monotonic() - began:6.1f}s] {text}", flush=True)


def projects() -> list[Path]:
    """The core's folder, then each plugin's, sorted."""
    plugins = sorted(p.parent for p in (ROOT / "plugins").glob("*/pyproject.toml"))
    return [ROOT, *plugins]


def run(command: list[str], *, cwd: Path = ROOT, env: dict[str, str] | None = None) -> str:
    """Run ``command``; its output is returned, and printed whole when it fails."""
    result = subprocess.run(command, cwd=cwd, env=env, capture_output=True, text=True, check=False)
    if result.returncode != 0:
        print(result.stdout[-8000:], result.stderr[-8000:], sep="\n", file=sys.stderr)
        raise SystemExit(f"failed (exit {result.returncode}): {' '.join(command)}")
    return result.stdout + result.stderr


def build(out: Path, began: float) -> dict[str, tuple[Path, Path]]:
    """The (sdist, wheel) of every project, by distribution name."""
    if out.exists():
        shutil.rmtree(out)
    out.mkdir(parents=True)
    built: dict[str, tuple[Path, Path]] = {}
    for project in projects():
        before = set(out.iterdir())
        run([sys.executable, "-m", "build", "--sdist", "--wheel", "--outdir", str(out), str(project)])
        new = set(out.iterdir()) - before
        sdist = next(p for p in new if p.name.endswith(".tar.gz"))
        wheel = next(p for p in new if p.name.endswith(".whl"))
        name = wheel.name.split("-")[0].replace("_", "-")
        built[name] = (sdist, wheel)
        say(began, f"built {name}: {sdist.name} ({sdist.stat().st_size // 1024} KiB), "
                   f"{wheel.name} ({wheel.stat().st_size // 1024} KiB)")
    return built


def wheel_metadata(wheel: Path) -> tuple[email.message.Message, str, list[str]]:
    """The wheel's METADATA, its entry_points.txt, and its file names."""
    with zipfile.ZipFile(wheel) as archive:
        names = archive.namelist()
        info = next(n for n in names if n.endswith(".dist-info/METADATA"))
        metadata = email.parser.Parser().parsestr(archive.read(info).decode("utf-8"))
        points = next((n for n in names if n.endswith(".dist-info/entry_points.txt")), None)
        entry_points = archive.read(points).decode("utf-8") if points else ""
    return metadata, entry_points, names


def check_metadata(built: dict[str, tuple[Path, Path]], plugins: list[str]) -> list[str]:
    """Every problem of every distribution's metadata (empty when all is well)."""
    problems = []
    for name, (sdist, wheel) in built.items():
        metadata, entry_points, names = wheel_metadata(wheel)

        def need(condition: bool, what: str, name: str = name) -> None:
            if not condition:
                problems.append(f"{name}: {what}")

        need(metadata.get("License-Expression") == "Apache-2.0", "License-Expression is not Apache-2.0")
        need(any(n.endswith("licenses/LICENSE") for n in names), "the wheel holds no LICENSE file")
        with tarfile.open(sdist) as archive:
            need(any(m.name.endswith("/LICENSE") for m in archive.getmembers()), "the sdist holds no LICENSE")
        need(len(metadata.get_payload() or "") > 200, "no readme (long description)")
        content_type = metadata.get("Description-Content-Type", "")
        need(content_type.startswith("text/markdown"), "readme is not markdown")
        classifiers = metadata.get_all("Classifier") or []
        for python in PYTHONS:
            classifier = f"Programming Language :: Python :: {python}"
            need(classifier in classifiers, f"no Python {python} classifier")
        need(bool(metadata.get_all("Project-URL")), "no project URL")
        need(metadata.get("Requires-Python") == ">=3.11", "Requires-Python is not >=3.11")
        requires = metadata.get_all("Requires-Dist") or []
        if name == "episteme-core":
            extras = metadata.get_all("Provides-Extra") or []
            for extra in CORE_EXTRAS:
                need(extra in extras, f"no extra {extra!r}")
            in_all = {r.split(">")[0].split("=")[0].split("[")[0].strip() for r in requires
                      if 'extra == "all"' in r.replace("'", '"')}
            need(set(plugins) <= in_all, f"extra 'all' lacks {sorted(set(plugins) - in_all)}")
            need(any(n.endswith("episteme_core/py.typed") for n in names), "no py.typed")
            need(any(n.startswith("episteme_core/schemas/") for n in names), "no JSON schemas")
            need("episteme = episteme_core.__main__:main" in entry_points, "no console script episteme")
        else:
            need("[episteme]" in entry_points, "no entry point in the group episteme")
            need(any(r.startswith("episteme-core") for r in requires), "does not require episteme-core")
    return problems


def fresh_venv(where: Path, wheels: list[str], began: float) -> Path:
    """A new venv at ``where`` with ``wheels`` installed (their dependencies from the index)."""
    run([sys.executable, "-m", "venv", str(where)])
    python = where / "bin" / "python"
    started = time.monotonic()
    run([str(python), "-m", "pip", "install", "--disable-pip-version-check", "--quiet", *wheels], cwd=where)
    took = time.monotonic() - started
    say(began, f"installed {len(wheels)} wheel(s) and their dependencies in {took:.0f} s")
    return python


def main(argv: list[str] | None = None) -> int:
    parser = argparse.ArgumentParser(description=__doc__.split("\n\n")[0])
    parser.add_argument("--out", type=Path, default=ROOT / "dist",
                        help="where the archives go (default dist/)")
    parser.add_argument("--keep", action="store_true", help="keep the fresh venv and its demo folder")
    args = parser.parse_args(argv)
    began = time.monotonic()
    say(began, f"building the sdist and wheel of {len(projects())} projects into {args.out} "
               "(python -m build, isolated; about 10 s each)")
    built = build(args.out, began)
    plugins = sorted(n for n in built if n != "episteme-core")
    say(began, "checking metadata: twine check --strict, then licence, readme, classifiers, URLs, "
               "Python versions, entry points, extras")
    archives = [str(path) for pair in built.values() for path in pair]
    run([sys.executable, "-m", "twine", "check", "--strict", *archives])
    problems = check_metadata(built, plugins)
    if problems:
        print("\n".join(f"  {p}" for p in problems), file=sys.stderr)
        raise SystemExit(f"{len(problems)} metadata problem(s)")
    say(began, f"metadata of {len(built)} distributions: twine passes, every check holds")
    with_llama = os.environ.get("EPISTEME_BUILD_LLAMA") == "1"
    chosen = [name for name in built if with_llama or name != "episteme-llama"]
    scratch = Path(tempfile.mkdtemp(prefix="episteme-wheels-"))
    try:
        say(began, f"installing {', '.join(chosen)} from the wheels into a fresh venv in {scratch} "
                   "(no source tree there; dependencies from the index, about 1-2 minutes)")
        # With every plugin, the core goes in as episteme-core[all]: the extra itself is what installs
        # the plugins (each named by its wheel, so the index never offers another) and Dask.
        wheels = [str(built[name][1]) + ("[all]" if with_llama and name == "episteme-core" else "")
                  for name in chosen]
        python = fresh_venv(scratch / "venv", wheels, began)
        bin_dir = python.parent
        env = {k: v for k, v in os.environ.items() if not k.startswith(("EPISTEME_", "PYTHON"))}
        env["PATH"] = f"{bin_dir}{os.pathsep}{env.get('PATH', '')}"
        modules = ["episteme_core", *[n.replace("-", "_") for n in chosen if n != "episteme-core"]]
        code = ("import json, importlib; print(json.dumps({m: importlib.import_module(m).__file__ "
                f"for m in {json.dumps(modules)}}}))")
        where = json.loads(run([str(python), "-c", code], cwd=scratch, env=env).strip().splitlines()[-1])
        site = str(scratch / "venv")
        outside = {m: f for m, f in where.items() if not f.startswith(site)}
        if outside:
            raise SystemExit(f"imported from outside the fresh venv: {outside}")
        say(began, f"{len(modules)} packages import from the fresh venv's site-packages, "
                   "none from the source tree")
        if with_llama:
            listed = run([str(python), "-m", "pip", "list", "--format", "freeze"], cwd=scratch, env=env)
            installed = {line.split("==")[0].lower() for line in listed.split()}
            missing = {"dask", "distributed", *plugins} - installed
            if missing:
                raise SystemExit(f"episteme-core[all] did not install {sorted(missing)}")
            say(began, "episteme-core[all] installed every plugin and Dask")
        demo = scratch / "demo"
        (demo / "scripts").mkdir(parents=True)
        shutil.copy(ROOT / "scripts" / "demo", demo / "scripts" / "demo")
        shutil.copytree(ROOT / "examples", demo / "examples")
        say(began, "running the demo's commands there (EPISTEME_DEMO_INSTALL=0, from a copy of scripts/demo "
                   "and examples/)")
        started = time.monotonic()
        result = subprocess.run(["bash", "scripts/demo"], cwd=demo, env={**env, "EPISTEME_DEMO_INSTALL": "0"},
                                capture_output=True, text=True, check=False)
        sys.stdout.write(result.stdout)
        if result.returncode != 0:
            sys.stdout.write(result.stderr[-8000:])
            raise SystemExit(f"the demo failed from the wheels (exit {result.returncode})")
        say(began, f"the demo's commands passed from the wheels in {time.monotonic() - started:.0f} s")
        command = [str(bin_dir / "episteme"), "--home", str(demo / "demo-home"), "doctor", "--json"]
        doctor = subprocess.run(command, cwd=demo, env=env, capture_output=True, text=True, check=False)
        envelope = json.loads(doctor.stdout or doctor.stderr)
        report = envelope["data"] if envelope["ok"] else envelope["error"]["details"]
        location = next(c for c in report["checks"] if c["name"] == "episteme")["details"]["location"]
        if doctor.returncode != 0 or not location.startswith(site):
            print(doctor.stdout or doctor.stderr, file=sys.stderr)
            raise SystemExit(f"doctor from the wheels: exit {doctor.returncode}, episteme_core at {location}")
        passed = report["counts"]["ok"]
        say(began, f"doctor from the wheels: {passed} checks passed, episteme_core at {location}")
    finally:
        if args.keep:
            say(began, f"kept {scratch}")
        else:
            shutil.rmtree(scratch, ignore_errors=True)
    say(began, f"wheels install clean: {len(built)} built and checked, {len(chosen)} installed and run")
    return 0


if __name__ == "__main__":
    sys.exit(main())
