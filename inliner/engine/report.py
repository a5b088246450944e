"""What a module's rewrite reports about its candidates, whether or not code is emitted:
one diagnostic each (flattened, or refused and why, where), the pragmas not understood,
the names flattened and refused, the targets a surface can ask for alone, and the
compile kinds."""

from __future__ import annotations

import ast
from collections import Counter
from dataclasses import dataclass

from inliner.engine.analysis.compile_context import CompileContext
from inliner.engine.analysis.compile_kind import CompileKind
from inliner.engine.candidate import Candidate
from inliner.engine.codes import Code
from inliner.engine.diagnostics import Diagnostic, Severity
from inliner.engine.model import CustomVJP, Refusal
from inliner.engine.result import Selection, Target


@dataclass(frozen=True)
class Report:
    """What the result says about the candidates, whether or not code is emitted."""

    diagnostics: tuple[Diagnostic, ...]
    flattened: tuple[str, ...]
    refused: tuple[str, ...]
    targets: tuple[Target, ...]
    kinds: tuple[tuple[str, CompileKind], ...]

    @staticmethod
    def of(candidates: list[Candidate], compiling: CompileContext, path: str) -> Report:
        own = [_diagnostic(c, path) for c in candidates]
        pairs = zip(candidates, own)
        diagnostics = tuple(d for c, mine in pairs for d in (mine, *_pragma_diagnostics(c, compiling, path)))
        flattened = tuple(c.name for c in candidates if isinstance(c.outcome, CustomVJP))
        refused = tuple(c.name for c in candidates if isinstance(c.outcome, Refusal))
        targets = _targets(candidates, own)
        kinds = tuple(
            (c.name, c.compile) for c in candidates if isinstance(c.outcome, CustomVJP) and c.compile is not None
        )
        return Report(diagnostics, flattened, refused, targets, kinds)


def selected(candidate: Candidate, select: Selection) -> bool:
    if select.name is not None:
        return candidate.name == select.name
    if select.line is not None:
        return candidate.first_line <= select.line <= candidate.last_line
    return True


def _targets(candidates: list[Candidate], diagnostics: list[Diagnostic]) -> tuple[Target, ...]:
    """What was looked at, where, and how to ask for it alone: a class by its name when
    no other candidate shares it, anything else by the line of its name."""
    names = Counter(c.name for c in candidates)
    targets = []
    for candidate, diagnostic in zip(candidates, diagnostics):
        if candidate.kind == "class" and names[candidate.name] == 1:
            select = Selection(name=candidate.name)
        else:
            select = Selection(line=candidate.name_position[0])
        flattened = isinstance(candidate.outcome, CustomVJP)
        span = (candidate.first_line, candidate.last_line)
        targets.append(Target(candidate.name, candidate.kind, *span, flattened, select, diagnostic))
    return tuple(targets)


def _diagnostic(candidate: Candidate, path: str) -> Diagnostic:
    outcome = candidate.outcome
    line, col, end_col = candidate.name_position
    if isinstance(outcome, Refusal):
        if candidate.refusal_position is not None:
            line, col, end_line, end_col = candidate.refusal_position
        else:
            end_line = line
        return Diagnostic(
            path,
            line,
            col + 1,
            outcome.code,
            _message(candidate.label, outcome.reason),
            Severity.WARNING,
            name=candidate.name,
            end_line=end_line,
            end_column=end_col + 1,
        )
    what = (
        f"class {candidate.name} is flattened into explicit fwd/bwd functions"
        if candidate.kind == "class"
        else f"autograd_function_apply call is flattened into {candidate.name}"
    )
    if isinstance(outcome, CustomVJP) and outcome.kept is not None:
        what += "; it stays a class (its module uses it as one), whose apply is the flat callable"
    if isinstance(outcome, CustomVJP) and outcome.spec.ctx_record:
        what += f", its ctx kept as a record ({outcome.spec.record_reason})"
    kind = candidate.compile
    if kind is not None and (not kind.traceable or kind.origin != "inferred"):
        what += f"; compile kind {kind.kind}" + (f": {kind.reason}" if kind.reason else "")
    return Diagnostic(
        path,
        line,
        col + 1,
        Code.FLATTENED,
        what,
        Severity.INFO,
        name=candidate.name,
        end_line=line,
        end_column=end_col + 1,
    )


def _pragma_diagnostics(candidate: Candidate, compiling: CompileContext, path: str) -> list[Diagnostic]:
    """An INL300 warning for a ``# inliner:`` pragma that is not understood (it is ignored)."""
    node = candidate.node
    pragma = compiling.class_pragma(node) if isinstance(node, ast.ClassDef) else compiling.call_pragma(node)
    if not pragma.problems:
        return []
    problems = "; ".join(pragma.problems)
    message = f"{candidate.label}: pragma not understood ({problems}); ignored"
    end = len(compiling.text.line(pragma.line).rstrip("\r\n"))
    return [
        Diagnostic(
            path,
            pragma.line,
            pragma.column + 1,
            Code.PRAGMA_NOT_UNDERSTOOD,
            message,
            Severity.WARNING,
            name=candidate.name,
            end_line=pragma.line,
            end_column=end + 1,
        )
    ]


def _message(label: str, reason: str) -> str:
    return f"{label}: {reason}; left untouched"
