"""thunder support for flat callables: each call becomes one thunder symbol named after
the original, whose subsymbols are ``fwd``'s body and whose grad rule is ``bwd``'s trace.

thunder 0.2.6 (``thunder/core/jit_ext.py``) has two ways into custom gradients: a
lookaside for ``autograd.Function.apply``, which accepts one output only and none of
ctx's flags, and one for ``torch.ops.higher_order.autograd_function_apply``, which
takes a ``(fwd, bwd)`` pair and has no such limits. A flat callable *is* such a pair,
already free of ctx, so it gets a lookaside of its own built like the op's: trace
``fwd`` (outputs and residuals), trace ``bwd`` on the residuals' tensors and the
output grads, register an operator named after the flat callable whose execution is
the forward trace and whose grad transform runs the backward trace. No trace ever
mentions ``autograd_function_apply``.

Every trace thunder prints must stay a program that runs: the symbol is printed as the
original's name (``ScaledSin``; ``ScaledSin_1`` for a second, different Function of that
name in one trace), and that name is bound, in the trace's ``python_ctx()``, to the flat
callable itself. Run eagerly it computes the forward; run under ``thunder.jit`` (as
``thunder.jit(trace.python_callable())``) it meets this lookaside again, custom backward
included. thunder's own lookasides register their operators under a per-executor name
(``Name_<id>_<n>``) that nothing binds. The symbol's source comment is the line that
called the flat callable, not the last line traced inside it.

One tensor passed for several parameters (``Attend(x, x, x)``) prints as that call, but
the forward's trace takes it once (a program cannot name one parameter twice; fwd still
sees it at every position) and its gradient is the sum of the positions' (thunder adds up
the gradients put for one proxy). An input returned as-is is returned as a view of it:
thunder runs a shallow copy as the identity, and the input itself, as the jitted
function's output, would bypass the custom backward.

A Function thunder cannot run faithfully (``set_materialize_grads(False)``: thunder has
no None gradients; ``mark_dirty``: thunder cannot make a dirtied view's base take the
custom backward) gets a lookaside that raises instead: a loud error, never other
gradients than eager's.

Setting ``thunder_supported`` on the flat callable tells ``thunderfx``'s splitter
(``thunder/dynamo/splitter.py``) that thunder runs the call node itself, through this
lookaside, instead of sending it to the inductor fallback.

Imported only once thunder itself is (``runtime._after_import``): it uses thunder's
internals and must cost nothing to code that never meets thunder.
"""

from __future__ import annotations

import builtins
import dataclasses
import functools
import inspect
import itertools
from collections.abc import Callable, Sequence
from typing import Any

import thunder.core.prims as prims
import thunder.torch as ltorch
from thunder.core import dtypes, jit_ext
from thunder.core.interpreter import (
    INTERPRETER_SIGNALS,
    ProvenanceRecord,
    PseudoInst,
    get_interpreterruntimectx,
    unwrap,
    wrap,
    wrap_const,
)
from thunder.core.proxies import Proxy, ProxyInterface, TensorProxy, proxy
from thunder.core.symbol import Symbol, default_python_printer
from thunder.core.trace import TraceCtx, from_trace, get_tracectx, tracectx
from thunder.core.trace_interpreter import interpret_trace
from thunder.core.update_aliases import insert_alias_updates

from inliner.runtime import _thunder_objects
from inliner.runtime._outputs import _CtxStandIn, _flat_outputs, _repeats
from inliner.runtime._record import Record, bind, state_of


