"""Read one module: the cheap textual test that most files stop at, then one parse by
CPython's ``ast``, what only the compiler finds, and the scope index; or the whole
answer, when the text holds nothing to do or cannot be read."""

from __future__ import annotations

import ast
import re
from collections import deque
from dataclasses import dataclass

from inliner.engine.analysis.scopes import ScopeIndex
from inliner.engine.codes import Code
from inliner.engine.compile_check import check_compiles
from inliner.engine.diagnostics import Diagnostic, Severity
from inliner.engine.incremental import Remember
from inliner.engine.op_call.splice import HOP_LEAF
from inliner.engine.result import FlattenResult
from inliner.engine.source import SourceText

_CLASS_WITH_FUNCTION_BASE = re.compile(r"\bclass\s+\w+\s*\([^)]*Function\b|\bFunction\s+as\b|=\s*[\w.]*Function\b")
_HOP_ALIASES = re.compile(
    r"(\w+)\s*=\s*[\w.]*\bautograd_function_apply\b\s*$|\bautograd_function_apply\s+as\s+(\w+)", re.M
)


def may_contain_candidates(source: str) -> bool:
    """A cheap textual pre-filter: no match means nothing to flatten, so skip the parse."""
    if HOP_LEAF in source:
        return True
    if "Function" not in source:
        return False
    return _CLASS_WITH_FUNCTION_BASE.search(source) is not None


@dataclass
class ParsedModule:
    """One text parsed and indexed: what every run on that text reads (and never changes)."""

    tree: ast.Module
    classes: list[ast.ClassDef]
    hop_names: frozenset[str]
    index: ScopeIndex
    text: SourceText


def read_module(source: str, path: str, remember: Remember) -> ParsedModule | FlattenResult:
    """Parse and index ``source``; or the whole answer, when it holds nothing to do or cannot be read."""
    if not may_contain_candidates(source):
        return FlattenResult(source)
    try:
        tree = ast.parse(source)
    except (SyntaxError, ValueError) as exc:
        line = getattr(exc, "lineno", None) or 1
        column = getattr(exc, "offset", None) or 1
        message = getattr(exc, "msg", None) or str(exc)
        diagnostic = Diagnostic(
            path,
            line,
            column,
            Code.PARSE_ERROR,
            f"cannot parse: {message}",
            Severity.ERROR,
            **Diagnostic.syntax_error_end(exc, line, column),
        )
        return FlattenResult(source, (diagnostic,), error=f"cannot parse: {message} ({line}:{column})")

    classes = [n for n in _statements(tree) if isinstance(n, ast.ClassDef) and n.bases]
    if not classes and HOP_LEAF not in source:
        return FlattenResult(source)
    text = SourceText(source)
    try:
        check_compiles(tree, text, path, remember)
    except (SyntaxError, ValueError) as exc:
        line = getattr(exc, "lineno", None) or 1
        message = getattr(exc, "msg", None) or str(exc)
        column = Diagnostic.utf8_column(source, line, getattr(exc, "offset", None) or 1)  # AST columns are bytes
        diagnostic = Diagnostic(
            path,
            line,
            column,
            Code.PARSE_ERROR,
            f"cannot compile: {message}",
            Severity.ERROR,
            **Diagnostic.syntax_error_end(exc, line, column, utf8_of=source),
        )
        return FlattenResult(source, (diagnostic,), error=f"cannot compile: {message} (line {line})")
    hop_names = (
        frozenset({HOP_LEAF} | {a or b for a, b in _HOP_ALIASES.findall(source)}) if HOP_LEAF in source else frozenset()
    )
    index = ScopeIndex.build(tree, {c.name for c in classes}, hop_names)
    return ParsedModule(tree, classes, hop_names, index, text)


def _statements(tree: ast.Module) -> list[ast.stmt]:
    """Every statement, nested ones included, in ``ast.walk``'s order (a class is a statement:
    no need to walk the expressions, which are most of the tree)."""
    found: list[ast.stmt] = []
    queue: deque[ast.AST] = deque([tree])
    while queue:
        node = queue.popleft()
        for name in node._fields:
            value = getattr(node, name)
            for child in value if isinstance(value, list) else ():
                if isinstance(child, ast.stmt):
                    found.append(child)
                    queue.append(child)
                elif isinstance(child, (ast.excepthandler, ast.match_case)):
                    queue.append(child)
    return found
