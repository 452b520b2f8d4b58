"""Knowledge graphs at size: validate, merge and export a generated 10,000-concept graph.

The graph (episteme_graph.generate.synthetic_graph: 10,000 concepts, 20,000 relationships, 10,000
evidence records and claims, 1,000 facts and chunks; about 20 MB of JSON) is validated from its bytes
(strict parse, schema, every rule), merged with a copy that enriches every concept and adds 1,000 new
ones (merge, audit and validation of the result; no file writes), and rendered in every format. Times
are CPU seconds of this process (``time.process_time``), best of N runs, so other work on a shared
machine skews them less than wall time would. Targets: validate <= 1 s, merge <= 2 s, each export
<= 1 s. Prints Markdown for docs/benchmarks.md.
The validation rows run as ``graph validate`` does: the reader gathers every object key while it
checks the depth, and the private-reasoning rule reads them from there.
Usage: python bench/graph.py [NODES] [--repeat N] [--jsonschema] [--one-cluster N,N,...]
(--jsonschema also times the schema through the jsonschema library, for comparison: slow.)

The second table (R9: no rule super-linear) puts all concepts of the same generator's graph in one
cluster, at each size of --one-cluster (default 25,000, 50,000, 100,000; ``--one-cluster ''`` skips
it), and times, once each, as the CLI runs them: ``graph validate`` from the file's bytes, and
``graph merge G G --out M`` (read both, validate both, merge, audit, validate the result, write the
archive-less output and both diffs). Targets at 100,000 concepts on 2 cores: validate <= 10 s,
merge into itself <= 30 s (wall). The graph is ~2 KB per concept (206 MB at 100,000), past the
64 MiB default input bound, so the bench raises it (``--max-input-bytes``).
"""

from __future__ import annotations

import copy
import json
import sys
import tempfile
import time
from collections.abc import Callable
from pathlib import Path
from typing import Any

from episteme_graph import rules, schema
from episteme_graph.audit import audit_merge
from episteme_graph.exporters import EXPORTERS
from episteme_graph.findings import Collector
from episteme_graph.generate import synthetic_graph
from episteme_graph.load import load
from episteme_graph.merge import merge_graphs, recompute
from episteme_graph.validate import validate_loaded, validate_value

from episteme_core.api import paused_cycle_gc as cycle_collector_paused

# Formats written through a third-party library, without a target: graphml (networkx) and turtle
# (rdflib, about 40 microseconds a triple to build and serialize).
UNTARGETED = ("graphml", "turtle")


def best(fn: Callable[[], object], repeat: int) -> float:
    times = []
    for _ in range(repeat):
        start = time.process_time()
        fn()
        times.append(time.process_time() - start)
    return min(times)


def incoming_of(graph: dict[str, Any], extra: int) -> dict[str, Any]:
    incoming = copy.deepcopy(graph)
    for node in incoming["nodes"]:
        node["note"] = f"Reviewed note on {node['id']}."
        node["statements"].append(f"{node['id']} was reviewed. [1]")
    more = synthetic_graph(extra, clusters=len(graph["clusters"]), prefix="m", seed=11)
    for key in ("nodes", "edges", "evidence", "claims", "facts", "chunks"):
        incoming[key] += more[key]
    recompute(incoming)
    return incoming


def timed(fn: Callable[[], object]) -> tuple[float, float]:
    """(wall seconds, CPU seconds of this process) of one run."""
    wall, cpu = time.perf_counter(), time.process_time()
    fn()
    return time.perf_counter() - wall, time.process_time() - cpu


def _validate_bytes(data: bytes, limit: int) -> None:
    report = validate_loaded(load(data, max_bytes=limit)).report()
    assert report["ok"], report["findings"][:3]


def _merge_into_itself(data: bytes, limit: int) -> tuple[float, float]:
    """``graph merge G G --out M`` on a file holding ``data``, timed."""
    from episteme_graph.mergefiles import MergeRequest, merge_files

    with tempfile.TemporaryDirectory() as folder:
        path = Path(folder) / "g.knowledge.json"
        path.write_bytes(data)
        out = Path(folder) / "m.knowledge.json"
        request = MergeRequest(base=path, incoming=path, out=out, max_bytes=limit)
        return timed(lambda: merge_files(request))


