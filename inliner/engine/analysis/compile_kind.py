"""Decide, per flattened Function, how ``torch.compile`` may treat its flat callable.

A flat callable that dynamo puts in the graph whole (``allow_in_graph``) is run by
AOTAutograd once, on fake tensors, at trace time. That is right for bodies that are
pure torch code and wrong for the rest, so each Function gets one of three kinds:

- ``traceable``: every call is provably torch (or a pure builtin, or a same-file helper
  that is itself traceable) and nothing escapes the bodies;
- ``side_effecting``: a body writes what it did not create (a global, a nonlocal, an
  attribute or item of an argument or of a module-level object), mutates such an object
  (``append``, ``update``...), does I/O (``print``, logging, warnings, files), or calls
  a callable passed in as an argument or stored on ctx: the original did that on every
  call, a traced flat callable would do it once;
- ``opaque``: anything else not provably torch: numpy, extension modules, other
  project code, kernel launches ``k[grid](...)``, ``.tolist()``/``.item()`` and other
  values fake tensors cannot produce, branches on tensor data.

Side effects win over opacity; the reason names the first offending call or write, and
the body (``forward``, ``backward``, ``jvp``). What cannot be proven traceable is not:
an eager island is slower than a traced call, never wrong. In-place tensor operations
(``x.add_(1)``, ``grad[mask] = 0`` on a tensor) are torch semantics, not side effects.

The walk is over CPython ``ast`` of the *emitted* flat functions, where ctx is gone:
what forward stored on ctx reaches bwd as a residual, so a callable kept on ctx is a
value bwd did not create. Free names are resolved with the engine's scope index.
"""

from __future__ import annotations

import ast
import dataclasses
from collections.abc import Callable, Iterable
from dataclasses import dataclass

from inliner.engine.analysis.compile_calls import (
    HelperRecord,
    check_call,
    computes_on_tensor_data,
    every_binding,
    fresh_container,
    returns_new_object,
)
from inliner.engine.analysis.compile_calls import root_name as _root_name
from inliner.engine.analysis.compile_calls import text_of as _text
from inliner.engine.analysis.compile_locals import Local as _Local
from inliner.engine.analysis.compile_locals import ScopeNode as _ScopeNode
from inliner.engine.analysis.compile_locals import make_scope as _make_scope
from inliner.engine.analysis.compile_tables import OPAQUE, SIDE_EFFECTING, TRACEABLE
from inliner.engine.analysis.compile_writes import write_kind
from inliner.engine.analysis.module_writes import names_mutated_in
from inliner.engine.analysis.scopes import Scope, ScopeIndex, dotted
from inliner.engine.analysis.static_nones import static_nones
from inliner.engine.analysis.visitor import Visitor

KINDS = (TRACEABLE, OPAQUE, SIDE_EFFECTING)
_RANK = {TRACEABLE: 0, OPAQUE: 1, SIDE_EFFECTING: 2}
_MAX_HELPER_DEPTH = 8
_MAX_REACHING_DEPTH = 8  # assignments followed back from one use before the answer over every binding


@dataclass(frozen=True)
class CompileKind:
    """How a flat callable may be compiled, and why (empty reason when traceable).

    ``kind`` is the worst of the bodies' (what reports show); ``forward`` (forward and jvp)
    and ``backward`` are each body's own where they were classified apart: a backward
    alone that is not traceable does not keep the forward from being traced (the split
    path, ``inliner.runtime._split``). An override sets one kind for both (None here)."""

    kind: str = TRACEABLE
    reason: str = ""
    origin: str = "inferred"  # "inferred" | "pragma" | "config"
    forward: CompileKind | None = None
    backward: CompileKind | None = None
    #: positions whose gradient every return of the backward gives as a literal None
    #: (None: not known), see ``static_nones``
    backward_nones: tuple[int, ...] | None = None
    #: a side-effecting forward's: the arguments it writes into, when those writes are
    #: all its effects (``Finding.argument``)
    argument_writes: tuple[int, ...] = ()

    @property
    def traceable(self) -> bool:
        return self.kind == TRACEABLE

    def part(self, role: str) -> CompileKind:
        """The kind of the forward (``"forward"``) or the backward (``"backward"``) alone."""
        own = self.forward if role == "forward" else self.backward
        return own if own is not None else CompileKind(self.kind, self.reason, self.origin)


