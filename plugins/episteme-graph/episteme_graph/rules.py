"""The rules of a ``.knowledge.json`` graph that a JSON Schema cannot state.

Reference integrity, citation numbering, cluster membership, counts, unique and canonical ids,
private-reasoning keys, URL safety, place privacy, dates, clean chunk text and unknown keys. The rules
are permissive about structure (the schema reports a wrong type): an item of the wrong shape is
skipped, never a crash.
"""

from __future__ import annotations

import functools
import hashlib
import re
import unicodedata
from typing import Any

from episteme_graph import dates, urls
from episteme_graph.findings import Collector
from episteme_graph.load import object_keys
from episteme_graph.paths import join
from episteme_graph.schema import schema

KNOWN_SPEC_VERSIONS = ("1.0", "1.1")
EDGE_TYPES = ("uses", "enables", "based-on", "part-of", "tension", "replaces", "extends", "example-of")
SYMMETRIC_EDGE_TYPES = ("tension",)
COLLECTIONS = (
    "clusters",
    "nodes",
    "edges",
    "facts",
    "chunks",
    "evidence",
    "claims",
    "assessments",
    "fact_conflicts",
)
SINGULAR = {
    "clusters": "cluster",
    "nodes": "node",
    "edges": "edge",
    "facts": "fact",
    "chunks": "chunk",
    "evidence": "evidence",
    "claims": "claim",
    "assessments": "assessment",
    "fact_conflicts": "fact conflict",
}
PRIVATE_KEYS = frozenset(
    {
        "reasoning",
        "chainofthought",
        "reasoningtrace",
        "chainofthoughttrace",
        "hiddenreasoning",
        "hiddenthoughts",
        "hiddenscratchpad",
        "internalreasoning",
        "internalscratchpad",
        "privatereasoning",
        "privatescratchpad",
        "scratchpad",
        "cot",
    }
)
LEGACY_KEY = "authoritative_source"
_NON_ALNUM = re.compile(r"[^a-z0-9]")
_MARKER = re.compile(r"\[(\d+)\]")
_HEADING = re.compile(r"^\s{0,3}#{1,6}\s", re.MULTILINE)
_EMOJI = re.compile("[\U0001f000-\U0001faff\u2600-\u27bf\U0001f1e6-\U0001f1ff\u2190-\u21ff]")
_UNCLEAN = (
    ("[[", "wiki links [[ ]]"),
    ("]]", "wiki links [[ ]]"),
    ("**", "bold markers **"),
    ("__", "underline markers __"),
    ("`", "backticks"),
    ("->", "arrows"),
    ("<->", "arrows"),
    ("\u27f6", "arrows"),
)
ORIGIN_KINDS = ("edge", "fact", "chunk", "claim")
EVIDENCE_KINDS = frozenset(
    {"node", "claim", "edge", "fact", "chunk", "spatialContext", "derivation", "assessment", "factConflict"}
)
DATE_FIELDS = {
    "source": ("date",),
    "nodeTemporal": ("source_date", "source_period", "valid_from", "valid_until"),
    "edgeTemporal": ("valid_from", "valid_until"),
    "factTemporal": ("source_date", "source_period", "valid_from", "valid_until"),
    "assessment": ("assessed_at",),
    "metadata": ("distillation_date",),
}
REDACTED_KINDS = ("country", "region", "city", "market", "organization_defined")
REDACTED_PRECISIONS = ("city", "region", "country", "coarse")

