"""What the ctx-flow analysis counts as a store: every way Python binds a name.

A binding it misses makes a name look unchanged after a save, and the lowering then
returns the name's later value as the saved one (golden case ``with_tuple_rebinds_saved``).
"""

from __future__ import annotations

import textwrap

import libcst as cst
import pytest

from inliner.engine.analysis.ctxflow import analyse


def _stores(body: str) -> set[str]:
    source = "def forward(ctx, x):\n" + textwrap.indent(textwrap.dedent(body), "    ")
    func = cst.ensure_type(cst.parse_module(source).body[0], cst.FunctionDef)
    return set(analyse(func, "ctx").stores)


@pytest.mark.parametrize(
    ("body", "bound"),
    [
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
    ],
)
def test_every_binding_form_is_a_store(body: str, bound: set[str]) -> None:
    assert _stores(body) == bound


@pytest.mark.parametrize(
    "body",
    [
        "y = os.path.join(x)\n",  # a dotted read
        "from os.path import join as j\nj(x)\n",  # the module path of a from-import
        "with f(x) as y:\n    g(y.a, z)\n",
        "match x:\n    case Color.RED:\n        pass\n",  # a value pattern reads
    ],
)
def test_reads_are_not_stores(body: str) -> None:
    stores = _stores(body)
    assert not stores & {"os", "path", "f", "g", "z", "Color", "RED", "x"}
