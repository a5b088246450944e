"""Orchestrate one module: find candidates, lower them, splice the emitted code, report.

Cost model (measured on the installed torch tree): a file that cannot hold a
Function is returned after a substring test; a file that can is parsed once by
CPython's ``ast`` (fast, C) to find candidates, resolve names and locate call
sites; only the text of each candidate class is parsed with libcst for lowering.
The new text is produced by splicing replacements into the original string, so
everything outside the rewritten regions is byte-identical by construction.
"""

from __future__ import annotations

import ast
import re
from dataclasses import dataclass, field

import libcst as cst
from libcst.metadata import MetadataWrapper, PositionProvider

from inliner.diagnostics import Diagnostic, Severity
from inliner.emit import emit
from inliner.engine import FlattenResult, Selection
from inliner.lower_function import lower_function_class
from inliner.model import CustomVJP, Refusal, Refuse
from inliner.names import fresh
from inliner.scopes import ScopeIndex
from inliner.source import SourceText

FUNCTION_BASES = frozenset(
    {
        "torch.autograd.Function",
        "torch.autograd.function.Function",
        "torch.autograd.function.InplaceFunction",
        "torch.autograd.InplaceFunction",
    }
)
RUNTIME_MODULE = "inliner.runtime"
RUNTIME_NAME = "custom_vjp"

_CLASS_WITH_FUNCTION_BASE = re.compile(r"\bclass\s+\w+\s*\([^)]*Function\b|\bFunction\s+as\b")


def may_contain_candidates(source: str) -> bool:
    """A cheap textual pre-filter: no match means nothing to flatten, so skip the parse."""
    if "autograd_function_apply" in source:
        return True
    if "Function" not in source:
        return False
    return _CLASS_WITH_FUNCTION_BASE.search(source) is not None


@dataclass
class _Candidate:
    node: ast.ClassDef
    name: str
    first_line: int  # 1-based, decorators included
    outcome: CustomVJP | Refusal | None = None
    refusal_position: tuple[int, int, int, int] | None = None  # lines 1-based, character columns 0-based
    apply_sites: list[ast.Attribute] = field(default_factory=list)


def rewrite_module(source: str, *, path: str = "<string>", select: Selection | None = None) -> FlattenResult:
    if not may_contain_candidates(source):
        return FlattenResult(source)
    try:
        tree = ast.parse(source)
    except (SyntaxError, ValueError) as exc:
        line = getattr(exc, "lineno", None) or 1
        column = getattr(exc, "offset", None) or 1
        message = getattr(exc, "msg", None) or str(exc)
        diagnostic = Diagnostic(path, line, column, "INL000", f"cannot parse: {message}", Severity.ERROR)
        return FlattenResult(source, (diagnostic,), error=f"cannot parse: {message} ({line}:{column})")

    classes = [n for n in ast.walk(tree) if isinstance(n, ast.ClassDef) and n.bases]
    if not classes:
        return FlattenResult(source)
    index = ScopeIndex.build(tree, {c.name for c in classes})
    text = SourceText(source)

    candidates: list[_Candidate] = []
    for cls in classes:
        outer, inner = index.class_scopes[id(cls)]
        base_names = [index.qualify(d, outer) if (d := _dotted(base)) else {"<local>"} for base in cls.bases]
        if not any(names & FUNCTION_BASES for names in base_names):
            continue
        first_line = min([cls.lineno, *(d.lineno for d in cls.decorator_list)])
        candidate = _Candidate(cls, cls.name, first_line)
        if any(names & FUNCTION_BASES and names - FUNCTION_BASES for names in base_names):
            candidate.outcome = Refusal(
                "INL105", f"class {cls.name}: its base may also name something other than torch.autograd.Function", None
            )
        elif outer.is_class:
            candidate.outcome = Refusal("INL105", f"class {cls.name} is defined inside another class body", None)
        candidates.append(candidate)
    candidates.sort(key=lambda c: c.first_line)
    if select is not None:
        candidates = [c for c in candidates if _selected(c, select)]
    if not candidates:
        return FlattenResult(source)

    taken = set(index.names)
    runtime_name = RUNTIME_NAME if RUNTIME_NAME not in taken else fresh("_inliner_custom_vjp", taken)
    taken.add(runtime_name)

    edits: list[tuple[int, int, str]] = []
    for candidate in candidates:
        if candidate.outcome is not None:
            continue
        try:
            candidate.apply_sites = _apply_sites(candidate, index, text)
            replacement = _lower_and_emit(candidate, index, text, taken, runtime_name)
        except Refuse as refuse:
            candidate.outcome = refuse.refusal
            continue
        start = text.offset(candidate.first_line, 0)
        end = text.line_end(candidate.node.end_lineno)
        edits.append((start, end, replacement))

    spans = [(s, e) for s, e, _ in edits]
    for candidate in candidates:
        if not isinstance(candidate.outcome, CustomVJP):
            continue
        for attribute in candidate.apply_sites:
            start = text.offset(attribute.lineno, attribute.col_offset)
            end = text.offset(attribute.end_lineno, attribute.end_col_offset)
            if not any(s <= start < e for s, e in spans):
                edits.append((start, end, candidate.name))

    diagnostics = [_diagnostic(c, path, text) for c in candidates]
    flattened = tuple(c.name for c in candidates if isinstance(c.outcome, CustomVJP))
    refused = tuple(c.name for c in candidates if isinstance(c.outcome, Refusal))
    if not flattened:
        return FlattenResult(source, tuple(diagnostics), (), refused)
    edits.append(_runtime_import(tree, text, runtime_name))
    new_source = text.splice(edits)
    return FlattenResult(new_source, tuple(diagnostics), flattened, refused, changed=new_source != source)


