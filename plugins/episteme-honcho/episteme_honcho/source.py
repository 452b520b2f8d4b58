"""The ``honcho`` source: every session of the chosen workspaces as a chat record."""

from __future__ import annotations

import argparse
import os
from collections.abc import Iterator
from typing import TYPE_CHECKING, Any

from episteme_core.api import EpistemeError

if TYPE_CHECKING:
    from episteme_core.api import Context, Outcome, Record, RunContext
    from episteme_honcho.client import HonchoClient

SOURCE = "honcho"
BASE_VAR = "HONCHO_BASE_URL"
KEY_VAR = "HONCHO_API_KEY"
WORKSPACE_VAR = "HONCHO_WORKSPACE_ID"
# A run fetches every session before it stores any (a failure stores nothing), so what it holds is
# bounded: each message counts its content's UTF-8 bytes plus MESSAGE_OVERHEAD for its paragraph.
MAX_BYTES = 256 * 1024 * 1024
MESSAGE_OVERHEAD = 512


def settings_from_env() -> tuple[str, str]:
    """``(base URL, API key)``; a missing variable is ``INVALID_USAGE`` naming it (never its value)."""
    missing = [name for name in (BASE_VAR, KEY_VAR) if not os.environ.get(name)]
    if missing:
        raise EpistemeError(
            "INVALID_USAGE",
            f"{' and '.join(missing)} {'is' if len(missing) == 1 else 'are'} not set",
            details={"missing": missing},
            hint=f"export {BASE_VAR}=http://localhost:8000 and {KEY_VAR}=<your key>",
        )
    return os.environ[BASE_VAR], os.environ[KEY_VAR]


def session_record(workspace: str, session: dict[str, Any], messages: list[dict[str, Any]],
                   skipped: dict[str, int]) -> Record | None:
    """The record of one session; messages without id, content, peer or time are counted, not kept."""
    from episteme_core.api import Paragraph, build_record, parse_time

    paragraphs = []
    for message in messages:
        content, peer, key = message.get("content"), message.get("peer_id"), message.get("id")
        created = parse_time(message["created_at"]) if isinstance(message.get("created_at"), str) else None
        if not (isinstance(content, str) and isinstance(peer, str) and isinstance(key, str) and created):
            skipped["malformedMessage"] = skipped.get("malformedMessage", 0) + 1
            continue
        if not _storable(content, peer, key):  # a lone surrogate (a cut emoji): no text can hold it
            skipped["invalidText"] = skipped.get("invalidText", 0) + 1
            continue
        if not content.strip():
            skipped["emptyMessage"] = skipped.get("emptyMessage", 0) + 1
            continue
        paragraphs.append(Paragraph(
            n=0, text=content, time=created, kind="text",
            attributes={"peer": peer, "role": peer, "key": key},
        ))
    if not paragraphs:
        return None
    session_id = str(session["id"])
    raw_meta = session.get("metadata")
    meta: dict[str, Any] = raw_meta if isinstance(raw_meta, dict) else {}
    if not _storable(meta, session.get("created_at"), session.get("is_active")):
        skipped["invalidSessionMetadata"] = skipped.get("invalidSessionMetadata", 0) + 1
        meta = {}
    title = next((str(meta[k]) for k in ("title", "name") if isinstance(meta.get(k), str)), session_id)
    metadata = {
        "workspace": workspace,
        "session": session_id,
        "isActive": session.get("is_active") if _storable(session.get("is_active")) else None,
        "createdAt": session.get("created_at") if _storable(session.get("created_at")) else None,
        "sessionMetadata": meta,
        "peers": sorted({str(p.attributes["peer"]) for p in paragraphs}),
    }
    return build_record(
        id=f"chat:honcho/{workspace}/{session_id}", source=SOURCE, time=paragraphs[0].time or "",
        paragraphs=paragraphs, title=title, metadata=metadata,
    )


def _storable(*values: Any) -> bool:
    """True when ``values`` can be written as canonical JSON (no lone surrogate, no NaN, no huge int)."""
    from episteme_core.api import canonical_bytes

    try:
        canonical_bytes(list(values))
    except EpistemeError:
        return False
    return True


