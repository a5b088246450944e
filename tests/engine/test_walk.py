"""The read-only walk visits what libcst's own ``visit`` visits, in the same order."""

from __future__ import annotations

from pathlib import Path

import libcst as cst
import pytest

import inliner
from inliner.engine.walk import children, on_paths_to, walk
from tests.support.golden import GOLDEN

SOURCES = sorted(GOLDEN.glob("*/*.py")) + sorted(Path(inliner.__file__).parent.rglob("*.py"))


class _Record(cst.CSTVisitor):
    def __init__(self) -> None:
        self.seen: list[tuple[str, int]] = []

    def on_visit(self, node: cst.CSTNode) -> bool:
        self.seen.append(("visit", id(node)))
        return not isinstance(node, cst.Lambda)  # an answer the walk must respect

    def on_leave(self, original_node: cst.CSTNode) -> None:
        self.seen.append(("leave", id(original_node)))


@pytest.mark.parametrize("path", SOURCES, ids=lambda p: f"{p.parent.name}/{p.name}")
def test_walk_matches_visit(path):
    module = cst.parse_module(path.read_text())
    by_libcst, by_walk = _Record(), _Record()
    module.visit(by_libcst)
    walk(module, by_walk)
    assert by_walk.seen == by_libcst.seen


def test_a_field_libcst_visits_only_when_set():
    """An f-string's format spec is visited only when there is one: learnt on the way."""
    module = cst.parse_module('a = f"{x}"\nb = f"{y:>{w}}"\nc = f"{z!r:{v}}"\n')
    nodes = []

    class Collect(cst.CSTVisitor):
        def on_visit(self, node: cst.CSTNode) -> bool:
            nodes.append(node)
            return True

    module.visit(Collect())
    for node in nodes:
        assert [id(c) for c in children(node)] == [id(c) for c in node.children], type(node).__name__


def test_paths_to_targets():
    module = cst.parse_module("def f(x):\n    y = x + 1\n    return y\n")
    function = module.body[0]
    assign = function.body.body[0].body[0]
    paths = on_paths_to(module, {assign.value.left})
    assert {module, function, function.body, assign, assign.value, assign.value.left} <= paths
    assert function.body.body[1] not in paths and assign.targets[0] not in paths
    # nodes are keys by identity: an equal copy is not a node of the tree
    assert not on_paths_to(module, {assign.value.left.deep_clone()})
