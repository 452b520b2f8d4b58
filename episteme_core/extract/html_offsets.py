"""Where HTML text came from: html5lib instrumented to record the source offset of each text run.

html5lib gives no positions. While it parses, the tokenizer here tags each plain text token (the
data state: no character reference, no NUL) with its offset in the decoded, newline-normalised
stream, and the tree builder records, for every ``text``/``tail`` slot it appends to, the pieces
it appended with that offset (or -1 when the text did not come straight from such a token:
character references, table text moved by foster parenting, ...). ``SourceMap.offset_of`` maps a
character of a slot back to the source only when the recorded pieces still spell the slot. The
html extractor keeps a block span only when the block's first and last characters are at those
offsets and the rest of its text lies between them in order (``html.HtmlWalker.span_of``).
"""

from __future__ import annotations

import re
from typing import Any

TEXT, TAIL = 0, 1


class SourceMap:
    """Text pieces per (element, slot) with their source offsets, filled while parsing."""

    def __init__(self) -> None:
        self.base = 0  # offset of the stream's current chunk
        self.encoding: str | None = None  # the encoding html5lib decoded with
        self.token: dict[str, Any] | None = None  # the text token html5lib is processing
        # per slot (``id(element) * 2 + slot``): its pieces, flat: offset, text, offset, text, ...
        # (ints and strings: nothing for the cycle collector to walk)
        self.slots: dict[int, list[Any]] = {}
        self.alive: list[Any] = []  # keeps recorded elements alive: their ids are never reused

    @staticmethod
    def piece_offset(token: dict[str, Any] | None, data: str) -> int:
        """Where ``data`` starts in the source: the token's offset when ``data`` is the token's
        text or what is left of it after html5lib dropped a leading newline; else -1."""
        if token is None:
            return -1
        start = token.get("offset")
        whole = token["data"]
        if start is None or not whole.endswith(data):
            return -1
        return int(start) + len(whole) - len(data)

    def offset_of(self, element: Any, slot: int, index: int) -> int | None:
        """The source offset of character ``index`` of ``element``'s text or tail, if known."""
        pieces = self.slots.get(id(element) * 2 + slot)
        if not pieces:
            return None
        value = element.text if slot == TEXT else element.tail
        if value is None or "".join(pieces[1::2]) != value:
            return None  # the tree builder moved text after recording it
        at = 0
        for i in range(0, len(pieces), 2):
            piece = pieces[i + 1]
            if index < at + len(piece):
                offset = pieces[i]
                return offset + index - at if offset >= 0 else None
            at += len(piece)
        return None


