"""Facts about one function body that the lowering needs: where ctx is used, what is stored, where it returns.

Everything here is read-only analysis of a single ``FunctionDef``; it never
resolves names across the module (that is the expensive part of libcst metadata
and a Function body does not need it).
"""

from __future__ import annotations

import functools
from collections.abc import Mapping, Sequence
from dataclasses import dataclass, field

import libcst as cst

from inliner.engine.codes import Code
from inliner.engine.model import Refuse
from inliner.engine.walk import walk_code

#: asked of every ancestor of every store: compared as types (libcst's node classes are final)
_SCOPES = frozenset({cst.FunctionDef, cst.Lambda, cst.ClassDef})
_LOOPS = frozenset({cst.For, cst.While, cst.CompFor})
_BINDING_STATEMENTS = frozenset({cst.Assign, cst.AnnAssign, cst.NamedExpr, cst.For, cst.CompFor})


@dataclass
class CtxUse:
    kind: str  # "call" | "set" | "read" | "getattr" (``getattr(ctx, "name", constant)``, backward only)
    attr: str
    node: cst.CSTNode  # the Call, the Assign, or the Attribute
    small: cst.BaseSmallStatement | None  # the statement holding a call / set
    top_level: bool  # the statement is directly in the function body
    position: int
    in_loop: bool = False


@dataclass
class BodyFacts:
    ctx_uses: list[CtxUse] = field(default_factory=list)
    #: name -> (position, in a loop, in a nested scope) of each store (assignment, del, for/with/import...)
    stores: dict[str, list[tuple[int, bool, bool]]] = field(default_factory=dict)
    returns: list[tuple[cst.Return, int]] = field(default_factory=list)
    has_yield: bool = False


def _in_written_part(node: cst.CSTNode, parents: list[cst.CSTNode]) -> bool:
    """Is ``node`` inside what its statement stores into or deletes (an assignment, ``del``,
    ``for`` or ``with ... as`` target), rather than in what it reads (``x += ctx.a``,
    ``for v in ctx.items:``, ``with device(ctx.index):``)?"""
    child = node
    for p in reversed(parents):
        if isinstance(p, (cst.AssignTarget, cst.Del)):
            return True
        if isinstance(p, (cst.AugAssign, cst.AnnAssign, cst.For)):
            return child is p.target
        if isinstance(p, cst.WithItem):
            return child is p.asname
        if isinstance(p, (cst.BaseSmallStatement, cst.BaseCompoundStatement)):
            return False
        child = p
    return False


def is_truth_test(node: cst.Name, parents: list[cst.CSTNode]) -> bool:
    """``node`` is only tested for truth or for None: ``if ctx:``, ``not ctx``, ``ctx is not
    None``, ``assert ctx``, ``ctx and flag`` in such a test. Code written to also run as
    ``F.forward(None, ...)`` does this; under ``apply`` ctx is a truthy object that is not
    None, and so is a ctx record, so such a test reads the same of either."""
    child: cst.CSTNode = node
    for parent in reversed(parents):
        if isinstance(parent, (cst.If, cst.While, cst.IfExp, cst.Assert)) and parent.test is child:
            return True
        if isinstance(parent, cst.UnaryOperation) and isinstance(parent.operator, cst.Not):
            return True
        if isinstance(parent, cst.ComparisonTarget) and parent.comparator is child:
            continue  # `None is ctx`: the comparison is the next parent
        if isinstance(parent, cst.Comparison):
            return _compared_with_none(parent, child)
        if not isinstance(parent, cst.BooleanOperation):
            return False
        child = parent  # `ctx and flag` is tested in turn, or it is a value
    return False


def _compared_with_none(comparison: cst.Comparison, operand: cst.CSTNode) -> bool:
    if len(comparison.comparisons) != 1:
        return False
    (target,) = comparison.comparisons
    if not isinstance(target.operator, (cst.Is, cst.IsNot)):
        return False
    other = target.comparator if comparison.left is operand else comparison.left
    return isinstance(other, cst.Name) and other.value == "None"


def is_binding(node: cst.Name, parents: list[cst.CSTNode]) -> bool:
    """Is this ``Name`` bound (stored, deleted, declared) rather than read?

    Asked of every name in every method: node types are compared directly (libcst's node
    classes have no subclasses; ``isinstance`` goes through their ABC's hook)."""
    parent = parents[-1] if parents else None
    kind = type(parent)
    if kind in _NAMED_BINDERS:
        return parent.name is node  # type: ignore[union-attr]
    if kind is cst.NameItem:
        return True
    if kind is cst.ImportAlias:  # `import a`, `from m import a` (with `as b`, b is bound)
        return parent.asname is None  # type: ignore[union-attr]
    if kind is cst.MatchMapping:
        return parent.rest is node  # type: ignore[union-attr]
    if kind is cst.Attribute and _imported_root(node, parents):
        return True  # `import a.b` binds `a`
    child: cst.CSTNode = node
    for p in reversed(parents):
        kind = type(p)
        if kind in _UNPACKED:
            child = p
            continue
        if kind in _TARGET_HOLDERS:
            return p.target is child  # type: ignore[attr-defined]
        if kind is cst.AsName:  # `with f() as (a, b)`, `except E as e`, `import m as a`
            return p.name is child  # type: ignore[attr-defined]
        return False
    return False


