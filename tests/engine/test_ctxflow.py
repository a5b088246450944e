"""What the ctx-flow analysis counts as a store: every way Python binds a name.

A binding it misses makes a name look unchanged after a save, and the lowering then
returns the name's later value as the saved one (golden case ``with_tuple_rebinds_saved``).
"""

from __future__ import annotations

import textwrap
from pathlib import Path

import libcst as cst
import pytest

from inliner.engine.analysis.ctxflow import (
    _LOOPS,
    _NAMED_BINDERS,
    _SCOPES,
    _TARGET_HOLDERS,
    _UNPACKED,
    _imported_root,
    analyse,
    is_binding,
    is_truth_test,
)
from inliner.engine.walk import walk
from tests.support.paths import CODE_SAMPLES


def _stores(body: str) -> set[str]:
    source = "def forward(ctx, x):\n" + textwrap.indent(textwrap.dedent(body), "    ")
    func = cst.ensure_type(cst.parse_module(source).body[0], cst.FunctionDef)
    return set(analyse(func, "ctx").stores)


_BINDINGS = [
    ("a = x\n", {"a"}),
    ("a, (b, *c) = x\n", {"a", "b", "c"}),
    ("with f() as a:\n    pass\n", {"a"}),
    ("with f() as (a, b):\n    pass\n", {"a", "b"}),
    ("with f() as [a, *b], g() as c:\n    pass\n", {"a", "b", "c"}),
    ("try:\n    pass\nexcept E as e:\n    pass\n", {"e"}),
    ("import os.path\n", {"os"}),
    ("import os.path as p\n", {"p"}),
    ("from os import path as p, sep\n", {"p", "sep"}),
    ("for i, (j, k) in x:\n    pass\n", {"i", "j", "k"}),
    ("match x:\n    case [a, *rest]:\n        pass\n", {"a", "rest"}),
    ("match x:\n    case {'k': v, **others}:\n        pass\n", {"v", "others"}),
    ("match x:\n    case Point(x=px) as whole:\n        pass\n", {"px", "whole"}),
    ("(n := x)\n", {"n"}),
    ("del x\n", {"x"}),
]


@pytest.mark.parametrize(("body", "bound"), _BINDINGS)
def test_every_binding_form_is_a_store(body: str, bound: set[str]) -> None:
    assert _stores(body) == bound


_READS = [
    "y = os.path.join(x)\n",  # a dotted read
    "from os.path import join as j\nj(x)\n",  # the module path of a from-import
    "with f(x) as y:\n    g(y.a, z)\n",
    "match x:\n    case Color.RED:\n        pass\n",  # a value pattern reads
]


@pytest.mark.parametrize("body", _READS)
def test_reads_are_not_stores(body: str) -> None:
    stores = _stores(body)
    assert not stores & {"os", "path", "f", "g", "z", "Color", "RED", "x"}


class _FirstCtx(cst.CSTVisitor):
    """The ancestors of the first bare ``ctx`` in the body (not ``ctx.attr``, not the parameter)."""

    def __init__(self) -> None:
        self.stack: list[cst.CSTNode] = []
        self.found: tuple[cst.Name, list[cst.CSTNode]] | None = None

    def on_visit(self, node: cst.CSTNode) -> bool:
        parent = self.stack[-1] if self.stack else None
        if (
            self.found is None
            and isinstance(node, cst.Name)
            and node.value == "ctx"
            and not isinstance(parent, cst.Param)
            and not (isinstance(parent, cst.Attribute) and parent.value is node)
        ):
            self.found = (node, list(self.stack))
        self.stack.append(node)
        return True

    def on_leave(self, original_node: cst.CSTNode) -> None:
        self.stack.pop()


