"""Per module: decide the compile kind of each flattened Function or op call, and record it.

The glue between the rewrite and the three sources of a kind: what the classifier
infers from the flat bodies (``inliner/compile_kind.py``), a pragma comment and the
project's ``[tool.inliner] compile`` table (``inliner/compile_overrides.py``). It runs
after the lowering and its name invariant, on the emitted functions, and writes the
decision into the spec the emitter prints.
"""

from __future__ import annotations

import ast
import dataclasses
from collections.abc import Callable

import libcst as cst

from inliner.engine.analysis.compile_kind import (
    _RANK,
    CALL_RESIDUALS,
    CLASS_RESIDUALS,
    Body,
    CompileKind,
    ModuleFacts,
    StatementFacts,
    classify,
)
from inliner.engine.analysis.compile_overrides import CompileOverrides, Pragma, decide, find_pragma
from inliner.engine.analysis.compile_tables import OPAQUE, SIDE_EFFECTING
from inliner.engine.analysis.foreign import ForeignModules, Where
from inliner.engine.analysis.scopes import Scope, ScopeIndex
from inliner.engine.analysis.static_nones import static_nones
from inliner.engine.docstrings import without_docstring
from inliner.engine.function_class.decorators import DecoratorUse
from inliner.engine.model import CustomVJP, VJPSpec
from inliner.engine.source import SourceText


class CompileContext:
    def __init__(
        self,
        tree: ast.Module,
        index: ScopeIndex,
        text: SourceText,
        *,
        module: str | None = None,
        overrides: CompileOverrides | None = None,
        of_statement: StatementFacts | None = None,
        foreign: ForeignModules | None = None,
    ) -> None:
        self.of_statement = of_statement  # see ``ModuleFacts``
        self.foreign = foreign or ForeignModules(None, Where(module, False))
        self.tree = tree
        self.index = index
        self.text = text
        self.module = module
        self.overrides = overrides or CompileOverrides()
        self._facts: ModuleFacts | None = None

    @property
    def facts(self) -> ModuleFacts:
        if self._facts is None:  # built once, and only for a module that flattens something
            self._facts = ModuleFacts(self.tree, self.index, self.of_statement, self.text.statement_text)
        return self._facts

    # -- where a pragma may be ----------------------------------------------------------------
    def class_pragma(self, cls: ast.ClassDef) -> Pragma:
        """On the ``class`` line (through the colon of a header split over lines)."""
        last = max(cls.lineno, cls.body[0].lineno - 1) if cls.body else cls.lineno
        return self._pragma(cls.lineno, last)

    def call_pragma(self, call: ast.Call) -> Pragma:
        return self._pragma(call.lineno, call.end_lineno or call.lineno)

    def _pragma(self, first: int, last: int) -> Pragma:
        return find_pragma([self.text.line(i) for i in range(first, last + 1)], first)

    # -- deciding -------------------------------------------------------------------------------
    # ``bodies``: ``bodies_of(vjp, ...)`` made before (a pure function of ``vjp``; a cache keeps it)
    def decide_class(
        self, cls: ast.ClassDef, scope: Scope, vjp: CustomVJP, bodies: list[Body] | None = None
    ) -> CompileKind:
        inferred = classify(bodies or bodies_of(vjp, CLASS_RESIDUALS), scope, self.facts)
        module_scope = self.index.scopes_root(scope)
        qualname = _qualname(scope, cls.name)
        vjp.spec.made_in_function = "<locals>" in qualname  # its binding may run in a compiled call
        return self._record(vjp, inferred, self.class_pragma(cls), qualname, module_scope)

    def decide_call(
        self, call: ast.Call, scope: Scope, vjp: CustomVJP, bodies: list[Body] | None = None
    ) -> CompileKind:
        module_scope = self.index.scopes_root(scope)
        inferred = classify(bodies or bodies_of(vjp, CALL_RESIDUALS), module_scope, self.facts)
        return self._record(vjp, inferred, self.call_pragma(call), vjp.name, module_scope)

    def _record(
        self, vjp: CustomVJP, inferred: CompileKind, pragma: Pragma, qualname: str, module_scope: Scope
    ) -> CompileKind:
        full = f"{self.module}.{qualname}" if self.module else qualname
        inferred = _with_lowering_facts(inferred, vjp, lambda use: self._wrapper_kind(use, module_scope))
        decided = decide(inferred, pragma, self.overrides.lookup(full))
        forward, backward = decided.part("forward"), decided.part("backward")
        vjp.spec.compile_kind = forward.kind
        vjp.spec.compile_reason = forward.reason
        vjp.spec.backward_kind = backward.kind
        vjp.spec.backward_reason = backward.reason
        vjp.spec.backward_nones = inferred.backward_nones
        vjp.spec.forward_argument_writes = forward.argument_writes
        return decided

    def _wrapper_kind(self, use: DecoratorUse, module_scope: Scope) -> str:
        """A project's decorator is Python around the call, which dynamo traced together
        with the original's forward (backward) as it will trace it around fwd (bwd): opaque
        (the split path), unless walking its definition, when it is in this module, as a
        forward helper is walked finds writes to outside state (dynamo would guard and
        recompile on them): side effecting. One imported from another module is walked
        there (``foreign``); where that module cannot be read it stays side effecting: a
        wrapper that writes a module-level list (a profiler range stack) crashed dynamo's
        guard creation on the split path where the original ran as a graph break (golden
        ``decorator_imported``)."""
        if use.definition is not None:
            finding = self.facts.helper(use.definition, module_scope, 0, in_forward=True)
        else:
            expr = ast.parse(cst.Module([]).code_for_node(use.expr).strip(), mode="eval").body
            finding = self.foreign.wrapper_finding(expr, self.index, module_scope)
        return SIDE_EFFECTING if finding is not None and finding.kind == SIDE_EFFECTING else OPAQUE