@dataclass(frozen=True)
class Finding:
    kind: str
    text: str  # a verb phrase: "calls numpy.sin", "appends to module-level LOG"
    position: tuple[int, int] = (0, 0)
    #: a backward's write into one of its residuals (``seen.append(1)``, ``cache[k] = v``)
    changes_residual: bool = False
    #: a forward's write into what its caller passed at this position (``seen.append(x)``)
    argument: int | None = None


def worst(findings: Iterable[Finding]) -> Finding | None:
    """The first finding of the highest kind (findings come in body and source order)."""
    best: Finding | None = None
    for finding in findings:
        if best is None or _RANK[finding.kind] > _RANK[best.kind]:
            best = finding
    return best


CLASS_RESIDUALS = "stored on ctx"  # where a class's residuals come from, in the reasons
CALL_RESIDUALS = "saved by the forward body"  # an op call's


@dataclass
class Body:
    """One flat function to classify, and what the lowering knows about its parameters."""

    role: str  # "forward" | "backward" | "jvp"
    func: ast.FunctionDef
    tensors: frozenset[str] = frozenset()  # names certainly bound to tensors (grads, saved tensors)
    residuals: frozenset[str] = frozenset()  # names bwd unpacks from its residuals
    residual_source: str = CLASS_RESIDUALS
    record: str = ""  # a ctx record's variable: runtime state the body owns, as ctx was
    record_call: ast.Call | None = None  # fwd's ``Record(...)`` that makes it


#: ``names_mutated_in`` for one top-level statement, possibly remembered from an earlier text
StatementFacts = Callable[[ast.stmt], frozenset[str]]


class ModuleFacts:
    """Per module: the scope index, the module-level names changed at run time, helper results."""

    def __init__(
        self,
        tree: ast.Module,
        index: ScopeIndex,
        of_statement: StatementFacts | None = None,
        text_of: Callable[[ast.stmt], str] | None = None,
    ) -> None:
        self.index = index
        self._tree = tree
        self._of_statement = of_statement or names_mutated_in
        self._text_of = text_of
        self._changed: dict[str, bool] = {}
        self._texts: list[tuple[ast.stmt, str | None]] | None = None
        self._answers: dict[ast.stmt, frozenset[str]] = {}
        self._helpers: dict[
            tuple[ast.FunctionDef | ast.AsyncFunctionDef, HelperRecord | None, bool], Finding | None
        ] = {}
        self._in_progress: set[tuple[ast.FunctionDef | ast.AsyncFunctionDef, HelperRecord | None, bool]] = set()

    def changes(self, name: str) -> bool:
        """Whether some function of the module changes the module-level ``name`` (see
        ``names_mutated_in``). Asked only for a module-level name a body reads that is not
        an import; only the top-level statements whose text mentions ``name`` are walked."""
        known = self._changed.get(name)
        if known is None:
            known = self._changed[name] = any(
                name in self._mutated_in(statement)
                for statement, text in self._statements()
                if text is None or name in text
            )
        return known

    def _mutated_in(self, statement: ast.stmt) -> frozenset[str]:
        answer = self._answers.get(statement)
        if answer is None:
            answer = self._answers[statement] = self._of_statement(statement)
        return answer

    def _statements(self) -> list[tuple[ast.stmt, str | None]]:
        """The top-level statements, each with its text when known (sliced once per module)."""
        if self._texts is None:
            text_of = self._text_of
            self._texts = [(s, text_of(s) if text_of else None) for s in self._tree.body]
        return self._texts

    def helper(
        self,
        func: ast.FunctionDef | ast.AsyncFunctionDef,
        scope: Scope,
        depth: int,
        record: HelperRecord | None = None,
        in_forward: bool = False,
    ) -> Finding | None:
        """The worst finding in a same-file helper (None: traceable), computed once per way
        it is called: with or without the ctx record at one of its parameters, from a
        forward or not."""
        key = (func, record, in_forward)
        if key in self._helpers:
            return self._helpers[key]
        if key in self._in_progress or depth > _MAX_HELPER_DEPTH:
            return Finding(OPAQUE, "is recursive or nested too deeply to follow")
        self._in_progress.add(key)
        try:
            result = _helper_finding(func, scope, self, depth, record, in_forward)
        finally:
            self._in_progress.discard(key)
        self._helpers[key] = result
        return result


