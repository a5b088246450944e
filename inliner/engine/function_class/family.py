"""A ``Function`` class and its same-scope subclasses, a family flattened all or none:
which classes derive from which, what the others become when one cannot be flattened,
how the module uses a member (attributes its relatives define are readable), and what
a subclass inherits from its base's lowering."""

from __future__ import annotations

import ast
from collections.abc import Callable

import libcst as cst

from inliner.engine.analysis.scopes import Scope, ScopeIndex
from inliner.engine.candidate import Candidate
from inliner.engine.codes import Code
from inliner.engine.function_class.class_uses import Parents, RefuseAt, class_uses
from inliner.engine.function_class.kept_class import AUTOGRAD_MEMBERS, FUNCTION_ATTRIBUTES, split_class_body
from inliner.engine.function_class.lower_function import Inherited
from inliner.engine.function_class.meant_as_base import BaseCheck
from inliner.engine.model import Refusal
from inliner.engine.source import Block, SourceText, end_column, end_line, start_line


def subclass_candidates(
    classes: list[ast.ClassDef], candidates: list[Candidate], index: ScopeIndex, text: SourceText
) -> list[Candidate]:
    """Classes deriving from a Function class of the same scope (and from nothing else):
    flattened together with it, or left with it."""
    by_node: dict[ast.AST, Candidate] = {c.node: c for c in candidates if c.kind == "class"}
    out = []
    for cls in classes:  # source order: a base comes before its subclasses
        if cls in by_node or len(cls.bases) != 1 or cls.keywords or not isinstance(cls.bases[0], ast.Name):
            continue
        outer, _ = index.class_scopes[cls]
        bindings = outer.bindings.get(cls.bases[0].id, ())
        if index.lookup(cls.bases[0].id, outer) is not outer or len(bindings) != 1:
            continue
        base = by_node.get(bindings[0].node)
        if base is None:
            continue
        first_line = start_line(cls)
        line, col = text.class_name_position(cls)
        candidate = Candidate(
            "class", cls.name, first_line, end_line(cls), (line, col, col + len(cls.name)), cls, base=base
        )
        candidate.generation = base.generation + 1
        by_node[cls] = candidate
        out.append(candidate)
    return out


def body_scope(member: Candidate, index: ScopeIndex) -> Scope:
    """The scope of a class family member's body (every member is a class)."""
    assert isinstance(member.node, ast.ClassDef)
    return index.class_scopes[member.node][1]


def root_of(candidate: Candidate) -> Candidate:
    while candidate.base is not None:
        candidate = candidate.base
    return candidate


def flatten_family(
    root: Candidate,
    candidates: list[Candidate],
    bases: BaseCheck,
    flatten: Callable[[Candidate, list[Candidate]], list[tuple[int, int, str]]],
) -> list[tuple[int, int, str]]:
    """Flatten a Function class and its same-scope subclasses, all or none: a subclass
    left a Function cannot derive from a kept class, nor a flattened one from a Function;
    a subclass meant as a base keeps the family as written.

    ``flatten(member, family)`` flattens one member, its refusal (or an engine bug) recorded
    as the member's outcome."""
    family = [c for c in candidates if root_of(c) is root and c.outcome is None]
    edits: list[tuple[int, int, str]] = []
    for member in family:
        assert isinstance(member.node, ast.ClassDef)
        as_base = (
            bases.refusal(member.node, [_class_node(a) for a in ancestors(member)]) if member.base is not None else None
        )
        if as_base is not None:
            member.outcome, member.refusal_position = as_base
        else:
            edits.extend(flatten(member, family))
        if isinstance(member.outcome, Refusal):
            for other in family:
                if other is not member:
                    other.outcome = Refusal(Code.USED_AS_FUNCTION, _family_reason(other, member), None)
                    other.refusal_position = None
            return []
    return edits


def _class_node(candidate: Candidate) -> ast.ClassDef:
    assert isinstance(candidate.node, ast.ClassDef)
    return candidate.node


def _family_reason(other: Candidate, failed: Candidate) -> str:
    if derives(failed, other):
        relation = "subclass"
    elif derives(other, failed):
        relation = "base"
    else:
        relation = "sibling"
    return f"its {relation} {failed.name} (line {failed.first_line}) cannot be flattened, and they stay or go together"


def derives(candidate: Candidate, ancestor: Candidate) -> bool:
    base = candidate.base
    while base is not None:
        if base is ancestor:
            return True
        base = base.base
    return False


def ancestors(candidate: Candidate) -> list[Candidate]:
    """The candidates of its family it derives from, nearest first."""
    found = []
    base = candidate.base
    while base is not None:
        found.append(base)
        base = base.base
    return found


def module_uses(candidate: Candidate, family: list[Candidate], index: ScopeIndex, text: SourceText, parents: Parents):
    """How the module uses the class (``class_uses``); a refusal points at the use.

    Readable attributes are those its bases and its subclasses define: ``cls.hook`` in a
    base may mean a subclass's hook (read from the base itself, it is missing either way).
    """
    cls = candidate.node
    assert isinstance(cls, ast.ClassDef)
    readable: set[str] = set()
    related = [c for c in family if c is candidate or derives(candidate, c) or derives(c, candidate)]
    for member in related:
        readable |= set(body_scope(member, index).bindings)
    readable -= AUTOGRAD_MEMBERS | FUNCTION_ATTRIBUTES
    try:
        return class_uses(cls, index, parents, readable=readable)
    except RefuseAt as refuse:
        at = refuse.at
        candidate.refusal_position = (
            at.lineno,
            text.char_column(at.lineno, at.col_offset),
            end_line(at),
            text.char_column(end_line(at), end_column(at)),
        )
        raise


def inherited_by_subclasses(
    candidate: Candidate, node: cst.ClassDef, inherited: Inherited | None, qualified
) -> Inherited:
    body = split_class_body(node, is_classmethod=lambda expr: "builtins.classmethod" in qualified(expr))
    members = {**(inherited.members if inherited else {}), **body.members}
    generate_vmap_rule = body.generate_vmap_rule
    if generate_vmap_rule is None and inherited is not None:
        generate_vmap_rule = inherited.generate_vmap_rule
    defines_symbolic = body.symbolic or (inherited is not None and inherited.symbolic_base is not None)
    return Inherited(members, generate_vmap_rule, candidate.name if defines_symbolic else None)


def decorator_nodes(inherited: Inherited, node: cst.ClassDef) -> list[cst.CSTNode]:
    """Decorators of a class's own autograd members resolve in its body, also when a
    subclass inherits them: their expressions (and their callees)."""
    own = [m for m in inherited.members.values() if any(m is s for s in node.body.body)]
    found: list[cst.CSTNode] = []
    for member in own:
        for decorator in member.decorators:
            expr = decorator.decorator
            found.append(expr)
            if isinstance(expr, cst.Call):
                found.append(expr.func)
    return found


def base_blocks(candidate: Candidate) -> list[Block]:
    out = []
    base = candidate.base
    while base is not None:
        if base.block is not None:
            out.append(base.block)
        base = base.base
    return out