# Where each kind of object sits: child key -> (kind, is a list of them).
_SPATIAL = ("spatialContext", True)
_DERIVATION = ("derivation", False)
CHILDREN: dict[str, dict[str, tuple[str, bool]]] = {
    "root": {
        "metadata": ("metadata", False),
        "clusters": ("cluster", True),
        "nodes": ("node", True),
        "edges": ("edge", True),
        "facts": ("fact", True),
        "chunks": ("chunk", True),
        "evidence": ("evidence", True),
        "claims": ("claim", True),
        "assessments": ("assessment", True),
        "fact_conflicts": ("factConflict", True),
    },
    "metadata": {"sources": ("source", True)},
    "source": {"agents": ("sourceAgent", True)},
    "node": {
        "temporal": ("nodeTemporal", False),
        "citations": ("citation", True),
        "spatial_contexts": _SPATIAL,
    },
    "citation": {"selector": ("selector", False)},
    "spatialContext": {"place": ("place", False), "derivation": _DERIVATION},
    "place": {"identifiers": ("placeIdentifier", True)},
    "edge": {"temporal": ("edgeTemporal", False), "derivation": _DERIVATION, "spatial_contexts": _SPATIAL},
    "fact": {"temporal": ("factTemporal", False), "derivation": _DERIVATION, "spatial_contexts": _SPATIAL},
    "chunk": {"derivation": _DERIVATION, "spatial_contexts": _SPATIAL},
    "evidence": {"selector": ("selector", False), "derivation": _DERIVATION},
    "claim": {"temporal": ("nodeTemporal", False), "spatial_contexts": _SPATIAL, "derivation": _DERIVATION},
}


def known_keys() -> dict[str, frozenset[str]]:
    """Each kind's known keys, read from the shipped schema (one source of truth)."""
    root = schema()
    defs = root["$defs"]
    keys = {name: frozenset(d.get("properties", {})) for name, d in defs.items()}
    keys["root"] = frozenset(root["properties"])
    keys["metadata"] = frozenset(root["properties"]["metadata"]["properties"])
    keys["edgeTemporal"] = frozenset(defs["edge"]["properties"]["temporal"]["properties"])
    keys["factTemporal"] = frozenset(defs["fact"]["properties"]["temporal"]["properties"])
    return keys


def objects_by_kind(graph: dict[str, Any]) -> dict[str, list[tuple[Any, dict[str, Any]]]]:
    """Every object at a known place of the graph, grouped by kind: kind -> [(linked path, object)].
    Gathered one kind at a time (one comprehension per child key), so a rule runs over all objects
    of its kind in one loop."""
    found: dict[str, list[tuple[Any, dict[str, Any]]]] = {}
    pending: list[tuple[str, list[tuple[Any, dict[str, Any]]]]] = [("root", [(None, graph)])]
    while pending:
        kind, objects = pending.pop()
        found.setdefault(kind, []).extend(objects)
        for key, (child_kind, many) in CHILDREN.get(kind, {}).items():
            children: list[tuple[Any, dict[str, Any]]]
            if many:
                children = [
                    (((path, key), i), item)
                    for path, obj in objects
                    if isinstance(value := obj.get(key), list)
                    for i, item in enumerate(value)
                    if isinstance(item, dict)
                ]
            else:
                children = [
                    ((path, key), value) for path, obj in objects if isinstance(value := obj.get(key), dict)
                ]
            if children:
                pending.append((child_kind, children))
    return found


def _items(graph: dict[str, Any], key: str) -> list[tuple[Any, dict[str, Any]]]:
    value = graph.get(key)
    if not isinstance(value, list):
        return []
    return [(((None, key), i), item) for i, item in enumerate(value) if isinstance(item, dict)]


def _strings(value: Any) -> list[tuple[int, str]]:
    return [(i, v) for i, v in enumerate(value) if isinstance(v, str)] if isinstance(value, list) else []


def _path(link: Any) -> str:
    parts: list[Any] = []
    while link is not None:
        link, key = link
        parts.append(key)
    return join(reversed(parts))


def _P(link: Any, *keys: Any) -> str:  # noqa: N802 - short on purpose: used in every finding
    """The JSON path of a linked path (or a path string), extended by ``keys``."""
    if isinstance(link, str):
        return link
    for key in keys:
        link = (link, key)
    return _path(link)


