"""Carrier methods generated as source: straight-line code with ``fwd``'s parameter names.

torch 2.13 binds ``apply`` keywords by the names of forward's code, so a carrier's forward
must carry the original's parameters; and the eager carrier of a combined-style original
is what every eager call runs, so its ``forward(ctx, ...)`` and ``backward(ctx, *grads)``
are generated per original with no loops and no tests of flags that cannot change.
"""

from __future__ import annotations

import dataclasses
import functools
import inspect
from collections.abc import Callable
from typing import Any

from inliner.runtime._contract import first_call_checked
from inliner.runtime._record import replay
from inliner.runtime._residuals import SavedOnDemand, _jvp_method
from inliner.runtime._spec import Spec


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
    """The function ``name`` that ``src`` defines over ``namespace`` (``label`` names it in tracebacks)."""
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
    spec: Spec, check: Callable[[Any, tuple], None] | None = None
) -> tuple[Callable, Callable, Callable | None]:
    """Straight-line ``forward(ctx, <fwd's parameters>)`` and ``backward(ctx, *grads)``,
    and the jvp method if the original had one.

    They do exactly what the original's combined-style methods did with ctx, in the
    carrier model of docs/semantics.md §0: the ``saved_idx`` residuals (then the members of
    the ``saved_tensors_idx`` group) go through one ``save_for_backward``; the other
    residuals stay plain references on ctx; the flags are replayed on the real ctx.
    ``check`` looks at what fwd returns on the first call (then fwd is called directly).
    With ``record``, the one residual is a ``Record`` whose saves and marks are replayed
    on the real ctx instead (``inliner.runtime._record``).
    """
    layout = _Layout.of(spec)
    forward = _combined_forward(spec, layout, check)
    backward = _combined_backward(spec, layout)
    return forward, backward, (_jvp_method(spec.jvp, spec.fsaved_idx, spec.record) if spec.jvp is not None else None)


@dataclasses.dataclass(frozen=True)
class _Layout:
    """Where the residual slots stand. The emitter puts saved residuals first (one per
    tensor, or the one group), then the forward-saved ones, then plain ones: in that
    ``prefix`` order, backward rebuilds the tuple with one concatenation instead of a
    per-slot copy (this is the hot path)."""

    saved: int  # leading slots saved for backward (the group is one), -1 if they lead nothing
    forward_saved: int  # slots saved for forward
    prefix: bool  # saved, then forward-saved, then plain

    @classmethod
    def of(cls, spec: Spec) -> _Layout:
        saved_idx, saved_tensors_idx, fsaved_idx = spec.saved_idx, spec.saved_tensors_idx, spec.fsaved_idx
        k = len(saved_idx) if saved_tensors_idx is None else (1 if not saved_idx and saved_tensors_idx == 0 else -1)
        m = len(fsaved_idx)
        prefix = k >= 0 and saved_idx == tuple(range(len(saved_idx))) and fsaved_idx == tuple(range(k, k + m))
        return cls(k, m, prefix)


def _combined_forward(spec: Spec, layout: _Layout, check: Callable[[Any, tuple], None] | None) -> Callable:
    """``forward(ctx, <fwd's parameters>)``: fwd, then what the original did with ctx."""
    fwd = spec.fwd
    hidden = ("needs_input_grad",) if spec.fwd_needs_input_grad else ()
    params, call, defaults, positional = _signature_parts(fwd, hidden)
    ctx = "ctx"
    taken = set(inspect.signature(fwd).parameters)
    while ctx in taken:
        ctx = "_" + ctx
    if spec.fwd_needs_input_grad:
        call = [*call, f"needs_input_grad={ctx}.needs_input_grad"]
    body = [f"__out, __res = __fwd({', '.join(call)})", "if type(__res) is not tuple:", "    __res = tuple(__res)"]
    if spec.record:
        body.append(f"__replay({ctx}, __res[0])")
    body += _saving_lines(spec, layout, ctx)
    body += _flag_lines(spec, ctx, positional)
    body.append("return __out")
    src = f"def forward({', '.join([ctx] + params)}):\n" + "".join(f"    {line}\n" for line in body)
    namespace: dict[str, Any] = {"__defaults": defaults, "__fwd": fwd, "__replay": replay}
    if check is not None:
        namespace["__fwd"] = first_call_checked(fwd, check, functools.partial(namespace.__setitem__, "__fwd"))
    forward = _compile(src, f"<inliner forward of {fwd.__qualname__}>", namespace, "forward")
    forward.__qualname__ = fwd.__qualname__
    return forward


