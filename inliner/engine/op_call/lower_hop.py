"""Lower one ``autograd_function_apply(fwd, bwd, *operands, **flags)`` call into a ``CustomVJP``.

The higher-order op already has the flat shape: ``fwd(*operands) -> (outputs,
saved)`` and ``bwd(*grads, *saved)``. Lowering re-spells bwd as
``bwd(residuals, *grads)``, drops the ``ctx``/``self`` parameters the two
generations of the op carry, strips the ``torch._C._set_grad_enabled`` bracket a
dumped graph puts around each body (the carrier already runs fwd without grad and
bwd in the engine's grad mode; see docs/semantics.md §22), and turns the
keyword flags into the runtime's static spec. What a body may hold is decided in
inliner/hop_bodies.py.
"""

from __future__ import annotations

import re
from dataclasses import dataclass

import libcst as cst

from inliner.engine.analysis.ctxflow import analyse
from inliner.engine.codes import Code
from inliner.engine.model import CustomVJP, Refuse, VJPSpec
from inliner.engine.names import TakenNames, fresh, names_in, rename, snake_case, unpack_statement
from inliner.engine.op_call.hop_bodies import Qualify, check_body, strip_dynamo_bracket
from inliner.engine.walk import walk

HOP_NAMES = frozenset(
    {
        "torch.ops.higher_order.autograd_function_apply",
        "torch._functorch.autograd_function.autograd_function_apply",
        "torch._higher_order_ops.autograd_function.autograd_function_apply",
    }
)
KNOWN_FLAGS = {"non_differentiable_idx", "saved_for_backward_idx", "dirty_idx", "args_tensor_mask"}
_GENERATED_COMMENT = re.compile(r"#\s*(File:|No stacktrace found)")


@dataclass
class HopFlags:
    non_differentiable_idx: tuple[int, ...] = ()
    saved_for_backward_idx: tuple[int, ...] | None = None  # None: the old ABI does not say
    dirty_idx: tuple[int, ...] = ()
    args_tensor_mask: tuple[bool, ...] | None = None  # set: the torch <= 2.9 ABI (leading ctx)

    @property
    def old_abi(self) -> bool:
        return self.args_tensor_mask is not None


def lower_hop(
    name: str,
    fwd: cst.FunctionDef,
    bwd: cst.FunctionDef,
    *,
    flags: HopFlags,
    n_operands: int,
    fwd_is_method: bool,
    bwd_is_method: bool,
    taken: TakenNames,
    renames: dict[str, str] | None = None,
    fwd_kind: str = "function",
    bwd_kind: str = "function",
    qualify: Qualify = lambda name: {f"builtins.{name}"},
) -> CustomVJP:
    """``renames``: the caller's result locals already renamed (``autograd_function_apply`` ->
    ``scale``); a body parameter a dump named after one of them is renamed the same way.
    ``fwd_kind``/``bwd_kind``: ``dump``, ``traced`` or ``function`` (inliner/hop_bodies.py);
    ``qualify``: what a name from outside the bodies stands for at module level."""
    fwd_params = _drop_leading(fwd, (1 if fwd_is_method else 0) + (1 if flags.old_abi else 0), name)
    bwd_params = _drop_leading(bwd, (1 if bwd_is_method else 0) + (1 if flags.old_abi else 0), name)

    fwd_body = _clean_body(fwd, fwd_kind)
    check_body(fwd, list(fwd_body.body), kind=fwd_kind, role="forward", params=_names(fwd_params), qualify=qualify)
    bwd_body = _clean_body(bwd, bwd_kind)
    check_body(bwd, list(bwd_body.body), kind=bwd_kind, role="backward", params=_names(bwd_params), qualify=qualify)
    n_outputs, n_saved = _fwd_shape(fwd_body, _tuple_locals(fwd, fwd_body))
    positional = _bwd_positional(bwd, bwd_params, n_outputs, n_saved)
    bwd_body = _lift_untracked_operands(bwd, bwd_body, flags, n_operands, bwd_kind, qualify)
    snake = snake_case(re.sub(r"\W", "_", name))
    new_fwd = _flat_fwd(fresh(f"{snake}_fwd", taken), fwd_params, fwd_body)
    new_bwd = _flat_bwd(fresh(f"{snake}_bwd", taken), bwd, bwd_body, positional[:n_outputs], positional[n_outputs:])
    if renames:
        new_fwd = _rename_params(new_fwd, {p.name.value for p in fwd_params.params}, renames)
        new_bwd = _rename_params(new_bwd, {p.name.value for p in positional}, renames)
    spec = VJPSpec(
        saved_for_backward_idx=tuple(flags.saved_for_backward_idx or ()),
        non_differentiable_idx=flags.non_differentiable_idx,
        dirty_idx=flags.dirty_idx,
    )
    return CustomVJP(name=name, fwd=new_fwd, bwd=new_bwd, spec=spec)