def register(fns: tuple[Callable, ...], spec: Any, decorated_fwd: Callable) -> None:
    """Route every ``thunder.jit`` call of each of ``fns`` (the flat callable, the twin
    dynamo's graph calls, the eager island a user calls) through :func:`_lookaside`, or,
    for a Function thunder cannot run faithfully, through :func:`_refuse` (a loud error
    rather than wrong gradients)."""
    flat = fns[0]
    if not spec.materialize_grads:
        lookaside = functools.partial(_refuse, spec.name, _NO_NONE_GRADS)
    elif spec.dirty:
        lookaside = functools.partial(_refuse, spec.name, _NO_DIRTY)
    else:
        how = _How(spec.nondiff, spec.record, spec.fwd_needs_input_grad, spec.bwd_needs_input_grad)
        lookaside = functools.partial(_lookaside, flat, spec.name, spec.fwd, decorated_fwd, _backward(spec), how)
    for fn in fns:
        jit_ext._general_jit_lookaside_map[fn] = lookaside
        # thunderfx: run the call inside thunder, except where thunder cannot run it inside
        # one symbol (forward decorators: custom_fwd enters autocast contexts) or where the
        # call is refused but thunderfx's fallback gives the original's gradients
        # (materialize_grads). A mark_dirty Function stays inside, refused: the fallback
        # drops its custom backward. A class the user allows in dynamo's graph goes to the
        # fallback, as the allowed original does (inliner.runtime._allowed).
        allowed = getattr(fn, "_inliner_user_allowed", False)
        fn.thunder_supported = spec.materialize_grads and not spec.forward_decorators and not allowed  # type: ignore[attr-defined]


_NO_NONE_GRADS = (
    "it relies on set_materialize_grads(False), and thunder passes zeros, never None, "
    "for the gradient of an unused output"
)
_NO_DIRTY = (
    "it modifies an input in place (mark_dirty), and thunder cannot make that input the "
    "custom backward's output everywhere (e.g. when it is a view of a larger tensor)"
)


def _refuse(name: str, why: str, *args: Any, **kwargs: Any) -> Any:
    raise NotImplementedError(f"{name}: thunder cannot run this custom Function: {why}")


class _How:
    """What the lookaside of one flat callable needs to know besides fwd and bwd."""

    def __init__(
        self, nondiff: tuple[int, ...], record: bool, fwd_needs_input_grad: bool, bwd_needs_input_grad: bool = False
    ) -> None:
        self.nondiff = nondiff
        self.record = record  # fwd's one residual is a ctx Record
        self.fwd_needs_input_grad = fwd_needs_input_grad
        self.bwd_needs_input_grad = bwd_needs_input_grad

    @property
    def per_argument(self) -> bool:
        """Whether fwd or bwd sees something per argument (``needs_input_grad``, a ctx record)."""
        return self.record or self.fwd_needs_input_grad or self.bwd_needs_input_grad


def _backward(spec: Any) -> Callable:
    """``backward(ctx, *grads)`` with the original's backward decorators, reading the
    residuals (and ``needs_input_grad``) from the stand-in ctx."""
    bwd = spec.bwd

    def backward(ctx: Any, *grads: Any) -> Any:
        if spec.bwd_needs_input_grad:
            return bwd(ctx._inliner_residuals, *grads, needs_input_grad=ctx._inliner_needs_input_grad)
        return bwd(ctx._inliner_residuals, *grads)

    if spec.decorated is None:
        return backward
    spec.decorated.standin_backward = backward  # the decorators were applied once, in custom_vjp
    return spec.decorated.backward


def _proxy_leaves(value: Any) -> list:
    """The proxies in ``value``, searched inside tuples, lists and dicts, in a fixed order."""
    if isinstance(value, Proxy):
        return [value]
    if type(value) is Record:
        return [leaf for item in state_of(value).values() for leaf in _proxy_leaves(item)]
    if isinstance(value, (tuple, list)):
        return [leaf for item in value for leaf in _proxy_leaves(item)]
    if isinstance(value, dict):
        return [leaf for item in value.values() for leaf in _proxy_leaves(item)]
    return []


def _unique(proxies: list) -> tuple:
    """``proxies`` without repeats (a trace cannot take one variable twice)."""
    return tuple(proxies[i] for i in _first_positions(proxies))


