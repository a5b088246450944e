"""Positions in the original text: ast's (line, UTF-8 byte column) to string offsets, and splicing.

Rewrites are applied as text replacements of exact spans, so every byte outside
them (comments, spacing, quotes, line endings) stays as the user wrote it.
"""

from __future__ import annotations

import ast
import re
from collections.abc import Sequence
from dataclasses import dataclass
from typing import Protocol

import libcst as cst
from libcst.metadata import MetadataWrapper, PositionProvider

from inliner.engine.result import TextEdit
from inliner.engine.user_text import Written, WrittenLines

_NEWLINE = re.compile(r"\r\n|\r|\n")


class Located(Protocol):
    """An ast node with a span (statement, expression, alias, argument, ...)."""

    lineno: int
    col_offset: int
    end_lineno: int | None
    end_col_offset: int | None


def start_line(node: ast.stmt) -> int:
    """The statement's first line, its decorators included (a class's or function's text starts there)."""
    decorators = getattr(node, "decorator_list", ())
    return min([node.lineno, *(d.lineno for d in decorators)])


def end_line(node: Located) -> int:
    """The node's last line. ``ast.parse`` always sets it; typeshed allows None only
    for nodes built by hand, which the engine never positions."""
    if node.end_lineno is None:
        raise ValueError(f"inliner internal error: {type(node).__name__} at line {node.lineno} has no end position")
    return node.end_lineno


def end_column(node: Located) -> int:
    """The node's UTF-8 byte column just past its end (set by ``ast.parse``, as ``end_line``)."""
    if node.end_col_offset is None:
        raise ValueError(f"inliner internal error: {type(node).__name__} at line {node.lineno} has no end position")
    return node.end_col_offset


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

    def start_offset(self, node: Located) -> int:
        return self.offset(node.lineno, node.col_offset)

    def end_offset(self, node: Located) -> int:
        """Offset just past ``node``."""
        return self.offset(end_line(node), end_column(node))

    def line_end(self, lineno: int) -> int:
        """Offset just past the newline that ends ``lineno``."""
        return self.starts[lineno] if lineno < len(self.starts) else len(self.source)

    def lines_between(self, first: int, last: int) -> str:
        return self.source[self.starts[first - 1] : self.line_end(last)]

    def statement_text(self, statement: ast.stmt) -> str:
        """The lines of a statement, its decorators included."""
        return self.lines_between(start_line(statement), end_line(statement))

    def indentation(self, lineno: int) -> str:
        line = self.line(lineno)
        return line[: len(line) - len(line.lstrip(" \t\f"))]

    def class_name_position(self, node: ast.ClassDef) -> tuple[int, int]:
        """(line, 0-based character column) of the class's name."""
        match = re.search(rf"\bclass\s+({re.escape(node.name)})\b", self.line(node.lineno))
        return node.lineno, match.start(1) if match else self.char_column(node.lineno, node.col_offset)

    def final_edits(self, edits: list[tuple[int, int, str]]) -> tuple[TextEdit, ...]:
        """The edits in file order, exactly as ``apply`` makes them.

        Insertions at one offset keep their order; overlapping edits are an engine error
        (never write a mangled file). An edit reaching the end of a file without a final
        newline does not add one.
        """
        ordered = sorted(reversed(edits), key=lambda e: (e[0], e[1]), reverse=True)
        for (start, _, _), (_, end, _) in zip(ordered, ordered[1:]):
            if end > start:
                raise ValueError("inliner internal error: overlapping edits")
        length, last = len(self.source), self.source[-1:]  # of the text as edited so far
        final = []
        for start, end, replacement in ordered:  # from the end, as they would be applied one by one
            origin = getattr(replacement, "origin", None)
            if end == length:
                if not _NEWLINE.search(last or "x") and replacement.endswith(self.newline):
                    replacement = replacement[: -len(self.newline)]  # keep a missing final newline missing
                last = replacement[-1:] or self.source[start - 1 : start]
            final.append(TextEdit(start, end, str(replacement), origin))
            length += len(replacement) - (end - start)
        return tuple(reversed(final))

    def splice(self, edits: list[tuple[int, int, str]]) -> str:
        """The text with ``edits`` made (see ``final_edits``)."""
        return self.apply(self.final_edits(edits))

    def apply(self, edits: tuple[TextEdit, ...]) -> str:
        """The text with ``final_edits`` made."""
        out = []
        cursor = 0
        for edit in edits:
            out.append(self.source[cursor : edit.start])
            out.append(edit.text)
            cursor = edit.end
        out.append(self.source[cursor:])
        return "".join(out)


@dataclass
class Block:
    """One statement's own text, parsed with libcst (wrapped in ``if True:`` when indented)."""

    module: cst.Module
    node: cst.BaseStatement
    first_line: int
    indent: str

    @property
    def wrapped(self) -> bool:
        return bool(self.indent)

    def position(self, node: cst.CSTNode) -> tuple[int, int, int, int]:
        """(line, char column, end line, end char column) of ``node`` in the whole file; columns 0-based."""
        span = MetadataWrapper(self.module, unsafe_skip_copy=True).resolve(PositionProvider)[node]
        shift = self.first_line - 1 - (1 if self.wrapped else 0)
        return span.start.line + shift, span.start.column, span.end.line + shift, span.end.column

    def render(self, statements: Sequence[cst.BaseStatement]) -> str:
        """Text of ``statements`` at this block's indentation, with the file's newline."""
        return self._text(self._holder(statements))

    def render_written(self, statements: Sequence[cst.BaseStatement], written: Written) -> tuple[str, WrittenLines]:
        """``render``, and the 0-based lines of that text that the engine wrote."""
        holder = self._holder(statements)
        return self._text(holder), WrittenLines(holder, written, skip=1 if self.wrapped else 0)

    def _text(self, holder: cst.Module) -> str:
        return holder.code.split(self.module.default_newline, 1)[1] if self.wrapped else holder.code

    def _holder(self, statements: Sequence[cst.BaseStatement]) -> cst.Module:
        """A module printing ``statements`` at this block's indentation (after an ``if True:`` line when wrapped)."""
        if not self.wrapped:
            return self.module.with_changes(body=statements, header=(), footer=())
        block = cst.IndentedBlock(body=statements, indent=self.indent)
        return self.module.with_changes(body=[cst.If(test=cst.Name("True"), body=block)], header=(), footer=())


def parse_block(text: SourceText, first_line: int, last_line: int, indent_line: int) -> Block:
    indent = text.indentation(indent_line)
    snippet = text.lines_between(first_line, last_line)
    module = cst.parse_module(("if True:" + text.newline + snippet) if indent else snippet)
    node: cst.BaseStatement = module.body[0]
    if indent:  # the statement inside the `if True:` wrapper
        node = cst.ensure_type(cst.ensure_type(node, cst.If).body, cst.IndentedBlock).body[0]
    return Block(module, node, first_line, indent)
