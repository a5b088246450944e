"""Orchestrate one module: find candidates, lower them, splice the emitted code, report.

Cost model: a file that cannot hold a Function is returned before parsing; a
file that can is parsed once, and name resolution (scope + qualified names) runs
only when a class with bases exists.
"""

from __future__ import annotations

import re
from dataclasses import dataclass

import libcst as cst
from libcst.metadata import MetadataWrapper, PositionProvider, QualifiedNameProvider, ScopeProvider

from inliner.diagnostics import Diagnostic, Severity
from inliner.emit import emit
from inliner.engine import FlattenResult, Selection
from inliner.lower_function import lower_function_class
from inliner.model import CustomVJP, Refusal, Refuse
from inliner.names import fresh, names_in

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

_MAY_CONTAIN = re.compile(r"\bFunction\b|autograd_function_apply")


def may_contain_candidates(source: str) -> bool:
    """A cheap textual pre-filter: no match means nothing to flatten, so skip the parse."""
    return _MAY_CONTAIN.search(source) is not None


@dataclass
class _Candidate:
    node: cst.ClassDef
    name: str
    outcome: CustomVJP | Refusal | None = None


class _CandidateFinder(cst.CSTVisitor):
    def __init__(self) -> None:
        self.classes: list[tuple[cst.ClassDef, bool]] = []  # (class, nested in a class body)
        self.apply_attributes: dict[int, cst.Attribute] = {}  # id(Name) -> its `.apply` Attribute
        self._class_depth: list[bool] = []

    def visit_ClassDef(self, node: cst.ClassDef) -> None:
        in_class_body = bool(self._class_depth) and self._class_depth[-1]
        if node.bases:
            self.classes.append((node, in_class_body))
        self._class_depth.append(True)

    def leave_ClassDef(self, original_node: cst.ClassDef) -> None:
        self._class_depth.pop()

    def visit_FunctionDef(self, node: cst.FunctionDef) -> None:
        self._class_depth.append(False)

    def leave_FunctionDef(self, original_node: cst.FunctionDef) -> None:
        self._class_depth.pop()

    def visit_Attribute(self, node: cst.Attribute) -> None:
        if node.attr.value == "apply" and isinstance(node.value, cst.Name):
            self.apply_attributes[id(node.value)] = node


class _Splicer(cst.CSTTransformer):
    def __init__(self, replacements: dict[int, list[cst.BaseStatement]], attributes: dict[int, cst.Name]) -> None:
        self.replacements = replacements
        self.attributes = attributes

    def leave_ClassDef(self, original_node: cst.ClassDef, updated_node: cst.ClassDef):
        statements = self.replacements.get(id(original_node))
        if statements is None:
            return updated_node
        return cst.FlattenSentinel(statements)

    def leave_Attribute(self, original_node: cst.Attribute, updated_node: cst.Attribute):
        replacement = self.attributes.get(id(original_node))
        return updated_node if replacement is None else replacement