def _first_positions(proxies: Sequence) -> tuple[int, ...]:
    """The positions of ``proxies`` whose proxy no earlier position holds. Kept from trace
    time and applied by position later: the same positions may hold other proxies then
    (and two that were distinct may have become one)."""
    seen: set[str] = set()
    first = []
    for i, p in enumerate(proxies):
        if p.name not in seen:
            seen.add(p.name)
            first.append(i)
    return tuple(first)


def _new(obj: Any) -> Any:
    """``obj`` wrapped as made during tracing, so attributes set on it are plain sets
    (thunder defers sets on outside objects to the epilogue)."""
    return wrap_const(obj, provenance=ProvenanceRecord(PseudoInst.NEW, inputs=[wrap_const(type(obj)).provenance]))


def _with_keyword(func: Callable, **keywords: Any) -> Callable:
    """``func`` with ``keywords`` added to every call (traced through by the interpreter)."""

    def call(*args: Any, **kwargs: Any) -> Any:
        return func(*args, **kwargs, **keywords)

    return call


def _record_of(name: str, trace: Any, needs_input_grad: tuple[bool, ...]) -> tuple[int, ...]:
    """For a ctx record: refuse what thunder cannot run (as for a flat callable with those
    static flags), make the record answer ``saved_tensors`` and ``needs_input_grad`` in the
    backward trace, and return the positions of the outputs it marked non-differentiable.
    The return of ``trace`` then hands over the record's tensors, not the record."""
    outputs, residuals = unwrap(trace.output)
    (record,) = residuals
    if record._inliner_materialize is False:
        _refuse(name, _NO_NONE_GRADS)
    if record.dirty_tensors is not None:
        _refuse(name, _NO_DIRTY)
    flat = _flat_outputs(outputs)
    marked = record.non_differentiable or ()
    nondiff = tuple(j for j, out in enumerate(flat) if any(out is m for m in marked))
    ctx = _CtxStandIn()
    ctx.saved_tensors = tuple(record.to_save or ())  # thunder keeps no saved-tensor checks
    ctx.needs_input_grad = needs_input_grad
    record._inliner_needs_input_grad = needs_input_grad
    record.saved_for_forward = None  # thunder runs no jvp
    bind(record, ctx, strong=True)
    return nondiff


def _returning(trace: Any, value: Any) -> None:
    """Make ``trace`` return ``value`` instead of what it returned."""
    trace.bound_symbols = [b for b in trace.bound_symbols if b.sym.id != prims.PrimIDs.RETURN]
    with tracectx(trace):
        prims.python_return(value)


def _eager_outputs(trace: Any) -> tuple[Any, Any, dict[int, int]]:
    """Outputs that are proxies of their own, and where eager autograd routes the
    gradients of repeated ones.

    Every tensor output becomes a proxy of its own (thunder merges the gradients of one
    proxy returned twice, and thunderfx cannot return one twice): an input returned as-is
    or a repeated tensor becomes a shallow copy. In eager, a tensor made in forward at
    several positions is one object, and autograd gives the last of them the gradient of
    all: the map ``{earlier position: last position}`` says which gradients to move. An
    input returned as-is is not one: eager views it per position.
    """
    outputs, residuals = unwrap(trace.output)
    inputs = {a.name for a in (*trace.args, *trace.kwargs.values()) if isinstance(a, Proxy)}
    originals = _flat_outputs(outputs)
    route = dict(_repeats(originals, (*trace.args, *trace.kwargs.values()), (), TensorProxy))
    flat, copies = [], []
    for j, out in enumerate(originals):
        if isinstance(out, TensorProxy) and (out.name in inputs or j in route):
            if out.name in inputs:  # a view, not the identity (module docstring)
                copy = prims.reshape.meta(out, tuple(out.shape))
                copies.append(prims.reshape.bind(out, tuple(out.shape), output=copy))
            else:
                copy = prims.shallow_copy.meta(out)  # named in the enclosing (computation) trace
                copies.append(prims.shallow_copy.bind(out, output=copy))
            out = copy
        flat.append(out)
    if copies:
        outputs = tuple(flat) if isinstance(outputs, tuple) else flat[0]
        trace.bound_symbols = [b for b in trace.bound_symbols if b.sym.id != prims.PrimIDs.RETURN] + copies
        with tracectx(trace):
            prims.python_return((outputs, residuals))
    return outputs, residuals, route


