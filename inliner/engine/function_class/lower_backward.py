"""backward (and jvp) in the named lowering: ctx reads become the residuals fwd hands over.

``backward(ctx, *grads)`` becomes ``bwd(residuals, *grads)``, which opens the residuals
at its top. Saved tensors keep their route: where the original may skip or repeat
reading ``ctx.saved_tensors``, bwd reads the saved slots where it did (version check,
unpack hooks, freed-graph check). A backward that writes ctx or calls a ctx method is
refused.
"""

from __future__ import annotations

from dataclasses import dataclass, field

import libcst as cst

from inliner.engine.analysis.ctxflow import BodyFacts, CtxUse, analyse
from inliner.engine.codes import Code
from inliner.engine.docstrings import after_docstring
from inliner.engine.function_class.body_edits import BodyEdits, split_leading
from inliner.engine.function_class.residual import RESERVED_ATTRS, Residual, name_tuple
from inliner.engine.function_class.signature import (
    first_param,
    param_names,
    params_without_first,
)
from inliner.engine.model import Refuse, VJPSpec
from inliner.engine.names import fresh, names_in, unpack_statement
from inliner.engine.walk import on_paths_to

_SAVED = ("saved_tensors", "saved_variables")

Unpack = tuple[cst.SimpleStatementLine, list[str]]  # ``a, b = ctx.saved_tensors`` and its names


@dataclass
class Reader:
    """backward or jvp: the member that reads ctx back, analysed once."""

    func: cst.FunctionDef
    ctx: str
    facts: BodyFacts
    unpack: Unpack | None  # its ``a, b = ctx.saved_tensors``, when that is its only read of them


def read_ctx(cls_name: str, func: cst.FunctionDef) -> Reader:
    """Analyse ``func`` (backward or jvp) as a reader of ctx."""
    ctx = first_param(func, cls_name)
    facts = analyse(func, ctx, "backward")
    return Reader(func, ctx, facts, _saved_unpack(ctx, facts, func))


@dataclass
class _ReadPlan:
    """How one reader gets its residuals: decided phase by phase, then applied to its body."""

    cls: str
    reader: Reader
    residuals: list[Residual]
    attr_residual: dict[str, Residual]
    spec: VJPSpec
    saved_kind: str  # "saved" (backward) | "fsaved" (jvp: what save_for_forward kept)
    names: set[str]  # the names the reader spells
    taken: set[str]  # those and every fresh name given out
    edits: BodyEdits = field(default_factory=BodyEdits)
    unpack: Unpack | None = None  # the reader's unpacking of saved tensors, if bwd keeps it in place
    on_demand: bool = False  # bwd reads the saved slots where the original read ctx.saved_tensors
    merged: bool = False  # the unpacking names the saved residuals and becomes bwd's own
    aliased: list[tuple[Residual, cst.SimpleStatementLine]] = field(default_factory=list)
    residuals_name: str = ""
    needs_input_grad: bool = False

    @property
    def role(self) -> str:
        return self.reader.func.name.value

    @property
    def saved(self) -> list[Residual]:
        """The residuals ``ctx.saved_tensors`` means in this reader."""
        return [r for r in self.residuals if r.kind == self.saved_kind]

    @property
    def saved_reads(self) -> list[cst.CSTNode]:
        return [u.node for u in self.reader.facts.ctx_uses if u.kind == "read" and u.attr in _SAVED]

    def aliases(self, attr: str) -> bool:
        """Is ``attr`` read in a ``name = ctx.attr`` that became the residual unpacking?"""
        return attr in self.attr_residual and any(r is self.attr_residual[attr] for r, _ in self.aliased)


def lower_reader(
    cls_name: str,
    new_name: str,
    reader: Reader,
    residuals: list[Residual],
    attr_residual: dict[str, Residual],
    spec: VJPSpec,
    *,
    saved_kind: str = "saved",
) -> cst.FunctionDef:
    """backward (or jvp, ``saved_kind="fsaved"``) as ``new_name(residuals, *grads)``; names
    the residuals on bwd's side and records in ``spec`` how bwd reads them."""
    _check_only_reads(cls_name, reader)
    names = names_in(reader.func)
    plan = _ReadPlan(cls_name, reader, residuals, attr_residual, spec, saved_kind, names, set(names))
    _choose_saved_route(plan)
    _name_residuals(plan)
    _replace_reads(plan)
    _record_in_spec(plan)
    return _lowered_function(new_name, plan)


