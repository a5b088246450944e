"""The small runtime that rewritten code imports: bind a flat ``fwd`` and ``bwd`` into one callable.

``custom_vjp(fwd, bwd, ...)`` builds, per original Function, carriers:
``autograd.Function`` subclasses with the original's name and positional arity, so
that eager values, gradients, error messages and ``needs_input_grad`` stay exactly
the original's (see docs/semantics.md §0).

- The **eager carrier** has the original's style. For a combined-style original it is
  a combined-style Function whose ``forward(ctx, <fwd's parameters>)`` and
  ``backward`` are generated per original (straight-line code, no loops), so a call
  costs what the original's ``apply`` costs plus two Python frames.
- The **setup_context carrier** is what ``torch.func`` transforms get (and what a
  setup_context-style original always uses), so ``grad``/``vjp``/``jacrev`` work even
  where the original was written in the combined ``forward(ctx, ...)`` style.
- Under ``thunder.jit`` no carrier is used: ``inliner._thunder`` (loaded when thunder
  is) gives each flat callable a thunder lookaside that traces ``fwd`` and ``bwd``
  directly, the way thunder handles the ``autograd_function_apply`` op.

What a tracer sees is the flat callable returned by ``custom_vjp``: a plain
function registered with ``torch._dynamo.allow_in_graph`` and recognised as a leaf
by ``torch.fx`` (proxy detection), with ``fwd``/``bwd`` bound in its closure and
never passed as arguments. Plain tensors and scalars take a fast path that skips
every proxy check.

This module must not import libcst or black: rewritten code pays only for torch.
"""

from __future__ import annotations

import functools
import importlib.abc
import importlib.util
import inspect
import sys
import threading
import weakref
from typing import Any, Callable, Iterable, Sequence

import torch
import torch.fx

__all__ = ["custom_vjp", "FlatFunction"]

# Argument types that can be neither an fx proxy nor need a
# functorch-aware carrier by themselves: calls made only of these take the fast path.
_PLAIN_TYPES = frozenset(
    {torch.Tensor, torch.nn.Parameter, int, float, bool, str, type(None), torch.dtype, torch.device}
)


_TENSOR_TYPES = frozenset({torch.Tensor, torch.nn.Parameter})

# ``autograd.Function``'s C-level apply (what ``Function.apply`` ends in via ``super()``).
_C_APPLY = torch._C._FunctionBase.__dict__["apply"]


def _fast_apply(carrier: type, fill_defaults: bool) -> Callable:
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


class _CtxStandIn:
    """What forward decorators (``custom_fwd``) see as ``ctx``; its attributes move to the real ctx."""


def _flat_outputs(output: Any) -> tuple:
    return output if isinstance(output, tuple) else (output,)


def _find_proxy(values: Iterable[Any]) -> Any:
    """The first fx proxy among ``values`` (searched inside lists, tuples and dicts)."""
    stack = list(values)
    while stack:
        value = stack.pop()
        if isinstance(value, torch.fx.Proxy):
            return value
        if isinstance(value, (list, tuple)):
            stack.extend(value)
        elif isinstance(value, dict):
            stack.extend(value.values())
    return None


