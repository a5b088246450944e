"""The read-only walk visits what libcst's own ``visit`` visits, in the same order, and a
rebuild along paths makes what libcst's own ``visit`` makes of them."""

from __future__ import annotations

import libcst as cst
import pytest

from inliner.engine.walk import FORMATTING, children, code_children, on_paths_to, rebuild, walk, walk_code
from tests.support.paths import CODE_SAMPLES

SOURCES = CODE_SAMPLES


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


class _Layout(cst.CSTVisitor):
    """libcst's visit, noting for each node whether it or an ancestor is whitespace or a comment."""

    def __init__(self) -> None:
        self.seen: list[tuple[str, int]] = []
        self.stack: list[bool] = []

    def on_visit(self, node: cst.CSTNode) -> bool:
        formatting = type(node) in FORMATTING
        if self.stack and self.stack[-1]:
            assert formatting, f"a {type(node).__name__} inside whitespace or a comment"
        self.stack.append(formatting)
        if not formatting:
            self.seen.append(("visit", id(node)))
        return not isinstance(node, cst.Lambda)

    def on_leave(self, original_node: cst.CSTNode) -> None:
        if not self.stack.pop():
            self.seen.append(("leave", id(original_node)))


@pytest.mark.parametrize("path", SOURCES, ids=lambda p: f"{p.parent.name}/{p.name}")
def test_walk_code_is_visit_without_layout(path):
    """``walk_code`` makes libcst's calls, in libcst's order, for every node that is not
    whitespace, a comment or a newline; only such nodes are ever inside those."""
    module = cst.parse_module(path.read_text())
    by_libcst, by_walk = _Layout(), _Record()
    module.visit(by_libcst)
    walk_code(module, by_walk)
    assert by_walk.seen == by_libcst.seen
    assert len(by_libcst.seen) > 0 or not path.read_text().strip()


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
        code = [id(c) for c in node.children if type(c) not in FORMATTING]
        assert [id(c) for c in code_children(node)] == code, type(node).__name__


def test_paths_to_targets():
    module = cst.parse_module("def f(x):\n    y = x + 1\n    return y\n")
    function = module.body[0]
    assign = function.body.body[0].body[0]
    paths = on_paths_to(module, {assign.value.left})
    assert {module, function, function.body, assign, assign.value, assign.value.left} <= paths
    assert function.body.body[1] not in paths and assign.targets[0] not in paths
    # nodes are keys by identity: an equal copy is not a node of the tree
    assert not on_paths_to(module, {assign.value.left.deep_clone()})
    with pytest.raises(ValueError, match="not whitespace"):  # the paths it finds skip them
        on_paths_to(module, {assign.value.operator.whitespace_before})


class _Edit:
    """Renames the target names, drops the target ``pass`` statements; records each call."""

    def __init__(self, targets: set[cst.CSTNode]) -> None:
        self.targets = targets
        self.left: list[int] = []

    def on_leave(self, original: cst.CSTNode, updated: cst.CSTNode) -> cst.CSTNode | cst.RemovalSentinel:
        self.left.append(id(original))
        if original in self.targets:
            if isinstance(updated, cst.Pass):
                return cst.RemoveFromParent()
            assert isinstance(updated, cst.Name)
            return updated.with_changes(value=updated.value + "_renamed")
        return updated


class _OnPaths(cst.CSTTransformer):
    def __init__(self, paths: set[cst.CSTNode], edit: _Edit) -> None:
        self.paths, self.edit = paths, edit

    def on_visit(self, node: cst.CSTNode) -> bool:
        return node in self.paths

    def on_leave(self, original_node, updated_node):
        return self.edit.on_leave(original_node, updated_node)


@pytest.mark.parametrize("path", SOURCES, ids=lambda p: f"{p.parent.name}/{p.name}")
def test_rebuild_matches_visit(path):
    module = cst.parse_module(path.read_text())
    found: list[cst.CSTNode] = []

    class Targets(cst.CSTVisitor):
        def on_visit(self, node: cst.CSTNode) -> bool:
            if isinstance(node, cst.Pass) or (isinstance(node, cst.Name) and node.value.startswith("s")):
                found.append(node)
            return True

    walk(module, Targets())
    targets = set(found[::3])  # some of them: most of the tree is left as it is
    paths = on_paths_to(module, targets)
    by_libcst, by_rebuild = _Edit(targets), _Edit(targets)
    expected = module.visit(_OnPaths(paths, by_libcst))
    rebuilt = rebuild(module, paths, by_rebuild.on_leave)
    assert isinstance(rebuilt, cst.Module) and rebuilt.code == expected.code
    assert rebuilt.deep_equals(expected)
    on_path_leaves = [i for i in by_libcst.left if i in {id(n) for n in paths}]
    assert by_rebuild.left == on_path_leaves  # the same calls, in the same order, on the nodes rebuilt
    kept = [c for c in children(rebuilt) if c in set(module.body)]
    assert all(c not in paths for c in kept)  # what no edit touches is the very same node


def test_rebuild_refuses_to_remove_a_required_node():
    module = cst.parse_module("x = y\n")
    value = module.body[0].body[0].value
    with pytest.raises(TypeError, match="cannot be removed"):
        rebuild(module, on_paths_to(module, {value}), lambda o, u: cst.RemoveFromParent() if o is value else u)
