"""Compile flattened source so that its code reports the original file's lines.

The engine moves statements (forward/backward bodies become ``*_fwd``/``*_bwd``)
and black formats the ones it changes, so rewritten line N is not original line N. The
engine's result says where each of its lines comes from (``FlattenResult.line_map``);
this module writes that into the AST before compiling, so tracebacks, ``co_lines``
and ``linecache`` agree with the file the user wrote.
"""

from __future__ import annotations

import ast
from types import CodeType
from typing import TYPE_CHECKING

if TYPE_CHECKING:
    from inliner.engine.line_origin import LineMap
    from inliner.engine.result import FlattenResult

__all__ = ["compile_mapped"]


def _relocate(node: ast.AST, lmap: LineMap) -> None:
    start, end = node.lineno, getattr(node, "end_lineno", None) or node.lineno  # type: ignore[attr-defined]
    new_start, new_end = lmap[start], lmap[end]
    col, end_col = node.col_offset, getattr(node, "end_col_offset", None)  # type: ignore[attr-defined]
    start_shift = lmap.shift[start - 1] if 0 < start <= len(lmap.shift) else None
    end_shift = lmap.shift[end - 1] if 0 < end <= len(lmap.shift) else None
    if start_shift is None or end_shift is None or end_col is None or new_end < new_start:
        col = end_col = -1  # unknown columns: tracebacks show the line without carets
    else:
        col, end_col = max(col + start_shift, 0), max(end_col + end_shift, 0)
        if new_start == new_end and end_col < col:
            col = end_col = -1
    node.lineno, node.end_lineno = new_start, max(new_end, new_start)  # type: ignore[attr-defined]
    node.col_offset, node.end_col_offset = col, end_col  # type: ignore[attr-defined]


def compile_mapped(result: FlattenResult, filename: str, *, optimize: int = -1) -> CodeType:
    """Compile ``result.source`` with every position moved onto the input's lines."""
    tree = ast.parse(result.source, filename=filename)
    lmap = result.line_map
    for node in ast.walk(tree):
        if "lineno" in node._attributes and hasattr(node, "lineno"):
            _relocate(node, lmap)
    return compile(tree, filename, "exec", dont_inherit=True, optimize=optimize)