def _signature_parts(fwd: Callable) -> tuple[list[str], list[str], dict[str, Any], str]:
    """``fwd``'s parameter list as source text, the matching call arguments, the defaults
    (referenced as ``__defaults[...]``) and an expression for the positional inputs."""
    sig = inspect.signature(fwd)
    params, call, positional = [], [], []
    defaults: dict[str, Any] = {}
    seen_kwonly_marker = False
    for p in sig.parameters.values():
        text = p.name
        if p.default is not inspect.Parameter.empty:
            defaults[p.name] = p.default
            text += f"=__defaults[{p.name!r}]"
        if p.kind is p.VAR_POSITIONAL:
            params.append("*" + p.name)
            call.append("*" + p.name)
            positional.append("*" + p.name)
            seen_kwonly_marker = True
        elif p.kind is p.VAR_KEYWORD:
            params.append("**" + p.name)
            call.append("**" + p.name)
        elif p.kind is p.KEYWORD_ONLY:
            if not seen_kwonly_marker:
                params.append("*")
                seen_kwonly_marker = True
            params.append(text)
            call.append(f"{p.name}={p.name}")
        else:
            params.append(text)
            call.append(p.name)
            positional.append(p.name)
    if any(p.kind is p.POSITIONAL_ONLY for p in sig.parameters.values()):
        last = max(i for i, p in enumerate(sig.parameters.values()) if p.kind is p.POSITIONAL_ONLY)
        params.insert(last + 1, "/")
    positional_expr = "(" + "".join(f"{x}, " for x in positional) + ")"
    return params, call, defaults, positional_expr


def _compile(src: str, label: str, namespace: dict[str, Any], name: str) -> Callable:
    exec(compile(src, label, "exec"), namespace)
    return namespace[name]


def _forward_with_signature(fwd: Callable, run: Callable) -> Callable:
    """A function with ``fwd``'s parameter names that calls ``run`` with the bound arguments.

    torch 2.13 maps ``apply`` keywords to positional slots using forward's code
    variable names, so the carrier's forward must carry the original's names.
    """
    params, call, defaults, _ = _signature_parts(fwd)
    src = f"def forward({', '.join(params)}):\n    return __run({', '.join(call)})\n"
    namespace: dict[str, Any] = {"__defaults": defaults, "__run": run}
    forward = _compile(src, f"<inliner forward of {fwd.__qualname__}>", namespace, "forward")
    forward.__qualname__ = fwd.__qualname__
    return forward