def _saving_lines(spec: Spec, layout: _Layout, ctx: str) -> list[str]:
    """forward's saves, and the residuals it keeps on ctx: the tail after the saved prefix,
    or every slot with the saved ones cleared (also what a jvp reads); with ``ctx_attrs``,
    those slots under the original's names and the unnamed plain ones as ``_inliner_rest``."""
    saved_idx, saved_tensors_idx, fsaved_idx = spec.saved_idx, spec.saved_tensors_idx, spec.fsaved_idx
    lines = []
    saved_exprs = [f"__res[{i}]" for i in saved_idx]
    if saved_tensors_idx is not None:
        saved_exprs.append(f"*__res[{saved_tensors_idx}]")
    cleared = list(saved_idx) + ([saved_tensors_idx] if saved_tensors_idx is not None else [])
    if saved_exprs:
        lines.append(f"{ctx}.save_for_backward({', '.join(saved_exprs)})")
    if fsaved_idx:
        lines.append(f"{ctx}.save_for_forward({', '.join(f'__res[{i}]' for i in fsaved_idx)})")
        cleared = cleared + list(fsaved_idx)
    head = layout.saved + layout.forward_saved
    if spec.record:  # backward gets the node, which replay gave the record's attributes
        return lines + ([f"{ctx}._inliner_plain = __res"] if spec.jvp is not None else [])
    if spec.attrs:
        lines.extend(f"{ctx}.{attr} = __res[{i}]" for i, attr in spec.attrs)
        rest, width = _unnamed_plain(spec)
        if rest:
            lines.append(f"{ctx}._inliner_rest = ({''.join(f'__res[{i}], ' for i in rest)}*__res[{width}:],)")
        else:  # what fwd may return past the slots the keywords name (none, as the engine emits)
            lines.append(f"{ctx}._inliner_rest = __res[{width}:]")
    elif layout.prefix:
        lines.append(f"{ctx}._inliner_tail = __res[{head}:]" if head else f"{ctx}._inliner_tail = __res")
    if (not layout.prefix and not spec.attrs) or spec.jvp is not None:
        if cleared:
            lines.append("__plain = list(__res)")
            lines.extend(f"__plain[{i}] = None" for i in cleared)
            lines.append(f"{ctx}._inliner_plain = __plain")
        else:
            lines.append(f"{ctx}._inliner_plain = __res")
    return lines


def _flag_lines(spec: Spec, ctx: str, positional: str) -> list[str]:
    """forward's replay of the original's flags on ctx: materialize_grads, mark_dirty,
    mark_non_differentiable (``positional`` spells forward's positional inputs)."""
    lines = []
    if not spec.materialize_grads:
        lines.append(f"{ctx}.set_materialize_grads(False)")
    if spec.dirty:
        lines.append(f"__inputs = {positional}")
        lines.append(f"{ctx}.mark_dirty({', '.join(f'__inputs[{i}]' for i in spec.dirty)})")
    if spec.nondiff:
        lines.append("__flat_out = __out if isinstance(__out, tuple) else (__out,)")
        lines.append(f"{ctx}.mark_non_differentiable({', '.join(f'__flat_out[{j}]' for j in spec.nondiff)})")
    return lines


def _combined_backward(spec: Spec, layout: _Layout) -> Callable:
    """``backward(ctx, *grads)``: bwd on the residuals read back from ctx."""
    bwd = spec.bwd
    lines = _backward_lines(spec, layout)
    src = "def backward(ctx, *grads):\n" + "".join(f"    {line}\n" for line in lines)
    namespace = {
        "__bwd": bwd,
        "__on_demand": SavedOnDemand,
        "__saved_idx": spec.saved_idx,
        "__group_idx": spec.saved_tensors_idx,
    }
    backward = _compile(src, f"<inliner backward of {bwd.__qualname__}>", namespace, "backward")
    backward.__qualname__ = bwd.__qualname__
    return backward


