"""Lower one ``torch.autograd.Function`` subclass into a ``CustomVJP``.

The rules come from docs/semantics.md: residuals are captured at the point of
the original ``ctx`` statement, tensors saved with ``save_for_backward`` keep
that route (version checks, hooks, freeing) and ``ctx.attr`` tensors stay plain
references. Anything the lowering cannot follow raises ``Refuse`` and the class
is left untouched.

``lower_function_class`` reads the class into a ``_ClassPlan`` (members, decorators
to replay), then lowers ctx: as named residuals (``_CombinedLowering``, whose phases
fill a ``_ForwardPlan``; backward and jvp follow in ``lower_backward.py``; a
setup_context class is first joined into one forward by ``setup_context.py``), or,
where that refuses for a reason a record can carry, as a ctx record (``ctx_record.py``).
"""

from __future__ import annotations

import dataclasses
from collections.abc import Callable
from dataclasses import dataclass, field

import libcst as cst

from inliner.engine.analysis.ctxflow import (
    BodyFacts,
    CtxUse,
    always_returns,
    analyse,
    definitely_assigned_at_returns,
)
from inliner.engine.codes import Code
from inliner.engine.docstrings import after_docstring
from inliner.engine.function_class.body_edits import BodyEdits
from inliner.engine.function_class.ctx_record import (
    FALLBACK_CODES,
    RecordLowering,
    Resolve,
)
from inliner.engine.function_class.decorators import (
    DecoratorReader,
    DecoratorUse,
    check_ctx_reads,
    check_evaluation_order,
    is_staticmethod,
    member_expressions,
)
from inliner.engine.function_class.kept_class import (
    AUTOGRAD_MEMBERS,
    ClassBody,
    split_class_body,
)
from inliner.engine.function_class.lower_backward import Reader, lower_reader, read_ctx
from inliner.engine.function_class.residual import RESERVED_ATTRS, Residual, name_tuple
from inliner.engine.function_class.setup_context import join_setup_context
from inliner.engine.function_class.signature import (
    first_param,
    param_names,
    params_without_first,
)
from inliner.engine.model import CustomVJP, KeptClass, Refuse, VJPSpec
from inliner.engine.names import TakenNames, fresh, names_in, rename, snake_case
from inliner.engine.walk import walk

QualifiedNames = Callable[[cst.CSTNode], set[str]]

# the ctx methods forward may call: the carriers replay them
_CTX_CALLS = {"save_for_backward", "mark_dirty", "mark_non_differentiable", "set_materialize_grads"}


@dataclass
class Inherited:
    """What a subclass of a flattened Function in the same module takes from its bases."""

    members: dict[str, cst.FunctionDef]
    generate_vmap_rule: cst.BaseExpression | None
    symbolic_base: str | None  # the direct base, if some base defines ``symbolic``


@dataclass
class _ClassPlan:
    """One Function class as the lowering reads it: its members (its bases' included) and what stays."""

    cls: cst.ClassDef
    body: ClassBody
    members: dict[str, cst.FunctionDef]  # classmethods made static
    forward: cst.FunctionDef
    backward: cst.FunctionDef  # or vjp
    generate_vmap_rule: cst.BaseExpression | None
    keep: bool  # a plain class stays beside the flat functions
    inherited: Inherited | None
    forward_uses: tuple[DecoratorUse, ...] = ()  # the decorators the carriers replay
    backward_uses: tuple[DecoratorUse, ...] = ()

    @property
    def name(self) -> str:
        return self.cls.name.value

    @property
    def decorator_uses(self) -> tuple[DecoratorUse, ...]:
        return (*self.forward_uses, *self.backward_uses)


@dataclass
class _FlatNames:
    """Names of the emitted functions: ``<class in snake_case>_<role>``, fresh in the module."""

    base: str
    taken: TakenNames

    def fresh(self, role: str) -> str:
        return fresh(f"{self.base}_{role}", self.taken)


@dataclass
class _Lowered:
    fwd: cst.FunctionDef
    bwd: cst.FunctionDef
    spec: VJPSpec
    extra: list[cst.FunctionDef]  # jvp and vmap, when the class defines them


def lower_function_class(
    cls: cst.ClassDef,
    *,
    qualified: QualifiedNames,
    taken: TakenNames,
    decorators: DecoratorReader,
    keep: bool = False,
    class_alias: str | None = None,
    inherited: Inherited | None = None,
    resolve: Resolve | None = None,
    record_name: str = "Record",
) -> CustomVJP:
    """Lower ``cls``: ctx spelled as named residuals where it can be, else (given
    ``resolve``, which finds the helpers ctx is handed to) kept as a ctx record; with
    ``keep`` (or when its body needs one) a plain class stays too.

    ``class_alias`` is the name that certainly means this class where the flat functions
    run (a classmethod member's ``cls`` is renamed to it); ``inherited`` are the members
    of its flattened bases, for a subclass in the same module.
    """
    plan = _read_class(cls, qualified, class_alias, inherited, keep=keep)
    _read_decorators(plan, decorators)
    names = _FlatNames(snake_case(plan.name), taken)
    fwd_name = names.fresh("fwd")
    bwd_name = names.fresh("bwd")
    lowered = _lower_ctx(plan, fwd_name, bwd_name, names, resolve, record_name)
    _record_class_facts(plan, lowered.spec)
    kept = _kept_class(plan, lowered)
    vmap = plan.members.get("vmap")
    if vmap is not None:
        lowered.spec.vmap = names.fresh("vmap")
        lowered.extra.append(vmap.with_changes(name=cst.Name(lowered.spec.vmap), decorators=()))
    return CustomVJP(
        name=plan.name,
        fwd=lowered.fwd,
        bwd=lowered.bwd,
        spec=lowered.spec,
        extra=lowered.extra,
        leading_lines=tuple(cls.leading_lines),
        kept=kept,
        class_docstring=plan.body.docstring if kept is None else None,
    )