def _bwd_positional(bwd: cst.FunctionDef, bwd_params: cst.Parameters, n_outputs: int, n_saved: int) -> list[cst.Param]:
    """bwd's parameters after the leading ones: one per output grad, then one per saved value."""
    if (
        bwd_params.star_arg not in (cst.MaybeSentinel.DEFAULT, None)
        or bwd_params.kwonly_params
        or bwd_params.star_kwarg
    ):
        raise Refuse(Code.OP_CALL_SHAPE, "the backward body takes *args/**kwargs", bwd)
    positional = list(bwd_params.params)
    if len(positional) != n_outputs + n_saved:
        raise Refuse(
            Code.OP_CALL_SHAPE,
            f"the backward body takes {len(positional)} parameters, expected {n_outputs} grads + {n_saved} saved values",
            bwd,
        )
    return positional


def _lift_untracked_operands(
    bwd: cst.FunctionDef, bwd_body: cst.IndentedBlock, flags: HopFlags, n_operands: int, bwd_kind: str, qualify: Qualify
) -> cst.IndentedBlock:
    """torch <= 2.9 applies the Function to the tensor args only; lifted free variables get
    no gradient slot, so bwd answers None for them."""
    extra_nones = 0
    if flags.old_abi:
        extra_nones = n_operands - sum(flags.args_tensor_mask or ())
        if extra_nones < 0:
            raise Refuse(Code.OP_CALL_SHAPE, "args_tensor_mask names more tensors than the call passes", bwd)
    if not extra_nones:
        return bwd_body
    if qualify("isinstance") != {"builtins.isinstance"} or qualify("tuple") != {"builtins.tuple"}:
        raise Refuse(
            Code.OP_CALL_SHAPE,
            "the module rebinds `isinstance` or `tuple`, which the lifted operands' gradients need",
            bwd,
        )
    tensors = _annotated_tensors(bwd, bwd_body) if bwd_kind == "dump" else set()
    lifted = _LiftedNones(n_operands - extra_nones, extra_nones, _tuple_locals(bwd, bwd_body), tensors, names_in(bwd))
    return lifted.append_to(bwd_body, bwd)


def _flat_fwd(name: str, params: cst.Parameters, body: cst.IndentedBlock) -> cst.FunctionDef:
    params = params.with_changes(params=[p.with_changes(comma=cst.MaybeSentinel.DEFAULT) for p in params.params])
    return cst.FunctionDef(name=cst.Name(name), params=params, body=body)


def _flat_bwd(
    name: str, bwd: cst.FunctionDef, body: cst.IndentedBlock, grads: list[cst.Param], saved: list[cst.Param]
) -> cst.FunctionDef:
    """``bwd(residuals, *grads)``, unpacking the saved values from ``residuals`` first."""
    residuals = fresh("residuals", names_in(bwd))
    if saved:
        body = body.with_changes(body=[unpack_statement([p.name.value for p in saved], residuals), *body.body])
    grad_params = [g.with_changes(comma=cst.MaybeSentinel.DEFAULT) for g in grads]
    params = cst.Parameters(params=[cst.Param(cst.Name(residuals)), *grad_params])
    return cst.FunctionDef(name=cst.Name(name), params=params, body=body)


def _rename_params(func: cst.FunctionDef, params: set[str], renames: dict[str, str]) -> cst.FunctionDef:
    """A chained dump names the next body's placeholder after the previous result local
    (``def forward(self, ctx, autograd_function_apply)``); follow that local's new name.
    ``params``: the body's parameters (in bwd, also the saved values now unpacked from residuals)."""
    wanted = {old: new for old, new in renames.items() if old in params}
    if not wanted or any(
        isinstance(n, (cst.FunctionDef, cst.Lambda, cst.ClassDef, cst.CompFor)) for n in _descendants(func.body)
    ):
        return func  # a nested scope could see the name differently
    taken = names_in(func)
    return rename(func, {old: fresh(new, taken) for old, new in wanted.items()})