def _combined_carrier_methods(
    fwd: Callable,
    bwd: Callable,
    *,
    saved_idx: tuple[int, ...],
    saved_tensors_idx: int | None,
    nondiff: tuple[int, ...],
    dirty: tuple[int, ...],
    materialize_grads: bool,
    bwd_needs_input_grad: bool,
    bwd_reads_saved: bool = True,
    fsaved_idx: tuple[int, ...] = (),
    jvp: Callable | None = None,
) -> tuple[Callable, Callable, Callable | None]:
    """Straight-line ``forward(ctx, <fwd's parameters>)`` and ``backward(ctx, *grads)``.

    They do exactly what the original's combined-style methods did with ctx, in the
    carrier model of docs/semantics.md §0: the ``saved_idx`` residuals (then the members of
    the ``saved_tensors_idx`` group) go through one ``save_for_backward``; the other
    residuals stay plain references on ctx; the flags are replayed on the real ctx.
    """
    params, call, defaults, positional = _signature_parts(fwd)
    ctx = "ctx"
    taken = set(inspect.signature(fwd).parameters)
    while ctx in taken:
        ctx = "_" + ctx
    body = [f"__out, __res = __fwd({', '.join(call)})", "if type(__res) is not tuple:", "    __res = tuple(__res)"]
    saved_exprs = [f"__res[{i}]" for i in saved_idx]
    if saved_tensors_idx is not None:
        saved_exprs.append(f"*__res[{saved_tensors_idx}]")
    cleared = list(saved_idx) + ([saved_tensors_idx] if saved_tensors_idx is not None else [])
    if saved_exprs:
        body.append(f"{ctx}.save_for_backward({', '.join(saved_exprs)})")
    if fsaved_idx:
        body.append(f"{ctx}.save_for_forward({', '.join(f'__res[{i}]' for i in fsaved_idx)})")
        cleared = cleared + list(fsaved_idx)
    # The emitter puts saved residuals first (one per tensor, or the one group), then the
    # forward-saved ones, then plain ones: backward then rebuilds the tuple with one
    # concatenation instead of a per-slot copy (this is the hot path).
    k = len(saved_idx) if saved_tensors_idx is None else (1 if not saved_idx and saved_tensors_idx == 0 else -1)
    m = len(fsaved_idx)
    prefix_layout = k >= 0 and saved_idx == tuple(range(len(saved_idx))) and fsaved_idx == tuple(range(k, k + m))
    if prefix_layout:
        body.append(f"{ctx}._inliner_tail = __res[{k + m}:]" if k + m else f"{ctx}._inliner_tail = __res")
    if not prefix_layout or jvp is not None:
        if cleared:
            body.append("__plain = list(__res)")
            body.extend(f"__plain[{i}] = None" for i in cleared)
            body.append(f"{ctx}._inliner_plain = __plain")
        else:
            body.append(f"{ctx}._inliner_plain = __res")
    if not materialize_grads:
        body.append(f"{ctx}.set_materialize_grads(False)")
    if dirty:
        body.append(f"__inputs = {positional}")
        body.append(f"{ctx}.mark_dirty({', '.join(f'__inputs[{i}]' for i in dirty)})")
    if nondiff:
        body.append("__flat_out = __out if isinstance(__out, tuple) else (__out,)")
        body.append(f"{ctx}.mark_non_differentiable({', '.join(f'__flat_out[{j}]' for j in nondiff)})")
    body.append("return __out")
    src = f"def forward({', '.join([ctx] + params)}):\n" + "".join(f"    {line}\n" for line in body)
    namespace: dict[str, Any] = {"__defaults": defaults, "__fwd": fwd}
    forward = _compile(src, f"<inliner forward of {fwd.__qualname__}>", namespace, "forward")
    forward.__qualname__ = fwd.__qualname__

    extra = ", needs_input_grad=ctx.needs_input_grad" if bwd_needs_input_grad else ""
    if prefix_layout:
        if not k:
            head = []
        elif not bwd_reads_saved:
            head = ["(" + "None, " * k + ")"]
        elif saved_tensors_idx is not None:
            head = ["(ctx.saved_tensors,)"]
        else:
            head = ["ctx.saved_tensors"]
        parts = [*head, *(["(" + "None, " * m + ")"] if m else []), "ctx._inliner_tail"]
        lines = [f"return __bwd({' + '.join(parts)}, *grads{extra})"]
    elif (saved_idx or saved_tensors_idx is not None) and bwd_reads_saved:
        lines = ["__res = list(ctx._inliner_plain)", "__saved = ctx.saved_tensors"]
        lines.extend(f"__res[{i}] = __saved[{k}]" for k, i in enumerate(saved_idx))
        if saved_tensors_idx is not None:
            lines.append(f"__res[{saved_tensors_idx}] = tuple(__saved[{len(saved_idx)}:])")
        lines.append(f"return __bwd(tuple(__res), *grads{extra})")
    else:
        lines = [f"return __bwd(ctx._inliner_plain, *grads{extra})"]
    src = "def backward(ctx, *grads):\n" + "".join(f"    {line}\n" for line in lines)
    backward = _compile(src, f"<inliner backward of {bwd.__qualname__}>", {"__bwd": bwd}, "backward")
    backward.__qualname__ = bwd.__qualname__
    return forward, backward, (_jvp_method(jvp, fsaved_idx) if jvp is not None else None)


def _jvp_method(jvp: Callable, fsaved_idx: tuple[int, ...]) -> Callable:
    """``jvp(ctx, *tangents)``: in a jvp, ``ctx.saved_tensors`` are what forward saved for forward."""

    def method(ctx: Any, *tangents: Any) -> Any:
        residuals = list(ctx._inliner_plain)
        if fsaved_idx:
            saved = ctx.saved_tensors
            for k, i in enumerate(fsaved_idx):
                residuals[i] = saved[k]
        return jvp(tuple(residuals), *tangents)

    return method


class FlatFunction:
    """Documentation of what ``custom_vjp`` returns: a plain function with these attributes."""

    fwd: Callable  # the flat forward
    bwd: Callable  # the flat backward
    apply: Callable  # the function itself, so ``Name.apply(...)`` keeps working
    carriers: Callable[[], "Carriers"]  # the autograd.Function carriers, built on first use


