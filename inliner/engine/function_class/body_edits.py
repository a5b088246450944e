"""Per-node edits of a function body, applied in one pass that rebuilds only what they touch.

The named lowering decides, node by node of the original forward or backward, what
takes its place: a small statement (or nothing), a ctx read, a return. The nodes
themselves are the keys: libcst nodes hash and compare by identity
(``CSTNode.__hash__``), so an edit applies to that node and never to an equal copy.
"""

from __future__ import annotations

from collections.abc import Callable
from dataclasses import dataclass, field

import libcst as cst

from inliner.engine.walk import on_paths_to, rebuild


@dataclass
class BodyEdits:
    """What replaces which node of one function: the plan both halves of the lowering fill."""

    #: a small statement -> its replacement, or None to remove it
    smalls: dict[cst.CSTNode, cst.BaseSmallStatement | None] = field(default_factory=dict)
    #: a ctx read (``ctx.attr``, ``getattr(ctx, ...)``) -> the expression that replaces it
    attributes: dict[cst.CSTNode, cst.BaseExpression] = field(default_factory=dict)
    #: a top-level ``Return`` -> how to rebuild it
    returns: dict[cst.CSTNode, Callable[[cst.Return], cst.Return]] = field(default_factory=dict)

    def apply(self, func: cst.FunctionDef) -> cst.FunctionDef:
        """``func`` with every edit made; the nodes no edit touches are kept as they are."""
        targets = set(self.smalls) | set(self.attributes) | set(self.returns)
        new = rebuild(func, on_paths_to(func, targets), _BodyRewriter(self).on_leave)
        assert isinstance(new, cst.FunctionDef)
        return new


def split_leading(stmt: cst.SimpleStatementLine) -> tuple[tuple[cst.EmptyLine, ...], tuple[cst.EmptyLine, ...]]:
    """(leading lines up to the last blank one, the comment lines right above the statement):
    the second are the statement's own, the first are about what follows them."""
    lines = stmt.leading_lines
    blank = max((i for i, line in enumerate(lines) if line.comment is None), default=-1)
    return tuple(lines[: blank + 1]), tuple(lines[blank + 1 :])


class _NodeReplacer(cst.CSTTransformer):
    """Replace the nodes that are keys of ``replacements`` (nodes of the original body)."""

    def __init__(self, replacements: dict[cst.CSTNode, cst.BaseExpression]) -> None:
        self.replacements = replacements

    def on_leave(self, original_node, updated_node):
        return self.replacements.get(original_node, updated_node)


class _BodyRewriter:
    """Apply per-node replacements decided by the analysis (``on_leave`` of a ``rebuild``:
    only the nodes on a path to a replacement are rebuilt, the rest is kept as it is)."""

    def __init__(self, edits: BodyEdits) -> None:
        self.smalls = edits.smalls
        self.attributes = edits.attributes
        self.returns = edits.returns
        self.emptied: set[cst.CSTNode] = set()

    def on_leave(self, original_node, updated_node):
        if original_node in self.smalls:
            replacement = self.smalls[original_node]
            if replacement is None:
                return cst.RemoveFromParent()
            # A replacement is built from the original statement's parts: the ctx reads
            # inside them (``ctx.b = ctx.a * 2``) still need their own replacements.
            return replacement.visit(_NodeReplacer(self.attributes))
        if original_node in self.attributes:
            return self.attributes[original_node]
        if original_node in self.returns:
            return self.returns[original_node](updated_node)
        if isinstance(updated_node, cst.SimpleStatementLine) and not updated_node.body:
            # Keep the line until its block is rebuilt, so its comments can move on.
            placeholder = updated_node.with_changes(body=[cst.Pass()])
            self.emptied.add(placeholder)
            return placeholder
        if isinstance(updated_node, cst.IndentedBlock):
            return self._drop_emptied(updated_node)
        return updated_node

    def _drop_emptied(self, block: cst.IndentedBlock) -> cst.IndentedBlock:
        if not any(s in self.emptied for s in block.body):
            return block
        body: list[cst.BaseStatement] = []
        carried: list[cst.EmptyLine] = []
        for stmt in block.body:
            if stmt in self.emptied:
                assert isinstance(stmt, cst.SimpleStatementLine)
                # Its own comments (on the line, or right above it) go with it; a comment
                # a blank line apart is about what follows, and stays.
                apart, _ = split_leading(stmt)
                carried.extend(line for line in apart if line.comment is not None)
                continue
            if carried:
                stmt = stmt.with_changes(leading_lines=(*carried, *stmt.leading_lines))  # type: ignore[attr-defined]
                carried = []
            body.append(stmt)
        if not body:
            body.append(cst.SimpleStatementLine([cst.Pass()], leading_lines=carried))
            carried = []
        footer = (*carried, *block.footer)
        return block.with_changes(body=body, footer=footer)
