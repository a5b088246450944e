"""Read-only traversal of libcst trees without rebuilding them.

``node.visit(visitor)`` rebuilds (and re-validates) every node it passes, even for a
``CSTVisitor`` that changes nothing: on a Function body that costs as much as parsing
it, and the lowering reads each method several times. ``walk`` calls the same
``on_visit``/``on_leave`` callbacks in the same order as ``visit``, but only reads.

The child order is libcst's own, learnt from libcst per node type: the fields its
``_visit_and_replace_children`` visits, in order. A few node types visit a field only
when it is set (an f-string's format spec); a node with such a field set that the
learnt order lacks is read through libcst's ``children``, and teaches the order.

``walk_code`` is ``walk`` for the many analyses that read code only: it skips the
whitespace, newlines, blank lines and comments (about half of a body's nodes), and the
fields that can hold nothing else, as the field annotations say.

Attribute callbacks (``visit_<Node>_<field>``) are not called: use ``visit`` for a
visitor that needs them.
"""

from __future__ import annotations

import collections.abc
import dataclasses
import typing
from collections.abc import Callable, Sequence
from collections.abc import Set as AbstractSet

import libcst as cst
from libcst import MaybeSentinel


@dataclasses.dataclass(frozen=True)
class _Fields:
    visited: tuple[str, ...]  # in libcst's visiting order
    others: tuple[str, ...]  # every other field that may hold a node: one libcst visits only when set
    code: tuple[str, ...]  # the visited fields that may hold code (not only whitespace and comments)


_FIELDS: dict[type, _Fields] = {}


class _FieldOrder(cst.CSTVisitor):
    """Records the fields ``_visit_and_replace_children`` visits, in order, without descending."""

    def __init__(self) -> None:
        self.fields: list[str] = []

    def on_visit(self, node: cst.CSTNode) -> bool:
        return False

    def on_visit_attribute(self, node: cst.CSTNode, attribute: str) -> None:
        self.fields.append(attribute)


def _learn(node: cst.CSTNode) -> _Fields:
    recorder = _FieldOrder()
    node._visit_and_replace_children(recorder)
    visited = tuple(dict.fromkeys(recorder.fields))
    known = _FIELDS.get(type(node))
    if known is not None and not set(known.visited) <= set(visited):
        return known  # keep what covers more; this node is read through `children`
    annotations = {f.name: f.type for f in dataclasses.fields(node)}
    others = tuple(name for name, kind in annotations.items() if name not in visited and not _plain(kind))
    code = tuple(name for name in visited if not _formatting_only(annotations.get(name)))
    fields = _FIELDS[type(node)] = _Fields(visited, others, code)
    return fields


#: the nodes that only lay code out: whitespace, comments, newlines and blank lines
FORMATTING = frozenset(
    {
        cst.SimpleWhitespace,
        cst.ParenthesizedWhitespace,
        cst.TrailingWhitespace,
        cst.EmptyLine,
        cst.Newline,
        cst.Comment,
    }
)
_FORMATTING_BASES = (cst.BaseParenthesizableWhitespace, *FORMATTING)


def _formatting_only(annotation: object) -> bool:
    """A field type that can hold only ``FORMATTING`` nodes (or nothing): a sequence of
    them, one of them, optional or a union of such. Anything else (or unknown) may hold code."""
    if annotation in (type(None), MaybeSentinel):
        return True
    if isinstance(annotation, type):
        return issubclass(annotation, _FORMATTING_BASES)
    origin = typing.get_origin(annotation)
    if origin is typing.Union or origin in (collections.abc.Sequence, tuple, list):
        args = [arg for arg in typing.get_args(annotation) if arg is not Ellipsis]
        return bool(args) and all(_formatting_only(arg) for arg in args)
    return False


def _plain(annotation: object) -> bool:
    """A field type that can never hold a node (``str``, ``bool``, a ``Literal``, optional
    ones): no need to look at it for children libcst visits only when set."""
    if annotation in (str, bool, int, type(None), MaybeSentinel):
        return True
    origin = typing.get_origin(annotation)
    if origin is typing.Literal:
        return True
    return origin is typing.Union and all(_plain(arg) for arg in typing.get_args(annotation))


_IS_NODE: dict[type, bool] = {}  # isinstance on libcst's ABCs is slow: ask once per type


def _is_node(value: object) -> bool:
    kind = type(value)
    known = _IS_NODE.get(kind)
    if known is None:
        known = _IS_NODE[kind] = isinstance(value, cst.CSTNode)
    return known


def _holds_children(value: object) -> bool:
    if isinstance(value, (tuple, list)):
        return any(_is_node(item) for item in value)
    return _is_node(value)


def children(node: cst.CSTNode) -> Sequence[cst.CSTNode]:
    """``node.children``, in the same order, without rebuilding ``node``."""
    fields = _FIELDS.get(type(node)) or _learn(node)
    if fields.others and _sets_unlearnt_field(node, fields):
        _learn(node)  # a field libcst visits only when set: learn where it goes
        return node.children
    return _held(node, fields.visited, _IS_NODE, _is_node)


def _sets_unlearnt_field(node: cst.CSTNode, fields: _Fields) -> bool:
    """Whether ``node`` sets a field the learnt order lacks (libcst visits it only when set)."""
    for name in fields.others:
        value = getattr(node, name)
        if value is not None and _holds_children(value):
            return True
    return False