@pytest.mark.parametrize(
    ("body", "tested"),
    [
        ("if ctx:\n    pass\n", True),
        ("while ctx:\n    break\n", True),
        ("assert ctx\n", True),
        ("y = 1 if ctx else 2\n", True),
        ("y = not ctx\n", True),
        ("y = ctx is None\n", True),
        ("y = None is not ctx\n", True),
        ("if ctx and x.requires_grad:\n    pass\n", True),
        ("if (ctx or x) and x:\n    pass\n", True),
        ("y = ctx or x\n", False),  # the value may be ctx itself
        ("y = ctx == None\n", False),  # __eq__ is the object's to answer
        ("y = ctx is not x\n", False),
        ("y = None is ctx is None\n", False),
        ("f(ctx)\n", False),
        ("y = [ctx]\n", False),
    ],
)
def test_truth_tests_of_ctx(body: str, tested: bool) -> None:
    source = "def forward(ctx, x):\n" + textwrap.indent(body, "    ")
    finder = _FirstCtx()
    cst.parse_module(source).visit(finder)
    assert finder.found is not None
    assert is_truth_test(*finder.found) is tested


def _is_binding_by_isinstance(node: cst.Name, parents: list[cst.CSTNode]) -> bool:
    """``is_binding`` as first written, with ``isinstance``: the reference for the direct checks."""
    parent = parents[-1] if parents else None
    if isinstance(parent, (cst.Param, cst.FunctionDef, cst.ClassDef, cst.MatchAs, cst.MatchStar)):
        if parent.name is node:
            return True
    if isinstance(parent, cst.NameItem):
        return True
    if isinstance(parent, cst.ImportAlias):
        return parent.asname is None
    if isinstance(parent, cst.MatchMapping) and parent.rest is node:
        return True
    if isinstance(parent, cst.Attribute) and _imported_root(node, parents):
        return True
    child: cst.CSTNode = node
    for p in reversed(parents):
        if isinstance(p, (cst.Element, cst.Tuple, cst.List, cst.StarredElement)):
            child = p
            continue
        if isinstance(
            p, (cst.AssignTarget, cst.AugAssign, cst.AnnAssign, cst.For, cst.CompFor, cst.NamedExpr, cst.Del)
        ):
            return p.target is child
        if isinstance(p, cst.AsName):
            return p.name is child
        return False
    return False


class _Names(cst.CSTVisitor):
    def __init__(self) -> None:
        self.stack: list[cst.CSTNode] = []
        self.found: list[tuple[cst.Name, list[cst.CSTNode]]] = []

    def on_visit(self, node: cst.CSTNode) -> bool:
        if isinstance(node, cst.Name):
            self.found.append((node, list(self.stack)))
        self.stack.append(node)
        return True

    def on_leave(self, original_node: cst.CSTNode) -> None:
        self.stack.pop()


_OTHER_FORMS = """\
global g
x += 1
y: int = 2
[q for q in x if q]
lambda r, *s, **t: r
class C(B, metaclass=M):
    def h(self, p=1, *, k: int = 2) -> None:
        nonlocal z
import a.b.c
match x:
    case [1, *_] | {"k": _, **kw} if kw:
        pass
"""
_BINDING_FORMS = "".join(body for body, _ in _BINDINGS) + "".join(_READS) + _OTHER_FORMS


@pytest.mark.parametrize(
    "path", [None, *CODE_SAMPLES], ids=lambda p: "binding-forms" if p is None else f"{p.parent.name}/{p.name}"
)
def test_is_binding_answers_as_isinstance(path: Path | None) -> None:
    """The direct type checks answer as ``isinstance`` on every name of the golden cases, the
    engine and the binding forms above (libcst's node classes are final: see the next test)."""
    source = ("def forward(ctx, x):\n" + textwrap.indent(_BINDING_FORMS, "    ")) if path is None else path.read_text()
    names = _Names()
    walk(cst.parse_module(source), names)
    assert names.found or path is not None  # a package's __init__ may hold no name
    for node, parents in names.found:
        assert is_binding(node, parents) == _is_binding_by_isinstance(node, parents), (node.value, parents[-1:])


def test_the_node_classes_checked_by_type_have_no_subclasses() -> None:
    checked = (*_NAMED_BINDERS, *_UNPACKED, *_TARGET_HOLDERS, *_SCOPES, *_LOOPS)
    for kind in (*checked, cst.Name, cst.NameItem, cst.ImportAlias, cst.MatchMapping):
        assert kind.__subclasses__() == [], kind
