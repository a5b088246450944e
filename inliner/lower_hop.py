"""Lower one ``autograd_function_apply(fwd, bwd, *operands, **flags)`` call into a ``CustomVJP``.

The higher-order op already has the flat shape: ``fwd(*operands) -> (outputs,
saved)`` and ``bwd(*grads, *saved)``. Lowering re-spells bwd as
``bwd(residuals, *grads)``, drops the ``ctx``/``self`` parameters the two
generations of the op carry, strips the ``torch._C._set_grad_enabled`` brackets a
dumped graph puts around each body (the carrier already runs fwd without grad and
bwd in the engine's grad mode; see shared/SEMANTICS.md §22), and turns the
keyword flags into the runtime's static spec.
"""

from __future__ import annotations

import re
from dataclasses import dataclass

import libcst as cst

from inliner.model import CustomVJP, Refuse, VJPSpec
from inliner.names import dotted, fresh, names_in, rename, snake_case, unpack_statement

HOP_NAMES = frozenset(
    {
        "torch.ops.higher_order.autograd_function_apply",
        "torch._functorch.autograd_function.autograd_function_apply",
        "torch._higher_order_ops.autograd_function.autograd_function_apply",
    }
)
_KNOWN_FLAGS = {"non_differentiable_idx", "saved_for_backward_idx", "dirty_idx", "args_tensor_mask"}
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
    taken: set[str],
    renames: dict[str, str] | None = None,
) -> CustomVJP:
    """``renames``: the caller's result locals already renamed (``autograd_function_apply`` ->
    ``scale``); a body parameter a dump named after one of them is renamed the same way."""
    fwd_params = _drop_leading(fwd, (1 if fwd_is_method else 0) + (1 if flags.old_abi else 0), name)
    bwd_params = _drop_leading(bwd, (1 if bwd_is_method else 0) + (1 if flags.old_abi else 0), name)

    fwd_body = _clean_body(fwd)
    n_outputs, n_saved = _fwd_shape(fwd_body, name)
    positional = [p for p in bwd_params.params]
    if bwd_params.star_arg not in (cst.MaybeSentinel.DEFAULT, None) or bwd_params.kwonly_params or bwd_params.star_kwarg:
        raise Refuse("INL201", "the backward body takes *args/**kwargs", bwd)
    if len(positional) != n_outputs + n_saved:
        raise Refuse(
            "INL201",
            f"the backward body takes {len(positional)} parameters, expected {n_outputs} grads + {n_saved} saved values",
            bwd,
        )
    grads, saved = positional[:n_outputs], positional[n_outputs:]

    bwd_body = _clean_body(bwd)
    extra_nones = 0
    if flags.old_abi:
        n_tensor_args = sum(flags.args_tensor_mask or ())
        extra_nones = n_operands - n_tensor_args
        if extra_nones < 0:
            raise Refuse("INL201", "args_tensor_mask names more tensors than the call passes", bwd)
    if extra_nones:
        # torch <= 2.9 applies the Function to the tensor args only; lifted free
        # variables get no gradient slot, so bwd answers None for them.
        bwd_body = _append_nones(bwd_body, extra_nones, name, bwd)

    snake = snake_case(re.sub(r"\W", "_", name))
    fwd_name = fresh(f"{snake}_fwd", taken)
    bwd_name = fresh(f"{snake}_bwd", taken)
    bwd_taken = names_in(bwd)
    residuals = fresh("residuals", bwd_taken)
    if saved:
        unpack = unpack_statement([p.name.value for p in saved], residuals)
        bwd_body = bwd_body.with_changes(body=[unpack, *bwd_body.body])
    fwd_params = fwd_params.with_changes(params=[p.with_changes(comma=cst.MaybeSentinel.DEFAULT) for p in fwd_params.params])
    new_fwd = cst.FunctionDef(name=cst.Name(fwd_name), params=fwd_params, body=fwd_body)
    new_bwd = cst.FunctionDef(
        name=cst.Name(bwd_name),
        params=cst.Parameters(
            params=[cst.Param(cst.Name(residuals)), *(g.with_changes(comma=cst.MaybeSentinel.DEFAULT) for g in grads)]
        ),
        body=bwd_body,
    )
    if renames:
        new_fwd = _rename_params(new_fwd, {p.name.value for p in fwd_params.params}, renames)
        new_bwd = _rename_params(new_bwd, {p.name.value for p in positional}, renames)
    spec = VJPSpec(
        saved_for_backward_idx=tuple(flags.saved_for_backward_idx or ()),
        non_differentiable_idx=flags.non_differentiable_idx,
        dirty_idx=flags.dirty_idx,
    )
    return CustomVJP(name=name, fwd=new_fwd, bwd=new_bwd, spec=spec)


