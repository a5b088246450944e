"""The autograd.Function carriers of one flat function, built from its ``Spec`` on the first call.

Two carriers (see the package docstring): the setup_context carrier, which ``torch.func``
transforms get and which *is* the eager one for a setup_context-style original, and, for
a combined-style original, the eager carrier, whose methods are generated as source
(``inliner.runtime._generated``). Also here: what a fast-path call runs of the eager
carrier's ``apply``, and how keywords are bound for torch.func as eager's apply binds them.
"""

from __future__ import annotations

import functools
import inspect
import threading
from collections.abc import Callable
from typing import Any

import torch
from torch.autograd import Function

from inliner.runtime._contract import check_first_result, first_call_checked
from inliner.runtime._generated import _combined_carrier_methods, _forward_with_signature
from inliner.runtime._outputs import _CtxStandIn, _flat_outputs, _repeats
from inliner.runtime._record import Record, bind, copy_with, replay, state_of
from inliner.runtime._residuals import SavedOnDemand, _jvp_method
from inliner.runtime._spec import Spec

# ``autograd.Function``'s C-level apply (what ``Function.apply`` ends in via ``super()``).
_C_APPLY = torch._C._FunctionBase.__dict__["apply"]


def _fast_apply(carrier: type[Function], fill_defaults: bool) -> Callable:
    """What a fast-path call runs: ``carrier.apply`` minus what cannot apply to it.

    For plain tensors outside torch.func, ``Function.apply`` does three things: bind
    forward's defaults when the class defines setup_context, unwrap dead functorch
    wrappers, and call the C apply. A combined-style carrier has no setup_context and
    the fast path admits no functorch wrapper, so only the C apply is left (it saves
    about 1.5 us a call, a third of the per-call cost of a small Function).
    """
    if fill_defaults:
        return carrier.apply
    return _C_APPLY.__get__(None, carrier)


_keyword_support: list[TypeError | None] = []  # [None] where apply binds keywords, else [its error]


def _apply_keyword_error() -> TypeError | None:
    """None where the C apply binds keywords (torch 2.13), else the TypeError it raises
    for any keyword (torch 2.9: ``apply() takes no keyword arguments``)."""
    if not _keyword_support:
        from torch._functorch.utils import enable_single_level_autograd_function

        class _Probe(torch.autograd.Function):
            @staticmethod
            def forward(ctx: Any, x: Any) -> Any:
                return x

            @staticmethod
            def backward(ctx: Any, grad: Any) -> Any:
                return grad

        try:
            # No tensor goes in; the guard lets the C apply run inside a transform (as
            # torch's own custom_function_call does).
            with enable_single_level_autograd_function():
                _C_APPLY.__get__(None, _Probe)(x=None)
            _keyword_support.append(None)
        except TypeError as exc:
            _keyword_support.append(exc)
    return _keyword_support[0]


def _bind_keywords(forward: Callable, args: tuple, kwargs: dict) -> tuple:
    """The positional inputs eager's C apply makes of ``apply(*args, **kwargs)`` for a
    Function without setup_context (combined style), with its errors.

    torch 2.13 maps each keyword to a slot by ``forward.__code__``'s positional names
    after ctx (the outermost function's code: a ``custom_fwd``-wrapped forward has none),
    in keyword order; a slot below ``len(args)`` or an unknown name is an error. The slots
    end at the last one filled, and one left empty before it is an error: defaults are
    not filled, so the input count (``needs_input_grad``, the gradients backward must
    return) is eager's. torch.func's carrier then gets the same inputs, positionally.
    """
    error = _apply_keyword_error()
    if error is not None:
        raise type(error)(*error.args)
    code = forward.__code__
    names = code.co_varnames[1 : code.co_argcount]
    slots: list[Any] = list(args)
    empty = object()
    for key, value in kwargs.items():
        try:
            index = names.index(key)
        except ValueError:
            raise TypeError(f"forward() got an unexpected keyword argument '{key}'") from None
        if index < len(args):
            raise TypeError(f"forward() got multiple values for argument '{key}'")
        if index >= len(slots):
            slots.extend([empty] * (index + 1 - len(slots)))
        slots[index] = value
    for index in range(len(args), len(slots)):
        if slots[index] is empty:
            raise TypeError(f"forward() missing required argument: '{names[index]}' (position {index})")
    return tuple(slots)


