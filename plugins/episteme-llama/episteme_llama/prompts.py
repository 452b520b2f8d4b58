"""The words the llama reader sends, in the model's own chat template.

``generate`` sends episteme's reader prompt (the same messages the http reader sends). ``fuse`` asks
one yes/no question per candidate, from ``relevance_prompt.txt``: the question comes first and the
paragraph last, so every candidate of a read shares the same prompt prefix and its KV cache.

The chat template is the one the GGUF file carries (``tokenizer.chat_template``), rendered with
jinja2 as llama-cpp-python does, except that a template's clock (``strftime_now``) is pinned to a
fixed date so the prompt, and so the reply, never depend on the day. A file without a template is
spoken to in ChatML.
"""

from __future__ import annotations

from functools import cache
from importlib import resources
from typing import Any

CHATML = (
    "{% for message in messages %}{{'<|im_start|>' + message['role'] + '\\n' + message['content'] + "
    "'<|im_end|>' + '\\n'}}{% endfor %}{% if add_generation_prompt %}{{ '<|im_start|>assistant\\n' }}"
    "{% endif %}"
)
PINNED_DATE = (2024, 1, 1)
_MARK = "\u0000episteme-paragraph\u0000"


@cache
def relevance_parts() -> tuple[str, str]:
    """The system message and user template of the relevance question (``relevance_prompt.txt``)."""
    from episteme_core.api import parse_prompt

    text = resources.files("episteme_llama").joinpath("relevance_prompt.txt").read_text("utf-8")
    return parse_prompt(text, source="episteme_llama/relevance_prompt.txt")


class ChatTemplate:
    """Renders chat messages into the prompt text the model was trained on."""

    def __init__(self, template: str | None, *, bos_token: str, eos_token: str) -> None:
        from datetime import datetime

        from llama_cpp.llama_chat_format import Jinja2ChatFormatter

        class Pinned(Jinja2ChatFormatter):  # type: ignore[misc]  # Any where llama_cpp is not installed
            @staticmethod
            def strftime_now(f: str) -> str:
                return datetime(*PINNED_DATE).strftime(f)

        self.source = template or CHATML
        self._formatter = Pinned(template=self.source, eos_token=eos_token, bos_token=bos_token,
                                 add_generation_prompt=True)

    def render(self, messages: list[dict[str, str]]) -> str:
        """The prompt for ``messages``, ending where the assistant's reply begins."""
        return str(self._formatter(messages=messages).prompt)  # type: ignore[arg-type]

    def relevance_split(self, question: str) -> tuple[str, str]:
        """The relevance prompt for ``question`` cut where the paragraph goes: (before, after)."""
        system, template = relevance_parts()
        user = template.replace("{question}", question, 1).replace("{paragraph}", _MARK, 1)
        text = self.render([{"role": "system", "content": system}, {"role": "user", "content": user}])
        before, marker, after = text.partition(_MARK)
        if not marker:
            raise ValueError("the chat template dropped the paragraph")
        return before, after


def messages_with(request: Any, texts: list[str]) -> list[dict[str, str]]:
    """episteme's reader messages for ``request`` with each candidate's text replaced by ``texts``."""
    import attrs

    from episteme_core.api import reader_messages

    candidates = tuple(attrs.evolve(c, text=t) for c, t in zip(request.candidates, texts, strict=True))
    return reader_messages(attrs.evolve(request, candidates=candidates))