#: nodes whose ``name`` is a binding: parameters, definitions, match captures
_NAMED_BINDERS = frozenset({cst.Param, cst.FunctionDef, cst.ClassDef, cst.MatchAs, cst.MatchStar})
#: nodes a target is unpacked through
_UNPACKED = frozenset({cst.Element, cst.Tuple, cst.List, cst.StarredElement})
#: nodes whose ``target`` is bound (``AssignTarget`` holds one target of an assignment)
_TARGET_HOLDERS = frozenset(
    {cst.AssignTarget, cst.AugAssign, cst.AnnAssign, cst.For, cst.CompFor, cst.NamedExpr, cst.Del}
)


def _imported_root(node: cst.Name, parents: list[cst.CSTNode]) -> bool:
    """``node`` is the first part of the dotted name of ``import a.b`` (without ``as``)."""
    child: cst.CSTNode = node
    for p in reversed(parents):
        if isinstance(p, cst.Attribute) and p.value is child:
            child = p
            continue
        return isinstance(p, cst.ImportAlias) and p.name is child and p.asname is None and child is not node
    return False


class _Walker(cst.CSTVisitor):
    def __init__(self, func: cst.FunctionDef, ctx: str | None, role: str) -> None:
        self.role = role
        self.func = func
        self.ctx = ctx
        self.stack: list[cst.CSTNode] = []
        self.facts = BodyFacts()
        self.counter = 0

    # -- bookkeeping -------------------------------------------------------
    def on_visit(self, node: cst.CSTNode) -> bool:
        self.counter += 1
        self.stack.append(node)
        kind = type(node)  # libcst's node classes are final: `is` says what isinstance would, faster
        if kind is cst.Name:
            self._name(node)  # type: ignore[arg-type]
        elif kind is cst.Return:
            if not self._in_nested_scope():
                self.facts.returns.append((node, self.counter))  # type: ignore[arg-type]
        elif kind is cst.Yield or kind is cst.Await:
            if not self._in_nested_scope():
                self.facts.has_yield = True
        if kind not in _BINDING_STATEMENTS:
            return True
        for child in _evaluation_order(node):
            walk_code(child, self)
        return False

    def on_leave(self, original_node: cst.CSTNode) -> None:
        self.stack.pop()

    def _in_nested_scope(self) -> bool:
        return any(type(n) in _SCOPES for n in self.stack[1:-1])

    def _in_loop(self) -> bool:
        return any(type(n) in _LOOPS for n in self.stack[1:])

    # -- names -------------------------------------------------------------
    def _name(self, node: cst.Name) -> None:
        parents = self.stack[:-1]
        parent = parents[-1] if parents else None
        if self._is_store(node, parents):
            if isinstance(parent, cst.Param) and len(parents) >= 3 and parents[-3] is self.func:
                return  # the function's own parameters are bindings, not re-bindings
            self.facts.stores.setdefault(node.value, []).append(
                (self.counter, self._in_loop(), self._in_nested_scope())
            )
            if node.value == self.ctx and not (isinstance(parent, cst.Param) and parent is self._ctx_param()):
                raise Refuse(Code.CTX_UNSUPPORTED, f"`{self.ctx}` is rebound", node)
            return
        if node.value != self.ctx or self.ctx is None:
            return
        if isinstance(parent, cst.Attribute) and parent.attr is node:
            return  # `something.ctx`, not our ctx
        if isinstance(parent, cst.Arg) and parent.keyword is node:
            return
        if any(type(n) in _SCOPES for n in parents[1:]):
            raise Refuse(Code.CTX_ESCAPES, f"`{self.ctx}` is used inside a nested function or class", node)
        if self.role == "backward" and self._getattr_with_default(node, parents):
            return
        if is_truth_test(node, parents):
            raise Refuse(Code.CTX_ESCAPES, f"`{self.ctx}` is tested for truth or None, as a value", node)
        if not (isinstance(parent, cst.Attribute) and parent.value is node):
            raise Refuse(Code.CTX_ESCAPES, f"`{self.ctx}` is passed to a helper or stored elsewhere", node)
        self._attribute_use(parent, parents[:-1])

    def _getattr_with_default(self, node: cst.Name, parents: list[cst.CSTNode]) -> bool:
        """``getattr(ctx, "name", <constant>)`` in backward: recorded as a "getattr" use."""
        if len(parents) < 2 or not isinstance(parents[-1], cst.Arg) or not isinstance(parents[-2], cst.Call):
            return False
        call = parents[-2]
        if not (isinstance(call.func, cst.Name) and call.func.value == "getattr" and len(call.args) == 3):
            return False
        first, key, default = call.args
        if first is not parents[-1] or any(a.keyword or a.star for a in call.args):
            return False
        name = key.value.evaluated_value if isinstance(key.value, cst.SimpleString) else None
        if not (isinstance(name, str) and name.isidentifier()):  # b"name" is a bytes literal
            return False
        if not _is_constant(default.value):
            return False
        self.facts.ctx_uses.append(CtxUse("getattr", name, call, None, False, self.counter))
        return True

    def _ctx_param(self) -> cst.Param | None:
        params = self.func.params.params or self.func.params.posonly_params
        return params[0] if params else None

    def _is_store(self, node: cst.Name, parents: list[cst.CSTNode]) -> bool:
        parent = parents[-1] if parents else None
        if parent is self.func:
            return False  # the function's own name
        return is_binding(node, parents)

    def _attribute_use(self, attr: cst.Attribute, parents: list[cst.CSTNode]) -> None:
        name = attr.attr.value
        parent = parents[-1]
        top = self._top_level_small(parents)
        if isinstance(parent, cst.Call) and parent.func is attr:
            small = parents[-2] if len(parents) >= 2 else None
            if not isinstance(small, cst.Expr) or small.value is not parent:
                raise Refuse(Code.CTX_UNSUPPORTED, f"the value of `{self.ctx}.{name}(...)` is used", parent)
            self.facts.ctx_uses.append(CtxUse("call", name, parent, small, top is small, self.counter, self._in_loop()))
            return
        if isinstance(parent, cst.AssignTarget) and parent.target is attr:
            assign = self._simple_set(parents[-2], attr)
            self.facts.ctx_uses.append(
                CtxUse("set", name, assign, assign, top is assign, self.counter, self._in_loop())
            )
            return
        if isinstance(parent, cst.Element) and len(parents) >= 4:
            tup, target, statement = parents[-2], parents[-3], parents[-4]
            if isinstance(tup, (cst.Tuple, cst.List)) and isinstance(target, cst.AssignTarget) and target.target is tup:
                assign = self._simple_set(statement, attr)
                self.facts.ctx_uses.append(
                    CtxUse("set", name, assign, assign, top is assign, self.counter, self._in_loop())
                )
                return
        if _in_written_part(attr, parents):
            if self.role == "backward":
                raise Refuse(Code.BACKWARD_WRITES_CTX, f"backward writes `{self.ctx}.{name}`", attr)
            raise Refuse(
                Code.CTX_UNSUPPORTED, f"`{self.ctx}.{name}` is written in a form the engine cannot follow", attr
            )
        self.facts.ctx_uses.append(CtxUse("read", name, attr, None, False, self.counter, self._in_loop()))

    def _simple_set(self, assign: cst.CSTNode, attr: cst.Attribute) -> cst.Assign:
        """``assign`` (which holds the target ``attr``) as a single-target assignment, or refuse."""
        if not isinstance(assign, cst.Assign) or len(assign.targets) != 1:
            raise Refuse(
                Code.CTX_UNSUPPORTED, f"`{self.ctx}.{attr.attr.value}` is assigned in a chained assignment", attr
            )
        return assign

    def _top_level_small(self, parents: list[cst.CSTNode]) -> cst.CSTNode | None:
        # stack: [FunctionDef, IndentedBlock, SimpleStatementLine, small, ...]
        if (
            len(parents) >= 4
            and isinstance(parents[1], cst.IndentedBlock)
            and isinstance(parents[2], cst.SimpleStatementLine)
        ):
            return parents[3]
        return None