class Carriers:
    """The carriers of one flat function (see the module docstring)."""

    __slots__ = ("eager", "functorch", "functorch_apply")

    def __init__(self, eager: type, functorch: type, functorch_apply: Callable) -> None:
        self.eager = eager
        self.functorch = functorch
        self.functorch_apply = functorch_apply  # functorch.apply, with eager's repeated outputs


def custom_vjp(
    fwd: Callable,
    bwd: Callable,
    *,
    name: str,
    saved_for_backward_idx: Sequence[int] = (),
    saved_tensors_idx: int | None = None,
    non_differentiable_idx: Sequence[int] = (),
    dirty_idx: Sequence[int] = (),
    materialize_grads: bool = True,
    fill_defaults: bool = False,
    forward_decorators: Sequence[Callable] = (),
    backward_decorators: Sequence[Callable] = (),
    bwd_needs_input_grad: bool = False,
    bwd_reads_saved: bool = True,
    generate_vmap_rule: bool = False,
    vmap: Callable | None = None,
    jvp: Callable | None = None,
    saved_for_forward_idx: Sequence[int] = (),
    attributes: dict[str, Any] | None = None,
    compile_kind: str = "traceable",
    compile_reason: str = "",
) -> Callable:
    """Bind ``fwd(*inputs) -> (outputs, residuals)`` and ``bwd(residuals, *grads) -> grads``.

    - ``saved_for_backward_idx``: residuals (each a tensor or None) that the original
      sent through ``ctx.save_for_backward``; the others are kept as plain references.
    - ``saved_tensors_idx``: a residual that is a whole ``saved_tensors`` tuple (used
      when the original saved conditionally or a variable number of tensors).
    - ``non_differentiable_idx``: output positions passed to ``mark_non_differentiable``.
    - ``dirty_idx``: input positions passed to ``mark_dirty``.
    - ``materialize_grads=False`` replays ``ctx.set_materialize_grads(False)``.
    - ``fill_defaults``: True for originals in the setup_context style (torch fills
      forward's defaults before apply); False for the combined style (it does not).
    - ``forward_decorators`` / ``backward_decorators``: the original's decorators, in
      source order (``custom_fwd``, ``custom_bwd``, ``once_differentiable``...).
    - ``bwd_needs_input_grad``: pass ``needs_input_grad=ctx.needs_input_grad`` to bwd.
    - ``jvp(residuals, *tangents)``: the forward-mode rule, if the original had one;
      ``saved_for_forward_idx`` are the residuals it sent through ``ctx.save_for_forward``.
    - ``bwd_reads_saved=False``: the original backward never read ``ctx.saved_tensors``,
      so neither does the carrier (reading runs the version check); those residual slots
      reach bwd as None.
    - ``compile_kind`` (``"traceable"``, ``"opaque"`` or ``"side_effecting"``) and
      ``compile_reason``: what the engine decided about how ``torch.compile`` may treat the
      call (inliner/compile_kind.py); recorded on the flat callable.

    Nothing is built here but the flat function: the carriers are made on its first
    call, so importing a module with many flattened Functions stays cheap.
    """
    spec = _Spec(
        fwd=fwd,
        bwd=bwd,
        name=name,
        module=getattr(fwd, "__module__", __name__),
        saved_idx=tuple(saved_for_backward_idx),
        saved_tensors_idx=saved_tensors_idx,
        nondiff=tuple(non_differentiable_idx),
        dirty=tuple(dirty_idx),
        materialize_grads=materialize_grads,
        fill_defaults=fill_defaults,
        forward_decorators=tuple(forward_decorators),
        backward_decorators=tuple(backward_decorators),
        bwd_needs_input_grad=bwd_needs_input_grad,
        bwd_reads_saved=bwd_reads_saved,
        generate_vmap_rule=generate_vmap_rule,
        vmap=vmap,
        jvp=jvp,
        fsaved_idx=tuple(saved_for_forward_idx),
    )
    built: list[Carriers] = []
    eager_apply: list[Callable] = []  # what the fast path calls, once built (the hot path)
    plain_types = _PLAIN_TYPES
    tensor_types = _TENSOR_TYPES
    is_wrapped = torch._C._functorch.is_functorch_wrapped_tensor
    functorch_active = torch._C._are_functorch_transforms_active

    def carriers() -> Carriers:
        if not built:
            made = _build_carriers(spec)
            built.append(made)
            eager_apply.append(_fast_apply(made.eager, spec.fill_defaults))
        return built[0]

    def flat(*args: Any, **kwargs: Any) -> Any:
        # Fast path: plain tensors (no functorch wrapper, not even a dead one) and
        # scalars, no keywords, no torch.func transform.
        if not kwargs:
            for arg in args:
                kind = type(arg)
                if kind not in plain_types or (kind in tensor_types and is_wrapped(arg)):
                    break
            else:
                if not functorch_active():
                    if not eager_apply:
                        carriers()
                    return eager_apply[0](*args)
        return dispatch(args, kwargs)

    def dispatch(args: tuple, kwargs: dict) -> Any:
        proxy = _find_proxy((args, kwargs))
        if proxy is not None:
            return proxy.tracer.create_proxy("call_function", public, args, kwargs)
        if functorch_active():
            return carriers().functorch_apply(*args, **kwargs)
        return carriers().eager.apply(*args, **kwargs)

    # What the user calls: ``flat`` itself, or, for a ``custom_fwd(cast_inputs=...)``
    # original, ``flat`` behind that decorator's input casting (see _with_input_casting).
    cast = _cast_inputs_of(spec.forward_decorators)
    public = flat if cast is None else _with_input_casting(flat, *cast)
    for fn in {flat, public}:
        fn.__name__ = name
        fn.__qualname__ = name
        fn.__module__ = spec.module
        fn.__doc__ = getattr(fwd, "__doc__", None)
    public.fwd = fwd  # type: ignore[attr-defined]
    public.bwd = bwd  # type: ignore[attr-defined]
    public.apply = public  # type: ignore[attr-defined]  # modules that still call Name.apply keep working
    public.carriers = carriers  # type: ignore[attr-defined]
    public.call = flat  # type: ignore[attr-defined]  # the single call node tracers see
    public.compile_kind = compile_kind  # type: ignore[attr-defined]
    public.compile_reason = compile_reason  # type: ignore[attr-defined]
    for key, value in (attributes or {}).items():
        setattr(public, key, value)
    _allow_in_graph(flat)
    _register_with_thunder(flat, spec)
    return public


