"""The reader protocol's words and shapes: the prompt (from ``prompt.txt``), the structured-output
schema, and the parser that finds ``{"ids": [...]}`` in a model's reply.

Shared by the builtin http reader and plugin readers (a llama reader renders the same messages).
"""

from __future__ import annotations

import json
import re
from functools import cache
from importlib import resources
from typing import Any

from episteme_core.records.reading import ReadRequest

MAX_SCAN_CHARS = 1 << 20  # a reply's text is scanned for a JSON object only this far
_IDS_OBJECT = re.compile(r'\{\s*"ids"\s*:')


def parse_prompt(text: str, *, source: str = "prompt") -> tuple[str, str]:
    """A prompt file's system message and user template: the text under ``[system]`` and under
    ``[user]``, lines starting with ``#`` left out (comments). A file without both sections is
    ``INVALID_INPUT`` naming ``source``."""
    sections: dict[str, list[str]] = {}
    current: list[str] | None = None
    for line in text.splitlines():
        if line.startswith("#"):
            continue
        if line.strip() in ("[system]", "[user]"):
            current = sections.setdefault(line.strip()[1:-1], [])
            continue
        if current is not None:
            current.append(line)
    missing = [name for name in ("system", "user") if name not in sections]
    if missing:
        from episteme_core.errors import EpistemeError

        raise EpistemeError("INVALID_INPUT", f"{source}: no [{'] or ['.join(missing)}] section",
                            details={"source": source, "missing": missing})
    return "\n".join(sections["system"]).strip(), "\n".join(sections["user"]).strip()


@cache
def prompt_parts() -> tuple[str, str]:
    """The system message and the user template, read once from ``prompt.txt``."""
    text = resources.files("episteme_core.ask").joinpath("prompt.txt").read_text("utf-8")
    return parse_prompt(text, source="episteme_core/ask/prompt.txt")


def render_paragraphs(request: ReadRequest) -> str:
    return "\n\n".join(f"{c.label}: {c.text}" for c in request.candidates)


def messages(request: ReadRequest) -> list[dict[str, str]]:
    """The OpenAI-style chat messages for one read."""
    system, template = prompt_parts()
    user = template.replace("{question}", request.question, 1)
    user = user.replace("{paragraphs}", render_paragraphs(request), 1)
    return [{"role": "system", "content": system}, {"role": "user", "content": user}]


def ids_schema(labels: tuple[str, ...]) -> dict[str, Any]:
    """JSON Schema of a reply naming only ``labels``, each at most once."""
    return {
        "type": "object",
        "properties": {
            "ids": {
                "type": "array",
                "items": {"type": "string", "enum": list(labels)},
                "uniqueItems": True,
                "maxItems": len(labels),
            }
        },
        "required": ["ids"],
        "additionalProperties": False,
    }


def response_format(labels: tuple[str, ...]) -> dict[str, Any]:
    """OpenAI ``response_format`` asking for structured output (llama-server and vLLM honour it)."""
    return {
        "type": "json_schema",
        "json_schema": {"name": "episteme_ids", "strict": True, "schema": ids_schema(labels)},
    }


def extract_ids(content: str) -> list[Any] | None:
    """The ``ids`` list of the first JSON object holding one in ``content`` (whole or inside plain
    text, e.g. in a code fence), or None when there is none."""
    text = content.strip()
    try:
        value = json.loads(text)
    except ValueError:
        value = None
    if isinstance(value, dict) and isinstance(value.get("ids"), list):
        return list(value["ids"])
    decoder = json.JSONDecoder()
    for match in _IDS_OBJECT.finditer(text, 0, MAX_SCAN_CHARS):
        try:
            value, _ = decoder.raw_decode(text, match.start())
        except ValueError:
            continue
        if isinstance(value, dict) and isinstance(value.get("ids"), list):
            return list(value["ids"])
    return None