def _evaluation_order(node: cst.CSTNode) -> list[cst.CSTNode]:
    """The children of a binding statement (``_BINDING_STATEMENTS``) in the order Python evaluates them.

    libcst lists an assignment's targets before its value; Python evaluates the value
    first. Positions must follow evaluation, or ``ctx.s = ctx.s or x`` would look like
    a read after the set (a read of an attribute not set yet is the original's error).
    """
    if isinstance(node, cst.Assign):
        return [node.value, *node.targets]
    if isinstance(node, cst.AnnAssign):
        return [node.annotation, *([node.value] if node.value is not None else []), node.target]
    if isinstance(node, cst.NamedExpr):
        return [node.value, node.target]
    if isinstance(node, cst.For):
        return [node.iter, node.target, node.body, *([node.orelse] if node.orelse is not None else [])]
    if isinstance(node, cst.CompFor):
        return [node.iter, node.target, *node.ifs, *([node.inner_for_in] if node.inner_for_in is not None else [])]
    raise TypeError(f"not a binding statement: {type(node).__name__}")


def _is_constant(expr: cst.BaseExpression) -> bool:
    """A literal whose value does not depend on when it is evaluated."""
    if isinstance(expr, (cst.Integer, cst.Float, cst.Imaginary, cst.SimpleString)):
        return True
    if isinstance(expr, cst.Name):
        return expr.value in ("None", "True", "False")
    if isinstance(expr, cst.UnaryOperation) and isinstance(expr.operator, cst.Minus):
        return isinstance(expr.expression, (cst.Integer, cst.Float))
    return False