def _cast_inputs_of(decorators: Sequence[Callable]) -> tuple[str, Any] | None:
    """``(device_type, dtype)`` of a ``torch.amp.custom_fwd(cast_inputs=dtype)`` decorator
    (``torch.cuda.amp.custom_fwd`` makes the same partial), if there is one."""
    for decorator in decorators:
        if isinstance(decorator, functools.partial) and decorator.func is torch.amp.custom_fwd:
            cast_inputs = decorator.keywords.get("cast_inputs")
            if cast_inputs is not None:
                return decorator.keywords.get("device_type", "cuda"), cast_inputs
    return None


def _with_input_casting(flat: Callable, device_type: str, cast_inputs: Any) -> Callable:
    """``custom_fwd(cast_inputs=...)``'s casting, done before the call instead of inside it.

    Under autocast, custom_fwd casts the inputs and runs forward with autocast off. A
    tracer that does not enter the call (dynamo, for which ``flat`` is one graph node)
    must still see that: this plain function, which dynamo traces, does it with
    custom_fwd's own code, so strict ``torch.export`` records the casts. The carrier's
    custom_fwd then sees autocast off and only records that, as it did for the original
    (``_fwd_used_autocast`` is False whenever inputs are cast).
    """
    cast = torch.amp.autocast_mode._cast
    is_enabled = torch.is_autocast_enabled

    def public(*args: Any, **kwargs: Any) -> Any:
        if is_enabled(device_type):
            with torch.autocast(device_type=device_type, enabled=False):
                return flat(*cast(args, device_type, cast_inputs), **cast(kwargs, device_type, cast_inputs))
        return flat(*args, **kwargs)

    return public


