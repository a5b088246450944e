"""Text geometry for the language server: LSP lines, positions and edits.

Pure functions on ``str`` with plain tuples for positions, so they can be tested
without a client. A position is ``(line, character)``, both 0-based, ``character``
counted in the code units of the negotiated position encoding (``"utf-16"`` unless
the client asked for another).

LSP splits lines only at ``\\n``, ``\\r\\n`` and ``\\r`` -- unlike ``str.splitlines``,
which also splits at form feeds and other separators that Python source may hold.
"""

from __future__ import annotations

import bisect
import re
from dataclasses import dataclass

Position = tuple[int, int]

_NEWLINE = re.compile(r"\r\n|\r|\n")
_IDENTIFIER = re.compile(r"\w+")


def split_lines(text: str) -> list[str]:
    """The document's lines, each with its terminator (the last one may have none)."""
    lines = []
    start = 0
    for match in _NEWLINE.finditer(text):
        lines.append(text[start : match.end()])
        start = match.end()
    if start < len(text):
        lines.append(text[start:])
    return lines


def _content(line: str) -> str:
    return line.rstrip("\r\n")


def units(text: str, encoding: str = "utf-16") -> int:
    """How many code units ``text`` takes in ``encoding`` (utf-8, utf-16 or utf-32)."""
    if encoding == "utf-32":
        return len(text)
    if encoding == "utf-8":
        return len(text.encode("utf-8", "surrogatepass"))
    return len(text.encode("utf-16-le", "surrogatepass")) // 2


def code_points(line: str, character: int, encoding: str = "utf-16") -> int:
    """The index into ``line`` of a column given in code units (clamped to the line)."""
    if encoding == "utf-32":
        return min(character, len(line))
    seen = 0
    for index, char in enumerate(line):
        if seen >= character:
            return index
        seen += units(char, encoding)
    return len(line)


def end_of(lines: list[str], encoding: str = "utf-16") -> Position:
    """The position just past the last character."""
    if not lines:
        return (0, 0)
    last = lines[-1]
    if _content(last) != last:  # ends with a newline: the (empty) next line
        return (len(lines), 0)
    return (len(lines) - 1, units(last, encoding))


def position(lines: list[str], line: int, column: int, encoding: str = "utf-16") -> Position:
    """The LSP position of a 1-based ``line`` and 1-based code-point ``column`` (clamped)."""
    index = line - 1
    if index < 0:
        return (0, 0)
    if index >= len(lines):
        return end_of(lines, encoding)
    content = _content(lines[index])
    return (index, units(content[: max(column - 1, 0)], encoding))


def word_end(lines: list[str], line: int, column: int) -> tuple[int, int]:
    """The 1-based (line, column) just past the identifier starting at ``line``:``column``."""
    index = line - 1
    if not 0 <= index < len(lines):
        return (line, column)
    match = _IDENTIFIER.match(_content(lines[index]), max(column - 1, 0))
    return (line, column + (len(match.group()) if match else 0))


def offset(lines: list[str], pos: Position, encoding: str = "utf-16") -> int:
    """The index into the text of an LSP position (clamped to the text)."""
    line, character = pos
    if line >= len(lines):
        return sum(len(text) for text in lines)
    before = sum(len(text) for text in lines[:line])
    return before + code_points(_content(lines[line]), character, encoding)


def at_offset(lines: list[str], starts: list[int], index: int, encoding: str = "utf-16") -> Position:
    """The LSP position of an index into the text (``starts``: where each of ``lines`` begins)."""
    line = bisect.bisect_right(starts, index) - 1
    if line >= len(lines):
        return end_of(lines, encoding)
    return (line, units(lines[line][: index - starts[line]], encoding))


@dataclass(frozen=True)
class Edit:
    """Replace the text from ``start`` to ``end`` with ``text``."""

    start: Position
    end: Position
    text: str


def apply_edits(text: str, edits: list[Edit], encoding: str = "utf-16") -> str:
    """Apply non-overlapping edits, as a client would."""
    lines = split_lines(text)
    spans = sorted(
        ((offset(lines, e.start, encoding), offset(lines, e.end, encoding), e.text) for e in edits),
        key=lambda span: (span[0], span[1]),
    )
    out = []
    cursor = 0
    for start, end, new in spans:
        if start < cursor:
            raise ValueError("overlapping edits")
        out.append(text[cursor:start])
        out.append(new)
        cursor = end
    out.append(text[cursor:])
    return "".join(out)