def canonical_edge_id(source: str, edge_type: str, target: str) -> str:
    """``source__type__target``; endpoints sorted for the symmetric type ``tension``."""
    if edge_type in SYMMETRIC_EDGE_TYPES and target < source:
        source, target = target, source
    return f"{source}__{edge_type}__{target}"


def private_key(key: str) -> bool:
    """A key that names private reasoning: lowercased and stripped of every non-alphanumeric
    character, one of ``PRIVATE_KEYS``; a key with non-ASCII characters is also compared through
    its Latin skeleton (``latin_skeleton``), so look-alike spellings are refused too."""
    if _NON_ALNUM.sub("", key.lower()) in PRIVATE_KEYS:
        return True
    return not key.isascii() and latin_skeleton(key) in PRIVATE_KEYS


@functools.lru_cache(maxsize=4096)
def latin_skeleton(key: str) -> str:
    """What a key looks like in ASCII: NFKC (full-width and mathematical letters become ASCII),
    case folded, decomposed (accents split off), each Latin look-alike (Cyrillic ``о``, Greek
    ``ο``, small capital ``ᴄ``, ... from Unicode's confusables, UTS #39) replaced by the letters it
    is confusable with, then everything but ASCII letters and digits dropped. A skeleton in the
    manner of UTS #39, restricted to the Latin prototypes and compared without case."""
    from episteme_graph.confusables import LATIN_PROTOTYPES

    # Mapped before NFKC too: NFKC turns some look-alikes into other letters (lunate sigma ``ϲ``,
    # which looks like ``c``, becomes ``σ``, which looks like ``o``).
    text = "".join([LATIN_PROTOTYPES.get(char, char) for char in key])
    text = unicodedata.normalize("NFD", unicodedata.normalize("NFKC", text).casefold())
    return _NON_ALNUM.sub("", "".join([LATIN_PROTOTYPES.get(char, char) for char in text]))