def classify(bodies: list[Body], scope: Scope, facts: ModuleFacts) -> CompileKind:
    """The kind of a flattened Function from its flat bodies; ``scope`` is where their free names resolve."""
    findings: list[Finding] = []
    backward_findings: list[Finding] = []
    nones: tuple[int, ...] | None = ()
    for body in bodies:
        found = _Walker(body.func, scope, facts, body=body).run()
        named = [dataclasses.replace(f, text=f"{body.role} {f.text}") for f in found]
        if body.role == "backward":
            backward_findings.extend(named)
            nones = static_nones(body.func)
        findings.extend(named)
    changed = next((f for f in backward_findings if f.changes_residual), None)
    if changed is not None:
        # a list or dict among them is rebuilt for each compiled backward (the split path), where
        # the original's second backward, or its caller, sees the change: the call stays eager
        text = f"{changed.text}, which a compiled call would rebuild for each backward"
        findings.append(Finding(SIDE_EFFECTING, text, changed.position))
    first = worst(findings)
    if first is None or first.kind == TRACEABLE:
        return CompileKind()
    forward = _forward_kind([f for f in findings if f not in backward_findings])
    return CompileKind(
        first.kind, first.text, forward=forward, backward=_kind_of(backward_findings), backward_nones=nones
    )


def _kind_of(findings: list[Finding]) -> CompileKind:
    first = worst(findings)
    return CompileKind() if first is None else CompileKind(first.kind, first.text)


def _forward_kind(findings: list[Finding]) -> CompileKind:
    """The forward's kind, with the arguments it writes into where those are all its
    effects: dynamo guards what a caller hands over, so a list there recompiles the
    original and an island alike (``inliner.runtime._dynamo``, argument effects)."""
    kind = _kind_of(findings)
    effects = [f.argument for f in findings if f.kind == SIDE_EFFECTING]
    if not effects or None in effects:
        return kind
    return dataclasses.replace(kind, argument_writes=tuple(sorted({a for a in effects if a is not None})))


def _helper_finding(
    func, scope: Scope, facts: ModuleFacts, depth: int, record: HelperRecord | None, in_forward: bool
) -> Finding | None:
    if isinstance(func, ast.AsyncFunctionDef) or any(isinstance(n, (ast.Yield, ast.YieldFrom)) for n in ast.walk(func)):
        return Finding(OPAQUE, "is a generator or coroutine")
    for decorator in func.decorator_list:
        target = decorator.func if isinstance(decorator, ast.Call) else decorator
        name = dotted(target)
        qualified = facts.index.qualify(name, scope) if name else {"<local>"}
        if not qualified or not all(q in _GRAD_MODE_DECORATORS for q in qualified):
            return Finding(OPAQUE, f"has the decorator @{_text(decorator)}")
    return worst(_Walker(func, scope, facts, depth=depth + 1, record=record, in_forward=in_forward).run())