def _descendants(node: cst.CSTNode):
    stack = [node]
    while stack:
        current = stack.pop()
        yield current
        stack.extend(current.children)


def _drop_leading(func: cst.FunctionDef, count: int, name: str) -> cst.Parameters:
    params = func.params
    if params.posonly_params:
        raise Refuse(Code.OP_CALL_SHAPE, "a body with positional-only parameters", func)
    if len(params.params) < count:
        raise Refuse(Code.OP_CALL_SHAPE, "a body takes fewer parameters than its ABI needs", func)
    dropped = params.params[:count]
    used = names_in(func.body)
    for param in dropped:
        if param.name.value in used:
            raise Refuse(
                Code.OP_CALL_SHAPE,
                f"the body uses `{param.name.value}` (a submodule, parameter or ctx), which a flat function cannot carry",
                func,
            )
    return params.with_changes(params=params.params[count:])


def _is_release(small: cst.BaseSmallStatement) -> bool:
    """``a = b = None``: a dumped graph freeing values early; the flat functions do not need it."""
    return (
        isinstance(small, cst.Assign)
        and isinstance(small.value, cst.Name)
        and small.value.value == "None"
        and all(isinstance(t.target, cst.Name) for t in small.targets)
    )


def _released_names(small: cst.BaseSmallStatement) -> set[str]:
    assert isinstance(small, cst.Assign)
    return {t.target.value for t in small.targets if isinstance(t.target, cst.Name)}


def _names_in_all(nodes) -> set[str]:
    out: set[str] = set()
    for node in nodes:
        out |= names_in(node)
    return out


def _names(params: cst.Parameters) -> list[str]:
    return [p.name.value for p in (*params.posonly_params, *params.params, *params.kwonly_params)]


def _clean_body(func: cst.FunctionDef, kind: str) -> cst.IndentedBlock:
    """The body without a dump's grad-mode bracket, its releases and its generated comments."""
    body = func.body
    assert isinstance(body, cst.IndentedBlock)
    statements = strip_dynamo_bracket(list(body.body)) if kind == "dump" else list(body.body)
    kept = []
    # A release is dropped only where nothing after it mentions its names (a dump frees
    # each value after its last use; `y = None` before `if c: y = ...` is a real binding).
    later: list[set[str]] = [set() for _ in statements]
    for i in range(len(statements) - 2, -1, -1):
        later[i] = later[i + 1] | names_in(statements[i + 1])
    for i, stmt in enumerate(statements):
        if isinstance(stmt, cst.SimpleStatementLine):
            smalls = [
                s
                for j, s in enumerate(stmt.body)
                if not (_is_release(s) and not _released_names(s) & (later[i] | _names_in_all(stmt.body[j + 1 :])))
            ]
            if not smalls:
                continue
            if len(smalls) != len(stmt.body):
                last = smalls[-1]
                if hasattr(last, "semicolon"):
                    smalls[-1] = last.with_changes(semicolon=cst.MaybeSentinel.DEFAULT)
                stmt = stmt.with_changes(body=smalls)
        assert isinstance(stmt, (cst.SimpleStatementLine, cst.BaseCompoundStatement))  # BaseStatement's only kinds
        lines = [
            line for line in stmt.leading_lines if not (line.comment and _GENERATED_COMMENT.match(line.comment.value))
        ]
        kept.append(stmt.with_changes(leading_lines=lines))
    if kept and isinstance(kept[0], (cst.SimpleStatementLine, cst.BaseCompoundStatement)):
        first = kept[0]
        kept[0] = first.with_changes(leading_lines=[line for line in first.leading_lines if line.comment is not None])
    return body.with_changes(body=kept or [cst.SimpleStatementLine([cst.Pass()])])