class Checker:
    """Runs every rule over one graph into a ``Collector``."""

    def __init__(self, graph: dict[str, Any], out: Collector, keys: frozenset[str] | None = None) -> None:
        self.graph = graph
        self.out = out
        self.keys = keys
        metadata = graph.get("metadata")
        self.metadata: dict[str, Any] = metadata if isinstance(metadata, dict) else {}
        self.sources = [s for _, s in self._source_items()]
        self.source_order = [s.get("id") for s in self.sources]
        self.ids: dict[str, dict[str, Any]] = {}
        self.nodes_by_id: dict[Any, dict[str, Any]] = {}
        self._statement_sets: dict[str, frozenset[str] | None] = {}
        for _, node in _items(graph, "nodes"):
            if isinstance(node.get("id"), str):
                self.nodes_by_id.setdefault(node["id"], node)

    def _source_items(self) -> list[tuple[Any, dict[str, Any]]]:
        value = self.metadata.get("sources")
        if not isinstance(value, list):
            return []
        return [((((None, "metadata"), "sources"), i), s) for i, s in enumerate(value) if isinstance(s, dict)]

    def run(self) -> None:
        self.private_keys()
        self.unique_ids()
        self.spec_version()
        self.counts()
        for kind, objects in objects_by_kind(self.graph).items():
            known = KNOWN[kind]
            for path, obj in objects:
                if not known.issuperset(obj):
                    self.unknown_keys(kind, path, obj)
            if kind in EVIDENCE_KINDS:
                for path, obj in objects:
                    if "evidence" in obj:
                        self._resolve_all((path, "evidence"), obj["evidence"], "evidence", "evidence")
            method = getattr(self, f"check_{kind}", None)
            if method is not None:
                for path, obj in objects:
                    method(path, obj)
            if kind in DATE_FIELDS:
                for path, obj in objects:
                    self.dates(kind, path, obj)
            if kind in ORIGIN_KINDS:
                for path, obj in objects:
                    if "explanation" in obj and "origin" not in obj:
                        self.out.warning(
                            _P(path, "explanation"),
                            "explanation-without-origin",
                            "an explanation without an origin: say where the relationship comes from",
                        )
        self.membership()

    # -- document-wide -------------------------------------------------------------------------

    def private_keys(self) -> None:
        """Every key of the document, extension objects included. The distinct keys (gathered by the
        reader, or here) are looked at first; paths are looked for only when one of them is private."""
        keys = self.keys if self.keys is not None else object_keys(self.graph)
        if not any(private_key(key) for key in keys):
            return
        walk_stack: list[tuple[Any, Any]] = [(None, self.graph)]  # (linked path, value)
        while walk_stack:
            link, value = walk_stack.pop()
            if isinstance(value, dict):
                for key, child in value.items():
                    if private_key(key):
                        self.out.error(
                            _P(link, key),
                            "private-reasoning",
                            f"field {key!r} holds private reasoning, which a graph never carries",
                        )
                    walk_stack.append(((link, key), child))
            elif isinstance(value, list):
                walk_stack.extend(((link, i), child) for i, child in enumerate(value))

    def unique_ids(self) -> None:
        self.ids["sources"] = self._unique(self._source_items(), "source", "id")
        for collection in COLLECTIONS:
            self.ids[collection] = self._unique(_items(self.graph, collection), SINGULAR[collection], "id")
        resources: dict[str, Any] = {}
        for path, node in _items(self.graph, "nodes"):
            resource = node.get("resource")
            if isinstance(resource, str) and resource:
                if resource in resources:
                    first = _P(resources[resource])
                    self.out.error(
                        _P(path, "resource"),
                        "duplicate-resource",
                        f"duplicate resource identity {resource!r} (first at {first})",
                    )
                else:
                    resources[resource] = path

    def _unique(self, items: list[tuple[Any, dict[str, Any]]], what: str, key: str) -> dict[str, Any]:
        seen: dict[str, str] = {}
        for path, item in items:
            value = item.get(key)
            if not isinstance(value, str):
                continue
            if value in seen:
                self.out.error(
                    _P(path, key),
                    "duplicate-id",
                    f"duplicate {what} id {value!r} (first at {_P(seen[value])})",
                )
            else:
                seen[value] = path
        return seen

    def spec_version(self) -> None:
        version = self.metadata.get("distiller_spec_version")
        if not isinstance(version, str) or not re.match(r"^[0-9]+\.[0-9]+$", version):
            return  # the schema reports a malformed version
        if version not in KNOWN_SPEC_VERSIONS:
            self.out.warning(
                _P("$.metadata.distiller_spec_version"),
                "unknown-spec-version",
                f"spec version {version} is unknown here (known: 1.0, 1.1); read best-effort",
            )
        elif version != "1.0" and "conformance_score" not in self.metadata:
            self.out.warning(
                _P("$.metadata"),
                "missing-conformance-score",
                f"a Spec {version} graph should state its conformance_score",
            )

    def counts(self) -> None:
        for key, collection in (
            ("concept_count", "nodes"),
            ("relationship_count", "edges"),
            ("cluster_count", "clusters"),
            ("fact_count", "facts"),
        ):
            stated = self.metadata.get(key)
            value = self.graph.get(collection)
            if not isinstance(stated, int) or isinstance(stated, bool):
                continue
            actual = len(value) if isinstance(value, list) else 0
            if stated != actual:
                self.out.error(
                    _P(f"$.metadata.{key}"),
                    "count",
                    f"{key} says {stated} but the graph holds {actual} {collection}",
                )

    def membership(self) -> None:
        clusters: dict[str, tuple[Any, dict[str, Any]]] = {}
        for path, cluster in _items(self.graph, "clusters"):
            if isinstance(cluster.get("id"), str):
                clusters.setdefault(cluster["id"], (path, cluster))
        members: dict[Any, set[str]] = {cid: set() for cid in clusters}
        # Each cluster's listed concepts as a set, built once: a lookup per node, never a list scan
        # (a list scan made this rule quadratic in a cluster's size).
        listed: dict[str, frozenset[Any] | None] = {}
        for cid, (_, cluster) in clusters.items():
            concepts = cluster.get("concepts")
            listed[cid] = (
                frozenset(c for c in concepts if isinstance(c, str)) if isinstance(concepts, list) else None
            )
        for path, node in _items(self.graph, "nodes"):
            cluster_id, node_id = node.get("cluster"), node.get("id")
            if not isinstance(cluster_id, str) or not isinstance(node_id, str):
                continue
            if cluster_id not in clusters:
                self.out.error(_P(path, "cluster"), "reference", f"cluster {cluster_id!r} does not exist")
                continue
            members[cluster_id].add(node_id)
            concepts = listed[cluster_id]
            if concepts is not None and node_id not in concepts:
                self.out.error(
                    _P(path, "cluster"),
                    "cluster-membership",
                    f"node {node_id!r} is not listed in the concepts of cluster {cluster_id!r}",
                )
        for cid, (path, cluster) in clusters.items():
            concepts = cluster.get("concepts")
            if not isinstance(concepts, list):
                continue
            if not concepts:
                self.out.warning(_P(path, "concepts"), "empty-cluster", f"cluster {cid!r} has no concepts")
            for i, name in _strings(concepts):
                if name not in members.get(cid, set()):
                    self.out.error(
                        _P((path, "concepts"), i),
                        "cluster-membership",
                        f"{name!r} is not a node of cluster {cid!r}",
                    )

    # -- references ---------------------------------------------------------------------------

    def _resolve(self, path: Any, value: Any, collection: str, what: str) -> None:
        if isinstance(value, str) and value not in self.ids.get(collection, {}):
            self.out.error(_P(path), "reference", f"{what} {value!r} does not exist")

    def _resolve_all(self, path: Any, values: Any, collection: str, what: str) -> None:
        if not isinstance(values, list):
            return
        table = self.ids.get(collection, {})
        for i, value in enumerate(values):
            if isinstance(value, str) and value not in table:
                self.out.error(_P(path, i), "reference", f"{what} {value!r} does not exist")

    # -- per kind -------------------------------------------------------------------------------

    def unknown_keys(self, kind: str, path: Any, obj: dict[str, Any]) -> None:
        known = KNOWN.get(kind)
        if known is None:
            return
        for key in obj:
            if key in known or private_key(key):
                continue
            if key == LEGACY_KEY:
                self.out.warning(
                    _P(path, key),
                    "legacy-authoritative-source",
                    "authoritative_source is legacy: use a provenance-backed assessment",
                )
            else:
                self.out.warning(_P(path, key), "unknown-key", f"unknown field {key!r}")

    def check_source(self, path: Any, source: dict[str, Any]) -> None:
        self._url(path, source, "url", identifier=False)
        file = source.get("file")
        if isinstance(file, str) and (file.startswith("/") or re.match(r"^[A-Za-z]:[\\/]", file)):
            self.out.warning(
                _P(path, "file"),
                "absolute-file",
                "source.file is an absolute path: give a name that means something elsewhere",
            )

    def check_citation(self, path: Any, citation: dict[str, Any]) -> None:
        self._url(path, citation, "url", identifier=False)

    def _url(self, path: Any, obj: dict[str, Any], key: str, *, identifier: bool) -> None:
        value = obj.get(key)
        if not isinstance(value, str) or value == "":
            return
        reason = urls.problem(value, identifier=identifier)
        if reason:
            self.out.error(_P(path, key), "unsafe-url", f"unsafe {key}: {reason}")

    def check_node(self, path: Any, node: dict[str, Any]) -> None:
        self._url(path, node, "resource", identifier=True)
        self._resolve_all((path, "sources"), node.get("sources"), "sources", "source")
        self._resolve_all((path, "claim_ids"), node.get("claim_ids"), "claims", "claim")
        count = len(self.source_order)
        citations = node.get("citations")
        cited = False
        for i, citation in enumerate(citations if isinstance(citations, list) else []):
            if not isinstance(citation, dict):
                continue
            cited = True
            cpath = ((path, "citations"), i)
            n, source = citation.get("n"), citation.get("source")
            self._resolve((cpath, "source"), source, "sources", "source")
            if isinstance(n, int) and not isinstance(n, bool):
                if not 1 <= n <= count:
                    self.out.error(
                        _P(cpath, "n"),
                        "citation-number",
                        f"citation [{n}] is outside 1..{count} (the metadata's sources)",
                    )
                elif isinstance(source, str) and self.source_order[n - 1] != source:
                    self.out.error(
                        _P(cpath, "n"),
                        "citation-number",
                        f"citation [{n}] names source {source!r}, but source {n} is "
                        f"{self.source_order[n - 1]!r}",
                    )
        for i, statement in _strings(node.get("statements")):
            for match in _MARKER.finditer(statement):
                cited = True
                digits = match.group(1)
                spath = ((path, "statements"), i)
                if len(digits) > 9:
                    self.out.error(
                        _P(spath), "citation-marker", f"citation marker [{digits[:12]}…] is too long"
                    )
                elif not 1 <= int(digits) <= count:
                    self.out.error(
                        _P(spath), "citation-marker", f"citation marker [{digits}] is outside 1..{count}"
                    )
        if not cited:
            self.out.warning(
                _P(path), "uncited-node", f"node {node.get('id')!r} has no citations and no [n] markers"
            )

    def check_claim(self, path: Any, claim: dict[str, Any]) -> None:
        node_id = claim.get("node")
        if not isinstance(node_id, str):
            return
        nodes = self.nodes_by_id
        if node_id not in nodes:
            self.out.error(_P(path, "node"), "reference", f"node {node_id!r} does not exist")
            return
        statement = claim.get("statement")
        statements = self._statements(node_id)
        if isinstance(statement, str) and statements is not None and statement not in statements:
            self.out.error(
                _P(path, "statement"),
                "claim-projection",
                f"the claim's statement is not one of node {node_id!r}'s statements, verbatim",
            )

    def _statements(self, node_id: str) -> frozenset[str] | None:
        """A node's statements as a set, built on first use: many claims of one node cost one
        lookup each, not a scan of the node's statements."""
        if node_id not in self._statement_sets:
            statements = self.nodes_by_id[node_id].get("statements")
            self._statement_sets[node_id] = (
                frozenset(s for s in statements if isinstance(s, str))
                if isinstance(statements, list)
                else None
            )
        return self._statement_sets[node_id]

    def check_edge(self, path: Any, edge: dict[str, Any]) -> None:
        source, target, edge_type = edge.get("source"), edge.get("target"), edge.get("type")
        self._resolve((path, "source"), source, "nodes", "node")
        self._resolve((path, "target"), target, "nodes", "node")
        edge_id = edge.get("id")
        if (
            isinstance(edge_id, str)
            and isinstance(source, str)
            and isinstance(target, str)
            and edge_type in EDGE_TYPES
        ):
            expected = canonical_edge_id(source, edge_type, target)
            if edge_id != expected:
                self.out.error(
                    _P(path, "id"), "edge-id", f"edge id {edge_id!r} is not the canonical {expected!r}"
                )

    def check_fact(self, path: Any, fact: dict[str, Any]) -> None:
        self._resolve((path, "source"), fact.get("source"), "sources", "source")
        self._resolve((path, "concept"), fact.get("concept"), "nodes", "node")

    def check_chunk(self, path: Any, chunk: dict[str, Any]) -> None:
        for i, concept in _strings(chunk.get("concepts")):
            if concept not in self.ids.get("nodes", {}):
                self.out.warning(
                    _P((path, "concepts"), i), "chunk-concept", f"concept {concept!r} does not exist"
                )
        text = chunk.get("text")
        if isinstance(text, str):
            found = sorted({label for marker, label in _UNCLEAN if marker in text})
            if "\u2192" in text or "\u2194" in text:
                found = sorted({*found, "arrows"})
            if _HEADING.search(text):
                found.append("a Markdown heading line")
            if _EMOJI.search(text) and "arrows" not in found:
                found.append("emoji or pictographs")
            if found:
                self.out.error(
                    _P(path, "text"),
                    "chunk-clean-text",
                    f"chunk text must be clean; it holds {', '.join(found)}",
                )
        if chunk.get("kind") == "inference" and chunk.get("include_in_default_retrieval") is not False:
            self.out.error(
                _P(path, "include_in_default_retrieval"),
                "inference-retrieval",
                "an inference chunk must set include_in_default_retrieval to false",
            )

    def check_evidence(self, path: Any, evidence: dict[str, Any]) -> None:
        self._resolve((path, "source"), evidence.get("source"), "sources", "source")
        excerpt, digest = evidence.get("excerpt"), evidence.get("excerpt_sha256")
        if isinstance(excerpt, str) and isinstance(digest, str):
            actual = hashlib.sha256(excerpt.encode("utf-8", "surrogatepass")).hexdigest()
            if digest.lower().removeprefix("sha256:") != actual:
                self.out.error(
                    _P(path, "excerpt_sha256"),
                    "excerpt-hash",
                    "excerpt_sha256 is not the sha256 of the excerpt",
                )

    def check_selector(self, path: Any, selector: dict[str, Any]) -> None:
        start, end = selector.get("start"), selector.get("end")
        if (
            isinstance(start, int)
            and isinstance(end, int)
            and not isinstance(start, bool)
            and not isinstance(end, bool)
            and start > end
        ):
            self.out.error(_P(path, "end"), "selector-range", f"end {end} is before start {start}")

    def check_factConflict(self, path: Any, conflict: dict[str, Any]) -> None:  # noqa: N802
        facts = conflict.get("facts")
        self._resolve_all((path, "facts"), facts, "facts", "fact")

    def check_place(self, path: Any, place: dict[str, Any]) -> None:
        self._url(path, place, "id", identifier=True)
        sensitive, redacted = place.get("sensitive"), place.get("redacted")
        if sensitive is True and redacted is not True:
            self.out.error(_P(path, "redacted"), "place-privacy", "a sensitive place must be redacted")
        if redacted is True:
            if place.get("kind") not in REDACTED_KINDS and isinstance(place.get("kind"), str):
                self.out.error(
                    _P(path, "kind"),
                    "place-privacy",
                    f"a redacted place cannot be of kind {place.get('kind')!r}",
                )
            if place.get("precision") not in REDACTED_PRECISIONS:
                self.out.error(
                    _P(path, "precision"),
                    "place-privacy",
                    "a redacted place declares a coarse precision (city, region, country, coarse)",
                )
            for key in ("geometry", "identifiers"):
                if key in place:
                    self.out.error(_P(path, key), "place-privacy", f"a redacted place must omit {key}")
        elif place.get("kind") == "address":
            self.out.warning(_P(path, "kind"), "unredacted-address", "an address that is not redacted")

    def dates(self, kind: str, path: Any, obj: dict[str, Any]) -> None:
        ranges = {}
        for key in DATE_FIELDS[kind]:
            value = obj.get(key)
            if not isinstance(value, str):
                continue
            found = dates.date_range(value)
            if isinstance(found, str):
                self.out.error(_P(path, key), "date", f"{value!r}: {found}")
            elif found is not None:
                ranges[key] = found
        if "valid_from" in ranges and "valid_until" in ranges:
            if ranges["valid_until"][1] < ranges["valid_from"][0]:
                self.out.error(_P(path, "valid_until"), "date", "valid_until is before valid_from")


KNOWN = known_keys()


def check(graph: Any, out: Collector, keys: frozenset[str] | None = None) -> None:
    """Run every rule; a graph that is not an object has nothing to check (the schema says so).
    ``keys``: every object key of the document, when the reader gathered them already."""
    if isinstance(graph, dict):
        Checker(graph, out, keys).run()