def instrumented_parser(tree: Any, source_map: SourceMap) -> Any:
    """An ``html5lib.HTMLParser`` class whose tokenizer and tree builder fill ``source_map``."""
    from html5lib import _tokenizer, html5parser
    from html5lib.constants import EOF, spaceCharacters, tokenTypes

    characters = tokenTypes["Characters"]
    space = tokenTypes["SpaceCharacters"]
    parse_error = tokenTypes["ParseError"]
    stops = ("&", "<", "\u0000")
    space_run = re.compile("[\t\n\x0c \r]+").match  # html5lib's spaceCharacters
    text_run = re.compile("[^&<\x00]+").match  # up to stops
    name_run = re.compile("[^\t\n\x0c \r>/\x00]+").match  # what tagNameState appends
    tag_name_state = _tokenizer.HTMLTokenizer.tagNameState

    class Tokenizer(_tokenizer.HTMLTokenizer):  # type: ignore[misc]
        def __init__(self, stream: Any, parser: Any = None, **kwargs: Any) -> None:
            super().__init__(stream, parser=parser, **kwargs)
            inner = self.stream
            read_chunk, unget, reset = inner.readChunk, inner.unget, inner.reset

            def read(chunk_size: Any = None) -> Any:
                source_map.base += inner.chunkSize
                return read_chunk(chunk_size)

            def unget_char(char: Any) -> None:
                if char is not EOF and inner.chunkOffset == 0:
                    source_map.base -= 1  # html5lib prepends it to the current chunk
                unget(char)

            def restart() -> None:  # a reparse in another encoding starts from 0 again
                source_map.base = 0
                reset()

            inner.readChunk, inner.unget, inner.reset = read, unget_char, restart
            if parser is not None and not parser.strict:
                # html5lib scans every chunk for noncharacters only to list parse errors, which
                # a parser that is not strict records and the extractor never reads
                inner.reportCharacterErrors = None

        def tagNameState(self) -> bool:  # noqa: N802 (html5lib's name)
            # html5lib appends a tag name one character per call; the run of name characters in
            # the current chunk is appended at once (the same name), the rest is html5lib's
            stream = self.stream
            offset = stream.chunkOffset
            if offset < stream.chunkSize:
                run = name_run(stream.chunk, offset)
                if run is not None:
                    stream.chunkOffset = end = run.end()
                    self.currentToken["name"] += stream.chunk[offset:end]
                    return True
            return bool(tag_name_state(self))

        def dataState(self) -> bool:  # noqa: N802 (html5lib's name); html5lib's, with offsets
            stream = self.stream
            offset = stream.chunkOffset
            if offset < stream.chunkSize:
                # the fast path: a text run that ends inside the current chunk is matched at once,
                # the same token html5lib's char() + charsUntil() would make
                chunk = stream.chunk
                first = chunk[offset]
                if first == "<":
                    stream.chunkOffset = offset + 1
                    source_map.token = None
                    self.state = self.tagOpenState
                    return True
                if first in spaceCharacters:
                    kind, run = space, space_run(chunk, offset)
                else:
                    kind, run = characters, text_run(chunk, offset)
                if run is not None and run.end() < stream.chunkSize:
                    end = run.end()
                    stream.chunkOffset = end
                    token = {"type": kind, "offset": source_map.base + offset, "data": chunk[offset:end]}
                    self.tokenQueue.append(token)
                    source_map.token = token  # processed before the tokenizer runs again
                    return True
            data = stream.char()
            if data == "&":
                source_map.token = None  # a character reference's token has no offset
                self.state = self.entityDataState
            elif data == "<":
                source_map.token = None  # nor has a tag, nor the text of rcdata/rawtext/script
                self.state = self.tagOpenState
            elif data == "\u0000":
                source_map.token = None
                self.tokenQueue.append({"type": parse_error, "data": "invalid-codepoint"})
                self.tokenQueue.append({"type": characters, "data": "\u0000"})
            elif data is EOF:
                source_map.token = None
                return False
            else:
                # char() advanced one character (after reading a new chunk, if it had to)
                at = source_map.base + stream.chunkOffset - 1
                if data in spaceCharacters:
                    token = {"type": space, "offset": at,
                             "data": data + stream.charsUntil(spaceCharacters, True)}
                else:
                    token = {"type": characters, "offset": at, "data": data + stream.charsUntil(stops)}
                self.tokenQueue.append(token)
                source_map.token = token  # processed before the tokenizer runs again
            return True

    base_element = tree.elementClass

    slots = source_map.slots
    alive = source_map.alive
    piece_offset = SourceMap.piece_offset

    class Element(base_element):  # type: ignore[misc, valid-type]
        def insertText(self, data: str, insertBefore: Any = None) -> None:  # noqa: N802, N803
            el = self._element
            if not len(el):  # html5lib's etree insertText, recording which slot grew
                el.text = (el.text or "") + data
                target, key = el, id(el) * 2 + TEXT
            elif insertBefore is None:
                target = el[-1]
                target.tail = (target.tail or "") + data
                key = id(target) * 2 + TAIL
            else:
                index = list(el).index(insertBefore._element)
                target = el[index - 1] if index > 0 else el
                key = id(target) * 2 + (TAIL if index > 0 else TEXT)
                super().insertText(data, insertBefore)
            offset = piece_offset(source_map.token, data)
            pieces = slots.get(key)
            if pieces is None:
                slots[key] = [offset, data]
                alive.append(target)
            else:
                pieces.append(offset)
                pieces.append(data)

    class Tree(tree):  # type: ignore[misc, valid-type]
        elementClass = Element  # noqa: N815 (html5lib's name)

    class Parser(html5parser.HTMLParser):  # type: ignore[misc]
        def _parse(self, stream: Any, innerHTML: bool = False, container: str = "div",  # noqa: N803
                   scripting: bool = False, **kwargs: Any) -> None:
            self.innerHTMLMode = innerHTML
            self.container = container
            self.scripting = scripting
            self.tokenizer = Tokenizer(stream, parser=self, **kwargs)
            self.reset()
            try:
                self.mainLoop()
            except html5parser._ReparseException:
                self.reset()
                self.mainLoop()

    return Parser, Tree