def _unpacked(trace: Any) -> Any:
    """``trace`` with its proxy arguments unpacked first, as thunder's own lookasides do."""
    unpack = [prims.unpack_trivial.bind(a, name=a.name, output=a) for a in trace.args if isinstance(a, Proxy)]
    trace.bound_symbols = unpack + trace.bound_symbols
    return trace


def _aliased(trace: Any) -> Any:
    """thunder's alias pass over ``trace`` (for in-place ops), naming the proxies it makes
    in the enclosing trace's namespace so they cannot collide with its names."""
    enclosing = get_tracectx()
    trace.names |= enclosing.names
    trace.name_ctr = max(trace.name_ctr, enclosing.name_ctr)
    aliased = insert_alias_updates(trace, [[i] for i in range(len(trace.args))])
    enclosing.names |= trace.names
    enclosing.name_ctr = max(trace.name_ctr, enclosing.name_ctr)
    return aliased


def _check_gradient_count(name: str, returned: Any, n_inputs: int) -> None:
    """Eager autograd's rule: backward returns a gradient per input of forward; more are
    allowed only as trailing Nones."""
    grads = _flat_outputs(returned)
    if len(grads) < n_inputs or any(g is not None for g in grads[n_inputs:]):
        raise RuntimeError(
            f"function {name}Backward returned an incorrect number of gradients (expected {n_inputs}, got {len(grads)})"
        )


#: Modules whose frames are not the user's call site: thunder's interpreter,
#: ``runtime``'s wrapper that casts a ``custom_fwd(cast_inputs=...)`` Function's inputs,
#: and (for the split path's ``attach``, ``_thunder_split``) the runtime's module that
#: calls the op and torch's custom-op machinery.
_NOT_USER_MODULES = frozenset(
    {
        "thunder.core.interpreter",
        "thunder.core.jit_ext",
        "thunder.torch",
        "inliner.runtime",
        "inliner.runtime._split",
        "inliner.runtime._thunder_split",
        "torch._library.custom_ops",
        "torch._ops",
    }
)

#: Names a trace's program binds besides its symbols' (its imports, thunder's helpers,
#: Python's builtins): a symbol's name must not shadow them.
_RESERVED_NAMES = frozenset(dir(builtins)) | {
    "torch",
    "thunder",
    "ltorch",
    "prims",
    "no_autocast",
    "clear_mutable_collection",
}


def _call_site() -> tuple[str | None, Any]:
    """File and position of the user's call of the flat callable (thunder's own
    ``get_current_user_source_location``, also skipping ``runtime``'s casting wrapper)."""
    for frame in reversed(get_interpreterruntimectx().frame_stack):
        if unwrap(frame.globals).get("__name__", "") not in _NOT_USER_MODULES:
            return frame.code.co_filename, frame.positions
    return None, None


def _symbol_name(ctx: Any, flat: Callable, name: str) -> str:
    """The name ``flat``'s calls print as in the trace being built: the original's name,
    suffixed ``_1``, ``_2``, ... when the trace already uses it (another flat callable of
    that name, a variable, a name the program imports). Every call of ``flat`` in the
    trace prints as the same name, so the names depend only on the order of first calls."""
    trace = ctx.computation_trace
    names = trace.__dict__.setdefault("_inliner_symbol_names", {})
    if flat not in names:
        candidate, k = name, 0
        while candidate in trace.names or candidate in _RESERVED_NAMES:
            k += 1
            candidate = f"{name}_{k}"
        trace.names.add(candidate)  # no proxy takes it later
        names[flat] = candidate
    return names[flat]