def fetch_records(
    client: HonchoClient, workspaces: list[str], warn: Any, max_bytes: int = MAX_BYTES
) -> tuple[list[Record], dict[str, Any]]:
    """Everything first (so a failure stores nothing), then the records; past ``max_bytes`` held
    (``MESSAGE_OVERHEAD`` counted per message) the run is ``LIMIT_EXCEEDED`` and nothing is stored."""
    from episteme_core.api import safe_name

    held = 0

    def counted(messages: Iterator[dict[str, Any]]) -> Iterator[dict[str, Any]]:
        nonlocal held
        for message in messages:
            content = message.get("content")
            text = content.encode("utf-8", "surrogatepass") if isinstance(content, str) else b""
            held += len(text) + MESSAGE_OVERHEAD
            if held > max_bytes:
                raise EpistemeError(
                    "LIMIT_EXCEEDED",
                    f"the sessions fetched pass --max-bytes ({max_bytes} bytes, each message counting its "
                    f"text and {MESSAGE_OVERHEAD}): nothing stored",
                    hint="ingest fewer workspaces at a time (--workspace ID), or raise --max-bytes",
                    details={"maxBytes": max_bytes},
                )
            yield message

    records: list[Record] = []
    skipped: dict[str, int] = {}
    chosen = workspaces or client.workspaces()
    sessions_seen = 0
    for workspace in chosen:
        if not safe_name(workspace):
            skipped["badWorkspaceId"] = skipped.get("badWorkspaceId", 0) + 1
            warn("HONCHO_SKIPPED", f"workspace id {workspace[:80]!r} cannot be part of a record id, skipped")
            continue
        for session in client.sessions(workspace):
            session_id = session.get("id")
            if not isinstance(session_id, str) or not safe_name(session_id):
                skipped["badSessionId"] = skipped.get("badSessionId", 0) + 1
                warn("HONCHO_SKIPPED", f"a session of {workspace} has an id that cannot be part of a "
                     "record id, skipped")
                continue
            sessions_seen += 1
            messages = list(counted(client.iter_messages(workspace, session_id)))
            record = session_record(workspace, session, messages, skipped)
            if record is None:
                skipped["emptySession"] = skipped.get("emptySession", 0) + 1
                continue
            records.append(record)
    return records, {"skipped": skipped, "workspaces": len(chosen), "sessions": sessions_seen,
                     "heldBytes": held}


def ingest_honcho(
    ctx: RunContext, *, workspaces: list[str], page_size: int = 100, timeout_s: float = 30.0,
    retries: int = 2, max_pages: int = 10_000, max_bytes: int = MAX_BYTES, pack: bool = True,
) -> dict[str, Any]:
    """``episteme ingest honcho``: grown sessions append only their new messages."""
    from episteme_core.api import Collected, merge_grown, run_ingest
    from episteme_honcho.client import HonchoClient

    base, key = settings_from_env()
    client = HonchoClient(base, key, timeout_s=timeout_s, retries=retries, page_size=page_size,
                          max_pages=max_pages)
    redact = client.redact

    def warn(code: str, message: str) -> None:
        ctx.warn(code, redact(message))

    def collect() -> Collected:
        with client:
            records, info = fetch_records(client, workspaces, warn, max_bytes)
        return Collected(records, info.pop("skipped"), info)

    try:
        return run_ingest(ctx, SOURCE, collect, merge=merge_grown, pack=pack)
    except EpistemeError as exc:
        # belt and braces: nothing the run raises may carry the key
        exc.message = redact(exc.message)
        exc.args = (exc.message,)
        if exc.hint:
            exc.hint = redact(exc.hint)
        raise


class HonchoSource:
    name = SOURCE
    block_kind = "message"  # what the record extractor calls each paragraph of a session
    help = "Honcho v3 sessions ($HONCHO_BASE_URL, $HONCHO_API_KEY): one record per session"
    description = (
        "Ingest every session of the Honcho workspaces (all, --workspace, or $HONCHO_WORKSPACE_ID)\n"
        "over the v3 API with $HONCHO_BASE_URL and the Bearer key $HONCHO_API_KEY: one record\n"
        "chat:honcho/<workspace>/<session>, a paragraph per message with its time and peer.\n"
        "The key is never printed, logged or stored."
    )

    def configure(self, parser: argparse.ArgumentParser) -> None:
        from episteme_core.api import add_int_option, add_pack_option

        parser.add_argument("--workspace", action="append", default=None, metavar="ID",
                            help=f"a workspace id (repeatable; default ${WORKSPACE_VAR}, else all)")
        add_int_option(parser, "--page-size", default=100, low=1, high=100, help="items per page")
        add_int_option(parser, "--timeout", default=30, low=1, high=600,
                       help="seconds to wait for each answer")
        add_int_option(parser, "--retries", default=2, low=0, high=10,
                       help="retries after a 5xx, 408, 429 or transport error")
        add_int_option(parser, "--max-pages", default=10_000, low=1, high=1_000_000,
                       help="refuse a listing longer than this many pages")
        add_int_option(parser, "--max-bytes", default=MAX_BYTES, low=1, high=16 * 1024**3,
                       help=f"most bytes a run fetches before it stores (each message: its text and "
                            f"{MESSAGE_OVERHEAD}); past it nothing is stored")
        add_pack_option(parser)

    def ingest(self, args: argparse.Namespace, ctx: Context) -> Outcome:
        from episteme_core.api import ingest_outcome

        workspaces = args.workspace or ([os.environ[WORKSPACE_VAR]] if os.environ.get(WORKSPACE_VAR) else [])
        return ingest_outcome(ingest_honcho(
            ctx, workspaces=workspaces, page_size=args.page_size, timeout_s=args.timeout,
            retries=args.retries, max_pages=args.max_pages, max_bytes=args.max_bytes, pack=args.pack,
        ))

    def ingest_all(self, ctx: Context) -> Outcome | None:
        from episteme_core.api import ingest_outcome

        if not os.environ.get(BASE_VAR):
            return None
        workspaces = [os.environ[WORKSPACE_VAR]] if os.environ.get(WORKSPACE_VAR) else []
        return ingest_outcome(ingest_honcho(ctx, workspaces=workspaces, pack=False))
