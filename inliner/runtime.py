"""The small runtime that rewritten code imports: bind a flat ``fwd`` and ``bwd`` into one callable.

``custom_vjp(fwd, bwd, ...)`` builds, per original Function, a carrier: an
``autograd.Function`` subclass with the original's name and positional arity, so
that eager values, gradients, error messages and ``needs_input_grad`` stay exactly
the original's (see shared/SEMANTICS.md §0). The carrier always uses the
``setup_context`` style, so ``torch.func`` transforms work even where the original
was written in the combined ``forward(ctx, ...)`` style.

What a tracer sees is the flat callable returned by ``custom_vjp``: a plain
function registered with ``torch._dynamo.allow_in_graph`` and recognised as a leaf
by ``torch.fx`` (proxy detection), with ``fwd``/``bwd`` bound in its closure and
never passed as arguments.

This module must not import libcst or black: rewritten code pays only for torch.
"""

from __future__ import annotations

import inspect
import threading
from typing import Any, Callable, Iterable, Sequence

import torch

__all__ = ["custom_vjp", "FlatFunction"]


class _CtxStandIn:
    """What forward decorators (``custom_fwd``) see as ``ctx``; its attributes move to the real ctx."""


def _flat_outputs(output: Any) -> tuple:
    return output if isinstance(output, tuple) else (output,)


def _has_proxy(values: Iterable[Any]) -> Any:
    import torch.fx

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


def _forward_with_signature(fwd: Callable, run: Callable) -> Callable:
    """A function with ``fwd``'s parameter names that calls ``run`` with the bound arguments.

    torch 2.13 maps ``apply`` keywords to positional slots using forward's code
    variable names, so the carrier's forward must carry the original's names.
    """
    sig = inspect.signature(fwd)
    params, call = [], []
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
        elif p.kind is p.POSITIONAL_ONLY:
            params.append(text)
            call.append(p.name)
        else:
            params.append(text)
            call.append(p.name)
    if any(p.kind is p.POSITIONAL_ONLY for p in sig.parameters.values()):
        last = max(i for i, p in enumerate(sig.parameters.values()) if p.kind is p.POSITIONAL_ONLY)
        params.insert(last + 1, "/")
    src = f"def forward({', '.join(params)}):\n    return __run({', '.join(call)})\n"
    namespace: dict[str, Any] = {"__defaults": defaults, "__run": run}
    exec(compile(src, f"<inliner forward of {fwd.__qualname__}>", "exec"), namespace)
    forward = namespace["forward"]
    forward.__qualname__ = fwd.__qualname__
    return forward


class FlatFunction:
    """Marker base for documentation; the flat callable is a plain function with these attributes."""

    fwd: Callable
    bwd: Callable
    apply: Callable
    function: type


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
    generate_vmap_rule: bool = False,
    vmap: Callable | None = None,
    attributes: dict[str, Any] | None = None,
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
    """
    saved_idx = tuple(saved_for_backward_idx)
    nondiff = tuple(non_differentiable_idx)
    dirty = tuple(dirty_idx)
    slot = threading.local()

    def call_fwd(holder: _CtxStandIn, *args: Any, **kwargs: Any) -> Any:
        return fwd(*args, **kwargs)

    decorated_fwd = call_fwd
    for decorator in reversed(forward_decorators):
        decorated_fwd = decorator(decorated_fwd)

    def run(*args: Any, **kwargs: Any) -> Any:
        holder = _CtxStandIn()
        outputs, residuals = decorated_fwd(holder, *args, **kwargs)
        residuals = tuple(residuals)
        flat_out = _flat_outputs(outputs)
        # Residuals that are inputs or outputs are re-bound by position in every
        # setup_context call (torch.func calls it once per transform level with
        # differently wrapped tensors); everything else is kept as the object.
        recipe = []
        for value in residuals:
            recipe.append(_locate(value, args, flat_out))
        group = None
        if saved_tensors_idx is not None:
            group = tuple(_locate(v, args, flat_out) for v in residuals[saved_tensors_idx])
        slot.value = (tuple(recipe), group, dict(vars(holder)))
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
        for i in saved_idx:
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
        if saved_idx or ctx._inliner_group:
            saved = ctx.saved_tensors
            for k, i in enumerate(saved_idx):
                residuals[i] = saved[k]
            if saved_tensors_idx is not None:
                residuals[saved_tensors_idx] = tuple(saved[len(saved_idx) :])
        if bwd_needs_input_grad:
            return bwd(tuple(residuals), *grads, needs_input_grad=ctx.needs_input_grad)
        return bwd(tuple(residuals), *grads)

    decorated_bwd = backward
    for decorator in reversed(backward_decorators):
        decorated_bwd = decorator(decorated_bwd)

    forward = _forward_with_signature(fwd, run)
    if not fill_defaults:
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
        "generate_vmap_rule": generate_vmap_rule,
        "__module__": getattr(fwd, "__module__", __name__),
        "__qualname__": name,
    }
    if vmap is not None:
        namespace["vmap"] = staticmethod(vmap)
    carrier = type(name, (torch.autograd.Function,), namespace)

    def flat(*args: Any, **kwargs: Any) -> Any:
        proxy = _has_proxy((args, kwargs))
        if proxy is not None:
            return proxy.tracer.create_proxy("call_function", flat, args, kwargs)
        return carrier.apply(*args, **kwargs)

    flat.__name__ = name
    flat.__qualname__ = name
    flat.__module__ = namespace["__module__"]
    flat.__doc__ = getattr(fwd, "__doc__", None)
    flat.fwd = fwd  # type: ignore[attr-defined]
    flat.bwd = bwd  # type: ignore[attr-defined]
    flat.apply = flat  # type: ignore[attr-defined]  # modules that still call Name.apply keep working
    flat.function = carrier  # type: ignore[attr-defined]
    for key, value in (attributes or {}).items():
        setattr(flat, key, value)
    _allow_in_graph(flat)
    return flat


def _locate(value: Any, args: tuple, flat_out: tuple) -> tuple:
    if isinstance(value, torch.Tensor):
        for i, arg in enumerate(args):
            if value is arg:
                return ("input", i, value)
        for j, out in enumerate(flat_out):
            if value is out:
                return ("output", j, value)
    return ("value", None, value)


def _resolve(step: tuple, inputs: tuple, flat_out: tuple) -> Any:
    kind, index, value = step
    if kind == "input" and index < len(inputs):
        return inputs[index]
    if kind == "output" and index < len(flat_out):
        return flat_out[index]
    return value


def _allow_in_graph(fn: Callable) -> None:
    """Make dynamo emit one plain call node for ``fn`` instead of tracing into it."""
    try:
        import torch._dynamo
    except Exception:  # pragma: no cover - a torch without dynamo
        return
    torch._dynamo.allow_in_graph(fn)