_symbol_ids = itertools.count()


def _operator(ctx: Any, flat: Callable, name: str, forward: Callable) -> Symbol:
    """A symbol of the jit's ad hoc executor (what its ``register_operator`` makes) that
    prints as ``name`` and whose bound symbols bind ``name`` to ``flat`` in the trace's
    ``python_ctx()``. Its id is unique per call: each call has its own forward and grad
    rule (traced for its arguments), registered under that id."""
    executor = ctx.ad_hoc_executor
    call_ctx = {name: flat}

    def bind_postprocess(bsym: Any) -> None:
        bsym._call_ctx = call_ctx

    sym = Symbol(
        name=name,
        id=f"{name}__inliner_{next(_symbol_ids)}",
        meta=forward,
        executor=executor,
        _bind_postprocess=bind_postprocess,
        python_printer=default_python_printer,
    )
    executor.opmap[sym.id] = sym
    return sym


def _lookaside(
    flat: Callable,
    name: str,
    fwd: Callable,
    decorated_fwd: Callable,
    backward: Callable,
    how: _How,
    *args: Any,
    **kwargs: Any,
) -> Any:
    """One call of ``flat`` under ``thunder.jit``: one symbol printed as ``name`` whose
    execution is fwd's trace and whose grad rule runs bwd's (see the module docstring)."""
    ctx = jit_ext.get_jit_ctx()
    call_site = _call_site()
    objects = None if kwargs or how.per_argument else _thunder_objects.flattened(args)
    if objects is not None:  # dataclass arguments, laid out flat (_thunder_objects)
        n_args = len(args)
        flat = _items_caller(flat, objects.layouts)
        fwd = decorated_fwd = _thunder_objects.on_items(objects, decorated_fwd, leading=1)
        backward = _per_item_backward(name, backward, objects, n_args)
        args = objects.items
    call = _bound_call(fwd, decorated_fwd, how, args, kwargs)
    _refuse_untraceable_arguments(name, call)
    traced = _trace_forward(name, how, call)
    if traced is INTERPRETER_SIGNALS.EXCEPTION_RAISED:
        return _naming(name, "forward", traced)
    aliased_bwd_trace = _trace_backward(name, backward, call, traced)
    if aliased_bwd_trace is INTERPRETER_SIGNALS.EXCEPTION_RAISED:
        return _naming(name, "backward", aliased_bwd_trace)
    grad_transform = _grad_transform(traced, aliased_bwd_trace)
    forward_op = _operator(ctx, flat, _symbol_name(ctx, flat, name), traced.forward)
    # tracing fwd and bwd moved the trace's source location into them: the symbol's
    # source comment is the call
    ctx.computation_trace.set_current_source_location(*call_site)
    result = forward_op(*call.plain_args, **call.plain_kwargs)
    ctx.ad_hoc_executor.register_implementation(
        forward_op, execution_transform=traced.forward, grad_transform=grad_transform
    )
    return wrap(result, provenance=ProvenanceRecord(PseudoInst.LOOKASIDE, inputs=[traced.provenance]))


@functools.cache
def _items_caller(flat: Callable, layouts: tuple) -> Callable:
    """What the symbol's name is bound to for a call with dataclass arguments: ``flat`` on
    the arguments rebuilt from the items the symbol takes (one per flat callable and
    layout, so every such call prints as one name)."""
    return _thunder_objects.on_items(_thunder_objects.Flattened((), layouts), flat)