class _Spec:
    """The static facts ``custom_vjp`` was given, kept until the carriers are built."""

    def __init__(self, **facts: Any) -> None:
        self.__dict__.update(facts)


def _decorated_forward(spec: Any) -> Callable:
    """``fwd`` behind the original's forward decorators, called as ``(ctx, *args)``."""
    fwd = spec.fwd

    def call_fwd(holder: _CtxStandIn, *args: Any, **kwargs: Any) -> Any:
        return fwd(*args, **kwargs)

    decorated = call_fwd
    for decorator in reversed(spec.forward_decorators):
        decorated = decorator(decorated)
    return decorated


def _build_carriers(spec: Any) -> Carriers:
    fwd, bwd, name = spec.fwd, spec.bwd, spec.name
    saved_idx, saved_tensors_idx = spec.saved_idx, spec.saved_tensors_idx
    nondiff, dirty = spec.nondiff, spec.dirty
    materialize_grads = spec.materialize_grads
    bwd_needs_input_grad = spec.bwd_needs_input_grad
    reads_saved = spec.bwd_reads_saved
    fsaved_idx = spec.fsaved_idx
    # setup_context may not save an input that forward returns as-is. A setup_context-style
    # original doing so fails in torch too; a combined-style one works, so its carrier returns
    # a view of such an input instead (what autograd makes of it anyway).
    view_returned_inputs = not spec.fill_defaults
    slot = threading.local()

    decorated_fwd = _decorated_forward(spec)

    def run(*args: Any, **kwargs: Any) -> Any:
        holder = _CtxStandIn()
        outputs, residuals = decorated_fwd(holder, *args, **kwargs)
        residuals = tuple(residuals)
        if view_returned_inputs:
            outputs = _view_saved_inputs(outputs, args, residuals, saved_idx, saved_tensors_idx)
        flat_out = _flat_outputs(outputs)
        slot.repeats = _repeats(flat_out, args, dirty)
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
        for key, value in holder_attrs.items():
            setattr(ctx, key, value)
        if not materialize_grads:
            ctx.set_materialize_grads(False)
        if dirty:
            ctx.mark_dirty(*[inputs[i] for i in dirty])
        if nondiff:
            ctx.mark_non_differentiable(*[flat_out[j] for j in nondiff])

    def backward(ctx: Any, *grads: Any) -> Any:
        residuals = list(ctx._inliner_plain)
        if reads_saved and (saved_idx or ctx._inliner_group):
            saved = ctx.saved_tensors
            for k, i in enumerate(saved_idx):
                residuals[i] = saved[k]
            if saved_tensors_idx is not None:
                residuals[saved_tensors_idx] = tuple(saved[len(saved_idx) :])
        if bwd_needs_input_grad:
            return bwd(tuple(residuals), *grads, needs_input_grad=ctx.needs_input_grad)
        return bwd(tuple(residuals), *grads)

    decorated_bwd = backward
    for decorator in reversed(spec.backward_decorators):
        decorated_bwd = decorator(decorated_bwd)

    forward = _forward_with_signature(fwd, run)
    if not spec.fill_defaults:
        # The combined style does not fill forward's defaults before apply.
        forward.__signature__ = inspect.Signature(
            [
                inspect.Parameter("args", inspect.Parameter.VAR_POSITIONAL),
                inspect.Parameter("kwargs", inspect.Parameter.VAR_KEYWORD),
            ]
        )

    namespace: dict[str, Any] = {
        "forward": staticmethod(forward),
        "setup_context": staticmethod(setup_context),
        "backward": staticmethod(decorated_bwd),
        # No rule of the original's own: torch generates one by vmapping fwd and bwd (a
        # Function it cannot vmap, e.g. one with mark_dirty, still raises torch's error).
        "generate_vmap_rule": spec.generate_vmap_rule or spec.vmap is None,
        "__module__": spec.module,
        "__qualname__": name,
    }
    if spec.vmap is not None:
        namespace["vmap"] = staticmethod(spec.vmap)
    if spec.jvp is not None:
        namespace["jvp"] = staticmethod(_jvp_method(spec.jvp, fsaved_idx))
    functorch = type(name, (torch.autograd.Function,), namespace)

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
        out = functorch.apply(*args, **kwargs)
        if slot.repeats:
            out = list(out)
            for i, j in slot.repeats:
                out[i] = out[j]
            out = tuple(out)
        return out

    if spec.fill_defaults:
        # A setup_context-style original: its own apply binds defaults and runs
        # setup_context, so the setup_context carrier *is* the eager carrier.
        eager = functorch
    else:
        eager_forward, eager_backward, eager_jvp = _combined_carrier_methods(
            fwd,
            bwd,
            saved_idx=saved_idx,
            saved_tensors_idx=saved_tensors_idx,
            nondiff=nondiff,
            dirty=dirty,
            materialize_grads=materialize_grads,
            bwd_needs_input_grad=bwd_needs_input_grad,
            bwd_reads_saved=reads_saved,
            fsaved_idx=fsaved_idx,
            jvp=spec.jvp,
        )
        for decorator in reversed(spec.forward_decorators):
            eager_forward = decorator(eager_forward)
        for decorator in reversed(spec.backward_decorators):
            eager_backward = decorator(eager_backward)
        eager = type(
            name,
            (torch.autograd.Function,),
            {
                "forward": staticmethod(eager_forward),
                "backward": staticmethod(eager_backward),
                **({"jvp": staticmethod(eager_jvp)} if eager_jvp is not None else {}),
                "__module__": spec.module,
                "__qualname__": name,
            },
        )
    return Carriers(eager, functorch, functorch_apply)


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
    return ("value", None, value)