def _tuple_locals(func: cst.FunctionDef, body: cst.IndentedBlock) -> dict[str, cst.Tuple | cst.List]:
    """Locals whose value at the final return is a known literal: ``saved = (x, w)``.

    A local qualifies when its only binding in the function is one top-level
    ``name = (...)`` / ``name = [...]`` before the final statement, with no starred
    element, and it is not a parameter; a list also must be read exactly once (by
    what follows it), so nothing can have appended to it.
    """
    params = func.params
    own = {p.name.value for p in (*params.posonly_params, *params.params, *params.kwonly_params)}
    for star in (params.star_arg, params.star_kwarg):
        if isinstance(star, cst.Param):
            own.add(star.name.value)
    probe = func.with_changes(body=body)
    stores = analyse(probe, None).stores
    reads = _name_reads(probe)
    out: dict[str, cst.Tuple | cst.List] = {}
    for stmt in body.body[:-1]:
        if not isinstance(stmt, cst.SimpleStatementLine):
            continue
        for small in stmt.body:
            if isinstance(small, cst.Assign) and len(small.targets) == 1:
                target, value = small.targets[0].target, small.value
            elif isinstance(small, cst.AnnAssign) and small.value is not None:
                target, value = small.target, small.value
            else:
                continue
            if not (isinstance(target, cst.Name) and isinstance(value, (cst.Tuple, cst.List))):
                continue
            name = target.value
            if name in own or len(stores.get(name, ())) != 1:
                continue
            if any(isinstance(e, cst.StarredElement) for e in value.elements):
                continue
            if isinstance(value, cst.List) and reads.get(name, 0) != 1:
                continue
            out[name] = value
    return out


_FX_TENSOR = re.compile(r"(?:[a-z]+\d+|b8)\[[^\]]*\](?:\[[^\]]*\][a-z]*(?::\d+)?)?")


def _annotated_tensors(func: cst.FunctionDef, body: cst.IndentedBlock) -> set[str]:
    """Locals of a dumped body that fx annotated as one tensor (``mul: "f32[3]" = g * 3``),
    bound only there: print_readable() annotates each node with its value's type."""
    stores = analyse(func.with_changes(body=body), None).stores
    out = set()
    for stmt in body.body:
        if not isinstance(stmt, cst.SimpleStatementLine):
            continue
        for small in stmt.body:
            if not (
                isinstance(small, cst.AnnAssign) and isinstance(small.target, cst.Name) and small.value is not None
            ):
                continue
            annotation = small.annotation.annotation
            if (
                isinstance(annotation, cst.SimpleString)
                and isinstance(annotation.evaluated_value, str)  # not b"...": fx writes str annotations
                and _FX_TENSOR.fullmatch(annotation.evaluated_value)
                and len(stores.get(small.target.value, ())) == 1
            ):
                out.add(small.target.value)
    return out


def _name_reads(func: cst.FunctionDef) -> dict[str, int]:
    """How often each name is spelled as a variable, bindings excluded (a superset of its loads)."""
    counts: dict[str, int] = {}

    class Counter(cst.CSTVisitor):
        def visit_Name(self, node: cst.Name) -> None:
            counts[node.value] = counts.get(node.value, 0) + 1

        def visit_Attribute(self, node: cst.Attribute) -> bool:
            walk(node.value, self)
            return False

        def visit_Arg(self, node: cst.Arg) -> bool:
            walk(node.value, self)
            return False

        def visit_AssignTarget(self, node: cst.AssignTarget) -> bool:
            return not isinstance(node.target, cst.Name)

        def visit_AnnAssign(self, node: cst.AnnAssign) -> bool:
            if node.value is not None:
                walk(node.value, self)
            return False

    walk(func.body, Counter())
    return counts


def _follow(expr: cst.BaseExpression, bound: dict[str, cst.Tuple | cst.List]) -> cst.BaseExpression:
    """A name from ``_tuple_locals`` stands for its literal."""
    for _ in range(len(bound)):
        if not (isinstance(expr, cst.Name) and expr.value in bound):
            break
        expr = bound[expr.value]
    return expr


def _fwd_shape(body: cst.IndentedBlock, bound: dict[str, cst.Tuple | cst.List]) -> tuple[int, int]:
    """(number of outputs, number of saved values) from fwd's final ``return (outputs, saved)``,
    following locals bound once to a literal (``result = (out, saved)``, ``saved = (x, w)``)."""
    last = body.body[-1] if body.body else None
    if not (isinstance(last, cst.SimpleStatementLine) and isinstance(last.body[-1], cst.Return)):
        raise Refuse(Code.OP_CALL_SHAPE, "the forward body does not end in a return", last or body)
    returned = last.body[-1].value
    value = _follow(returned, bound) if returned is not None else None
    if not (isinstance(value, cst.Tuple) and len(value.elements) == 2) or any(
        isinstance(e, cst.StarredElement) for e in value.elements
    ):
        raise Refuse(Code.OP_CALL_SHAPE, "the forward body does not return (outputs, saved)", last)
    outputs, saved = (_follow(el.value, bound) for el in value.elements)
    if not isinstance(saved, (cst.Tuple, cst.List)) or any(isinstance(e, cst.StarredElement) for e in saved.elements):
        raise Refuse(
            Code.OP_CALL_SHAPE,
            "the forward body's saved values are neither a literal tuple nor a local bound once to one",
            last,
        )
    if isinstance(outputs, cst.Tuple):
        if any(isinstance(e, cst.StarredElement) for e in outputs.elements):
            raise Refuse(Code.OP_CALL_SHAPE, "the forward body's outputs are starred", last)
        return len(outputs.elements), len(saved.elements)
    return 1, len(saved.elements)