def one_cluster(sizes: list[int]) -> None:
    """R9: validate and self-merge graphs whose concepts all sit in one cluster."""
    print("\nOne cluster (R9): wall and CPU seconds, one run each\n")
    print("| concepts | MB | validate wall | validate CPU | merge G G wall | merge G G CPU | targets |")
    print("|---:|---:|---:|---:|---:|---:|---|")
    for n in sizes:
        data = json.dumps(synthetic_graph(n, clusters=1), ensure_ascii=False, indent=2).encode("utf-8")
        limit = max(len(data) + 1, 64 * 1024 * 1024)
        v_wall, v_cpu = timed(lambda d=data, lim=limit: _validate_bytes(d, lim))
        m_wall, m_cpu = _merge_into_itself(data, limit)
        targets = "validate <= 10, merge <= 30" if n == 100_000 else ""
        cells = [f"{n:,}", f"{len(data) / 1e6:.0f}", *(f"{t:.1f}" for t in (v_wall, v_cpu, m_wall, m_cpu))]
        print("| " + " | ".join([*cells, targets]) + " |", flush=True)


def main(argv: list[str]) -> None:
    import argparse

    parser = argparse.ArgumentParser(description="validate, merge and export a generated graph")
    parser.add_argument("nodes", nargs="?", type=int, default=10_000)
    parser.add_argument("--repeat", type=int, default=3)
    parser.add_argument("--jsonschema", action="store_true")
    parser.add_argument("--one-cluster", default="25000,50000,100000", help="sizes, comma-separated")
    options = parser.parse_args(argv)
    nodes, repeat = options.nodes, options.repeat
    graph = synthetic_graph(nodes)
    data = json.dumps(graph, ensure_ascii=False, indent=2).encode("utf-8")
    incoming = incoming_of(graph, nodes // 10)
    rows: list[tuple[str, float, str]] = []

    def validate_from_bytes() -> None:
        report = validate_loaded(load(data)).report()
        assert report["ok"] and report["conformanceScore"] == 100, report["findings"][:3]

    rows.append(("validate (parse, schema, rules)", best(validate_from_bytes, repeat), "1.0"))
    loaded = load(data)
    value = loaded.value
    rows.append(("  of which strict parse (and the key walk)", best(lambda: load(data), repeat), ""))

    def paused(step: Callable[[], object]) -> Callable[[], object]:
        """A step as validate_value runs it: with the cycle collector paused."""

        def run() -> object:
            with cycle_collector_paused():
                return step()

        return run

    rows.append(("  of which the schema (compiled)", best(paused(lambda: schema.check(value)), repeat), ""))
    rows.append(
        (
            "  of which the rules",
            best(paused(lambda: rules.check(value, Collector(), loaded.keys)), repeat),
            "",
        )
    )
    if options.jsonschema:
        rows.append(
            (
                "  schema through jsonschema (comparison)",
                best(lambda: validate_value(value, engine="jsonschema"), 1),
                "",
            )
        )

    def merge() -> None:
        report = merge_graphs(graph, incoming)
        assert not audit_merge(graph, incoming, report)
        assert report.validation is not None and report.validation.ok  # validated by recompute

    rows.append(
        (f"merge (+{nodes // 10} concepts, all enriched; audit; validation)", best(merge, repeat), "2.0")
    )
    merged = merge_graphs(graph, incoming)
    rows.append(
        (
            "  of which the validation of the result",
            best(lambda: validate_value(merged.graph, check_stored_scores=False), repeat),
            "",
        )
    )
    rows.append(("  of which the audit", best(lambda: audit_merge(graph, incoming, merged), repeat), ""))
    for exporter in EXPORTERS:
        if exporter.graph_format == "png":  # the work is Chromium's, in another process: wall time
            start = time.perf_counter()
            try:
                size = len(exporter.render(graph, {}))
            except Exception as exc:  # no renderer on this machine
                print(f"export png skipped: {exc}", file=sys.stderr)
                continue
            seconds = time.perf_counter() - start
            rows.append((f"export png ({size / 1e6:.1f} MB; wall seconds, one run, renderer)", seconds, ""))
            continue
        size = len(exporter.render(graph, {}))
        rows.append(
            (
                f"export {exporter.graph_format} ({size / 1e6:.1f} MB)",
                best(lambda e=exporter: e.render(graph, {}), repeat),
                "" if exporter.graph_format in UNTARGETED else "1.0",
            )
        )
    print(
        f"{nodes:,} concepts, {len(graph['edges']):,} relationships, {len(data) / 1e6:.1f} MB of JSON; "
        f"CPU seconds, best of {repeat}\n"
    )
    print("| step | seconds | target |")
    print("|---|---:|---:|")
    for name, seconds, target in rows:
        print(f"| {name} | {seconds:.2f} | {target} |")
    sizes = [int(s) for s in options.one_cluster.split(",") if s.strip()]
    if sizes:
        one_cluster(sizes)


if __name__ == "__main__":
    main(sys.argv[1:])