_GRAD_MODE_DECORATORS = frozenset({"torch.no_grad", "torch.enable_grad", "torch.inference_mode"})


# -- the walk -----------------------------------------------------------------------------------


class _Walker(Visitor):
    """Walk one function (a flat body or a helper) and record findings in source order."""

    def __init__(
        self,
        func: ast.FunctionDef | ast.AsyncFunctionDef,
        scope: Scope,
        facts: ModuleFacts,
        *,
        body: Body | None = None,
        depth: int = 0,
        record: HelperRecord | None = None,
        in_forward: bool = False,
    ) -> None:
        self.func = func
        #: a forward's body, or a helper a forward calls: dynamo traces it as the original's forward
        self.in_forward = in_forward or (body is not None and body.role == "forward")
        #: a backward's own body: AOTAutograd traces it when the forward compiles
        self.in_backward = body is not None and body.role == "backward"
        #: the ctx record's name here, and whether this body's writes to it are the original's ctx writes
        if body is not None:
            self.record, self.owns_record = body.record, body.record_call is not None
        elif record is not None:
            self.record, self.owns_record = record.param, record.owned
        else:
            self.record, self.owns_record = "", False
        #: the record is backward's, whose attribute writes the lowering judges (``backward_writes_ctx``)
        self.backward_record = bool(self.record) and (self.in_backward or (record is not None and record.from_backward))
        self.outer = scope  # where free names resolve
        self.facts = facts
        self.body = body
        self.depth = depth
        self.findings: list[Finding] = []
        self.discarded: set[ast.Call] = set()  # calls whose result is thrown away
        self.scope: _Local | None = None
        self.reaching_depth = 0  # how many reaching assignments ``_origin_external`` is following

    def run(self) -> list[Finding]:
        tensors = self.body.tensors if self.body is not None else frozenset()
        self.scope = self._open(self.func, None, tensors)
        for statement in self.func.body:
            self.visit(statement)
        return sorted(self.findings, key=lambda f: f.position)

    def note(self, node: ast.AST, kind: str, text: str, *, into: ast.AST | None = None) -> None:
        """A finding at ``node``; ``into``: the object a write goes into (a residual's is flagged)."""
        if kind != TRACEABLE:
            position = (getattr(node, "lineno", 0), getattr(node, "col_offset", 0))
            changes = into is not None and self.in_backward and self._is_residual(into)
            argument = self._argument(into) if into is not None else None
            self.findings.append(Finding(kind, text, position, changes_residual=changes, argument=argument))

    def _argument(self, expr: ast.AST) -> int | None:
        """The position of the forward's own parameter ``expr`` names (``seen`` in
        ``seen.append(x)``, not ``seen.data`` or ``seen[0]``: the runtime reads the type of
        what the caller passed), when the forward never rebinds it; None elsewhere."""
        if not isinstance(expr, ast.Name) or not self.own_parameter(expr.id):
            return None
        positional = [a.arg for a in (*self.func.args.posonlyargs, *self.func.args.args)]
        return positional.index(expr.id) if expr.id in positional else None

    def own_parameter(self, name: str) -> bool:
        """``name`` is a parameter of the forward body itself that it never rebinds: what
        the caller passed."""
        if self.body is None or self.body.role != "forward":
            return False
        scope = self.lookup(name)
        if scope is None or scope.parent is not None or name not in scope.params:
            return False
        return not any(bound == name for bound, _ in scope.bindings)

    def _is_residual(self, expr: ast.AST, depth: int = 0) -> bool:
        """``expr`` reaches into one of bwd's residuals (what forward kept on ctx), directly
        or through a local bound to one (``kept = seen``; any of its bindings)."""
        root = _root_name(expr)
        scope = self.lookup(root) if root is not None else None
        if scope is None or self.body is None:
            return False
        if scope.parent is None and root in self.body.residuals:
            return True
        return depth < 4 and any(
            name == root and value is not None and self._is_residual(value, depth + 1) for name, value in scope.bindings
        )

    # -- scopes -------------------------------------------------------------------------
    def _open(self, node: _ScopeNode, parent: _Local | None, own: frozenset[str] = frozenset()) -> _Local:
        scope = _make_scope(node, parent, own, own)
        self.scope = scope
        _settle_origins(scope, self)
        return scope

    def _nested(self, node: _ScopeNode, parts: list[ast.AST]) -> None:
        saved = self.scope
        self._open(node, saved)
        for part in parts:
            self.visit(part)
        self.scope = saved

    def lookup(self, name: str) -> _Local | None:
        """The scope inside the walked function that binds ``name`` (None: a free name)."""
        scope = self.scope
        while scope is not None:
            if name in scope.declared_global:
                return None
            if name in scope.names and name not in scope.declared_nonlocal:
                return scope
            scope = scope.parent
        return None

    def is_external(self, expr: ast.AST) -> bool:
        return _origin_external(expr, self)

    def is_record(self, expr: ast.AST) -> bool:
        """``expr`` is the ctx record the lowering made (``state = Record(...)``, or unpacked from the residuals)."""
        record = self.record
        return (
            bool(record)
            and isinstance(expr, ast.Name)
            and expr.id == record
            and self.scope is not None
            and self.scope.parent is None
        )

    def _reaches_record(self, expr: ast.AST) -> bool:
        """``expr`` names the ctx record, here or from a function nested in the body (a
        closure's ``state.cache = ...``, which the lowering counts as a ctx write too)."""
        if not isinstance(expr, ast.Name) or expr.id != self.record:
            return False
        scope = self.lookup(expr.id)
        return scope is not None and scope.parent is None

    # -- names: free reads of changing globals -----------------------------------------------
    def visit_Name(self, node: ast.Name) -> None:
        if isinstance(node.ctx, ast.Load) and self.lookup(node.id) is None:
            found = self.facts.index.lookup(node.id, self.outer)
            imported = found is not None and all(b.kind == "import" for b in found.bindings.get(node.id, ()))
            if found is not None and found.is_module and not imported and self.facts.changes(node.id):
                self.note(node, OPAQUE, f"reads module-level {node.id}, which the module changes at run time")

    # -- nested scopes ------------------------------------------------------------------------
    def visit_FunctionDef(self, node: ast.FunctionDef | ast.AsyncFunctionDef) -> None:
        for decorator in node.decorator_list:
            self._check_callee(decorator, node)
            self.visit(decorator)
        for default in (*node.args.defaults, *(d for d in node.args.kw_defaults if d)):
            self.visit(default)
        self._nested(node, list(node.body))

    visit_AsyncFunctionDef = visit_FunctionDef

    def visit_Lambda(self, node: ast.Lambda) -> None:
        for default in (*node.args.defaults, *(d for d in node.args.kw_defaults if d)):
            self.visit(default)
        self._nested(node, [node.body])

    def _comprehension(self, node) -> None:
        first, *rest = node.generators
        self.visit(first.iter)
        elements = [node.key, node.value] if isinstance(node, ast.DictComp) else [node.elt]
        parts: list[ast.AST] = [*first.ifs]
        for generator in rest:
            parts.extend([generator.iter, *generator.ifs])
        for test in (t for g in node.generators for t in g.ifs):
            self._check_branch(test)
        self._nested(node, [*parts, *elements])

    visit_ListComp = _comprehension
    visit_SetComp = _comprehension
    visit_DictComp = _comprehension
    visit_GeneratorExp = _comprehension

    def visit_ClassDef(self, node: ast.ClassDef) -> None:
        self.note(node, OPAQUE, f"defines class {node.name}")

    def visit_Yield(self, node: ast.AST) -> None:
        self.note(node, OPAQUE, "yields")

    visit_YieldFrom = visit_Yield
    visit_Await = visit_Yield

    # -- writes ----------------------------------------------------------------------------
    def visit_Assign(self, node: ast.Assign) -> None:
        self.visit(node.value)
        for target in node.targets:
            self._check_target(target, "sets", node.value)
            self.visit(target)

    def visit_AugAssign(self, node: ast.AugAssign) -> None:
        self.visit(node.value)
        self._check_target(node.target, "updates", increment=node.value)
        if isinstance(node.target, ast.Name) and isinstance(node.value, (ast.List, ast.Tuple, ast.Set, ast.ListComp)):
            scope = self.lookup(node.target.id)
            if (
                scope is not None
                and self.is_external(node.target)
                and not fresh_container(self, node.target, rebinding=True)
            ):
                self.note(node, SIDE_EFFECTING, f"extends {self.where(node.target)}", into=node.target)
        self.visit(node.target)

    def visit_AnnAssign(self, node: ast.AnnAssign) -> None:
        if node.value is not None:
            self.visit(node.value)
            self._check_target(node.target, "sets", node.value)
        self.visit(node.target)

    def visit_Delete(self, node: ast.Delete) -> None:
        for target in node.targets:
            self._check_target(target, "deletes")
            self.visit(target)

    def _check_target(
        self, target: ast.AST, verb: str, value: ast.AST | None = None, increment: ast.AST | None = None
    ) -> None:
        """Note a write to what the body did not create; ``value``: what a plain ``=``
        stores, ``increment``: the right-hand side of an augmented assignment."""
        if isinstance(target, (ast.Tuple, ast.List)):
            for element in target.elts:
                self._check_target(element, verb, value)
            return
        if isinstance(target, ast.Starred):
            self._check_target(target.value, verb, value)
            return
        kind = SIDE_EFFECTING if verb == "deletes" else write_kind(self, target, value, increment)
        if isinstance(target, ast.Name):
            self._check_name_store(target, kind)
            return
        if isinstance(target, ast.Attribute):
            if self.is_record(target.value) and self.owns_record:
                return  # fwd's ``state.x = ...`` is the original's ``ctx.x = ...``: state fwd made
            if self.backward_record and self._reaches_record(target.value):
                return  # bwd's is the original backward's ctx write: ``compile_context`` judges those
            if self.is_external(target.value) or self._is_known_tensor(target.value):
                self.note(target, kind, f"{verb} {self.where(target)}")
            return
        if isinstance(target, ast.Subscript):
            base = target.value
            if self._is_known_tensor(base):
                return  # an in-place write into a tensor: torch semantics
            if self.is_external(base) and not fresh_container(self, base):
                self.note(target, kind, f"writes an item of {self.where(base)}", into=base)

    def _check_name_store(self, target: ast.Name, kind: str = SIDE_EFFECTING) -> None:
        scope = self.scope
        while scope is not None:
            if target.id in scope.declared_global:
                self.note(target, kind, f"assigns module-level {target.id}")
                return
            if target.id in scope.declared_nonlocal:
                if self.lookup_from(scope.parent, target.id) is None:
                    self.note(target, kind, f"assigns {target.id} of the enclosing function")
                return
            if target.id in scope.names:
                return
            scope = scope.parent

    def lookup_from(self, scope: _Local | None, name: str) -> _Local | None:
        saved = self.scope
        self.scope = scope
        try:
            return self.lookup(name)
        finally:
            self.scope = saved

    def _is_known_tensor(self, expr: ast.AST) -> bool:
        if not isinstance(expr, ast.Name) or self.body is None:
            return False
        scope = self.lookup(expr.id)
        return (
            scope is not None
            and scope.parent is None
            and expr.id in self.body.tensors
            and expr.id not in scope.external
        )

    # -- control flow on tensor data -----------------------------------------------------------
    def visit_If(self, node: ast.If | ast.While) -> None:
        self._check_branch(node.test)
        self.generic_visit(node)

    visit_While = visit_If

    def visit_IfExp(self, node: ast.IfExp) -> None:
        self._check_branch(node.test)
        self.generic_visit(node)

    def visit_Assert(self, node: ast.Assert) -> None:
        self._check_branch(node.test)
        self.generic_visit(node)

    def visit_Raise(self, node: ast.Raise) -> None:
        """A backward that raises must raise when backward runs: traced, it would raise
        while the forward compiles (AOTAutograd traces the backward then), failing a
        forward the original ran (fla-core's "backward is not implemented")."""
        if self.in_backward:
            self.note(node, OPAQUE, f"raises {_text(node.exc) if node.exc is not None else 'again'}")
        self.generic_visit(node)

    def visit_BoolOp(self, node: ast.BoolOp) -> None:
        for value in node.values[:-1]:
            self._check_branch(value)
        self.generic_visit(node)

    def visit_UnaryOp(self, node: ast.UnaryOp) -> None:
        if isinstance(node.op, ast.Not):
            self._check_branch(node.operand)
        self.generic_visit(node)

    def _check_branch(self, test: ast.AST) -> None:
        found = _tensor_data(test, self)
        if found is not None:
            self.note(test, OPAQUE, f"branches on a tensor's value ({_text(found)})")

    def visit_Subscript(self, node: ast.Subscript) -> None:
        if isinstance(node.ctx, ast.Load) and _is_mask(node.slice):
            self.note(
                node, OPAQUE, f"indexes with a boolean mask ({_text(node)}), an output shape that depends on data"
            )
        self.generic_visit(node)

    def visit_With(self, node: ast.With | ast.AsyncWith) -> None:
        for item in node.items:
            if not isinstance(item.context_expr, ast.Call) and not self._made_by_calls(item.context_expr):
                kind = SIDE_EFFECTING if self.is_external(item.context_expr) else OPAQUE
                self.note(item.context_expr, kind, f"enters {_text(item.context_expr)}")
        self.generic_visit(node)

    def _made_by_calls(self, expr: ast.expr) -> bool:
        """A local name every binding of which is a call (or a choice between calls), as
        ``ctx = device_ctx(i) if t is not None else nullcontext()``: entering it is
        entering what those calls made, which are checked where they are made, as
        ``with device_ctx(i):`` is."""
        return every_binding(self, expr, _is_call_choice)

    visit_AsyncWith = visit_With

    # -- calls ---------------------------------------------------------------------------------
    def visit_Expr(self, node: ast.Expr) -> None:
        if isinstance(node.value, ast.Call):
            self.discarded.add(node.value)
        self.generic_visit(node)

    def visit_Call(self, node: ast.Call) -> None:
        self._check_call(node)
        self.generic_visit(node)

    def _check_call(self, call: ast.Call) -> None:
        check_call(self, call, discarded=call in self.discarded)

    def _check_callee(self, expr: ast.expr, at: ast.AST) -> None:
        """``expr`` will be called (a decorator, a ``key=`` function)."""
        if isinstance(expr, (ast.Lambda, ast.Call)):
            return  # a lambda is walked; a call is checked where it is visited
        self._check_call(ast.copy_location(ast.Call(expr, [], []), at))

    # -- how a reason names a value -------------------------------------------------------------
    def where(self, expr: ast.AST) -> str:
        """``module-level LOG``, ``argument acc``, ``fn (stored on ctx)``... for the object ``expr`` reaches."""
        text = _text(expr)
        root = _root_name(expr)
        if root is None:
            return text
        scope = self.lookup(root)
        if scope is None:
            found = self.facts.index.lookup(root, self.outer)
            if found is not None and found.is_module:
                return f"module-level {text}"
            if found is not None:
                return f"{text} (a local of the enclosing function)"
            return text
        if scope.parent is None and self.body is not None and root in self.body.residuals:
            return f"{text} ({self.body.residual_source})"
        if scope.parent is None and root in scope.params:
            return f"argument {text}"
        return text