def _read_class(
    cls: cst.ClassDef, qualified: QualifiedNames, class_alias: str | None, inherited: Inherited | None, *, keep: bool
) -> _ClassPlan:
    """The class's members, classmethods made static; refuses a class the flat functions cannot stand for."""
    name = cls.name.value
    if cls.keywords:
        raise Refuse(Code.CLASS_SHAPE, "passes keywords (a metaclass?) to its bases", cls)
    if len(cls.bases) != 1:
        raise Refuse(Code.CLASS_SHAPE, "has more than one base class", cls)

    body = split_class_body(cls, is_classmethod=lambda expr: "builtins.classmethod" in qualified(expr))
    members = {**(inherited.members if inherited else {}), **body.members}
    generate_vmap_rule = body.generate_vmap_rule
    if generate_vmap_rule is None and inherited is not None:
        generate_vmap_rule = inherited.generate_vmap_rule
    keep = keep or body.needs_class or bool(cls.decorators) or inherited is not None

    for member, func in list(members.items()):
        used = names_in(func) & {"super", "__class__"}
        if used:
            # both need the class cell of a method; a module-level function has none
            raise Refuse(Code.CLASS_SHAPE, f"`{member}` uses `{min(used)}`", func)
        members[member] = _classmethod_as_static(func, qualified, name, class_alias)
    if _is_static(members.get("forward"), qualified):
        for member in ("backward", "vjp"):
            if member in members:
                members[member] = _plain_def_as_static(members[member])

    forward, backward = _forward_and_backward(cls, members)
    return _ClassPlan(cls, body, members, forward, backward, generate_vmap_rule, keep, inherited)


def _forward_and_backward(
    cls: cst.ClassDef, members: dict[str, cst.FunctionDef]
) -> tuple[cst.FunctionDef, cst.FunctionDef]:
    """forward and backward (or vjp): refuses a class missing one, or defining both backward and vjp."""
    forward = members.get("forward")
    if forward is None:
        raise Refuse(Code.CLASS_SHAPE, "has no forward", cls)
    if "backward" in members and "vjp" in members:
        raise Refuse(Code.CLASS_SHAPE, "defines both backward and vjp (torch rejects this)", cls)
    backward = members.get("backward") or members.get("vjp")
    if backward is None:
        raise Refuse(Code.CLASS_SHAPE, "has no backward (or vjp)", cls)
    return forward, backward


def _read_decorators(plan: _ClassPlan, decorators: DecoratorReader) -> None:
    """The decorators of forward and backward, which the carriers replay; refuses replays that would not be exact."""
    before = [*(plan.inherited.members if plan.inherited else ())]
    if plan.generate_vmap_rule is not None:
        before.append("generate_vmap_rule")
    order = _member_order(plan.cls, before)
    plan.forward_uses, plan.backward_uses = _replayed_decorators(
        plan.name, plan.members, order, plan.generate_vmap_rule, decorators
    )
    _check_replay_place(plan.name, plan.decorator_uses, own=plan.body.members, keep=plan.keep)


def _lower_ctx(
    plan: _ClassPlan, fwd_name: str, bwd_name: str, names: _FlatNames, resolve: Resolve | None, record_name: str
) -> _Lowered:
    """ctx as named residuals; where that refuses for a reason a record can carry, ctx as a record."""
    if "setup_context" in plan.members:
        lowering: _CombinedLowering | _SetupContextLowering = _SetupContextLowering(
            plan.name, plan.forward, plan.members["setup_context"], plan.backward
        )
    else:
        lowering = _CombinedLowering(plan.name, plan.forward, plan.backward)
    jvp = plan.members.get("jvp")
    if jvp is not None:
        lowering.jvp = jvp
        lowering.jvp_name = names.fresh("jvp")
    try:
        fwd_def, bwd_def, spec = lowering.lower(fwd_name, bwd_name)
        return _Lowered(fwd_def, bwd_def, spec, list(lowering.extra))
    except Refuse as refused:
        if refused.refusal.code not in FALLBACK_CODES or resolve is None or lowering.joined is None:
            raise
        record = RecordLowering(
            plan.name,
            lowering.joined,
            plan.backward,
            jvp,
            record_name,
            resolve,
            setup_style="setup_context" in plan.members,
            reason=refused.refusal.reason.removeprefix(""),
        )
        fwd_def, bwd_def, spec, extra = record.lower(fwd_name, bwd_name, lowering.jvp_name)
        if plan.decorator_uses and spec.fwd_needs_input_grad:
            raise Refuse(
                Code.DECORATOR,
                f"its ctx needs a record ({spec.record_reason}), and a forward that reads needs_input_grad"
                " is not replayed behind decorators (they would be handed it as an extra argument)",
                plan.decorator_uses[0].expr,
            ) from None
        return _Lowered(fwd_def, bwd_def, spec, extra)


def _record_class_facts(plan: _ClassPlan, spec: VJPSpec) -> None:
    """What the carriers take from the class itself rather than from ctx."""
    spec.forward_decorators = tuple(use.expr for use in plan.forward_uses)
    spec.backward_decorators = tuple(use.expr for use in plan.backward_uses)
    spec.decorators = plan.decorator_uses
    spec.backward_name = plan.backward.name.value
    spec.generate_vmap_rule = plan.generate_vmap_rule


def _kept_class(plan: _ClassPlan, lowered: _Lowered) -> KeptClass | None:
    """The plain class that stays, if one does (with the symbolic the carriers carry)."""
    cls, inherited, spec = plan.cls, plan.inherited, lowered.spec
    if not plan.keep:
        return None
    kept = KeptClass(cls.with_changes(body=cls.body.with_changes(body=plan.body.kept)), replace_base=inherited is None)
    if plan.body.symbolic:
        spec.symbolic = cst.Name("symbolic")
    elif inherited is not None and inherited.symbolic_base is not None:
        spec.symbolic = cst.Attribute(cst.Name(inherited.symbolic_base), cst.Name("symbolic"))
    return kept


def _member_order(cls: cst.ClassDef, inherited: list[str]) -> list[str]:
    """The autograd members and ``generate_vmap_rule`` in class-body order; what a base
    defined comes first (its class body ran before this one)."""
    own: list[str] = []
    for stmt in cls.body.body if isinstance(cls.body, cst.IndentedBlock) else ():
        if isinstance(stmt, cst.FunctionDef) and stmt.name.value in AUTOGRAD_MEMBERS:
            own.append(stmt.name.value)
        elif isinstance(stmt, cst.SimpleStatementLine) and any(_assigns_vmap_rule(small) for small in stmt.body):
            own.append("generate_vmap_rule")
    return [*(m for m in dict.fromkeys(inherited) if m not in own), *own]