def _rename_params(func: cst.FunctionDef, params: set[str], renames: dict[str, str]) -> cst.FunctionDef:
    """A chained dump names the next body's placeholder after the previous result local
    (``def forward(self, ctx, autograd_function_apply)``); follow that local's new name.
    ``params``: the body's parameters (in bwd, also the saved values now unpacked from residuals)."""
    wanted = {old: new for old, new in renames.items() if old in params}
    if not wanted or any(isinstance(n, (cst.FunctionDef, cst.Lambda, cst.ClassDef, cst.CompFor)) for n in _descendants(func.body)):
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
        raise Refuse("INL201", "a body with positional-only parameters", func)
    if len(params.params) < count:
        raise Refuse("INL201", "a body takes fewer parameters than its ABI needs", func)
    dropped = params.params[:count]
    used = names_in(func.body)
    for param in dropped:
        if param.name.value in used:
            raise Refuse(
                "INL201",
                f"the body uses `{param.name.value}` (a submodule, parameter or ctx), which a flat function cannot carry",
                func,
            )
    return params.with_changes(params=params.params[count:])


def _is_grad_mode_line(stmt: cst.BaseStatement) -> bool:
    """``_set_grad_enabled = torch._C._set_grad_enabled(False);  _set_grad_enabled = None``."""
    if not isinstance(stmt, cst.SimpleStatementLine):
        return False
    found = False
    for small in stmt.body:
        value = small.value if isinstance(small, (cst.Assign, cst.Expr)) else None
        if isinstance(value, cst.Call) and dotted(value.func) in (
            "torch._C._set_grad_enabled",
            "torch.set_grad_enabled",
            "torch._C.set_grad_enabled",
        ):
            found = True
            continue
        if isinstance(small, cst.Assign) and isinstance(small.value, cst.Name) and small.value.value == "None":
            continue
        return False
    return found


def _is_release(small: cst.BaseSmallStatement) -> bool:
    """``a = b = None``: a dumped graph freeing values early; the flat functions do not need it."""
    return (
        isinstance(small, cst.Assign)
        and isinstance(small.value, cst.Name)
        and small.value.value == "None"
        and all(isinstance(t.target, cst.Name) for t in small.targets)
    )


def _clean_body(func: cst.FunctionDef) -> cst.IndentedBlock:
    body = func.body
    assert isinstance(body, cst.IndentedBlock)
    kept = []
    for stmt in body.body:
        if _is_grad_mode_line(stmt):
            continue
        if isinstance(stmt, cst.SimpleStatementLine):
            smalls = [s for s in stmt.body if not _is_release(s)]
            if not smalls:
                continue
            if len(smalls) != len(stmt.body):
                last = smalls[-1]
                if hasattr(last, "semicolon"):
                    smalls[-1] = last.with_changes(semicolon=cst.MaybeSentinel.DEFAULT)
                stmt = stmt.with_changes(body=smalls)
        lines = [line for line in stmt.leading_lines if not (line.comment and _GENERATED_COMMENT.match(line.comment.value))]
        kept.append(stmt.with_changes(leading_lines=lines))
    if kept and isinstance(kept[0], (cst.SimpleStatementLine, cst.BaseCompoundStatement)):
        first = kept[0]
        kept[0] = first.with_changes(leading_lines=[line for line in first.leading_lines if line.comment is not None])
    return body.with_changes(body=kept or [cst.SimpleStatementLine([cst.Pass()])])


def _fwd_shape(body: cst.IndentedBlock, name: str) -> tuple[int, int]:
    """(number of outputs, number of saved values) from fwd's final ``return (outputs, saved)``."""
    last = body.body[-1] if body.body else None
    if not (isinstance(last, cst.SimpleStatementLine) and isinstance(last.body[-1], cst.Return)):
        raise Refuse("INL201", "the forward body does not end in a return", last or body)
    value = last.body[-1].value
    if not (isinstance(value, cst.Tuple) and len(value.elements) == 2):
        raise Refuse("INL201", "the forward body does not return (outputs, saved)", last)
    outputs, saved = (el.value for el in value.elements)
    if not isinstance(saved, (cst.Tuple, cst.List)) or any(isinstance(e, cst.StarredElement) for e in saved.elements):
        raise Refuse("INL201", "the forward body's saved values are not a literal tuple", last)
    if isinstance(outputs, cst.Tuple):
        if any(isinstance(e, cst.StarredElement) for e in outputs.elements):
            raise Refuse("INL201", "the forward body's outputs are starred", last)
        return len(outputs.elements), len(saved.elements)
    return 1, len(saved.elements)


def _append_nones(body: cst.IndentedBlock, count: int, name: str, where: cst.CSTNode) -> cst.IndentedBlock:
    last = body.body[-1]
    if not (isinstance(last, cst.SimpleStatementLine) and isinstance(last.body[-1], cst.Return)):
        raise Refuse("INL201", "the backward body does not end in a return", where)
    ret = last.body[-1]
    value = ret.value
    nones = [cst.Element(cst.Name("None")) for _ in range(count)]
    if isinstance(value, cst.Tuple):
        new_value = value.with_changes(elements=[*value.elements, *nones])
    elif value is not None:
        new_value = cst.Tuple([cst.Element(value), *nones])
    else:
        raise Refuse("INL201", "the backward body returns nothing", where)
    new_last = last.with_changes(body=[*last.body[:-1], ret.with_changes(value=new_value)])
    return body.with_changes(body=[*body.body[:-1], new_last])