def _view_saved_inputs(outputs: Any, args: tuple, residuals: tuple, saved_idx: tuple, group_idx: int | None) -> Any:
    """Outputs that are inputs and also saved for backward, replaced by views of themselves."""
    saved = [residuals[i] for i in saved_idx] + (list(residuals[group_idx]) if group_idx is not None else [])
    flagged = [s for s in saved if isinstance(s, torch.Tensor) and any(s is a for a in args)]
    if not flagged:
        return outputs

    def view(out: Any) -> Any:
        return out.view_as(out) if any(out is f for f in flagged) else out

    return tuple(view(o) for o in outputs) if isinstance(outputs, tuple) else view(outputs)


def _repeats(
    flat_out: Sequence, args: Sequence, dirty: Sequence[int], tensor_type: type = torch.Tensor
) -> tuple[tuple[int, int], ...]:
    """``(i, j)`` for every output position ``i`` whose tensor eager autograd hands out
    again at ``j``, the last such position: a tensor made in forward (or a dirty input)
    returned twice. An input returned as-is is not one: each position gets its own view.
    ``tensor_type`` lets thunder's lookaside ask the same of its proxies."""
    own_views = [a for i, a in enumerate(args) if isinstance(a, tensor_type) and i not in dirty]
    last = {
        id(o): j
        for j, o in enumerate(flat_out)
        if isinstance(o, tensor_type) and not any(o is a for a in own_views)
    }
    return tuple((i, last[id(o)]) for i, o in enumerate(flat_out) if last.get(id(o), i) != i)


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
    return value


_pending_allow_in_graph: "weakref.WeakSet[Callable]" = weakref.WeakSet()
_pending_thunder: "weakref.WeakKeyDictionary[Callable, Any]" = weakref.WeakKeyDictionary()