def _assigns_vmap_rule(small: cst.BaseSmallStatement) -> bool:
    return (
        isinstance(small, cst.Assign)
        and len(small.targets) == 1
        and isinstance(small.targets[0].target, cst.Name)
        and small.targets[0].target.value == "generate_vmap_rule"
    )


def _check_replay_place(
    name: str, uses: tuple[DecoratorUse, ...], *, own: dict[str, cst.FunctionDef], keep: bool
) -> None:
    """Refuse replays that would run a decorator somewhere else than the original did.

    An inherited member was decorated once, in its base's body: replaying it for the
    subclass would apply the decorator again. A kept class binds ``apply`` at the end of
    its body, after every kept statement, so a wrapper whose arguments are evaluated
    (``@guard(check=True)``) could change order with them.
    """
    for use in uses:
        if use.member not in own:  # reported at the subclass: the decorator is its base's text
            raise Refuse(
                Code.DECORATOR, f"the decorators of inherited `{use.member}` would be applied a second time", None
            )
        if keep and use.kind == "wrapper" and isinstance(use.expr, cst.Call):
            raise Refuse(
                Code.DECORATOR,
                "a kept class binds apply after its other statements, which would move the evaluation of this decorator's arguments",
                use.expr,
            )


def _replayed_decorators(
    name: str,
    members: dict[str, cst.FunctionDef],
    order: list[str],
    generate_vmap_rule: cst.BaseExpression | None,
    read: DecoratorReader,
) -> tuple[tuple[DecoratorUse, ...], tuple[DecoratorUse, ...]]:
    """The decorators of forward and backward, which the carriers replay; refuses those
    (and any on the other members) whose replay would not be exact (``decorators``)."""
    forward = members["forward"]
    backward = members.get("backward") or members["vjp"]
    forward_uses = read.read(forward, replayable=True)
    backward_uses = read.read(backward, replayable=True)
    for other in ("setup_context", "jvp", "vmap"):
        if other in members:
            read.read(members[other], replayable=False)
    if "setup_context" in members and forward_uses:
        if any(use.target.endswith(".custom_fwd") for use in forward_uses):
            reason = "custom_fwd on a setup_context forward is broken in torch itself; fix the original first"
        else:
            reason = (
                "a decorator on a setup_context-style forward is not replayed (it takes no ctx, and "
                "torch fills apply's defaults from the decorated signature)"
            )
        raise Refuse(Code.DECORATOR, f"{reason}", forward_uses[0].expr)
    local = [use for use in (*forward_uses, *backward_uses) if use.definition is not None]
    if local:  # only a decorator defined here can be read for what it does with ctx
        setters = [forward, members["setup_context"]] if "setup_context" in members else [forward]
        check_ctx_reads(name, local, set().union(*map(_ctx_attributes_set, setters)))
    others = {member: member_expressions(func) for member, func in members.items()}
    if generate_vmap_rule is not None:
        others["generate_vmap_rule"] = [generate_vmap_rule]
    uses = {forward.name.value: forward_uses, backward.name.value: backward_uses}
    check_evaluation_order(name, order, uses, others, read.qualified)
    return forward_uses, backward_uses


def _ctx_attributes_set(forward: cst.FunctionDef) -> set[str]:
    """Names of the attributes forward sets on its first parameter (ctx)."""
    params = forward.params.posonly_params or forward.params.params
    if not params:
        return set()
    ctx = params[0].name.value
    found: set[str] = set()

    class Visitor(cst.CSTVisitor):
        def visit_AssignTarget(self, node: cst.AssignTarget) -> None:
            for target in _targets(node.target):
                if (
                    isinstance(target, cst.Attribute)
                    and isinstance(target.value, cst.Name)
                    and target.value.value == ctx
                ):
                    found.add(target.attr.value)

        def visit_AugAssign(self, node: cst.AugAssign) -> None:
            self.visit_AssignTarget(cst.AssignTarget(node.target))

        def visit_AnnAssign(self, node: cst.AnnAssign) -> None:
            self.visit_AssignTarget(cst.AssignTarget(node.target))

    walk(forward.body, Visitor())
    return found - RESERVED_ATTRS


def _targets(target: cst.BaseExpression) -> list[cst.BaseExpression]:
    if isinstance(target, (cst.Tuple, cst.List)):
        return [t for e in target.elements for t in _targets(e.value)]
    return [target]


def _is_static(func: cst.FunctionDef | None, qualified: QualifiedNames) -> bool:
    return func is not None and any(is_staticmethod(d.decorator, qualified) for d in func.decorators)


def _plain_def_as_static(func: cst.FunctionDef) -> cst.FunctionDef:
    """``def backward(ctx, ...)`` with no decorator next to a static forward, as real code
    forgets ``@staticmethod``: the backward node reads it from the class (a plain function
    there) and passes ctx first, exactly as for a staticmethod. (A forward that is not static
    is a legacy Function, which torch no longer runs: refused.)"""
    if func.decorators:
        return func
    return func.with_changes(decorators=[cst.Decorator(decorator=cst.Name("staticmethod"))])


def _classmethod_as_static(
    func: cst.FunctionDef, qualified: QualifiedNames, cls_name: str, class_alias: str | None
) -> cst.FunctionDef:
    """``@classmethod def backward(cls, ctx, ...)`` is a staticmethod whose ``cls`` is the class:
    where it is used, it is renamed to ``class_alias``, the name that means the class."""
    for i, decorator in enumerate(func.decorators):
        expr = decorator.decorator
        if not (isinstance(expr, cst.Name) and "builtins.classmethod" in qualified(expr)):
            continue
        params = func.params.posonly_params or func.params.params
        if not params:
            raise Refuse(Code.SIGNATURE, f"classmethod `{func.name.value}` takes no cls", func)
        cls_param = params[0].name.value
        static = decorator.with_changes(decorator=cst.Name("staticmethod"))
        decorators = [*func.decorators[:i], static, *func.decorators[i + 1 :]]
        func = func.with_changes(decorators=decorators, params=params_without_first(func.params))
        if cls_param in names_in(func):
            func = _rename_cls(func, cls_param, cls_name, class_alias)
        return func
    return func