def rewrite_module(source: str, *, path: str = "<string>", select: Selection | None = None) -> FlattenResult:
    if not may_contain_candidates(source):
        return FlattenResult(source)
    try:
        module = cst.parse_module(source)
    except cst.ParserSyntaxError as exc:
        diagnostic = Diagnostic(
            path, exc.raw_line, exc.raw_column + 1, "INL000", f"cannot parse: {exc.message}", Severity.ERROR
        )
        return FlattenResult(source, (diagnostic,), error=f"cannot parse: {exc.message} ({exc.raw_line}:{exc.raw_column + 1})")

    finder = _CandidateFinder()
    module.visit(finder)
    if not finder.classes:
        return FlattenResult(source)

    wrapper = MetadataWrapper(module, unsafe_skip_copy=True)
    resolved = wrapper.resolve_many([ScopeProvider, QualifiedNameProvider])
    qualified_names = resolved[QualifiedNameProvider]
    scopes = resolved[ScopeProvider]

    def qualified(node: cst.CSTNode) -> set[str]:
        value = qualified_names.get(node, ())
        if callable(value):  # libcst computes qualified names lazily
            value = value()
        return {q.name for q in value}

    candidates: list[_Candidate] = []
    for cls, in_class_body in finder.classes:
        base_names = [qualified(base.value) for base in cls.bases]
        if not any(names & FUNCTION_BASES for names in base_names):
            continue
        candidate = _Candidate(cls, cls.name.value)
        if any(names & FUNCTION_BASES and names - FUNCTION_BASES for names in base_names):
            candidate.outcome = Refusal(
                "INL105", f"class {cls.name.value}: its base may also name something other than torch.autograd.Function", cls
            )
        elif in_class_body:
            candidate.outcome = Refusal("INL105", f"class {cls.name.value} is defined inside another class body", cls)
        candidates.append(candidate)
    if not candidates:
        return FlattenResult(source)

    positions = None

    def position(node: cst.CSTNode):
        nonlocal positions
        if positions is None:
            positions = wrapper.resolve(PositionProvider)
        return positions[node]

    if select is not None:
        candidates = [c for c in candidates if _selected(c, select, position)]
        if not candidates:
            return FlattenResult(source)

    taken = names_in(module)
    runtime_name = RUNTIME_NAME if RUNTIME_NAME not in taken else fresh("_inliner_custom_vjp", taken)
    taken.add(runtime_name)

    replacements: dict[int, list[cst.BaseStatement]] = {}
    attributes: dict[int, cst.Name] = {}
    for candidate in candidates:
        if candidate.outcome is not None:
            continue
        try:
            vjp = lower_function_class(candidate.node, qualified=qualified, taken=taken)
            apply_sites = _apply_sites(candidate, scopes, finder)
        except Refuse as refuse:
            candidate.outcome = refuse.refusal
            continue
        candidate.outcome = vjp
        nested = not isinstance(scopes[candidate.node], cst.metadata.GlobalScope)
        replacements[id(candidate.node)] = emit(vjp, runtime_name, nested=nested)
        for attribute in apply_sites:
            attributes[id(attribute)] = attribute.value.with_changes()  # type: ignore[assignment]

    diagnostics: list[Diagnostic] = []
    flattened: list[str] = []
    refused: list[str] = []
    for candidate in candidates:
        outcome = candidate.outcome
        start = position(candidate.node.name)
        if isinstance(outcome, Refusal):
            where = position(outcome.node).start
            refused.append(candidate.name)
            diagnostics.append(
                Diagnostic(
                    path,
                    where.line,
                    where.column + 1,
                    outcome.code,
                    _message(candidate.name, outcome.reason),
                    Severity.WARNING,
                    name=candidate.name,
                    end_line=position(outcome.node).end.line,
                    end_column=position(outcome.node).end.column + 1,
                )
            )
        else:
            flattened.append(candidate.name)
            diagnostics.append(
                Diagnostic(
                    path,
                    start.start.line,
                    start.start.column + 1,
                    "INL001",
                    f"class {candidate.name} is flattened into explicit fwd/bwd functions",
                    Severity.INFO,
                    name=candidate.name,
                    end_line=start.end.line,
                    end_column=start.end.column + 1,
                )
            )
    if not replacements:
        return FlattenResult(source, tuple(diagnostics), (), tuple(refused))

    new_module = module.visit(_Splicer(replacements, attributes))
    assert isinstance(new_module, cst.Module)
    new_module = _add_runtime_import(new_module, runtime_name)
    new_source = new_module.code
    return FlattenResult(new_source, tuple(diagnostics), tuple(flattened), tuple(refused), changed=new_source != source)


def _message(name: str, reason: str) -> str:
    if not reason.startswith(f"class {name}"):
        reason = f"class {name}: {reason}"
    return f"{reason}; left untouched"


def _selected(candidate: _Candidate, select: Selection, position) -> bool:
    if select.name is not None:
        return candidate.name == select.name
    if select.line is not None:
        span = position(candidate.node)
        return span.start.line <= select.line <= span.end.line
    return True


def _apply_sites(candidate: _Candidate, scopes, finder: _CandidateFinder) -> list[cst.Attribute]:
    """The ``Name.apply`` attributes that certainly mean this class; refuse on any other use."""
    scope = scopes[candidate.node]
    assignment = next(
        (a for a in scope.assignments[candidate.name] if getattr(a, "node", None) is candidate.node), None
    )
    if assignment is None:  # pragma: no cover - libcst always records class definitions
        raise Refuse("INL112", f"class {candidate.name}: its binding could not be resolved", candidate.node)
    sites = []
    for access in assignment.references:
        attribute = finder.apply_attributes.get(id(access.node))
        if attribute is None:
            raise Refuse(
                "INL112",
                f"class {candidate.name} is used as a class here (not through `.apply`), so it must stay a class",
                access.node,
            )
        if set(access.referents) == {assignment}:
            sites.append(attribute)
    return sites


def _add_runtime_import(module: cst.Module, runtime_name: str) -> cst.Module:
    alias = None if runtime_name == RUNTIME_NAME else cst.AsName(cst.Name(runtime_name))
    statement = cst.SimpleStatementLine(
        [
            cst.ImportFrom(
                module=cst.parse_expression(RUNTIME_MODULE),  # type: ignore[arg-type]
                names=[cst.ImportAlias(cst.Name(RUNTIME_NAME), asname=alias)],
            )
        ]
    )
    body = list(module.body)
    index = 0
    for i, stmt in enumerate(body):
        if isinstance(stmt, cst.SimpleStatementLine) and all(_is_preamble(s, i) for s in stmt.body):
            index = i + 1
            continue
        break
    body.insert(index, statement)
    return module.with_changes(body=body)


def _is_preamble(small: cst.BaseSmallStatement, index: int) -> bool:
    if isinstance(small, cst.ImportFrom) and isinstance(small.module, cst.Name) and small.module.value == "__future__":
        return True
    return index == 0 and isinstance(small, cst.Expr) and isinstance(small.value, (cst.SimpleString, cst.ConcatenatedString))