def _per_item_backward(name: str, backward: Callable, objects: Any, n_args: int) -> Callable:
    """``backward`` giving one gradient per item: none for a dataclass's leaves. A
    gradient for a dataclass argument raises eager's error (it is not a tensor)."""

    def per_item(ctx: Any, *grads: Any) -> Any:
        result = _flat_outputs(backward(ctx, *grads))
        _check_gradient_count(name, result, n_args)
        for p, layout in enumerate(objects.layouts):
            if layout is not None and result[p] is not None:
                raise RuntimeError(
                    f"function {name}Backward returned a gradient different than None at position {p + 1}, "
                    "but the corresponding forward input was not a Variable"
                )
        return objects.per_item(result[:n_args])

    return per_item


def _refuse_untraceable_arguments(name: str, call: _Call) -> None:
    """A loud error naming the Function for a positional argument a thunder trace cannot
    take (a module, a dataclass, a function: what thunder cannot make a proxy of), where
    thunder would fail after tracing forward (``'AffineParams' object has no attribute
    'name'``, as it prints the trace's signature)."""
    with tracectx(TraceCtx()):  # the proxies made to ask are thrown away
        for where, value in enumerate(call.plain_args):
            if not isinstance(value, ProxyInterface) and not isinstance(proxy(value), ProxyInterface):
                _refuse(name, _NO_OBJECTS.format(where=where, kind=type(value).__name__))


_NO_OBJECTS = (
    "its argument {where} is an object of type {kind}, which thunder cannot make a proxy "
    "of (a trace takes tensors, numbers, strings, tuples, never a module, a dataclass or a function)"
)


def _naming(name: str, body: str, signal: Any) -> Any:
    """``signal``, the interpreter's report that tracing ``body`` raised, with a note naming
    the Function on the exception (its type and message stay: code may catch it)."""
    add_note = getattr(get_interpreterruntimectx().curexc, "add_note", None)  # Python 3.11+
    if add_note is not None:
        add_note(f"raised while thunder traced the {body} of custom Function {name} (flattened by inliner)")
    return signal


@dataclasses.dataclass
class _Call:
    """One call of a flat callable as the jit sees it."""

    args: tuple  # the interpreter's wrapped inputs, keywords bound to their positions
    kwargs: dict  # what is left of the keywords (fwd's keyword-only parameters)
    plain_args: tuple  # the same, unwrapped: proxies and constants
    plain_kwargs: dict
    formal_args: tuple  # what fwd's trace takes: plain_args without repeats of a proxy
    firsts: tuple[int, ...]  # the position in plain_args of each of formal_args
    needs_input_grad: tuple[bool, ...]  # per input: a floating-point tensor
    holder: _CtxStandIn  # the stand-in ctx forward decorators see
    decorated_fwd: Callable  # what to trace: fwd behind its decorators, needs_input_grad bound


def _bound_call(fwd: Callable, decorated_fwd: Callable, how: _How, args: tuple, kwargs: dict) -> _Call:
    """The call's inputs, positional where fwd allows: inputs passed by keyword are inputs
    too, bound to their positions so that the gradients bwd returns for them reach them."""
    if kwargs:
        bound = inspect.signature(fwd).bind(*args, **kwargs)
        args, kwargs = bound.args, bound.kwargs
    holder = _CtxStandIn()
    plain_args = tuple(unwrap(a) for a in args)
    plain_kwargs = {k: unwrap(v) for k, v in kwargs.items()}
    # thunder cannot tell at trace time which inputs will need a gradient (an
    # intermediate's proxy says requires_grad=False): every floating-point tensor input
    # may, and a gradient computed for one that does not is dropped.
    needs_input_grad = tuple(isinstance(a, TensorProxy) and dtypes.is_inexact_dtype(a.dtype) for a in plain_args)
    if how.fwd_needs_input_grad:
        decorated_fwd = _with_keyword(decorated_fwd, needs_input_grad=needs_input_grad)
    firsts = _first_positions([a if isinstance(a, Proxy) else _Unnamed(i) for i, a in enumerate(plain_args)])
    formal_args = tuple(plain_args[i] for i in firsts)
    return _Call(args, kwargs, plain_args, plain_kwargs, formal_args, firsts, needs_input_grad, holder, decorated_fwd)