def _rename_cls(func: cst.FunctionDef, cls_param: str, cls_name: str, class_alias: str | None) -> cst.FunctionDef:
    role = func.name.value
    if class_alias is None:
        raise Refuse(
            Code.CLASS_SHAPE, f"`{role}` uses `{cls_param}`, and no name certainly means the class where it runs", func
        )
    stores = analyse(func, None).stores
    if cls_param in stores or class_alias in stores or class_alias in param_names(func.params):
        raise Refuse(Code.CLASS_SHAPE, f"`{role}` rebinds `{cls_param}` or `{class_alias}`", func)
    return rename(func, {cls_param: class_alias})


@dataclass
class _CtxUses:
    """forward's uses of ctx, by what they do."""

    saves: list[CtxUse]  # ctx.save_for_backward(...)
    forward_saves: list[CtxUse]  # ctx.save_for_forward(...), read back by jvp
    sets: list[CtxUse]  # ctx.attr = value
    reads: list[CtxUse]  # ctx.attr
    calls: list[CtxUse]  # any other ctx method: mark_dirty, mark_non_differentiable, ...

    @classmethod
    def of(cls, facts: BodyFacts) -> _CtxUses:
        uses = facts.ctx_uses
        saves = ("save_for_backward", "save_for_forward")
        return cls(
            saves=[u for u in uses if u.kind == "call" and u.attr == "save_for_backward"],
            forward_saves=[u for u in uses if u.kind == "call" and u.attr == "save_for_forward"],
            sets=[u for u in uses if u.kind == "set"],
            reads=[u for u in uses if u.kind == "read"],
            calls=[u for u in uses if u.kind == "call" and u.attr not in saves],
        )


@dataclass
class _ForwardPlan:
    """What the forward half decides, phase by phase; bwd and jvp then read its residuals."""

    ctx: str
    facts: BodyFacts
    uses: _CtxUses
    params: cst.Parameters  # fwd's: forward's without ctx
    param_names: list[str]
    positional: list[str]
    taken: set[str]  # the names fwd spells, grown by every fresh one
    spec: VJPSpec = field(default_factory=lambda: VJPSpec(fill_defaults=False))
    edits: BodyEdits = field(default_factory=BodyEdits)
    residuals: list[Residual] = field(default_factory=list)
    attr_residual: dict[str, Residual] = field(default_factory=dict)
    set_sites: dict[str, list[CtxUse]] = field(default_factory=dict)  # attr -> where forward sets it
    #: attr -> its default, for attributes backward only reads as getattr(ctx, "attr", <same constant>)
    defaults_in_bwd: dict[str, cst.BaseExpression] = field(default_factory=dict)
    initialised: list[cst.BaseStatement] = field(default_factory=list)  # ``attr = <default>`` at fwd's top
    defaulted: set[int] = field(default_factory=set)  # the residuals those initialise
    falls_off: bool = False  # control can reach the end of forward's body