# -- origins: may a value be an object the body did not create? --------------------------------


def _settle_origins(scope: _Local, walker: _Walker) -> None:
    """Mark the locals of ``scope`` bound (on any path) to a value from outside, to a fixed point."""
    for _ in range(len(scope.bindings) + 1):
        changed = False
        for name, value in scope.bindings:
            if name in scope.external:
                continue
            if value is None or _origin_external(value, walker):
                scope.external.add(name)
                changed = True
        if not changed:
            return


def _is_call_choice(value: ast.AST | None) -> bool:
    if isinstance(value, ast.IfExp):
        return _is_call_choice(value.body) and _is_call_choice(value.orelse)
    return isinstance(value, ast.Call)


def _origin_external(expr: ast.AST, walker: _Walker) -> bool:
    """Conservatively: may ``expr`` evaluate to an object that existed before the body ran?"""
    if isinstance(expr, ast.Name):
        scope = walker.lookup(expr.id)
        if scope is None:
            return True
        value = scope.reaching.get(id(expr))
        if value is not None and walker.reaching_depth < _MAX_REACHING_DEPTH:
            walker.reaching_depth += 1  # ``s = max(s, s)`` chains would branch at every step
            try:
                return _origin_external(value, walker)
            finally:
                walker.reaching_depth -= 1
        return expr.id in scope.external
    if isinstance(expr, (ast.Constant, ast.JoinedStr, ast.Lambda, ast.Compare, ast.BinOp)):
        return False
    if isinstance(expr, ast.UnaryOp):
        return False
    if isinstance(expr, (ast.List, ast.Tuple, ast.Set)):
        return any(_origin_external(e, walker) for e in expr.elts)
    if isinstance(expr, ast.Dict):
        return any(_origin_external(v, walker) for v in (*expr.values, *(k for k in expr.keys if k is not None)))
    if isinstance(expr, (ast.Attribute, ast.Subscript, ast.Starred, ast.NamedExpr)):
        return _origin_external(expr.value, walker)
    if isinstance(expr, (ast.BoolOp,)):
        return any(_origin_external(v, walker) for v in expr.values)
    if isinstance(expr, ast.IfExp):
        return _origin_external(expr.body, walker) or _origin_external(expr.orelse, walker)
    if isinstance(expr, (ast.ListComp, ast.SetComp, ast.GeneratorExp)):
        return not isinstance(expr.elt, (ast.Call, ast.BinOp, ast.UnaryOp, ast.Compare, ast.Constant))
    if isinstance(expr, ast.DictComp):
        return not isinstance(expr.value, (ast.Call, ast.BinOp, ast.UnaryOp, ast.Compare, ast.Constant))
    if isinstance(expr, ast.Call):
        return not returns_new_object(walker, expr)
    return True


def _is_mask(index: ast.AST) -> bool:
    """``x[x > 0]``, ``x[~(x > 0)]``: a boolean mask built in the subscript."""
    if isinstance(index, ast.Compare):
        return True
    if isinstance(index, ast.UnaryOp) and isinstance(index.op, ast.Invert):
        return _is_mask(index.operand)
    if isinstance(index, ast.BinOp) and isinstance(index.op, (ast.BitAnd, ast.BitOr)):
        return _is_mask(index.left) or _is_mask(index.right)
    return False


def _tensor_data(expr: ast.AST, walker: _Walker) -> ast.AST | None:
    """A sub-expression of ``expr`` that computes on tensor data (a call of a torch function
    or a tensor method that is not metadata), or None. A bare name is never one: its type
    is unknown, so a tensor-valued flag passed in is not caught here."""
    for node in ast.walk(expr):
        if isinstance(node, ast.Lambda):
            return None
        if isinstance(node, ast.Call) and computes_on_tensor_data(walker, node):
            return node
    return None