def _check_only_reads(cls_name: str, reader: Reader) -> None:
    """Refuse a reader that is a generator, writes ctx or calls a ctx method."""
    func, ctx = reader.func, reader.ctx
    role = func.name.value
    if reader.facts.has_yield:
        raise Refuse(Code.CLASS_SHAPE, f"{role} is a generator or coroutine", func)
    for use in reader.facts.ctx_uses:
        if use.kind == "set":
            raise Refuse(Code.BACKWARD_WRITES_CTX, f"{role} writes `{ctx}.{use.attr}`", use.node)
        if use.kind == "call":
            raise Refuse(Code.CTX_UNSUPPORTED, f"{role} calls `{ctx}.{use.attr}`", use.node)


def _choose_saved_route(plan: _ReadPlan) -> None:
    """Up front through the unpacking (the reader's own ``a, b = ctx.saved_tensors`` when it
    names them all), or on demand, where the original read them."""
    spec = plan.spec
    saved_reads = plan.saved_reads
    # Reading saved tensors runs the version check, unpack hooks and the freed-graph
    # check: where the original may skip or repeat the read, bwd reads them where it did.
    sends_saved = bool(spec.saved_for_backward_idx) or spec.saved_tensors_idx is not None
    plan.on_demand = (
        plan.saved_kind == "saved"
        and sends_saved
        and bool(saved_reads)
        and not _read_up_front(plan.reader.func, saved_reads)
    )
    unpack = None if plan.on_demand else plan.reader.unpack
    saved = plan.saved
    if unpack is not None and saved and len(unpack[1]) == len(saved):
        plan.merged = True
        for r, n in zip(saved, unpack[1]):
            r.bwd_name = n
        plan.edits.smalls[unpack[0].body[0]] = None
    plan.unpack = unpack


def _name_residuals(plan: _ReadPlan) -> None:
    """Each residual's name in bwd: the reader's own where ``name = ctx.attr`` names it, else fresh."""
    plan.aliased = _attribute_aliases(plan.reader, plan.residuals)
    for _, stmt in plan.aliased:
        plan.edits.smalls[stmt.body[0]] = None
    taken = plan.taken
    for r in plan.residuals:
        if r.bwd_name:
            continue
        if r.kind == "group":
            r.bwd_name = fresh(r.fwd_name, taken)
        elif r.kind in ("saved", "fsaved"):
            r.bwd_name = fresh(r.fwd_name if r.fwd_name not in taken else f"{r.fwd_name}_saved", taken)
        else:
            assert r.attr is not None
            r.bwd_name = fresh(r.attr if r.attr not in taken else f"{r.attr}_saved", taken)
    plan.residuals_name = fresh("residuals", taken)


def _replace_reads(plan: _ReadPlan) -> None:
    """Each ctx read becomes what it means in bwd; refuses reads of what forward never set."""
    saved_value = _saved_slots(plan.residuals_name, plan.residuals, plan.spec) if plan.on_demand else None
    for use in plan.reader.facts.ctx_uses:
        if use.kind == "getattr":
            _replace_getattr(plan, use)
        elif use.kind == "read":
            _replace_read(plan, use, saved_value)


def _replace_getattr(plan: _ReadPlan, use: CtxUse) -> None:
    call = use.node
    assert isinstance(call, cst.Call)
    if plan.aliases(use.attr):
        return  # its `name = getattr(ctx, ...)` statement became the residual unpacking
    if use.attr in plan.attr_residual:
        plan.edits.attributes[call] = cst.Name(plan.attr_residual[use.attr].bwd_name)
    elif use.attr in RESERVED_ATTRS or use.attr.startswith("_"):
        raise Refuse(Code.CTX_UNSUPPORTED, f"{plan.role} reads `{plan.reader.ctx}.{use.attr}` through getattr", call)
    else:
        plan.edits.attributes[call] = call.args[2].value  # never set: getattr gives the default