class _CombinedLowering:
    """``forward(ctx, ...)`` + ``backward(ctx, *grads)``."""

    def __init__(
        self,
        name: str,
        forward: cst.FunctionDef,
        backward: cst.FunctionDef,
        output_items: tuple[str, list[str]] | None = None,
    ) -> None:
        self.name = name
        self.forward = forward
        self.backward = backward
        #: (returned name, names it is unpacked into): setup_context's `a, b = output`
        self.output_items = output_items
        self.jvp: cst.FunctionDef | None = None  # forward-mode rule, lowered like backward
        self.jvp_name = ""
        self.jvp_reader: Reader | None = None  # jvp analysed, once forward needs to know what it reads
        self.extra: list[cst.FunctionDef] = []
        self.joined: cst.FunctionDef | None = forward  # the combined-style forward lowered

    # -- entry ---------------------------------------------------------------
    def lower(self, fwd_name: str, bwd_name: str) -> tuple[cst.FunctionDef, cst.FunctionDef, VJPSpec]:
        """fwd, bwd and the spec (jvp goes to ``extra``). The phases run in this order because
        it decides which refusal a class gets and the order fresh names are given out."""
        plan = self._plan()
        backward = read_ctx(self.name, self.backward)
        self._check_ctx_calls(plan)
        self._spell_saved_for_backward(plan, backward)
        self._spell_saved_for_forward(plan)
        # Attributes backward only reads as getattr(ctx, "name", <same constant>): a path
        # that never sets them is equivalent to one that starts them at that constant.
        plan.defaults_in_bwd = _getattr_defaults(backward.facts)
        self._spell_attribute_sets(plan)
        self._drop_unread_attributes(plan, backward)
        self._replace_forward_reads(plan)
        self._replay_ctx_calls(plan)
        self._check_definitely_assigned(plan)
        self._name_node_attributes(plan)
        fwd_def = self._fwd_function(plan, fwd_name)
        bwd_def = lower_reader(self.name, bwd_name, backward, plan.residuals, plan.attr_residual, plan.spec)
        if self.jvp is not None:
            self.extra.append(self._lower_jvp(plan))
        return fwd_def, bwd_def, plan.spec

    # -- phases --------------------------------------------------------------
    def _plan(self) -> _ForwardPlan:
        """forward analysed, with nothing decided yet; refuses a generator or async forward."""
        name = self.name
        ctx = first_param(self.forward, name)
        facts = analyse(self.forward, ctx)
        if facts.has_yield:
            raise Refuse(Code.CLASS_SHAPE, "forward is a generator or coroutine", self.forward)
        if isinstance(self.forward.asynchronous, cst.Asynchronous):
            raise Refuse(Code.CLASS_SHAPE, "forward is async", self.forward)
        params = params_without_first(self.forward.params)
        names = param_names(params)
        positional = [p.name.value for p in (*params.posonly_params, *params.params)]
        taken = set(names_in(self.forward)) | set(names)
        return _ForwardPlan(ctx, facts, _CtxUses.of(facts), params, names, positional, taken)

    def _check_ctx_calls(self, plan: _ForwardPlan) -> None:
        """Refuse ctx methods the carriers cannot replay, and save_for_forward with no jvp to read it."""
        ctx = plan.ctx
        forward_saves = plan.uses.forward_saves
        if forward_saves and self.jvp is None:
            raise Refuse(
                Code.CONDITIONAL_SAVE_FOR_FORWARD,
                "forward calls save_for_forward but defines no jvp",
                forward_saves[0].node,
            )
        for use in plan.uses.calls:
            if use.attr not in _CTX_CALLS:
                raise Refuse(
                    Code.CTX_UNSUPPORTED, f"forward calls `{ctx}.{use.attr}`, which the engine cannot replay", use.node
                )

    def _spell_saved_for_backward(self, plan: _ForwardPlan, backward: Reader) -> None:
        """One residual per saved tensor where the save is flat, else one group residual."""
        saves = plan.uses.saves
        flat_saves = _flat_saves(saves, plan.facts)
        if flat_saves is not None:
            use, args = flat_saves
            unpack = backward.unpack
            preferred = list(unpack[1]) if unpack and len(unpack[1]) == len(args) else []
            self._spell_saves(plan, use, args, "saved", preferred)
            plan.spec.saved_for_backward_idx = tuple(i for i, r in enumerate(plan.residuals) if r.kind == "saved")
        elif saves:
            self._group_saves(plan, saves)

    def _group_saves(self, plan: _ForwardPlan, saves: list[CtxUse]) -> None:
        """Saves that are conditional, repeated or starred: each assigns the one group residual."""
        var = fresh("saved_tensors", plan.taken)
        group = Residual("group", None, var, bwd_name="")
        for use in saves:
            call = use.node
            assert isinstance(call, cst.Call)
            if any(a.keyword is not None for a in call.args):
                raise Refuse(Code.CONDITIONAL_SAVE_FOR_FORWARD, "save_for_backward is called with keywords", call)
            value = cst.Tuple(
                [cst.Element(a.value) if a.star == "" else cst.StarredElement(a.value) for a in call.args]
            )
            plan.edits.smalls[_statement_of(use)] = cst.Assign([cst.AssignTarget(cst.Name(var))], value)
        plan.residuals.append(group)
        group.defined_by = []  # initialised at the top of fwd: always assigned
        plan.spec.saved_tensors_idx = 0

    def _spell_saved_for_forward(self, plan: _ForwardPlan) -> None:
        """One residual per tensor given to save_for_forward (read back by jvp)."""
        forward_saves = plan.uses.forward_saves
        if not forward_saves:
            return
        flat_forward = _flat_saves(forward_saves, plan.facts)
        if flat_forward is None:
            raise Refuse(
                Code.CONDITIONAL_SAVE_FOR_FORWARD,
                "save_for_forward is called conditionally, twice, with * or after a return",
                forward_saves[0].node,
            )
        use, args = flat_forward
        self._spell_saves(plan, use, args, "fsaved", [])
        plan.spec.saved_for_forward_idx = tuple(i for i, r in enumerate(plan.residuals) if r.kind == "fsaved")

    def _spell_attribute_sets(self, plan: _ForwardPlan) -> None:
        """``ctx.attr = value`` becomes an assignment to the attribute's residual."""
        sets = plan.uses.sets
        for use in sets:
            plan.set_sites.setdefault(use.attr, []).append(use)
        for use in sets:
            if use.attr in RESERVED_ATTRS or use.attr.startswith("__"):
                raise Refuse(
                    Code.CTX_TORCH_ATTRIBUTE,
                    f"forward sets `{plan.ctx}.{use.attr}`, an attribute torch itself uses",
                    use.node,
                )
        for use in sets:
            assign = use.node
            assert isinstance(assign, cst.Assign)
            if isinstance(assign.targets[0].target, (cst.Tuple, cst.List)):
                self._spell_tuple_set(plan, use, assign)
            else:
                self._spell_set(plan, use, assign)

    def _spell_tuple_set(self, plan: _ForwardPlan, use: CtxUse, assign: cst.Assign) -> None:
        """``ctx.a, ctx.b = x, y`` becomes ``a, b = x, y``."""
        ctx = plan.ctx
        target = assign.targets[0].target
        assert isinstance(target, (cst.Tuple, cst.List))
        names_here = []
        for el in target.elements:
            if not (
                isinstance(el, cst.Element)
                and isinstance(el.value, cst.Attribute)
                and isinstance(el.value.value, cst.Name)
                and el.value.value.value == ctx
            ):
                raise Refuse(
                    Code.CTX_UNSUPPORTED, f"a tuple assignment mixes `{ctx}` attributes and other targets", assign
                )
            names_here.append(el.value.attr.value)
        vars_here = [self._attr_var(plan, a, use, reuse=None) for a in names_here]
        plan.edits.smalls[assign] = assign.with_changes(targets=[cst.AssignTarget(name_tuple(vars_here))])

    def _spell_set(self, plan: _ForwardPlan, use: CtxUse, assign: cst.Assign) -> None:
        """``ctx.attr = value``: the residual reuses ``value`` where it is a name that stays put."""
        attr = use.attr
        value = assign.value
        reuse = None
        if (
            attr not in plan.defaults_in_bwd
            and len(plan.set_sites[attr]) == 1
            and isinstance(value, cst.Name)
            and value.value != plan.ctx
            and self._reusable(plan, value.value, use)
        ):
            reuse = value.value
        var = self._attr_var(plan, attr, use, reuse=reuse)
        if reuse is not None:
            plan.edits.smalls[assign] = None
        else:
            plan.edits.smalls[assign] = assign.with_changes(targets=[cst.AssignTarget(cst.Name(var))])

    def _drop_unread_attributes(self, plan: _ForwardPlan, backward: Reader) -> None:
        """An attribute backward (and jvp) never read is still on the autograd node (in the
        original, ctx is ``out.grad_fn``), so it stays a residual where forward sets it on
        every path that returns; set on some paths only, it is on the node exactly there,
        which a residual cannot say (it cannot be absent): refused, so ctx becomes a record."""
        read_later = {u.attr for u in backward.facts.ctx_uses if u.kind in ("read", "getattr")}
        if self.jvp is not None:
            self.jvp_reader = read_ctx(self.name, self.jvp)
            read_later |= {u.attr for u in self.jvp_reader.facts.ctx_uses if u.kind in ("read", "getattr")}
        kept = read_later | self._set_on_every_path(plan)
        some_paths = {u.attr for u in plan.uses.sets} - kept
        if some_paths:
            raise Refuse(
                Code.CTX_ATTRIBUTE_ON_SOME_PATHS,
                f"{', '.join(f'`{plan.ctx}.{a}`' for a in sorted(some_paths))}"
                f" {'is' if len(some_paths) == 1 else 'are'} set on some paths only, so on the autograd node only there",
                self.forward,
            )
        plan.residuals[:] = [r for r in plan.residuals if r.kind != "attr" or r.attr in kept]

    def _set_on_every_path(self, plan: _ForwardPlan) -> set[str]:
        """The attributes forward certainly sets before each of its returns (and before it falls off)."""
        defines: dict[cst.CSTNode, set[str]] = {}
        for r in plan.residuals:
            if r.kind == "attr" and r.attr is not None:
                for d in r.defined_by:
                    defines.setdefault(d, set()).add(r.attr)
        if not defines:
            return set()
        body = self.forward.body
        assert isinstance(body, cst.IndentedBlock)
        at_return = definitely_assigned_at_returns(tuple(body.body), defines)
        states = [at_return.get(ret, frozenset()) for ret, _ in plan.facts.returns]
        if not always_returns(tuple(body.body)):
            states.append(_end_state(tuple(body.body), defines))
        return set(frozenset.intersection(*states)) if states else set()

    def _replace_forward_reads(self, plan: _ForwardPlan) -> None:
        """``ctx.attr`` read back in forward becomes the residual's name; refuses a read before the set."""
        ctx = plan.ctx
        for use in plan.uses.reads:
            if use.attr == "needs_input_grad":
                raise Refuse(Code.CTX_UNSUPPORTED, f"forward reads `{ctx}.needs_input_grad`", use.node)
            if use.attr not in plan.attr_residual:
                raise Refuse(Code.CTX_UNSUPPORTED, f"forward reads `{ctx}.{use.attr}`, which it never sets", use.node)
            first_set = min(u.position for u in plan.set_sites[use.attr])
            if use.position < first_set:
                raise Refuse(Code.CTX_UNSUPPORTED, f"forward reads `{ctx}.{use.attr}` before setting it", use.node)
            plan.edits.attributes[use.node] = cst.Name(plan.attr_residual[use.attr].fwd_name)

    def _replay_ctx_calls(self, plan: _ForwardPlan) -> None:
        """mark_dirty / mark_non_differentiable / set_materialize_grads become facts of the spec."""
        spec = plan.spec
        for use in plan.uses.calls:
            call = use.node
            assert isinstance(call, cst.Call)
            code = Code.MARKS_UNMATCHED if use.attr.startswith("mark_") else Code.CONDITIONAL_MATERIALIZE_GRADS
            if not use.top_level:
                raise Refuse(code, f"`{plan.ctx}.{use.attr}` is called conditionally", call)
            if any(pos < use.position for _, pos in plan.facts.returns):
                raise Refuse(code, f"forward can return before `{plan.ctx}.{use.attr}`", call)
            plan.edits.smalls[_statement_of(use)] = None
            if use.attr == "set_materialize_grads":
                spec.materialize_grads = self._materialize_flag(call)
            elif use.attr == "mark_dirty":
                spec.dirty_idx = spec.dirty_idx + self._dirty(call, plan.positional, plan.facts)
            else:
                spec.non_differentiable_idx = spec.non_differentiable_idx + self._nondiff(call, use, plan.facts)

    def _check_definitely_assigned(self, plan: _ForwardPlan) -> None:
        """Every residual is set on every path that returns, or starts at backward's getattr default."""
        # Keyed by residual, not by name: one name can back two residuals (saved and attr).
        defines: dict[cst.CSTNode, set[str]] = {}
        for i, r in enumerate(plan.residuals):
            for d in r.defined_by:
                defines.setdefault(d, set()).add(f"#{i}")
        body = self.forward.body
        assert isinstance(body, cst.IndentedBlock)
        at_return = definitely_assigned_at_returns(tuple(body.body), defines)
        needed = {f"#{i}" for i, r in enumerate(plan.residuals) if r.defined_by}
        plan.falls_off = not always_returns(tuple(body.body))
        end_state = _end_state(tuple(body.body), defines) if plan.falls_off else None
        states = [at_return.get(ret, frozenset()) for ret, _ in plan.facts.returns]
        if end_state is not None:
            states.append(end_state)
        needed -= self._initialise_defaults(plan, states)
        for ret, _pos in plan.facts.returns:
            missing = needed - at_return.get(ret, frozenset())
            if missing:
                raise Refuse(
                    Code.CTX_ATTRIBUTE_ON_SOME_PATHS,
                    f"{_describe(missing, plan.residuals, plan.ctx)} not set on every path that returns",
                    ret,
                )
        if end_state is not None and needed - end_state:
            raise Refuse(
                Code.CTX_ATTRIBUTE_ON_SOME_PATHS,
                f"{_describe(needed - end_state, plan.residuals, plan.ctx)} not set on every path that returns",
                self.forward,
            )

    def _initialise_defaults(self, plan: _ForwardPlan, states: list[frozenset[str]]) -> set[str]:
        """``attr = <getattr default>`` at fwd's top for the attributes some path leaves unset;
        their keys, which no longer need setting."""
        initialised = set()
        for i, r in enumerate(plan.residuals):
            key = f"#{i}"
            if r.kind == "attr" and r.attr in plan.defaults_in_bwd and any(key not in state for state in states):
                default = plan.defaults_in_bwd[r.attr]
                plan.initialised.append(
                    cst.SimpleStatementLine([cst.Assign([cst.AssignTarget(cst.Name(r.fwd_name))], default)])
                )
                initialised.add(key)
                plan.defaulted.add(i)
        return initialised

    def _name_node_attributes(self, plan: _ForwardPlan) -> None:
        """The attribute residuals the eager carrier keeps on the autograd node under their
        names (in the original, ctx *is* the node: ``out.grad_fn.<name>`` reads and writes
        them). Not one that starts at backward's getattr default on some path: the original's
        node has no such attribute there."""
        plan.spec.ctx_attrs = tuple(
            (i, r.attr)
            for i, r in enumerate(plan.residuals)
            if r.kind == "attr"
            and r.attr is not None
            and i not in plan.defaulted
            and not r.attr.startswith("_inliner_")
        )

    def _fwd_function(self, plan: _ForwardPlan, fwd_name: str) -> cst.FunctionDef:
        """forward with its edits made, returning ``(output, residuals)`` on every path."""
        residual_tuple = name_tuple([r.fwd_name for r in plan.residuals])

        def make_return(ret: cst.Return) -> cst.Return:
            return _with_residuals(ret, residual_tuple)

        for ret, _pos in plan.facts.returns:
            plan.edits.returns[ret] = make_return
        new_forward = plan.edits.apply(self.forward)
        new_body: list[cst.BaseStatement] = list(new_forward.body.body)  # type: ignore[arg-type]
        if plan.spec.saved_tensors_idx is not None:
            new_body.insert(after_docstring(new_body), _statement(f"{plan.residuals[0].fwd_name} = ()\n"))
        for stmt in reversed(plan.initialised):
            new_body.insert(after_docstring(new_body), stmt)
        if plan.falls_off:
            new_body.append(cst.SimpleStatementLine([make_return(cst.Return(None))]))
        return cst.FunctionDef(
            name=cst.Name(fwd_name),
            params=plan.params,
            body=new_forward.body.with_changes(body=new_body),
            leading_lines=self.forward.leading_lines,
            returns=None,
        )

    def _lower_jvp(self, plan: _ForwardPlan) -> cst.FunctionDef:
        """``jvp(ctx, *tangents)`` -> ``jvp(residuals, *tangents)``; there ``ctx.saved_tensors``
        means what forward gave ``save_for_forward``."""
        reader = self.jvp_reader  # analysed once, to find the attributes jvp reads
        assert reader is not None
        own = [dataclasses.replace(r, bwd_name="") for r in plan.residuals]
        attr_residual = {r.attr: r for r in own if r.kind == "attr" and r.attr is not None}
        scratch = VJPSpec(saved_for_backward_idx=plan.spec.saved_for_forward_idx)
        lowered = lower_reader(self.name, self.jvp_name, reader, own, attr_residual, scratch, saved_kind="fsaved")
        if scratch.bwd_needs_input_grad:
            raise Refuse(Code.CTX_UNSUPPORTED, f"jvp reads `{reader.ctx}.needs_input_grad`", reader.func)
        plan.spec.jvp = self.jvp_name
        return lowered

    # -- helpers ---------------------------------------------------------------
    def _spell_saves(
        self, plan: _ForwardPlan, use: CtxUse, args: list[cst.BaseExpression], kind: str, preferred: list[str]
    ) -> None:
        """Residuals for one unconditional save call: reuse names that stay put, else fresh variables."""
        small = _statement_of(use)
        fresh_targets: list[tuple[str, cst.BaseExpression]] = []
        for i, arg in enumerate(args):
            if isinstance(arg, cst.Name) and self._reusable(plan, arg.value, use):
                plan.residuals.append(Residual(kind, None, arg.value, defined_by=[small]))
                continue
            wish = preferred[i] if preferred else (arg.value if isinstance(arg, cst.Name) else f"saved_{i}")
            var = fresh(wish if wish not in plan.taken else f"{wish}_saved", plan.taken)
            fresh_targets.append((var, arg))
            plan.residuals.append(Residual(kind, None, var, defined_by=[small]))
        if fresh_targets:
            plan.edits.smalls[small] = _assign([v for v, _ in fresh_targets], [e for _, e in fresh_targets])
        else:
            plan.edits.smalls[small] = None

    def _attr_var(self, plan: _ForwardPlan, attr: str, use: CtxUse, reuse: str | None) -> str:
        """The residual of ``ctx.attr`` (made at its first set, named ``reuse`` if given): its name in fwd."""
        existing = plan.attr_residual.get(attr)
        if existing is not None:
            existing.defined_by.append(_statement_of(use))
            return existing.fwd_name
        var = reuse if reuse is not None else fresh(attr if attr not in plan.taken else f"{attr}_saved", plan.taken)
        residual = Residual("attr", attr, var, defined_by=[_statement_of(use)])
        plan.attr_residual[attr] = residual
        plan.residuals.append(residual)
        return var

    def _reusable(self, plan: _ForwardPlan, name: str, use: CtxUse) -> bool:
        """``name`` keeps, until every return, the value it has at ``use``.

        True when every store of the name comes before the use and the use is not in a
        loop (a later iteration could store again before the return).
        """
        stores = plan.facts.stores.get(name, [])
        if not stores and name not in plan.param_names:
            return False  # a global: it could be rebound before backward runs
        if use.in_loop:
            return False
        return all(position < use.position and not nested for position, _, nested in stores)

    def _materialize_flag(self, call: cst.Call) -> bool:
        if (
            len(call.args) == 1
            and isinstance(call.args[0].value, cst.Name)
            and call.args[0].value.value in ("True", "False")
        ):
            return call.args[0].value.value == "True"
        raise Refuse(
            Code.CONDITIONAL_MATERIALIZE_GRADS,
            "set_materialize_grads takes a value the engine cannot read statically",
            call,
        )

    def _dirty(self, call: cst.Call, positional: list[str], facts: BodyFacts) -> tuple[int, ...]:
        out = []
        for arg in call.args:
            value = arg.value
            if (
                arg.star
                or not isinstance(value, cst.Name)
                or value.value not in positional
                or facts.stores.get(value.value)
            ):
                raise Refuse(
                    Code.MARKS_UNMATCHED, "mark_dirty argument is not an input parameter that is never rebound", call
                )
            out.append(positional.index(value.value))
        return tuple(out)

    def _nondiff(self, call: cst.Call, use: CtxUse, facts: BodyFacts) -> tuple[int, ...]:
        marked = []
        for arg in call.args:
            value = arg.value
            if arg.star or not isinstance(value, cst.Name):
                raise Refuse(Code.MARKS_UNMATCHED, "mark_non_differentiable argument is not a plain name", call)
            if any(pos > use.position or nested for pos, _, nested in facts.stores.get(value.value, [])):
                raise Refuse(Code.MARKS_UNMATCHED, f"`{value.value}` is rebound after mark_non_differentiable", call)
            marked.append(value.value)
        result: tuple[int, ...] | None = None
        for ret, pos in facts.returns:
            if pos < use.position:
                raise Refuse(Code.MARKS_UNMATCHED, "forward returns before mark_non_differentiable", ret)
            returned = ret.value
            if isinstance(returned, cst.Tuple):
                items = [
                    el.value.value if isinstance(el, cst.Element) and isinstance(el.value, cst.Name) else None
                    for el in returned.elements
                ]
                if any(isinstance(el, cst.StarredElement) for el in returned.elements):
                    raise Refuse(Code.MARKS_UNMATCHED, "the outputs of forward are starred", ret)
            elif isinstance(returned, cst.Name) and self.output_items and returned.value == self.output_items[0]:
                items = list(self.output_items[1])
                if any(len(facts.stores.get(m, [])) != 1 for m in marked):
                    raise Refuse(Code.MARKS_UNMATCHED, "a marked output is rebound after unpacking", call)
            elif isinstance(returned, cst.Name):
                items = [returned.value]
            else:
                items = []
            try:
                idx = tuple(items.index(m) for m in marked)
            except ValueError:
                raise Refuse(
                    Code.MARKS_UNMATCHED, "a mark_non_differentiable output cannot be matched to a returned name", ret
                ) from None
            if result is not None and idx != result:
                raise Refuse(Code.MARKS_UNMATCHED, "returns disagree on which outputs are non-differentiable", ret)
            result = idx
        if result is None:
            raise Refuse(Code.MARKS_UNMATCHED, "mark_non_differentiable but forward has no return", call)
        return result


