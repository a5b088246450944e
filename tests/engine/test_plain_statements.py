"""Backward's "nothing runs before the saved-tensor read" checks answer as the libcst
matchers that first spelled them, on every statement of the golden cases and the engine."""

from __future__ import annotations

from pathlib import Path

import libcst as cst
import libcst.matchers as m
import pytest

from inliner.engine.function_class.lower_backward import _inert, _is_plain_read
from inliner.engine.walk import walk
from tests.support.paths import CODE_SAMPLES

SOURCES = CODE_SAMPLES

_NAMES = (
    m.Name()
    | m.Tuple(elements=[m.ZeroOrMore(m.Element(m.Name()))])
    | m.List(elements=[m.ZeroOrMore(m.Element(m.Name()))])
)
_NUMBER = m.Integer() | m.Float() | m.Imaginary()
_CONSTANT = _NUMBER | m.SimpleString() | m.UnaryOperation(operator=m.Minus() | m.Plus(), expression=_NUMBER)


def _inert_by_matcher(stmt: cst.CSTNode, ctx: str) -> bool:
    plain = m.MatchIfTrue(lambda value: _plain_value_by_matcher(value, ctx))
    binding = m.Assign(targets=[m.ZeroOrMore(m.AssignTarget(_NAMES))], value=plain)
    return m.matches(stmt, m.SimpleStatementLine(body=[m.ZeroOrMore(m.Pass() | m.Expr(m.SimpleString()) | binding)]))


def _plain_value_by_matcher(expr: cst.CSTNode, ctx: str) -> bool:
    own = m.Attribute(value=m.Name(ctx), attr=m.DoesNotMatch(m.Name("saved_tensors")))
    nested = m.ZeroOrMore(m.Element(m.MatchIfTrue(lambda value: _plain_value_by_matcher(value, ctx))))
    return m.matches(expr, m.Name() | _CONSTANT | own | m.Tuple(elements=[nested]) | m.List(elements=[nested]))


def _plain_read_by_matcher(stmt: cst.CSTNode, read: cst.CSTNode) -> bool:
    the_read = m.MatchIfTrue(lambda node: node is read)
    indexed = m.Subscript(value=the_read, slice=[m.SubscriptElement(m.Index(m.Integer()))])
    assign = m.Assign(targets=[m.ZeroOrMore(m.AssignTarget(_NAMES))], value=the_read | indexed)
    return m.matches(stmt, m.SimpleStatementLine(body=[assign]))


EXTRA = """\
a = b = None
a, b = ctx.saved_tensors
(a,) = ctx.saved_tensors[0]
[a, *b] = ctx.saved_tensors
a = ctx.saved_tensors[i]
a = ctx.saved_tensors[0:1]
a.b = ctx.k
k = -1
s = +2.5j
t = -"x"
u = ~1
v = (ctx.k, [1, ctx.k], None)
v = (ctx.k, [1, ctx.saved_tensors])
w = (other.k, None)
x = [*a]
"doc"; pass
f"doc"
"""


@pytest.mark.parametrize("path", [None, *SOURCES], ids=lambda p: "extra" if p is None else f"{p.parent.name}/{p.name}")
def test_the_direct_checks_answer_as_the_matchers(path: Path | None) -> None:
    module = cst.parse_module(EXTRA if path is None else path.read_text())
    lines: list[cst.SimpleStatementLine] = []

    class Lines(cst.CSTVisitor):
        def visit_SimpleStatementLine(self, node: cst.SimpleStatementLine) -> None:
            lines.append(node)

    walk(module, Lines())
    for line in lines:
        for ctx in ("ctx", "self"):
            assert _inert(line, ctx) == _inert_by_matcher(line, ctx), cst.Module([line]).code
        for small in line.body:
            if isinstance(small, cst.Assign):
                reads = [small.value] + ([small.value.value] if isinstance(small.value, cst.Subscript) else [])
                for read in reads:
                    assert _is_plain_read(line, read) == _plain_read_by_matcher(line, read), cst.Module([line]).code