def _dotted(expr: ast.AST) -> str | None:
    from inliner.scopes import dotted

    return dotted(expr)


def _selected(candidate: _Candidate, select: Selection) -> bool:
    if select.name is not None:
        return candidate.name == select.name
    if select.line is not None:
        return candidate.first_line <= select.line <= candidate.node.end_lineno
    return True


def _apply_sites(candidate: _Candidate, index: ScopeIndex, text: SourceText) -> list[ast.Attribute]:
    """The ``Name.apply`` attributes that certainly mean this class; refuse on any other use."""
    outer, _ = index.class_scopes[id(candidate.node)]
    unique = len(outer.bindings.get(candidate.name, ())) == 1
    sites = []
    for name, load_scope in index.loads:
        if name.id != candidate.name or index.lookup(name.id, load_scope) is not outer:
            continue
        attribute = index.apply_attribute.get(id(name))
        if attribute is None:
            refusal = Refuse(
                "INL112",
                f"class {candidate.name} is used as a class here (not through `.apply`), so it must stay a class",
                None,
            )
            candidate.refusal_position = (
                name.lineno,
                text.char_column(name.lineno, name.col_offset),
                name.end_lineno,
                text.char_column(name.end_lineno, name.end_col_offset),
            )
            raise refusal
        if unique:
            sites.append(attribute)
    return sites


def _lower_and_emit(
    candidate: _Candidate, index: ScopeIndex, text: SourceText, taken: set[str], runtime_name: str
) -> str:
    """Parse the class's own text with libcst, lower it, and render the replacement text."""
    snippet = text.lines_between(candidate.first_line, candidate.node.end_lineno)
    indent = text.indentation(candidate.node.lineno)
    wrapped = bool(indent)
    module = cst.parse_module(("if True:" + text.newline + snippet) if wrapped else snippet)
    cls = module.body[0].body.body[0] if wrapped else module.body[0]  # type: ignore[union-attr]
    assert isinstance(cls, cst.ClassDef)
    _, body_scope = index.class_scopes[id(candidate.node)]

    def qualified(node: cst.CSTNode) -> set[str]:
        name = _cst_dotted(node)
        return index.qualify(name, body_scope) if name else set()

    try:
        vjp = lower_function_class(cls, qualified=qualified, taken=taken)
    except Refuse as refuse:
        node = refuse.refusal.node
        if node is not None:
            span = MetadataWrapper(module, unsafe_skip_copy=True).resolve(PositionProvider)[node]
            shift = candidate.first_line - 1 - (1 if wrapped else 0)
            candidate.refusal_position = (
                span.start.line + shift,
                span.start.column,
                span.end.line + shift,
                span.end.column,
            )
        raise
    candidate.outcome = vjp
    statements = emit(vjp, runtime_name, nested=wrapped, line_length=max(40, 88 - len(indent)))
    if not wrapped:
        rendered = module.with_changes(body=statements, header=(), footer=()).code
        return rendered
    block = cst.IndentedBlock(body=statements, indent=indent)
    holder = module.with_changes(body=[cst.If(test=cst.Name("True"), body=block)], header=(), footer=())
    rendered = holder.code
    return rendered.split(module.default_newline, 1)[1]


def _cst_dotted(node: cst.CSTNode) -> str | None:
    if isinstance(node, cst.Name):
        return node.value
    if isinstance(node, cst.Attribute):
        head = _cst_dotted(node.value)
        return None if head is None else f"{head}.{node.attr.value}"
    return None


def _diagnostic(candidate: _Candidate, path: str, text: SourceText) -> Diagnostic:
    outcome = candidate.outcome
    name_line, name_col = text.class_name_position(candidate.node)
    if isinstance(outcome, Refusal):
        if candidate.refusal_position is not None:
            line, col, end_line, end_col = candidate.refusal_position  # character columns
        else:
            line, col, end_line, end_col = name_line, name_col, name_line, name_col + len(candidate.name)
        return Diagnostic(
            path,
            line,
            col + 1,
            outcome.code,
            _message(candidate.name, outcome.reason),
            Severity.WARNING,
            name=candidate.name,
            end_line=end_line,
            end_column=end_col + 1,
        )
    return Diagnostic(
        path,
        name_line,
        name_col + 1,
        "INL001",
        f"class {candidate.name} is flattened into explicit fwd/bwd functions",
        Severity.INFO,
        name=candidate.name,
        end_line=name_line,
        end_column=name_col + len(candidate.name) + 1,
    )


def _message(name: str, reason: str) -> str:
    if not reason.startswith(f"class {name}"):
        reason = f"class {name}: {reason}"
    return f"{reason}; left untouched"


def _runtime_import(tree: ast.Module, text: SourceText, runtime_name: str) -> tuple[int, int, str]:
    """Insert ``from inliner.runtime import custom_vjp`` after the docstring and __future__ imports."""
    alias = "" if runtime_name == RUNTIME_NAME else f" as {runtime_name}"
    line = f"from {RUNTIME_MODULE} import {RUNTIME_NAME}{alias}{text.newline}"
    after = None
    for i, stmt in enumerate(tree.body):
        is_docstring = i == 0 and isinstance(stmt, ast.Expr) and isinstance(stmt.value, ast.Constant) and isinstance(stmt.value.value, str)
        is_future = isinstance(stmt, ast.ImportFrom) and stmt.module == "__future__"
        if is_docstring or is_future:
            after = stmt
            continue
        break
    if after is not None:
        offset = text.line_end(after.end_lineno)
    else:
        first = tree.body[0]
        first_line = min([first.lineno, *(d.lineno for d in getattr(first, "decorator_list", ()))])
        offset = text.offset(first_line, 0)
    return (offset, offset, line)