class Carriers:
    """The carriers of one flat function (see the docstring of ``inliner.runtime``)."""

    __slots__ = ("eager", "functorch", "functorch_apply")

    def __init__(self, eager: type[Function], functorch: type[Function], functorch_apply: Callable) -> None:
        self.eager = eager
        self.functorch = functorch
        self.functorch_apply = functorch_apply  # functorch.apply, with eager's repeated outputs


def _decorated_forward(spec: Spec, check: Callable[[Any, tuple], None] | None = None) -> Callable:
    """``fwd`` behind the original's forward decorators, called as ``(ctx, *args)``;
    ``check`` looks at what fwd returns on the first call (then fwd is called directly).
    Decorated forwards are the trampolines built once at the binding (unchecked)."""
    if spec.decorated is not None:
        return spec.decorated.forward
    fwd = spec.fwd

    def install(function: Callable) -> None:
        nonlocal fwd
        fwd = function

    if check is not None:
        fwd = first_call_checked(fwd, check, install)

    def call_fwd(holder: _CtxStandIn, *args: Any, **kwargs: Any) -> Any:
        return fwd(*args, **kwargs)

    return call_fwd


def _build_carriers(spec: Spec) -> Carriers:
    """The carriers of ``spec``: made once, on the flat callable's first call."""
    # What the setup_context carrier's pieces hand each other within one call, per thread:
    # forward's recipe to every setup_context (torch.func makes one per transform level),
    # torch.func's needs_input_grad to forward, forward's repeated outputs back to it.
    slot = threading.local()
    check = functools.partial(check_first_result, spec)
    backward = _setup_context_backward(spec)
    functorch = _setup_context_carrier(spec, slot, check, backward)
    if spec.fill_defaults:
        # A setup_context-style original: its own apply binds defaults and runs
        # setup_context, so the setup_context carrier *is* the eager carrier.
        eager = functorch
    else:
        eager = _combined_carrier(spec, check)
    if spec.decorated is not None:
        spec.decorated.eager_ctxs.add(eager._backward_cls)
        if spec.fill_defaults:
            spec.decorated.eager_backward = backward
    return Carriers(eager, functorch, _functorch_apply(spec, slot, functorch, eager))


def _setup_context_carrier(
    spec: Spec, slot: threading.local, check: Callable[[Any, tuple], None], backward: Callable
) -> type[Function]:
    """The setup_context-style Function that torch.func transforms get (see the package docstring)."""
    forward = _setup_context_forward(spec, _forward_run(spec, slot, _decorated_forward(spec, check)))
    decorated_bwd = backward
    if spec.decorated is not None:
        spec.decorated.functorch_backward = backward
        decorated_bwd = spec.decorated.backward
    namespace: dict[str, Any] = {
        "forward": staticmethod(forward),
        "setup_context": staticmethod(_setup_context(spec, slot)),
        "backward": staticmethod(decorated_bwd),
        # No rule of the original's own: torch generates one by vmapping fwd and bwd (a
        # Function it cannot vmap, e.g. one with mark_dirty, still raises torch's error).
        "generate_vmap_rule": spec.generate_vmap_rule or spec.vmap is None,
        "__module__": spec.module,
        "__qualname__": spec.name,
    }
    if spec.vmap is not None:
        namespace["vmap"] = staticmethod(spec.vmap)
    if spec.jvp is not None:
        namespace["jvp"] = staticmethod(_jvp_method(spec.jvp, spec.fsaved_idx, spec.record))
    if spec.symbolic is not None:
        namespace["symbolic"] = staticmethod(spec.symbolic)
    return type(spec.name, (torch.autograd.Function,), namespace)


