"""Name helpers: collect the identifiers a piece of code uses and pick ones that collide with none."""

from __future__ import annotations

import functools
import keyword
import re
from typing import Protocol, cast

import libcst as cst

from inliner.engine.walk import code_children


def names_in(node: cst.CSTNode) -> set[str]:
    """Every identifier spelled anywhere in ``node`` (a superset of what it binds or reads)."""
    return set(_names_in(node))


@functools.lru_cache(maxsize=256)
def _names_in(node: cst.CSTNode) -> frozenset[str]:
    # A lowering asks again about the same forward and backward; libcst nodes are
    # immutable and are their own keys (they hash and compare by identity).
    names: set[str] = set()
    _collect_names(node, names)
    return frozenset(names)


def _collect_names(node: cst.CSTNode, names: set[str]) -> None:
    kind = type(node)  # libcst's node classes are final: `is` says what isinstance would, faster
    if kind is cst.Name:
        names.add(node.value)  # type: ignore[attr-defined]
    elif kind is cst.Attribute or kind is cst.Arg:
        # `obj.attr` and `f(key=...)` spell names that are not variables.
        _collect_names(node.value, names)  # type: ignore[attr-defined]
        return
    for child in code_children(node):
        _collect_names(child, names)


def snake_case(name: str) -> str:
    text = re.sub(r"(?<=[a-z0-9])([A-Z])", r"_\1", name)
    text = re.sub(r"(?<=[A-Z])([A-Z][a-z])", r"_\1", text)
    text = text.strip("_").lower() or "function"
    return text


class TakenNames(Protocol):
    """Names already in use, as ``fresh`` reads and grows them: a ``set[str]``, or the
    module's names as the cache lets a lowering see them (``incremental.WatchedNames``)."""

    def __contains__(self, name: object, /) -> bool: ...

    def add(self, name: str, /) -> None: ...


def fresh(base: str, taken: TakenNames) -> str:
    """``base`` if free, else ``base_1``, ``base_2``...; the result is added to ``taken``."""
    if not base.isidentifier() or keyword.iskeyword(base):
        base = f"{base}_"
    candidate, n = base, 0
    while candidate in taken:
        n += 1
        candidate = f"{base}_{n}"
    taken.add(candidate)
    return candidate


class _Renamer(cst.CSTTransformer):
    def __init__(self, mapping: dict[str, str]) -> None:
        self.mapping = mapping

    def leave_Name(self, original: cst.Name, updated: cst.Name) -> cst.Name:
        new = self.mapping.get(original.value)
        return updated.with_changes(value=new) if new else updated

    # Attribute names and keyword argument names are not variables.
    def leave_Attribute(self, original: cst.Attribute, updated: cst.Attribute) -> cst.Attribute:
        return updated.with_changes(attr=original.attr)

    def leave_Arg(self, original: cst.Arg, updated: cst.Arg) -> cst.Arg:
        return updated.with_changes(keyword=original.keyword)


def rename(node: cst.CSTNodeT, mapping: dict[str, str]) -> cst.CSTNodeT:
    """Rename every ``Name`` in ``node`` (callers make sure no attribute or keyword is hit)."""
    return cast(cst.CSTNodeT, node.visit(_Renamer(mapping)))  # the renamer only replaces names


def dotted(node: cst.CSTNode) -> str | None:
    """``a.b.c`` for a Name/Attribute chain, else None."""
    if isinstance(node, cst.Name):
        return node.value
    if isinstance(node, cst.Attribute):
        head = dotted(node.value)
        return None if head is None else f"{head}.{node.attr.value}"
    return None


def unpack_statement(names: list[str], source: str) -> cst.SimpleStatementLine:
    """``a, b = source`` (``(a,) = source`` for one name): how bwd opens its residuals.

    ``source`` is an expression's text (``residuals``, ``residuals[2:]``)."""
    if len(names) == 1:
        target = cst.Tuple([cst.Element(cst.Name(names[0]))], lpar=[cst.LeftParen()], rpar=[cst.RightParen()])
    else:
        target = cst.Tuple([cst.Element(cst.Name(n)) for n in names], lpar=[], rpar=[])
    return cst.SimpleStatementLine([cst.Assign([cst.AssignTarget(target)], cst.parse_expression(source))])