@dataclasses.dataclass(frozen=True)
class _Unnamed:
    """A constant argument, for :func:`_first_positions`: never a repeat of another."""

    position: int

    @property
    def name(self) -> str:
        return f" constant {self.position}"  # no proxy's name has a space


@dataclasses.dataclass
class _Forward:
    """fwd traced for one call."""

    trace: Any  # after thunder's alias pass; returns (outputs, residuals), or the record's tensors
    outputs: Any  # every tensor a proxy of its own (see _eager_outputs)
    residuals: Any
    route: dict[int, int]  # {earlier output position: last}: where eager sends repeated outputs' grads
    nondiff: tuple[int, ...]  # output positions that take no gradient
    saved: tuple[int, ...]  # positions of the returned residuals' proxies that bwd's trace takes
    firsts: tuple[int, ...]  # the input positions fwd's trace takes (a repeated tensor once)
    provenance: Any  # the interpreter's record of the traced call
    forward: Callable  # the symbol's execution: the trace, returning the outputs only


def _trace_forward(name: str, how: _How, call: _Call) -> Any:
    """fwd's body traced for ``call`` (a ``_Forward``), or the interpreter's signal that it raised."""
    fwd_trace, provenance = jit_ext._convert_pytorchfunc_to_thundertrace(
        call.decorated_fwd,
        False,
        call_args=(_new(call.holder), *call.args),
        call_kwargs=call.kwargs,
        trace_args=call.formal_args,
        trace_kwargs=call.plain_kwargs,
        name=name,
    )
    if fwd_trace is INTERPRETER_SIGNALS.EXCEPTION_RAISED:
        return fwd_trace
    nondiff = how.nondiff
    if how.record:
        nondiff = _record_of(name, fwd_trace, call.needs_input_grad)
    outputs, residuals, route = _eager_outputs(fwd_trace)
    saved = _first_positions(_proxy_leaves(residuals))
    if how.record:
        _returning(fwd_trace, (outputs, _unique(_proxy_leaves(residuals))))
        saved = tuple(range(len(saved)))  # the trace returns the record's tensors, once each
    aliased_fwd_trace = _aliased(fwd_trace)
    forward = _outputs_only(aliased_fwd_trace, outputs, call.firsts, len(call.plain_args))
    return _Forward(aliased_fwd_trace, outputs, residuals, route, nondiff, saved, call.firsts, provenance, forward)


def _outputs_only(aliased_fwd_trace: Any, outputs: Any, firsts: tuple[int, ...], n_inputs: int) -> Callable:
    """The symbol's execution: ``aliased_fwd_trace`` returning ``outputs`` without the
    residuals, run as thunder runs a higher-order function's body. It takes every input
    position (the symbol prints as the user's call, ``Attend(x, x, x)``) and hands the
    trace the positions ``firsts`` it takes."""
    outputs_only = from_trace(aliased_fwd_trace)
    outputs_only.bound_symbols.extend(
        b.from_bsym() for b in aliased_fwd_trace.bound_symbols if b.sym.id != prims.PrimIDs.RETURN
    )
    with tracectx(outputs_only):
        prims.python_return(outputs)

    program = aliased_fwd_trace.python_callable()

    @functools.wraps(program)
    @ltorch.call_higher_order_function_and_consider_outer_autograd_setting
    def forward(*a: Any, **k: Any) -> Any:
        return interpret_trace(outputs_only, *(a[i] for i in firsts), **k)

    if len(firsts) < n_inputs:
        forward.__signature__ = _every_position(inspect.signature(program), firsts, n_inputs)  # type: ignore[attr-defined]
    return forward