def _held(
    node: cst.CSTNode, names: tuple[str, ...], known: dict[type, bool], learn: Callable[[object], bool]
) -> list[cst.CSTNode]:
    """The values and sequence items of ``node``'s fields ``names`` whose type ``known``
    says is wanted (``learn`` answers for a type not seen yet and records it)."""
    out: list[cst.CSTNode] = []
    ask = known.get
    for name in names:
        value = getattr(node, name)
        kind = type(value)
        if kind is tuple or kind is list:
            for item in value:
                wanted = ask(type(item))
                if wanted or (wanted is None and learn(item)):
                    out.append(item)
        else:
            wanted = ask(kind)
            if wanted or (wanted is None and learn(value)):
                out.append(value)
    return out


def walk(node: cst.CSTNode, visitor: cst.CSTVisitor) -> None:
    """``node.visit(visitor)`` for a visitor that only reads: same callbacks, same order."""
    if visitor.on_visit(node):
        for child in children(node):
            walk(child, visitor)
    visitor.on_leave(node)


def code_children(node: cst.CSTNode) -> Sequence[cst.CSTNode]:
    """``children(node)`` without the ``FORMATTING`` nodes."""
    fields = _FIELDS.get(type(node)) or _learn(node)
    if fields.others and _sets_unlearnt_field(node, fields):
        return [child for child in children(node) if type(child) not in FORMATTING]
    return _held(node, fields.code, _IS_CODE, _is_code)


_IS_CODE: dict[type, bool] = {}  # a node, and not FORMATTING: asked once per type


def _is_code(value: object) -> bool:
    kind = type(value)
    known = _IS_CODE.get(kind)
    if known is None:
        known = _IS_CODE[kind] = _is_node(value) and kind not in FORMATTING
    return known


def walk_code(node: cst.CSTNode, visitor: cst.CSTVisitor) -> None:
    """``walk`` for a visitor that reads code only: whitespace, comments, newlines and blank
    lines (``FORMATTING``, about half the nodes of a typical body) are neither visited nor
    descended into; every other node is visited in ``walk``'s order."""
    if visitor.on_visit(node):
        for child in code_children(node):
            walk_code(child, visitor)
    visitor.on_leave(node)


class _Paths(cst.CSTVisitor):
    def __init__(self, targets: AbstractSet[cst.CSTNode]) -> None:
        self.targets = targets
        self.stack: list[cst.CSTNode] = []
        self.found: set[cst.CSTNode] = set()

    def on_visit(self, node: cst.CSTNode) -> bool:
        self.stack.append(node)
        if node in self.targets:
            self.found.update(self.stack)
        return True

    def on_leave(self, original_node: cst.CSTNode) -> None:
        self.stack.pop()


def on_paths_to(root: cst.CSTNode, targets: AbstractSet[cst.CSTNode]) -> set[cst.CSTNode]:
    """Every node of ``root`` that is one of ``targets`` or holds one.

    A transformer whose ``on_visit`` answers ``node in on_paths_to(...)`` rebuilds only
    those nodes: libcst keeps a subtree it is not asked to visit as it is. Nodes are
    their own keys: libcst nodes hash and compare by identity (``CSTNode.__hash__``).
    The targets are code: no whitespace or comment (``FORMATTING``) is looked into.
    """
    if any(type(target) in FORMATTING for target in targets):
        raise ValueError("on_paths_to finds code, not whitespace or comments")
    paths = _Paths(targets)
    walk_code(root, paths)
    return paths.found


#: ``on_leave(original, updated)`` of a transformer: the node that takes ``original``'s place
Leave = Callable[[cst.CSTNode, cst.CSTNode], "cst.CSTNode | cst.RemovalSentinel"]


def rebuild(node: cst.CSTNode, on_path: AbstractSet[cst.CSTNode], leave: Leave) -> cst.CSTNode | cst.RemovalSentinel:
    """``node.visit(transformer)`` for a transformer that visits only the nodes ``on_path``
    (``on_paths_to``) and leaves the rest as they are: the same nodes rebuilt, the same
    ``leave`` calls in the same order, without libcst calling back for every child of a
    rebuilt node. A node may be removed from a sequence (``RemoveFromParent``) only."""
    if node not in on_path:
        return node
    fields = _FIELDS.get(type(node)) or _learn(node)
    changes: dict[str, object] = {}
    for name in (*fields.visited, *fields.others):
        value = getattr(node, name)
        if type(value) is tuple or type(value) is list:
            if any(item in on_path for item in value):
                body = name == "body" and type(node) in _BODIES
                changes[name] = tuple(_rebuilt_items(value, on_path, leave, body))
        elif _is_node(value) and value in on_path:
            new = rebuild(value, on_path, leave)
            if not isinstance(new, cst.CSTNode):
                raise TypeError(f"a {type(value).__name__} cannot be removed from its {type(node).__name__}")
            changes[name] = new
    return leave(node, node.with_changes(**changes))  # a new node, as libcst makes one


#: whose ``body`` libcst visits as statements: one left empty (``_is_removable``) is dropped
_BODIES = (cst.Module, cst.IndentedBlock)


def _rebuilt_items(
    items: Sequence[cst.CSTNode], on_path: AbstractSet[cst.CSTNode], leave: Leave, body: bool
) -> list[cst.CSTNode]:
    out: list[cst.CSTNode] = []
    for item in items:
        new = rebuild(item, on_path, leave)
        if isinstance(new, cst.RemovalSentinel):
            continue
        if not isinstance(new, cst.CSTNode):
            raise TypeError(f"unexpected {new!r} in place of a {type(item).__name__}")
        if body and new._is_removable() and not item._is_removable():
            continue  # its small statements were all removed
        out.append(new)
    return out