def _replace_read(plan: _ReadPlan, use: CtxUse, saved_value: cst.BaseExpression | None) -> None:
    ctx = plan.reader.ctx
    if use.attr in _SAVED:
        if not plan.merged:
            plan.edits.attributes[use.node] = saved_value if saved_value is not None else _saved_tensors(plan)
    elif use.attr == "needs_input_grad":
        if "needs_input_grad" in plan.names:
            raise Refuse(Code.CTX_UNSUPPORTED, f"{plan.role} already uses the name `needs_input_grad`", use.node)
        plan.needs_input_grad = True
        plan.edits.attributes[use.node] = cst.Name("needs_input_grad")
    elif use.attr in plan.attr_residual:
        if plan.aliases(use.attr):
            return  # its `name = ctx.attr` statement became the residual unpacking
        plan.edits.attributes[use.node] = cst.Name(plan.attr_residual[use.attr].bwd_name)
    else:
        raise Refuse(Code.CTX_UNSUPPORTED, f"{plan.role} reads `{ctx}.{use.attr}`, which forward never sets", use.node)


def _saved_tensors(plan: _ReadPlan) -> cst.BaseExpression:
    """``ctx.saved_tensors`` read from the residuals bwd opened up front."""
    spec = plan.spec
    if spec.saved_tensors_idx is not None and plan.saved_kind == "saved":
        return cst.Name(plan.residuals[spec.saved_tensors_idx].bwd_name)
    saved = plan.saved
    if saved:
        return name_tuple([r.bwd_name for r in saved])
    return cst.Tuple([])


def _record_in_spec(plan: _ReadPlan) -> None:
    spec = plan.spec
    spec.bwd_needs_input_grad = plan.needs_input_grad
    if plan.saved_kind == "saved":
        spec.saved_on_demand = plan.on_demand
    if not plan.saved_reads and (spec.saved_for_backward_idx or spec.saved_tensors_idx is not None):
        spec.bwd_reads_saved = False  # unpacking would run a version check the original never ran


def _lowered_function(new_name: str, plan: _ReadPlan) -> cst.FunctionDef:
    """The edited body, taking the residuals first and opening them at its top."""
    func = plan.reader.func
    new_backward = plan.edits.apply(func)
    body: list[cst.BaseStatement] = list(new_backward.body.body)  # type: ignore[arg-type]
    unpacking = _residual_unpacking(plan)
    if unpacking is not None:
        body.insert(after_docstring(body), unpacking)
    if not body:
        body = [cst.SimpleStatementLine([cst.Pass()])]
    return cst.FunctionDef(
        name=cst.Name(new_name),
        params=_lowered_params(func.params, plan.residuals_name, plan.needs_input_grad),
        body=new_backward.body.with_changes(body=body),
        leading_lines=func.leading_lines,
    )


def _lowered_params(original: cst.Parameters, residuals_name: str, needs_input_grad: bool) -> cst.Parameters:
    """``(residuals, *grads)``, with a keyword-only ``needs_input_grad`` when the reader reads it."""
    grads = params_without_first(original)
    params = grads.with_changes(params=[cst.Param(cst.Name(residuals_name)), *grads.params])
    if grads.posonly_params:
        params = grads.with_changes(posonly_params=[cst.Param(cst.Name(residuals_name)), *grads.posonly_params])
    if needs_input_grad:
        star = params.star_arg if isinstance(params.star_arg, cst.Param) else cst.ParamStar()
        params = params.with_changes(
            star_arg=star, kwonly_params=[*params.kwonly_params, cst.Param(cst.Name("needs_input_grad"))]
        )
    return params


def _residual_unpacking(plan: _ReadPlan) -> cst.SimpleStatementLine | None:
    """``a, b, scale = residuals`` (without the saved slots when they are read on demand)."""
    residuals = plan.residuals
    opened = [r for r in residuals if not (plan.on_demand and r.kind in ("saved", "group"))]
    if not opened:
        return None
    source = f"{plan.residuals_name}[{len(residuals) - len(opened)}:]" if plan.on_demand else plan.residuals_name
    unpacking = unpack_statement([r.bwd_name for r in opened], source)
    if plan.merged:  # it takes the place of `a, b = ctx.saved_tensors`, and its comments
        assert plan.unpack is not None
        _, own = split_leading(plan.unpack[0])
        unpacking = unpacking.with_changes(leading_lines=own, trailing_whitespace=plan.unpack[0].trailing_whitespace)
    return unpacking