def _every_position(signature: inspect.Signature, firsts: tuple[int, ...], n_inputs: int) -> inspect.Signature:
    """``signature`` (of a trace taking the positions ``firsts``) with a parameter for
    each of the ``n_inputs`` positions: thunder binds a symbol's arguments to its meta's
    signature."""
    params = list(signature.parameters.values())
    taken = dict(zip(firsts, params))
    positional = [
        taken.get(i) or inspect.Parameter(f"_repeat_{i}", inspect.Parameter.POSITIONAL_OR_KEYWORD)
        for i in range(n_inputs)
    ]
    return signature.replace(parameters=positional + params[len(firsts) :])


def _trace_backward(name: str, backward: Callable, call: _Call, traced: _Forward) -> Any:
    """bwd on (residuals, *grads), as a trace of (*grads, *residual tensors) after thunder's
    alias pass, or the interpreter's signal that it raised."""
    flat_outputs = _flat_outputs(traced.outputs)
    grads = tuple(TensorProxy(like=o) if isinstance(o, TensorProxy) else None for o in flat_outputs)
    grad_proxies = tuple(g for g in grads if g is not None)
    saved = _unique(_proxy_leaves(traced.residuals))
    # A fresh stand-in carrying what forward decorators (custom_fwd) set on the first.
    bwd_holder = _CtxStandIn()
    vars(bwd_holder).update(vars(call.holder))
    bwd_holder._inliner_residuals = traced.residuals
    bwd_holder._inliner_needs_input_grad = call.needs_input_grad
    wrapped_grads = tuple(wrap(g, provenance=traced.provenance) if g is not None else wrap_const(None) for g in grads)
    bwd_trace, _ = jit_ext._convert_pytorchfunc_to_thundertrace(
        backward,
        False,
        call_args=(_new(bwd_holder), *wrapped_grads),
        trace_args=grad_proxies + saved,
        name=f"{name}_backward",
    )
    if bwd_trace is INTERPRETER_SIGNALS.EXCEPTION_RAISED:
        return bwd_trace
    _check_gradient_count(name, unwrap(bwd_trace.output), len(call.plain_args))
    return _aliased(_unpacked(bwd_trace))


def _grad_transform(traced: _Forward, aliased_bwd_trace: Any) -> Callable:
    """The symbol's grad rule: the forward trace, then the backward trace on the output
    grads as eager autograd hands them out (repeats routed, non-differentiable zeroed)."""
    aliased_fwd_trace, route, nondiff, saved, firsts = (
        traced.trace,
        traced.route,
        traced.nondiff,
        traced.saved,
        traced.firsts,
    )

    @functools.wraps(traced.forward)
    def grad_transform(*a: Any, **k: Any) -> Any:
        from thunder.core.transforms import get_grad, put_grad

        primal, res = interpret_trace(aliased_fwd_trace, *(a[i] for i in firsts), **k)
        flat_primal = _flat_outputs(primal)
        out_grads = [get_grad(o) if isinstance(o, TensorProxy) else None for o in flat_primal]
        for i, j in route.items():
            out_grads[j] = ltorch.add(out_grads[j], out_grads[i])
            out_grads[i] = ltorch.zeros_like(flat_primal[i])
        for j in nondiff:  # eager: a non-differentiable output takes no gradient
            if out_grads[j] is not None:
                out_grads[j] = ltorch.zeros_like(flat_primal[j])
        out_grads = [g for g in out_grads if g is not None]
        leaves = _proxy_leaves(res)
        input_grads = interpret_trace(aliased_bwd_trace, *out_grads, *(leaves[i] for i in saved))
        # a tensor passed at several positions gets the sum of their gradients (put_grad
        # adds up what it is given for one proxy), as eager autograd accumulates them
        for arg, grad in zip(a, _flat_outputs(input_grads)):
            if isinstance(arg, TensorProxy) and isinstance(grad, TensorProxy):
                put_grad(arg, grad)
        return primal

    return grad_transform