def _statement_of(use: CtxUse) -> cst.BaseSmallStatement:
    """The small statement of a ctx call or set (ctxflow records one for both)."""
    assert use.small is not None
    return use.small


def _with_residuals(ret: cst.Return, residuals: cst.Tuple) -> cst.Return:
    """``return value`` -> ``return value, (residuals)``."""
    value = ret.value if ret.value is not None else cst.Name("None")
    return ret.with_changes(
        value=cst.Tuple([cst.Element(_parenthesised(value)), cst.Element(residuals)], lpar=[], rpar=[]),
        whitespace_after_return=cst.SimpleWhitespace(" "),
    )


def _parenthesised(expr: cst.BaseExpression) -> cst.BaseExpression:
    if isinstance(expr, cst.Tuple) and not expr.lpar:
        return expr.with_changes(lpar=[cst.LeftParen()], rpar=[cst.RightParen()])
    return expr


def _statement(code: str) -> cst.BaseStatement:
    return cst.parse_statement(code)


def _getattr_defaults(bwd_facts: BodyFacts) -> dict[str, cst.BaseExpression]:
    """attr -> its default, for attributes backward reads only via ``getattr(ctx, "attr", same constant)``."""
    found: dict[str, list[cst.BaseExpression]] = {}
    plain = {u.attr for u in bwd_facts.ctx_uses if u.kind == "read"}
    for use in bwd_facts.ctx_uses:
        if use.kind == "getattr":
            assert isinstance(use.node, cst.Call)
            found.setdefault(use.attr, []).append(use.node.args[2].value)
    out = {}
    for attr, defaults in found.items():
        codes = {cst.Module(body=[]).code_for_node(d) for d in defaults}
        if attr not in plain and len(codes) == 1:
            out[attr] = defaults[0].deep_clone()
    return out