def _saved_unpack(ctx: str, facts: BodyFacts, func: cst.FunctionDef) -> Unpack | None:
    """A top-level ``a, b = ctx.saved_tensors`` that is the only read of saved tensors."""
    saved_reads = [u for u in facts.ctx_uses if u.kind == "read" and u.attr in _SAVED]
    if len(saved_reads) != 1:
        return None
    body = func.body
    if not isinstance(body, cst.IndentedBlock):
        return None
    seen_names: set[str] = set()
    for stmt in body.body:
        if isinstance(stmt, cst.SimpleStatementLine) and len(stmt.body) == 1:
            small = stmt.body[0]
            if isinstance(small, cst.Assign) and len(small.targets) == 1 and small.value is saved_reads[0].node:
                target = small.targets[0].target
                if isinstance(target, (cst.Tuple, cst.List)) and all(
                    isinstance(el, cst.Element) and isinstance(el.value, cst.Name) for el in target.elements
                ):
                    names = [el.value.value for el in target.elements]  # type: ignore[attr-defined]
                    if len(set(names)) == len(names) and not (set(names) & seen_names) and ctx not in names:
                        return stmt, names
                return None
        seen_names |= names_in(stmt)
    return None


def _attribute_aliases(reader: Reader, residuals: list[Residual]) -> list[tuple[Residual, cst.SimpleStatementLine]]:
    """Top-level ``name = ctx.attr`` statements (the only read of that attribute) whose
    name can become the residual's own name in bwd; names the chosen residuals."""
    body = reader.func.body
    if not isinstance(body, cst.IndentedBlock):
        return []
    reads: dict[str, list[cst.CSTNode]] = {}
    for use in reader.facts.ctx_uses:
        if use.kind in ("read", "getattr"):
            reads.setdefault(use.attr, []).append(use.node)
    by_attr = {r.attr: r for r in residuals if r.kind == "attr"}
    used = {r.bwd_name for r in residuals if r.bwd_name}
    seen_names = set(param_names(reader.func.params))
    out: list[tuple[Residual, cst.SimpleStatementLine]] = []
    for stmt in body.body:
        if isinstance(stmt, cst.SimpleStatementLine) and (alias := _alias_of(stmt)) is not None:
            target, attr, value = alias
            residual = by_attr.get(attr)
            if (
                residual is not None
                and not residual.bwd_name
                and len(reads.get(attr, ())) == 1
                and reads[attr][0] is value
                and target not in seen_names
                and target not in used
                and target != reader.ctx
            ):
                residual.bwd_name = target
                used.add(target)
                out.append((residual, stmt))
        seen_names |= names_in(stmt)
    return out


def _alias_of(stmt: cst.SimpleStatementLine) -> tuple[str, str, cst.BaseExpression] | None:
    """``name = ctx.attr`` or ``name = getattr(ctx, "attr", d)`` -> (name, attr, the read);
    the attribute is "" where the call is not such a getattr."""
    if len(stmt.body) != 1:
        return None
    small = stmt.body[0]
    if not (
        isinstance(small, cst.Assign)
        and len(small.targets) == 1
        and isinstance(small.targets[0].target, cst.Name)
        and isinstance(small.value, (cst.Attribute, cst.Call))
    ):
        return None
    value = small.value
    if isinstance(value, cst.Attribute):
        attr = value.attr.value
    elif isinstance(value.func, cst.Name) and value.func.value == "getattr" and len(value.args) == 3:
        key = value.args[1].value
        attr = key.evaluated_value if isinstance(key, cst.SimpleString) else ""  # type: ignore[assignment]
    else:
        attr = ""
    return small.targets[0].target.value, attr, value