def _backward_lines(spec: Spec, layout: _Layout) -> list[str]:
    """backward's body, the cheapest read of the residuals their layout and the original's
    reads of ``ctx.saved_tensors`` allow: on demand, one concatenation, or a per-slot copy."""
    saved_idx, saved_tensors_idx = spec.saved_idx, spec.saved_tensors_idx
    k, m = layout.saved, layout.forward_saved
    extra = ", needs_input_grad=ctx.needs_input_grad" if spec.bwd_needs_input_grad else ""
    if spec.record:  # the node itself in the record's place: it holds what fwd set on the record
        return [f"return __bwd((ctx,), *grads{extra})"]
    if spec.attrs:
        return _named_backward_lines(spec, extra)
    if spec.saved_on_demand:
        plain = f"({'None, ' * (k + m)}) + ctx._inliner_tail" if layout.prefix else "ctx._inliner_plain"
        return [f"return __bwd(__on_demand(ctx, {plain}, __saved_idx, __group_idx), *grads{extra})"]
    if layout.prefix:
        if not k:
            head = []
        elif not spec.bwd_reads_saved:
            head = ["(" + "None, " * k + ")"]
        elif saved_tensors_idx is not None:
            head = ["(ctx.saved_tensors,)"]
        else:
            head = ["ctx.saved_tensors"]
        parts = [*head, *(["(" + "None, " * m + ")"] if m else []), "ctx._inliner_tail"]
        return [f"return __bwd({' + '.join(parts)}, *grads{extra})"]
    if (saved_idx or saved_tensors_idx is not None) and spec.bwd_reads_saved:
        lines = ["__res = list(ctx._inliner_plain)", "__saved = ctx.saved_tensors"]
        lines.extend(f"__res[{i}] = __saved[{k}]" for k, i in enumerate(saved_idx))
        if saved_tensors_idx is not None:
            lines.append(f"__res[{saved_tensors_idx}] = tuple(__saved[{len(saved_idx)}:])")
        lines.append(f"return __bwd(tuple(__res), *grads{extra})")
        return lines
    return [f"return __bwd(ctx._inliner_plain, *grads{extra})"]


def _unnamed_plain(spec: Spec) -> tuple[list[int], int]:
    """The residual slots forward keeps as ``_inliner_rest`` when some are node attributes:
    those neither saved (for backward or forward) nor named below ``width``, the slots the
    index keywords name (fwd may return more: they follow in ``_inliner_rest``)."""
    indices = [*spec.saved_idx, *spec.fsaved_idx, *(i for i, _ in spec.attrs)]
    if spec.saved_tensors_idx is not None:
        indices.append(spec.saved_tensors_idx)
    width = max(indices) + 1
    return [i for i in range(width) if i not in indices], width


def _named_backward_lines(spec: Spec, extra: str) -> list[str]:
    """backward's body when some residuals are node attributes: each read from the node
    under its name when backward runs (a write through ``grad_fn`` since forward is what
    backward sees, as in the original), the saved ones from ``ctx.saved_tensors`` as the
    original read them, the others from ``_inliner_rest``. Saved slots that lead the
    residuals in order are ``ctx.saved_tensors`` itself, concatenated (the hot path)."""
    rest, width = _unnamed_plain(spec)
    named = dict(spec.attrs)
    on_demand = spec.saved_on_demand
    reads_saved = spec.bwd_reads_saved and not on_demand and (spec.saved_idx or spec.saved_tensors_idx is not None)
    k = len(spec.saved_idx)
    leading = reads_saved and spec.saved_tensors_idx is None and spec.saved_idx == tuple(range(k))
    slots = []
    for i in range(k if leading else 0, width):
        if i in named:
            slots.append(f"ctx.{named[i]}")
        elif i in rest:
            slots.append(f"__rest[{rest.index(i)}]")
        elif reads_saved and i in spec.saved_idx:
            slots.append(f"__saved[{spec.saved_idx.index(i)}]")
        elif reads_saved and i == spec.saved_tensors_idx:
            slots.append(f"tuple(__saved[{len(spec.saved_idx)}:])")
        else:
            slots.append("None")  # saved for forward only, or a saved slot backward does not read
    lines = []
    if rest:
        lines.append("__rest = ctx._inliner_rest")
    if reads_saved and not leading:
        lines.append("__saved = ctx.saved_tensors")
    parts = ["ctx.saved_tensors"] if leading else []
    parts.append(f"({''.join(f'{slot}, ' for slot in slots)})")
    parts.append(f"__rest[{len(rest)}:]" if rest else "ctx._inliner_rest")
    residuals = " + ".join(parts)
    if on_demand:
        residuals = f"__on_demand(ctx, {residuals}, __saved_idx, __group_idx)"
    lines.append(f"return __bwd({residuals}, *grads{extra})")
    return lines