def _with_lowering_facts(
    inferred: CompileKind, vjp: CustomVJP, wrapper_kind: Callable[[DecoratorUse], str]
) -> CompileKind:
    """Add what the lowering knows and the bodies do not show: decorators the carriers
    replay around fwd/bwd (a project's wrapper is ``wrapper_kind`` for the member it
    decorates; ``torch.compile`` on a body is dynamo inside a graph), and a ctx record that
    backward writes (its effect must happen on every eager backward, as the original's ctx
    writes do). Sets alone, with nothing else dynamo refuses in backward, are what dynamo
    traces on the original's ctx: ``spec.record_sets_only`` lets such a record take the
    split path (docs/compile.md, "The paths")."""
    spec = vjp.spec
    found: list[tuple[str, str, tuple[str, ...]]] = []  # (kind, reason, the parts it makes so)
    both = ("forward", "backward")
    for use in spec.decorators:
        target = use.target if use.target != "<local>" else cst.Module([]).code_for_node(use.expr)
        if use.kind == "compile":
            found.append((OPAQUE, f"{use.member} is decorated with {target}", both))
        elif use.kind == "wrapper" and not use.pass_through:
            kind = wrapper_kind(use)
            roles: tuple[str, ...] = (
                both if kind == SIDE_EFFECTING else ("forward" if use.member == "forward" else "backward",)
            )
            found.append((kind, f"{use.member}'s decorator {target} is replayed around it", roles))
    if not found and not spec.backward_writes_ctx:
        return inferred
    parts = {role: inferred.part(role) for role in both}
    if spec.backward_writes_ctx:
        spec.record_sets_only = not spec.backward_deletes_ctx and _kind_with(found, parts, "backward") != SIDE_EFFECTING
        found.append((SIDE_EFFECTING, _ctx_write_reason(spec), ("backward",)))
    for kind, reason, roles in found:
        for role in roles:
            if _RANK[kind] > _RANK[parts[role].kind] or (kind == SIDE_EFFECTING and parts[role].argument_writes):
                parts[role] = CompileKind(kind, reason)
        if _RANK[kind] > _RANK[inferred.kind]:
            inferred = dataclasses.replace(inferred, kind=kind, reason=reason)
    nones = inferred.backward_nones
    if nones is None and not parts["backward"].traceable:  # what an op running bwd must know
        nones = static_nones(_as_ast(vjp.bwd))
    return dataclasses.replace(inferred, forward=parts["forward"], backward=parts["backward"], backward_nones=nones)