def _allow_in_graph(fn: Callable) -> None:
    """Make dynamo emit one plain call node for ``fn`` instead of tracing into it.

    Importing ``torch._dynamo`` costs about two seconds, so when it is not loaded yet
    the registration waits until something (``torch.compile``) imports it.
    """
    dynamo = sys.modules.get("torch._dynamo")
    if dynamo is not None and hasattr(dynamo, "allow_in_graph"):
        dynamo.allow_in_graph(fn)
        return
    _pending_allow_in_graph.add(fn)
    _after_import("torch._dynamo", _flush_allow_in_graph)


def _flush_allow_in_graph(dynamo: Any) -> None:
    for fn in list(_pending_allow_in_graph):
        dynamo.allow_in_graph(fn)
    _pending_allow_in_graph.clear()


def _register_with_thunder(fn: Callable, spec: Any) -> None:
    """Give ``thunder.jit`` a lookaside for ``fn`` (``inliner._thunder``), now if thunder is
    loaded, else right after it is first imported."""
    if "thunder" in sys.modules:
        _thunder_register(fn, spec)
        return
    _pending_thunder[fn] = spec
    _after_import("thunder", _flush_thunder)


def _thunder_register(fn: Callable, spec: Any) -> None:
    try:
        from inliner import _thunder

        _thunder.register(fn, spec, _decorated_forward(spec))
    except Exception as exc:  # a thunder whose internals moved must not break an import
        _warn_thunder_once(exc)


_thunder_warned: list[bool] = []


def _warn_thunder_once(exc: Exception) -> None:
    if not _thunder_warned:
        _thunder_warned.append(True)
        import warnings

        warnings.warn(
            f"inliner: could not register flattened functions with this thunder version ({exc!r}); "
            "thunder.jit will not see their custom backward",
            RuntimeWarning,
            stacklevel=3,
        )


def _flush_thunder(_thunder_module: Any) -> None:
    for fn, spec in list(_pending_thunder.items()):
        _thunder_register(fn, spec)
    _pending_thunder.clear()


_import_callbacks: dict[str, list[Callable[[Any], None]]] = {}


def _after_import(module_name: str, callback: Callable[[Any], None]) -> None:
    """Run ``callback(module)`` right after ``module_name`` is first imported (once per callback)."""
    callbacks = _import_callbacks.setdefault(module_name, [])
    if callback in callbacks:
        return
    callbacks.append(callback)
    if not any(isinstance(f, _ImportWatcher) for f in sys.meta_path):
        sys.meta_path.insert(0, _ImportWatcher())


class _ImportWatcher(importlib.abc.MetaPathFinder):
    """Lets the real finders find the module, then wraps its loader to run the callbacks."""

    def find_spec(self, fullname: str, path: Any, target: Any = None) -> Any:
        callbacks = _import_callbacks.pop(fullname, None)
        if callbacks is None:
            return None
        if not _import_callbacks:
            sys.meta_path.remove(self)
        spec = importlib.util.find_spec(fullname)  # our own entry is gone: the real finders answer
        if spec is None or spec.loader is None or not hasattr(spec.loader, "exec_module"):
            return spec
        spec.loader = _CallbackLoader(spec.loader, callbacks)
        return spec


class _CallbackLoader(importlib.abc.Loader):
    def __init__(self, loader: Any, callbacks: list[Callable[[Any], None]]) -> None:
        self._loader = loader
        self._callbacks = callbacks

    def create_module(self, spec: Any) -> Any:
        return self._loader.create_module(spec)

    def exec_module(self, module: Any) -> None:
        self._loader.exec_module(module)
        module.__loader__ = module.__spec__.loader = self._loader
        for callback in self._callbacks:
            callback(module)

    def __getattr__(self, name: str) -> Any:  # get_source, get_code, is_package...
        return getattr(self._loader, name)