def _forward_run(spec: Spec, slot: threading.local, decorated_fwd: Callable) -> Callable:
    """What the setup_context carrier's forward runs: fwd, then, in ``slot``, how each later
    setup_context call finds the residuals again among its own inputs and outputs."""
    saved_idx, saved_tensors_idx, dirty = spec.saved_idx, spec.saved_tensors_idx, spec.dirty
    # setup_context may not save an input that forward returns as-is. A setup_context-style
    # original doing so fails in torch too; a combined-style one works, so its carrier returns
    # a view of such an input instead (what autograd makes of it anyway).
    view_returned_inputs = not spec.fill_defaults
    record = spec.record

    def run(*args: Any, **kwargs: Any) -> Any:
        holder = _CtxStandIn()
        if spec.fwd_needs_input_grad:
            kwargs = {**kwargs, "needs_input_grad": slot.needs_input_grad}
        outputs, residuals = decorated_fwd(holder, *args, **kwargs)
        residuals = tuple(residuals)
        saved_also = residuals[0].to_save or () if record else ()
        if view_returned_inputs:
            outputs = _view_saved_inputs(outputs, args, residuals, saved_idx, saved_tensors_idx, saved_also)
        flat_out = _flat_outputs(outputs)
        dirty_now = _positions(residuals[0].dirty_tensors, args) if record else dirty
        slot.repeats = _repeats(flat_out, args, dirty_now)
        # Residuals that are inputs or outputs (also inside tuples and lists) are
        # re-bound by position in every setup_context call: torch.func calls it once
        # per transform level with differently wrapped tensors. Everything else is
        # kept as the object.
        recipe = tuple(_locate(value, args, flat_out) for value in residuals)
        group = None
        if saved_tensors_idx is not None:
            group = tuple(_locate(v, args, flat_out) for v in residuals[saved_tensors_idx])
        slot.value = (recipe, group, dict(vars(holder)))
        return outputs

    return run


def _setup_context_forward(spec: Spec, run: Callable) -> Callable:
    """The carrier's ``forward``: ``run`` under the signature torch binds ``apply``'s arguments to."""
    hidden = ("needs_input_grad",) if spec.fwd_needs_input_grad else ()
    if spec.decorated is not None and not spec.fill_defaults:
        # The decorators must see the inputs apply got, as in eager, not forward's defaults
        # filled in (keywords are bound to positions before this carrier is applied).
        # (The engine never combines replayed decorators with a ctx record: no hidden slots.)
        def forward(*args: Any) -> Any:
            return run(*args)

        forward.__qualname__ = spec.fwd.__qualname__
    else:
        forward = _forward_with_signature(spec.fwd, run, hidden)
    if not spec.fill_defaults:
        # The combined style does not fill forward's defaults before apply.
        forward.__signature__ = inspect.Signature(  # type: ignore[attr-defined]  # functions take one
            [
                inspect.Parameter("args", inspect.Parameter.VAR_POSITIONAL),
                inspect.Parameter("kwargs", inspect.Parameter.VAR_KEYWORD),
            ]
        )
    return forward