def analyse(func: cst.FunctionDef, ctx: str | None, role: str = "forward") -> BodyFacts:
    return _analyse_without_ctx(func) if ctx is None else _walked(func, ctx, role)


@functools.lru_cache(maxsize=256)
def _analyse_without_ctx(func: cst.FunctionDef) -> BodyFacts:
    # Asked again for the same function by the checks of one lowering (its stores, whether
    # it yields); read only. libcst nodes are immutable and their own keys.
    return _walked(func, None, "forward")


def _walked(func: cst.FunctionDef, ctx: str | None, role: str) -> BodyFacts:
    walker = _Walker(func, ctx, role)
    walk_code(func, walker)
    return walker.facts


def always_returns(stmts: Sequence[cst.BaseStatement | cst.BaseSmallStatement]) -> bool:
    """True when control can never fall off the end of ``stmts`` (a one-line suite's small
    statements never count as returning)."""
    if not stmts:
        return False
    last = stmts[-1]
    if isinstance(last, cst.SimpleStatementLine):
        return any(isinstance(s, (cst.Return, cst.Raise)) for s in last.body)
    if isinstance(last, cst.If):
        if last.orelse is None:
            return False
        other = last.orelse
        other_body = other.body.body if isinstance(other, cst.Else) else [other]
        return always_returns(last.body.body) and always_returns(other_body)
    return False


def definitely_assigned_at_returns(
    body: tuple[cst.BaseStatement, ...], defines: Mapping[cst.CSTNode, set[str]]
) -> dict[cst.Return, frozenset[str]]:
    """For each top-function ``Return`` the residuals certainly assigned when it runs.

    ``defines`` maps small statement -> residual names it assigns (nodes are keys by
    identity). The analysis is conservative: loops may run zero times, try bodies may
    stop anywhere.
    """
    at_return: dict[cst.Return, frozenset[str]] = {}

    def block(stmts, assigned: frozenset[str]) -> frozenset[str]:
        for stmt in stmts:
            assigned = statement(stmt, assigned)
        return assigned

    def suite(node) -> tuple:
        return tuple(node.body)

    def statement(stmt, assigned: frozenset[str]) -> frozenset[str]:
        if isinstance(stmt, cst.SimpleStatementLine):
            for small in stmt.body:
                assigned = assigned | frozenset(defines.get(small, ()))
                if isinstance(small, cst.Return):
                    at_return[small] = assigned
            return assigned
        if isinstance(stmt, cst.If):
            a1 = block(suite(stmt.body), assigned)
            if stmt.orelse is None:
                return assigned & a1 if not always_returns(suite(stmt.body)) else assigned
            if isinstance(stmt.orelse, cst.If):
                a2 = statement(stmt.orelse, assigned)
                other_returns = False
            else:
                a2 = block(suite(stmt.orelse.body), assigned)
                other_returns = always_returns(suite(stmt.orelse.body))
            if always_returns(suite(stmt.body)):
                return a2
            if other_returns:
                return a1
            return a1 & a2
        if isinstance(stmt, (cst.For, cst.While)):
            block(suite(stmt.body), assigned)
            if stmt.orelse is not None:
                block(suite(stmt.orelse.body), assigned)
            return assigned
        if isinstance(stmt, cst.With):
            return block(suite(stmt.body), assigned)
        if isinstance(stmt, (cst.Try, cst.TryStar)):
            after_body = block(suite(stmt.body), assigned)
            for handler in stmt.handlers:
                block(suite(handler.body), assigned)
            if stmt.orelse is not None:
                block(suite(stmt.orelse.body), after_body)
            if stmt.finalbody is not None:
                return block(suite(stmt.finalbody.body), assigned)
            return assigned
        if isinstance(stmt, cst.Match):
            for case in stmt.cases:
                block(suite(case.body), assigned)
            return assigned
        return assigned  # nested def/class: not ours

    block(body, frozenset())
    return at_return