class _LiftedNones:
    """Give torch <= 2.9's lifted operands their None gradients after bwd's own.

    The op applied its Function to the first ``n_grads`` operands only, so autograd took
    bwd's value ``r`` as it is: a tuple, or one gradient when ``r`` is anything else. The
    flat callable has ``count`` more inputs; each gets None *after* the first ``n_grads``
    of ``r``'s gradients, so a ``r`` of the wrong length still fails autograd's count
    check instead of lending a gradient to a lifted operand:
    ``(*r[:n], None, *r[n:]) if isinstance(r, tuple) else (r, None)``, spelled statically
    where ``r`` is a literal (or a local bound once to one).
    """

    def __init__(
        self, n_grads: int, count: int, bound: dict[str, cst.Tuple | cst.List], tensors: set[str], taken: set[str]
    ) -> None:
        self.n_grads = n_grads
        self.nones = [cst.Element(cst.Name("None")) for _ in range(count)]
        self.bound = bound
        self.tensors = tensors  # locals known to hold one tensor
        self.taken = taken

    def append_to(self, body: cst.IndentedBlock, where: cst.CSTNode) -> cst.IndentedBlock:
        last = body.body[-1]
        if not (isinstance(last, cst.SimpleStatementLine) and isinstance(last.body[-1], cst.Return)):
            raise Refuse(Code.OP_CALL_SHAPE, "the backward body does not end in a return", where)
        ret = last.body[-1]
        if len(analyse(cst.FunctionDef(cst.Name("bwd"), cst.Parameters(), body), None).returns) != 1:
            raise Refuse(
                Code.OP_CALL_SHAPE,
                "the backward body returns early (the lifted operands' None gradients go on its last return)",
                where,
            )
        value = ret.value if ret.value is not None else cst.Name("None")
        before: list[cst.BaseSmallStatement] = []
        literal = _follow(value, self.bound) if isinstance(value, cst.Name) else value
        new_value: cst.BaseExpression
        if isinstance(literal, cst.Tuple) and not any(isinstance(e, cst.StarredElement) for e in literal.elements):
            new_value = self._tuple(value, literal)
        elif isinstance(literal, cst.List) or (isinstance(value, cst.Name) and value.value in ("None", *self.tensors)):
            new_value = cst.Tuple([cst.Element(value), *self.nones])  # autograd takes it as one gradient
        else:
            if not isinstance(value, cst.Name):
                name = cst.Name(fresh("grads", self.taken))
                before.append(cst.Assign([cst.AssignTarget(name)], value))
                value = name
            new_value = cst.IfExp(
                test=cst.parse_expression(f"isinstance({value.value}, tuple)"),
                body=self._sliced(value),
                orelse=cst.Tuple([cst.Element(value), *self.nones]),
            )
        new_last = last.with_changes(body=[*last.body[:-1], *before, ret.with_changes(value=new_value)])
        return body.with_changes(body=[*body.body[:-1], new_last])

    def _tuple(self, value: cst.BaseExpression, literal: cst.Tuple) -> cst.Tuple:
        n = self.n_grads
        if value is literal:  # `return (a, b)`: the Nones go in after the first n
            elements = list(literal.elements)
            return literal.with_changes(elements=[*elements[:n], *self.nones, *elements[n:]])
        if len(literal.elements) == n:  # `grads = (a, b)`: its items, then the Nones
            return cst.Tuple([cst.StarredElement(value), *self.nones])
        assert isinstance(value, cst.Name)
        return self._sliced(value)

    def _sliced(self, name: cst.Name) -> cst.Tuple:
        n = self.n_grads
        head = cst.parse_expression(f"{name.value}[:{n}]")
        tail = cst.parse_expression(f"{name.value}[{n}:]")
        return cst.Tuple([cst.StarredElement(head), *self.nones, cst.StarredElement(tail)])