def _saved_slots(residuals_name: str, residuals: list[Residual], spec: VJPSpec) -> cst.BaseExpression:
    """What ``ctx.saved_tensors`` was, read from bwd's residuals: the saved slots lead them."""
    if spec.saved_tensors_idx is not None:
        assert spec.saved_tensors_idx == 0 and residuals[0].kind == "group"
        return cst.parse_expression(f"{residuals_name}[0]")
    k = len(spec.saved_for_backward_idx)
    assert spec.saved_for_backward_idx == tuple(range(k)), "saved residuals come first"
    return cst.parse_expression(f"{residuals_name}[:{k}]")


def _read_up_front(func: cst.FunctionDef, reads: list[cst.CSTNode]) -> bool:
    """Does backward read ``ctx.saved_tensors`` exactly once, before anything can raise,
    return or have an effect?

    Then reading them before bwd runs is what the original did. The read must be a
    top-level ``a, b = ctx.saved_tensors`` (``_is_plain_read``), with only inert
    statements before it (``_inert``)."""
    if len(reads) != 1:
        return False
    body = func.body
    if not isinstance(body, cst.IndentedBlock):
        return False
    ctx = func.params.params[0].name.value if func.params.params else ""
    holding = on_paths_to(body, {reads[0]})
    for stmt in body.body:
        if stmt not in holding:
            if not _inert(stmt, ctx):
                return False  # it may raise, return or have an effect the original had before the read
            continue
        return _is_plain_read(stmt, reads[0])
    return False


def _inert(stmt: cst.CSTNode, ctx: str) -> bool:
    """A statement that can neither raise nor have an effect: names bound to constants, other
    names or ctx attributes (``gx = gw = None``, ``k = ctx.k``), a docstring, ``pass``."""
    if type(stmt) is not cst.SimpleStatementLine:  # libcst's node classes are final: `is` is isinstance
        return False
    for small in stmt.body:
        if type(small) is cst.Pass or (type(small) is cst.Expr and type(small.value) is cst.SimpleString):
            continue
        if type(small) is not cst.Assign or not _binds_names(small) or not _plain_value(small.value, ctx):
            return False
    return True


def _plain_value(expr: cst.CSTNode, ctx: str) -> bool:
    """A constant, a name, a ctx attribute other than ``saved_tensors``, or a tuple or list of those."""
    if type(expr) is cst.Name or _is_literal(expr):
        return True
    if type(expr) is cst.Attribute:
        owner = expr.value
        return type(owner) is cst.Name and owner.value == ctx and expr.attr.value != "saved_tensors"
    if type(expr) is cst.Tuple or type(expr) is cst.List:
        return all(type(e) is cst.Element and _plain_value(e.value, ctx) for e in expr.elements)
    return False


def _is_literal(expr: cst.CSTNode) -> bool:
    """A literal that cannot raise: a number or a string, possibly signed."""
    if type(expr) is cst.UnaryOperation and type(expr.operator) in (cst.Minus, cst.Plus):
        expr = expr.expression
        return type(expr) in _NUMBERS
    return type(expr) in _NUMBERS or type(expr) is cst.SimpleString


_NUMBERS = (cst.Integer, cst.Float, cst.Imaginary)


def _binds_names(assign: cst.Assign) -> bool:
    """Every target is a name, or a tuple or list of names."""
    for target in assign.targets:
        bound = target.target
        if type(bound) is cst.Tuple or type(bound) is cst.List:
            if not all(type(e) is cst.Element and type(e.value) is cst.Name for e in bound.elements):
                return False
        elif type(bound) is not cst.Name:
            return False
    return True


def _is_plain_read(stmt: cst.CSTNode, read: cst.CSTNode) -> bool:
    """``a, b = ctx.saved_tensors`` (or ``a = ctx.saved_tensors[0]``): nothing runs before the read."""
    if type(stmt) is not cst.SimpleStatementLine or len(stmt.body) != 1:
        return False
    assign = stmt.body[0]
    if type(assign) is not cst.Assign or not _binds_names(assign):
        return False
    value = assign.value
    if value is read:
        return True
    if type(value) is not cst.Subscript or value.value is not read or len(value.slice) != 1:
        return False
    index = value.slice[0].slice
    return type(index) is cst.Index and type(index.value) is cst.Integer