def _flat_saves(saves: list[CtxUse], facts: BodyFacts) -> tuple[CtxUse, list[cst.BaseExpression]] | None:
    """One unconditional save with a fixed argument list: residuals can be spelled one by one."""
    if len(saves) != 1 or not saves[0].top_level:
        return None
    use = saves[0]
    call = use.node
    assert isinstance(call, cst.Call)
    if any(a.star or a.keyword is not None for a in call.args):
        return None
    if any(pos < use.position for _, pos in facts.returns):
        return None
    return use, [a.value for a in call.args]


def _describe(missing: set[str], residuals: list[Residual], ctx: str) -> str:
    """The ctx attributes (or save_for_backward) behind the residual keys in ``missing``."""
    parts = []
    for i, r in enumerate(residuals):
        if f"#{i}" in missing:
            parts.append(f"`{ctx}.{r.attr}`" if r.attr else "`save_for_backward`")
    parts = sorted(set(parts))
    return ", ".join(parts) + (" is" if len(parts) == 1 else " are")


def _assign(targets: list[str], values: list[cst.BaseExpression]) -> cst.Assign:
    if len(targets) == 1:
        return cst.Assign([cst.AssignTarget(cst.Name(targets[0]))], values[0])
    return cst.Assign(
        [cst.AssignTarget(cst.Tuple([cst.Element(cst.Name(t)) for t in targets], lpar=[], rpar=[]))],
        cst.Tuple([cst.Element(v) for v in values], lpar=[], rpar=[]),
    )