def _setup_context(spec: Spec, slot: threading.local) -> Callable:
    """The carrier's ``setup_context``: the residuals re-bound from ``slot``'s recipe, then
    saved, kept and marked on ctx as the original did."""
    saved_idx, saved_tensors_idx, fsaved_idx = spec.saved_idx, spec.saved_tensors_idx, spec.fsaved_idx
    nondiff, dirty = spec.nondiff, spec.dirty
    materialize_grads = spec.materialize_grads
    record = spec.record
    attrs = spec.attrs

    def setup_context(ctx: Any, inputs: tuple, output: Any) -> None:
        recipe, group, holder_attrs = slot.value  # peek, never pop: one forward, many setups
        flat_out = _flat_outputs(output)
        residuals = [_resolve(step, inputs, flat_out) for step in recipe]
        to_save = [residuals[i] for i in saved_idx]
        n_group = 0
        if group is not None:
            group_values = [_resolve(step, inputs, flat_out) for step in group]
            to_save.extend(group_values)
            n_group = len(group_values)
        if to_save:
            ctx.save_for_backward(*to_save)
        if fsaved_idx:
            ctx.save_for_forward(*[residuals[i] for i in fsaved_idx])
        for i in (*saved_idx, *fsaved_idx):
            residuals[i] = None
        if saved_tensors_idx is not None:
            residuals[saved_tensors_idx] = None
        ctx._inliner_plain = residuals
        ctx._inliner_group = n_group
        for i, attr in attrs:  # on the node, as the original's setup_context left them
            setattr(ctx, attr, residuals[i])
        for key, value in holder_attrs.items():
            setattr(ctx, key, value)
        if record:
            replay(ctx, residuals[0])
        if not materialize_grads:
            ctx.set_materialize_grads(False)
        if dirty:
            ctx.mark_dirty(*[inputs[i] for i in dirty])
        if nondiff:
            ctx.mark_non_differentiable(*[flat_out[j] for j in nondiff])

    return setup_context


def _setup_context_backward(spec: Spec) -> Callable:
    """The setup_context carrier's ``backward``: bwd on the residuals rebuilt from ctx."""
    bwd = spec.bwd
    saved_idx, saved_tensors_idx = spec.saved_idx, spec.saved_tensors_idx
    bwd_needs_input_grad = spec.bwd_needs_input_grad
    reads_saved = spec.bwd_reads_saved
    record = spec.record
    attrs = spec.attrs
    node_type = torch._C._FunctionBase

    def backward(ctx: Any, *grads: Any) -> Any:
        residuals = list(ctx._inliner_plain)
        for i, attr in attrs:  # what is on the node now: a write through grad_fn is seen
            residuals[i] = getattr(ctx, attr)
        if spec.saved_on_demand:
            on_demand = SavedOnDemand(ctx, residuals, saved_idx, saved_tensors_idx)
            if bwd_needs_input_grad:
                return bwd(on_demand, *grads, needs_input_grad=ctx.needs_input_grad)
            return bwd(on_demand, *grads)
        if reads_saved and (saved_idx or ctx._inliner_group):
            saved = ctx.saved_tensors
            for k, i in enumerate(saved_idx):
                residuals[i] = saved[k]
            if saved_tensors_idx is not None:
                residuals[saved_tensors_idx] = tuple(saved[len(saved_idx) :])
        if record and isinstance(ctx, node_type):
            residuals[0] = ctx  # the node in the record's place, as in _generated
        elif record:  # torch.func's wrapper of a ctx (a generated vmap rule): nothing can write it
            bind(residuals[0], ctx)
        if bwd_needs_input_grad:
            return bwd(tuple(residuals), *grads, needs_input_grad=ctx.needs_input_grad)
        return bwd(tuple(residuals), *grads)

    return backward


def _functorch_apply(spec: Spec, slot: threading.local, functorch: type[Function], eager: type[Function]) -> Callable:
    """``functorch.apply`` as torch.func calls it, giving eager's inputs and repeated outputs."""

    def functorch_apply(*args: Any, **kwargs: Any) -> Any:
        # Keywords: torch.func takes positional inputs only. A setup_context-style
        # original's own apply binds them (with forward's defaults); for the combined
        # style, bind them as eager's apply does for the eager carrier (no defaults).
        if kwargs and not spec.fill_defaults:
            args = _bind_keywords(eager.forward, args, kwargs)
            kwargs = {}
        # Eager autograd gives a tensor returned at several positions the gradient of the
        # last of them (all positions are one object); torch.func would give each
        # position its own. Returning the last position's tensor everywhere keeps eager's.
        slot.repeats = ()
        if spec.fwd_needs_input_grad:  # what eager's ctx.needs_input_grad holds for these slots
            slot.needs_input_grad = tuple(isinstance(a, torch.Tensor) and a.requires_grad for a in args)
        out = functorch.apply(*args, **kwargs)
        if slot.repeats:
            out = list(out)
            for i, j in slot.repeats:
                out[i] = out[j]
            out = tuple(out)
        return out

    return functorch_apply


