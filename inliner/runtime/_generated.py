"""Carrier methods generated as source: straight-line code with ``fwd``'s parameter names.

torch 2.13 binds ``apply`` keywords by the names of forward's code, so a carrier's forward
must carry the original's parameters; and the eager carrier of a combined-style original
is what every eager call runs, so its ``forward(ctx, ...)`` and ``backward(ctx, *grads)``
are generated per original with no loops and no tests of flags that cannot change.
"""

from __future__ import annotations

import functools
import inspect
from typing import Any, Callable

from inliner.runtime._contract import first_call_checked
from inliner.runtime._record import replay
from inliner.runtime._residuals import SavedOnDemand, _jvp_method


def _signature_parts(fwd: Callable, hidden: tuple[str, ...] = ()) -> tuple[list[str], list[str], dict[str, Any], str]:
    """``fwd``'s parameter list as source text, the matching call arguments, the defaults
    (referenced as ``__defaults[...]``) and an expression for the positional inputs.
    ``hidden`` keyword-only parameters are the carrier's to pass, not the caller's."""
    sig = inspect.signature(fwd)
    params, call, positional = [], [], []
    defaults: dict[str, Any] = {}
    seen_kwonly_marker = False
    for p in sig.parameters.values():
        if p.kind is p.KEYWORD_ONLY and p.name in hidden:
            continue
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


def _forward_with_signature(fwd: Callable, run: Callable, hidden: tuple[str, ...] = ()) -> Callable:
    """A function with ``fwd``'s parameter names that calls ``run`` with the bound arguments.

    torch 2.13 maps ``apply`` keywords to positional slots using forward's code
    variable names, so the carrier's forward must carry the original's names.
    """
    params, call, defaults, _ = _signature_parts(fwd, hidden)
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
    saved_on_demand: bool = False,
    fsaved_idx: tuple[int, ...] = (),
    jvp: Callable | None = None,
    check: Callable[[Any, tuple], None] | None = None,
    record: bool = False,
    fwd_needs_input_grad: bool = False,
) -> tuple[Callable, Callable, Callable | None]:
    """Straight-line ``forward(ctx, <fwd's parameters>)`` and ``backward(ctx, *grads)``.

    They do exactly what the original's combined-style methods did with ctx, in the
    carrier model of docs/semantics.md §0: the ``saved_idx`` residuals (then the members of
    the ``saved_tensors_idx`` group) go through one ``save_for_backward``; the other
    residuals stay plain references on ctx; the flags are replayed on the real ctx.
    ``check`` looks at what fwd returns on the first call (then fwd is called directly).
    With ``record``, the one residual is a ``Record`` whose saves and marks are replayed
    on the real ctx instead (``inliner.runtime._record``).
    """
    hidden = ("needs_input_grad",) if fwd_needs_input_grad else ()
    params, call, defaults, positional = _signature_parts(fwd, hidden)
    ctx = "ctx"
    taken = set(inspect.signature(fwd).parameters)
    while ctx in taken:
        ctx = "_" + ctx
    if fwd_needs_input_grad:
        call = [*call, f"needs_input_grad={ctx}.needs_input_grad"]
    body = [f"__out, __res = __fwd({', '.join(call)})", "if type(__res) is not tuple:", "    __res = tuple(__res)"]
    if record:
        body.append(f"__replay({ctx}, __res[0])")
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
    namespace: dict[str, Any] = {"__defaults": defaults, "__fwd": fwd, "__replay": replay}
    if check is not None:
        namespace["__fwd"] = first_call_checked(fwd, check, functools.partial(namespace.__setitem__, "__fwd"))
    forward = _compile(src, f"<inliner forward of {fwd.__qualname__}>", namespace, "forward")
    forward.__qualname__ = fwd.__qualname__

    extra = ", needs_input_grad=ctx.needs_input_grad" if bwd_needs_input_grad else ""
    if saved_on_demand:
        plain = f"({'None, ' * (k + m)}) + ctx._inliner_tail" if prefix_layout else "ctx._inliner_plain"
        lines = [f"return __bwd(__on_demand(ctx, {plain}, __saved_idx, __group_idx), *grads{extra})"]
    elif prefix_layout:
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
    namespace = {"__bwd": bwd, "__on_demand": SavedOnDemand, "__saved_idx": saved_idx, "__group_idx": saved_tensors_idx}
    backward = _compile(src, f"<inliner backward of {bwd.__qualname__}>", namespace, "backward")
    backward.__qualname__ = bwd.__qualname__
    return forward, backward, (_jvp_method(jvp, fsaved_idx, record) if jvp is not None else None)
