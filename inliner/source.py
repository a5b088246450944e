"""Positions in the original text: ast's (line, UTF-8 byte column) to string offsets, and splicing.

Rewrites are applied as text replacements of exact spans, so every byte outside
them (comments, spacing, quotes, line endings) stays as the user wrote it.
"""

from __future__ import annotations

import ast
import re

_NEWLINE = re.compile(r"\r\n|\r|\n")


class SourceText:
    def __init__(self, source: str) -> None:
        self.source = source
        self.starts = [0]
        for match in _NEWLINE.finditer(source):
            self.starts.append(match.end())
        first = _NEWLINE.search(source)
        self.newline = first.group() if first else "\n"

    def line(self, lineno: int) -> str:
        start = self.starts[lineno - 1]
        end = self.starts[lineno] if lineno < len(self.starts) else len(self.source)
        return self.source[start:end]

    def char_column(self, lineno: int, byte_col: int) -> int:
        line = self.line(lineno)
        if line.isascii():
            return byte_col
        return len(line.encode("utf-8")[:byte_col].decode("utf-8", errors="ignore"))

    def offset(self, lineno: int, byte_col: int) -> int:
        return self.starts[lineno - 1] + self.char_column(lineno, byte_col)

    def line_end(self, lineno: int) -> int:
        """Offset just past the newline that ends ``lineno``."""
        return self.starts[lineno] if lineno < len(self.starts) else len(self.source)

    def lines_between(self, first: int, last: int) -> str:
        return self.source[self.starts[first - 1] : self.line_end(last)]

    def indentation(self, lineno: int) -> str:
        line = self.line(lineno)
        return line[: len(line) - len(line.lstrip(" \t\f"))]

    def class_name_position(self, node: ast.ClassDef) -> tuple[int, int]:
        """(line, 0-based character column) of the class's name."""
        match = re.search(rf"\bclass\s+({re.escape(node.name)})\b", self.line(node.lineno))
        return node.lineno, match.start(1) if match else self.char_column(node.lineno, node.col_offset)

    def splice(self, edits: list[tuple[int, int, str]]) -> str:
        """Apply non-overlapping (start, end, replacement) edits."""
        out = self.source
        for start, end, replacement in sorted(edits, key=lambda e: (e[0], e[1]), reverse=True):
            if end == len(out) and not _NEWLINE.search(out[-1:] or "x") and replacement.endswith(self.newline):
                replacement = replacement[: -len(self.newline)]  # keep a missing final newline missing
            out = out[:start] + replacement + out[end:]
        return out