def _combined_carrier(spec: Spec, check: Callable[[Any, tuple], None]) -> type[Function]:
    """The eager carrier of a combined-style original: a combined-style Function whose
    methods are generated for it (``inliner.runtime._generated``)."""
    eager_forward, eager_backward, eager_jvp = _combined_carrier_methods(spec, check)
    if spec.decorated is not None:
        spec.decorated.eager_forward, eager_forward = eager_forward, spec.decorated.forward
        spec.decorated.eager_backward, eager_backward = eager_backward, spec.decorated.backward
    return type(
        spec.name,
        (torch.autograd.Function,),
        {
            "forward": staticmethod(eager_forward),
            "backward": staticmethod(eager_backward),
            **({"jvp": staticmethod(eager_jvp)} if eager_jvp is not None else {}),
            **({"symbolic": staticmethod(spec.symbolic)} if spec.symbolic is not None else {}),
            "__module__": spec.module,
            "__qualname__": spec.name,
        },
    )


def _locate(value: Any, args: tuple, flat_out: tuple) -> tuple:
    """How to find ``value`` again in a later setup_context call: as an input, an output,
    a tuple/list of such, or the object itself."""
    if isinstance(value, torch.Tensor):
        for i, arg in enumerate(args):
            if value is arg:
                return ("input", i, value)
        for j, out in enumerate(flat_out):
            if value is out:
                return ("output", j, value)
    elif type(value) in (tuple, list):
        steps = tuple(_locate(v, args, flat_out) for v in value)
        if any(step[0] != "value" for step in steps):
            return (type(value).__name__, steps, value)
    elif type(value) is Record:
        # always a step of its own: each ctx gets its own record (writes stay per ctx)
        state = {key: _locate(v, args, flat_out) for key, v in state_of(value).items()}
        return ("record", state, value)
    return ("value", None, value)


def _positions(tensors: Any, args: tuple) -> tuple[int, ...]:
    """Positions in ``args`` of the objects in ``tensors`` (mark_dirty's arguments)."""
    return tuple(i for i, a in enumerate(args) if any(a is t for t in tensors or ()))


def _view_saved_inputs(
    outputs: Any, args: tuple, residuals: tuple, saved_idx: tuple, group_idx: int | None, saved_also: tuple = ()
) -> Any:
    """Outputs that are inputs and also saved for backward, replaced by views of themselves."""
    saved = [residuals[i] for i in saved_idx] + (list(residuals[group_idx]) if group_idx is not None else [])
    saved += list(saved_also)
    flagged = [s for s in saved if isinstance(s, torch.Tensor) and any(s is a for a in args)]
    if not flagged:
        return outputs

    def view(out: Any) -> Any:
        return out.view_as(out) if any(out is f for f in flagged) else out

    return tuple(view(o) for o in outputs) if isinstance(outputs, tuple) else view(outputs)


def _resolve(step: tuple, inputs: tuple, flat_out: tuple) -> Any:
    kind, index, value = step
    if kind == "input" and index < len(inputs):
        return inputs[index]
    if kind == "output" and index < len(flat_out):
        return flat_out[index]
    if kind == "tuple":
        return tuple(_resolve(s, inputs, flat_out) for s in index)
    if kind == "list":
        return [_resolve(s, inputs, flat_out) for s in index]
    if kind == "record":
        return copy_with(value, {key: _resolve(s, inputs, flat_out) for key, s in index.items()})
    return value