def _ctx_write_reason(spec: VJPSpec) -> str:
    """``backward writes ctx.calls``, ``backward calls bump, which deletes c.n``."""
    verb = "deletes" if spec.backward_deletes_ctx else "writes"
    written = (spec.backward_deletes_ctx or spec.backward_writes_ctx)[0]
    helper, _, attribute = written.rpartition("(): ")
    return f"backward calls {helper}, which {verb} {attribute}" if helper else f"backward {verb} {written}"


def _kind_with(found: list[tuple[str, str, tuple[str, ...]]], parts: dict[str, CompileKind], role: str) -> str:
    """``role``'s kind from its body and what ``found`` adds to it."""
    kinds = [parts[role].kind, *(kind for kind, _, roles in found if role in roles)]
    return max(kinds, key=_RANK.__getitem__)


def _qualname(scope: Scope, name: str) -> str:
    """``outer.<locals>.Name`` for a class defined in a function, as Python spells ``__qualname__``."""
    parts = [name]
    current: Scope | None = scope
    while current is not None and not current.is_module:
        node = current.node
        if isinstance(node, (ast.FunctionDef, ast.AsyncFunctionDef)):
            parts.insert(0, f"{node.name}.<locals>")
        elif isinstance(node, ast.ClassDef):
            parts.insert(0, node.name)
        elif isinstance(node, ast.Lambda):
            parts.insert(0, "<lambda>.<locals>")
        current = current.parent
    return ".".join(parts)


# -- the emitted functions, as the classifier reads them ---------------------------------------


def bodies_of(vjp: CustomVJP, residual_source: str) -> list[Body]:
    """fwd, bwd (and jvp) as ``ast``, with what the lowering knows about their parameters."""
    fwd = _as_ast(vjp.fwd)
    positional = [a.arg for a in (*fwd.args.posonlyargs, *fwd.args.args)]
    dirty = frozenset(positional[i] for i in vjp.spec.dirty_idx if i < len(positional))
    bodies = [Body("forward", fwd, tensors=dirty)]
    bodies.append(_residual_body("backward", _as_ast(vjp.bwd), vjp.spec.saved_for_backward_idx, residual_source))
    if vjp.spec.jvp is not None:
        jvp = next((f for f in vjp.extra if f.name.value == vjp.spec.jvp), None)
        if jvp is not None:
            bodies.append(_residual_body("jvp", _as_ast(jvp), vjp.spec.saved_for_forward_idx, residual_source))
    if vjp.spec.ctx_record:
        _mark_record(bodies)
    return bodies


def _mark_record(bodies: list[Body]) -> None:
    """Name the ctx record in each body: fwd makes it first (``state = Record(...)``), bwd and
    jvp unpack it as their one residual. What a body does to it is what the original did to ctx."""
    forward = bodies[0]
    first = next(iter(without_docstring(forward.func.body)), None)
    if (
        isinstance(first, ast.Assign)
        and len(first.targets) == 1
        and isinstance(first.targets[0], ast.Name)
        and isinstance(first.value, ast.Call)
    ):
        forward.record, forward.record_call = first.targets[0].id, first.value
    for body in bodies[1:]:
        if len(body.residuals) == 1:
            body.record = next(iter(body.residuals))


def _residual_body(role: str, func: ast.FunctionDef, saved_idx: tuple[int, ...], source: str) -> Body:
    """``bwd(residuals, *grads)``: the grads are tensors; so are the residuals saved as tensors."""
    params = [*func.args.posonlyargs, *func.args.args]
    if not params:
        return Body(role, func)
    residuals = params[0].arg
    names: list[str] = []
    for statement in func.body[:2]:  # the unpacking follows a docstring, if any
        if (
            isinstance(statement, ast.Assign)
            and isinstance(statement.value, ast.Name)
            and statement.value.id == residuals
            and len(statement.targets) == 1
            and isinstance(statement.targets[0], ast.Tuple)
        ):
            names = [e.id for e in statement.targets[0].elts if isinstance(e, ast.Name)]
            break
    grads = {a.arg for a in params[1:]}
    saved = {names[i] for i in saved_idx if i < len(names)}
    return Body(role, func, tensors=frozenset(grads | saved), residuals=frozenset(names), residual_source=source)


def _as_ast(func: cst.FunctionDef) -> ast.FunctionDef:
    node = ast.parse(cst.Module(body=[func.with_changes(leading_lines=())]).code).body[0]
    assert isinstance(node, ast.FunctionDef)
    return node