def _end_state(body: tuple[cst.BaseStatement, ...], defines: dict[cst.CSTNode, set[str]]) -> frozenset[str]:
    """Residuals certainly assigned when control falls off the end of ``body``."""
    marker = cst.Return(None)
    probe = (*body, cst.SimpleStatementLine([marker]))
    return definitely_assigned_at_returns(probe, defines).get(marker, frozenset())


class _SetupContextLowering:
    """``forward(*inputs)`` + ``setup_context(ctx, inputs, output)`` + ``backward(ctx, *grads)``.

    The two halves are joined into one combined-style forward (``setup_context.py``) and
    lowered like any combined forward; ``fill_defaults`` keeps torch's binding of
    defaults for this style.
    """

    def __init__(self, name: str, forward: cst.FunctionDef, setup: cst.FunctionDef, backward: cst.FunctionDef) -> None:
        self.jvp: cst.FunctionDef | None = None
        self.jvp_name = ""
        self.extra: list[cst.FunctionDef] = []
        self.name = name
        self.forward = forward
        self.setup = setup
        self.backward = backward
        self.joined: cst.FunctionDef | None = None  # forward and setup_context as one, once joined

    def lower(self, fwd_name: str, bwd_name: str) -> tuple[cst.FunctionDef, cst.FunctionDef, VJPSpec]:
        joined = join_setup_context(self.name, self.forward, self.setup, self.backward)
        self.joined = joined.func
        combined = _CombinedLowering(self.name, joined.func, self.backward, joined.output_items)
        combined.jvp, combined.jvp_name = self.jvp, self.jvp_name
        fwd_def, bwd_def, spec = combined.lower(fwd_name, bwd_name)
        self.extra = combined.extra
        spec.fill_defaults = True
        return fwd_def, bwd_def, spec
