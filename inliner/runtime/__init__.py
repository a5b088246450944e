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
- Under ``thunder.jit`` no carrier is used: ``inliner.runtime._thunder`` (loaded when thunder
  is) gives each flat callable a thunder lookaside that traces ``fwd`` and ``bwd``
  directly, the way thunder handles the ``autograd_function_apply`` op.

What a tracer sees is the flat callable returned by ``custom_vjp``, with
``fwd``/``bwd`` bound in its closure and never passed as arguments: a leaf for
``torch.fx`` (proxy detection; objects fx cannot hold are bound into the node's
target), and for dynamo what ``inliner.runtime._dynamo`` (loaded with
``torch._dynamo``) makes of it by ``compile_kind``: one plain graph node
(``allow_in_graph``, behind a shim that carries object arguments), or an eager island
(a graph break at the call, as dynamo makes of an original it cannot trace). Plain
tensors and scalars take a fast path that skips every proxy check.

This module must not import libcst or black: rewritten code pays only for torch.
"""

from __future__ import annotations

import dataclasses
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

from inliner.runtime._contract import check_first_result, check_indices, first_call_checked
from inliner.runtime._outputs import _CtxStandIn, _flat_outputs, _repeats
from inliner.runtime._record import Record, bind, copy_with, replay, state_of
from inliner.runtime._replay import Decorated
from inliner.runtime._spec import Spec

try:  # dynamo's frame hook: None where no torch.compile is running
    from torch._C._dynamo.eval_frame import get_eval_frame_callback, set_eval_frame
except ImportError:  # pragma: no cover - a torch without dynamo

    def set_eval_frame(callback: Any) -> Any:
        return None

    def get_eval_frame_callback() -> Any:
        return None


__all__ = ["custom_vjp", "CompileFallbackWarning", "FlatClass", "FlatFunction", "Record"]

# Argument types that can be neither an fx proxy nor need a
# functorch-aware carrier by themselves: calls made only of these take the fast path.
_PLAIN_TYPES = frozenset(
    {torch.Tensor, torch.nn.Parameter, int, float, bool, str, type(None), torch.dtype, torch.device}
)


_TENSOR_TYPES = frozenset({torch.Tensor, torch.nn.Parameter})

# What is not an object the carrier can take as it is: tensor subclasses (fake,
# functional or functorch tensors), fx proxies, and containers (they may hold either:
# dispatch looks inside).
_NOT_OBJECTS = (torch.Tensor, torch.fx.Proxy, list, tuple, dict)

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


def _fx_call(tracer: Any, fn: Callable, args: tuple, kwargs: dict) -> Any:
    """``fn(*args, **kwargs)`` as one ``call_function`` node of an fx graph.

    fx can hold tensors' proxies, scalars and containers as node arguments, not objects
    such as a module or a function: those are bound into the node's target instead (a
    function calling ``fn`` with them; its ``inliner_flat`` names ``fn``)."""
    objects = {i: a for i, a in enumerate(args) if not _fx_argument(a)}
    named = {k: v for k, v in kwargs.items() if not _fx_argument(v)}
    if not objects and not named:
        return tracer.create_proxy("call_function", fn, args, kwargs)
    n = len(args)

    def bound(*rest: Any, **more: Any) -> Any:
        it = iter(rest)
        full = [objects[i] if i in objects else next(it) for i in range(n)]
        return fn(*full, **more, **named)

    bound.__name__ = bound.__qualname__ = fn.__name__
    bound.__module__ = fn.__module__
    bound.inliner_flat = fn  # type: ignore[attr-defined]
    rest = tuple(a for i, a in enumerate(args) if i not in objects)
    return tracer.create_proxy("call_function", bound, rest, {k: v for k, v in kwargs.items() if k not in named})


def _fx_argument(value: Any) -> bool:
    """Whether fx can hold ``value`` as a node argument."""
    if isinstance(value, (torch.fx.Proxy, *_LEAF_TYPES, slice, range)):
        return True
    if type(value) in (list, tuple) or (isinstance(value, tuple) and hasattr(value, "_fields")):
        return all(_fx_argument(v) for v in value)
    if type(value) is dict:
        return all(_fx_argument(v) for v in value.values())
    return dataclasses.is_dataclass(value) and not isinstance(value, type)


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


def _jvp_method(jvp: Callable, fsaved_idx: tuple[int, ...], record: bool = False) -> Callable:
    """``jvp(ctx, *tangents)``: in a jvp, ``ctx.saved_tensors`` are what forward saved for forward."""

    def method(ctx: Any, *tangents: Any) -> Any:
        residuals = list(ctx._inliner_plain)
        if fsaved_idx:
            saved = ctx.saved_tensors
            for k, i in enumerate(fsaved_idx):
                residuals[i] = saved[k]
        if record:
            bind(residuals[0], ctx)
        return jvp(tuple(residuals), *tangents)

    return method


class SavedOnDemand:
    """The residuals bwd gets when the original backward read ``ctx.saved_tensors`` only on
    some paths (after an early return, inside a branch) or more than once.

    Reading saved tensors is observable: it runs the version check, the saved-tensor unpack
    hooks and the "backward through the graph a second time" check. So the saved slots are
    read from ``ctx.saved_tensors`` at each access, which the flat bwd makes exactly where
    (and as often as) the original read them (``residuals[:k]``); the other slots are plain
    values. Indexing and slicing answer as the tuple ``fwd`` returned would.
    """

    __slots__ = ("_ctx", "_plain", "_saved_idx", "_group_idx")

    def __init__(self, ctx: Any, plain: Sequence[Any], saved_idx: tuple[int, ...], group_idx: int | None) -> None:
        self._ctx = ctx
        self._plain = tuple(plain)
        self._saved_idx = saved_idx
        self._group_idx = group_idx

    def __len__(self) -> int:
        return len(self._plain)

    def __iter__(self):
        return iter(self[:])

    def __getitem__(self, index: Any) -> Any:
        wanted = range(len(self._plain))[index]
        if isinstance(wanted, int):
            return self._values((wanted,))[0]
        return self._values(wanted)

    def _values(self, wanted: Sequence[int]) -> tuple:
        if not any(i in self._saved_idx or i == self._group_idx for i in wanted):
            return tuple(self._plain[i] for i in wanted)
        saved = self._ctx.saved_tensors  # one read, as one `ctx.saved_tensors` of the original
        out = []
        for i in wanted:
            if i in self._saved_idx:
                out.append(saved[self._saved_idx.index(i)])
            elif i == self._group_idx:
                out.append(tuple(saved[len(self._saved_idx) :]))
            else:
                out.append(self._plain[i])
        return tuple(out)


class FlatFunction:
    """Documentation of what ``custom_vjp`` returns: a plain function with these attributes."""

    fwd: Callable  # the flat forward
    bwd: Callable  # the flat backward
    apply: Callable  # the function itself, so ``Name.apply(...)`` keeps working
    carriers: Callable[[], "Carriers"]  # the autograd.Function carriers, built on first use
    compile_kind: str  # "traceable", "opaque" or "side_effecting" (see custom_vjp)
    call: Callable  # the node dynamo's graph holds for a plain call (an island: itself)
    objects_call: Callable  # the node for a call with object arguments (set once dynamo loads)


class FlatClass:
    """The base of a flattened Function that its module still uses as a class.

    When a Function's module reads class attributes (``F.scale``, ``F._helper(x)``),
    stores the class (``self.fn_cls = F``), decorates it or derives from it, the rewrite
    keeps a class of that name holding everything but the autograd members; its
    ``apply`` is the flat callable (``apply = staticmethod(custom_vjp(...))``). Such a
    class is not an ``autograd.Function``: a subclass written elsewhere, expecting one,
    would silently run this class's forward and backward whatever it overrides, so every
    subclass must define its own ``apply`` (the rewrite of a subclass in the same module
    does) and any other raises a ``TypeError`` where it is defined.
    """

    def __init_subclass__(cls, **kwargs: Any) -> None:
        super().__init_subclass__(**kwargs)
        if "apply" in cls.__dict__:
            return
        flat = next((b for b in cls.__mro__[1:] if "apply" in b.__dict__), cls.__mro__[1])
        raise TypeError(
            f"class {cls.__qualname__} derives from {flat.__qualname__}, which inliner flattened in "
            f"module {flat.__module__}: {flat.__qualname__} is no longer a torch.autograd.Function, "
            f"so {cls.__qualname__} would run its forward and backward whatever it overrides. "
            f"Exclude {flat.__module__} from the rewrite, or define {cls.__qualname__} in that module."
        )


def _unwrap_staticmethod(fn: Any) -> Any:
    """A class body's ``symbolic`` is the staticmethod object itself, not its function."""
    return fn.__func__ if isinstance(fn, staticmethod) else fn


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
    backward_name: str = "backward",
    bwd_needs_input_grad: bool = False,
    bwd_reads_saved: bool = True,
    saved_on_demand: bool = False,
    generate_vmap_rule: bool = False,
    vmap: Callable | None = None,
    jvp: Callable | None = None,
    saved_for_forward_idx: Sequence[int] = (),
    symbolic: Callable | None = None,
    ctx_record: bool = False,
    fwd_needs_input_grad: bool = False,
    compile_kind: str = "traceable",
    compile_reason: str | None = None,
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
      source order (``custom_fwd``, ``custom_bwd``, ``once_differentiable``, or any
      other), applied here, once, as the original's class body applied them
      (``inliner.runtime._replay``); a setup_context-style forward takes none. ``backward_name``
      is what the decorated backward was called (``vjp``), for decorators that read it.
    - ``bwd_needs_input_grad``: pass ``needs_input_grad=ctx.needs_input_grad`` to bwd.
    - ``jvp(residuals, *tangents)``: the forward-mode rule, if the original had one;
      ``saved_for_forward_idx`` are the residuals it sent through ``ctx.save_for_forward``.
    - ``bwd_reads_saved=False``: the original backward never read ``ctx.saved_tensors``,
      so neither does the carrier (reading runs the version check); those residual slots
      reach bwd as None.
    - ``saved_on_demand``: the original backward read ``ctx.saved_tensors`` only on some
      paths, after a return, or more than once; bwd reads the saved slots of its residuals
      where the original read them, and the carriers pass a ``SavedOnDemand`` that reads
      ``ctx.saved_tensors`` at each such access.
    - ``symbolic``: the original's ONNX ``symbolic(g, *inputs)``, put on every carrier,
      where the TorchScript-based ``torch.onnx.export`` looks for it.
    - ``ctx_record=True``: fwd's one residual is a ``Record`` (its ctx, made explicit);
      what fwd saved and marked on it is replayed on the real ctx, and bwd (and jvp)
      get it back bound to that ctx. The index and flag arguments above are then unused.
    - ``fwd_needs_input_grad``: fwd takes ``needs_input_grad`` (the apply slots' flags,
      as ``ctx.needs_input_grad`` gives them) as a keyword-only argument.
    - ``compile_kind``: how ``torch.compile`` may see the call (see inliner.runtime._dynamo).
      ``"traceable"`` (pure torch bodies): one graph node, compiled through.
      ``"opaque"`` (bodies fake tensors cannot run) and ``"side_effecting"`` (bodies
      whose Python effects must happen on every call): an eager island, as dynamo
      makes of the original (a graph break at the call); ``compile_reason`` says why,
      for the error ``fullgraph=True`` raises.

    Nothing is built here but the flat function (and the decorated trampolines, if the
    original had decorators): the carriers are made on its first call, so importing a
    module with many flattened Functions stays cheap.

    The indices are checked here, and against what fwd returns on its first call
    (``inliner.runtime._contract``): a mismatch raises an error naming the function.
    """
    check_indices(
        name,
        saved_for_backward_idx=saved_for_backward_idx,
        saved_tensors_idx=saved_tensors_idx,
        non_differentiable_idx=non_differentiable_idx,
        dirty_idx=dirty_idx,
        saved_for_forward_idx=saved_for_forward_idx,
    )
    if forward_decorators and fill_defaults:
        raise TypeError(f"custom_vjp {name}: a setup_context-style forward (fill_defaults=True) takes no ctx to decorate")
    spec = Spec(
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
        saved_on_demand=saved_on_demand,
        generate_vmap_rule=generate_vmap_rule,
        vmap=vmap,
        jvp=jvp,
        fsaved_idx=tuple(saved_for_forward_idx),
        symbolic=_unwrap_staticmethod(symbolic),
        record=ctx_record,
        fwd_needs_input_grad=fwd_needs_input_grad,
        compile_kind=_checked_compile_kind(compile_kind),
        compile_reason=compile_reason,
    )
    if forward_decorators or backward_decorators:
        params, call, defaults, _ = _signature_parts(fwd)
        spec.decorated = Decorated(
            fwd,
            (params, call, defaults),
            name,
            spec.module,
            spec.forward_decorators,
            spec.backward_decorators,
            backward_name,
        )
    built: list[Carriers] = []
    eager_apply: list[Callable] = []  # what the fast path calls, once built (the hot path)
    plain_types = _PLAIN_TYPES
    tensor_types = _TENSOR_TYPES
    is_wrapped = torch._C._functorch.is_functorch_wrapped_tensor
    functorch_active = torch._C._are_functorch_transforms_active
    not_objects = _NOT_OBJECTS
    frame_hook = get_eval_frame_callback

    def carriers() -> Carriers:
        if not built:
            made = _build_carriers(spec)
            built.append(made)
            eager_apply.append(_fast_apply(made.eager, spec.fill_defaults))
        return built[0]

    def flat(*args: Any, **kwargs: Any) -> Any:
        # Fast path: plain tensors (no functorch wrapper, not even a dead one), scalars
        # and objects (a module, a dataclass, a function: what dispatch would pass to the
        # carrier's apply as they are), no keywords, no torch.func transform, and, with
        # objects, no torch.compile frame hook (dispatch then runs the call untraced).
        if not kwargs:
            objects = False
            for arg in args:
                kind = type(arg)
                if kind in plain_types:
                    if kind in tensor_types and is_wrapped(arg):
                        break
                elif isinstance(arg, not_objects):
                    break
                else:
                    objects = True
            else:
                if not functorch_active() and not (objects and frame_hook() is not None):
                    if not eager_apply:
                        carriers()
                    return eager_apply[0](*args)
        return dispatch(args, kwargs)

    def dispatch(args: tuple, kwargs: dict) -> Any:
        # Under torch.compile this runs only where dynamo did not capture the call (a
        # graph break): nothing below it is traced, as with torch.compiler.disable.
        prior = set_eval_frame(None)
        try:
            if prior is not None:
                _warn_eager_fallback(name, args, kwargs)
            proxy = _find_proxy((args, kwargs))
            if proxy is not None:
                return _fx_call(proxy.tracer, public, args, kwargs)
            return untraced(args, kwargs)
        finally:
            if prior is not None:
                set_eval_frame(prior)

    def untraced(args: tuple, kwargs: dict) -> Any:
        if functorch_active():
            return carriers().functorch_apply(*args, **kwargs)
        return carriers().eager.apply(*args, **kwargs)

    # What the user calls: ``flat`` itself, or, for a ``custom_fwd(cast_inputs=...)``
    # original, ``flat`` behind that decorator's input casting (see _with_input_casting).
    cast = _cast_inputs_of(spec.forward_decorators)
    public = flat if cast is None else _with_input_casting(flat, *cast)
    # What dynamo puts in its graph for a traceable call (flat itself is replaced, for
    # dynamo, by a shim that calls it: see inliner.runtime._dynamo).
    node = _graph_node(flat)
    if spec.compile_kind != "traceable":
        public = _eager_island(public, _island_message(spec))
    for fn in {flat, public, node}:
        fn.__name__ = name
        fn.__qualname__ = name
        fn.__module__ = spec.module
        fn.__doc__ = getattr(fwd, "__doc__", None)
    public.fwd = fwd  # type: ignore[attr-defined]
    public.bwd = bwd  # type: ignore[attr-defined]
    public.apply = public  # type: ignore[attr-defined]  # modules that still call Name.apply keep working
    public.carriers = carriers  # type: ignore[attr-defined]
    public.compile_kind = spec.compile_kind  # type: ignore[attr-defined]
    public.compile_reason = spec.compile_reason  # type: ignore[attr-defined]
    # the call node dynamo's graph holds (the island itself: dynamo never captures it)
    public.call = node if spec.compile_kind == "traceable" else public  # type: ignore[attr-defined]
    _register_with_dynamo(_DynamoEntry(spec, flat, node, public, untraced, dispatch))
    _register_with_thunder((flat, node, public), spec)
    return public


def _cast_inputs_of(decorators: Sequence[Callable]) -> tuple[str, Any] | None:
    """``(device_type, dtype)`` of a ``torch.amp.custom_fwd(cast_inputs=dtype)`` decorator
    (``torch.cuda.amp.custom_fwd`` makes the same partial) that is the outermost one: only
    then is casting first what the original did (another decorator outside it would see
    the inputs before the cast)."""
    decorator = decorators[0] if decorators else None
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
    record = spec.record
    slot = threading.local()

    check = functools.partial(check_first_result, spec)
    decorated_fwd = _decorated_forward(spec, check)

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
        if record:
            replay(ctx, residuals[0])
        if not materialize_grads:
            ctx.set_materialize_grads(False)
        if dirty:
            ctx.mark_dirty(*[inputs[i] for i in dirty])
        if nondiff:
            ctx.mark_non_differentiable(*[flat_out[j] for j in nondiff])

    def backward(ctx: Any, *grads: Any) -> Any:
        if spec.saved_on_demand:
            on_demand = SavedOnDemand(ctx, ctx._inliner_plain, saved_idx, saved_tensors_idx)
            if bwd_needs_input_grad:
                return bwd(on_demand, *grads, needs_input_grad=ctx.needs_input_grad)
            return bwd(on_demand, *grads)
        residuals = list(ctx._inliner_plain)
        if reads_saved and (saved_idx or ctx._inliner_group):
            saved = ctx.saved_tensors
            for k, i in enumerate(saved_idx):
                residuals[i] = saved[k]
            if saved_tensors_idx is not None:
                residuals[saved_tensors_idx] = tuple(saved[len(saved_idx) :])
        if record:
            bind(residuals[0], ctx)
        if bwd_needs_input_grad:
            return bwd(tuple(residuals), *grads, needs_input_grad=ctx.needs_input_grad)
        return bwd(tuple(residuals), *grads)

    decorated_bwd = backward
    if spec.decorated is not None:
        spec.decorated.functorch_backward = backward
        decorated_bwd = spec.decorated.backward

    hidden = ("needs_input_grad",) if spec.fwd_needs_input_grad else ()
    if spec.decorated is not None and not spec.fill_defaults:
        # The decorators must see the inputs apply got, as in eager, not forward's defaults
        # filled in (keywords are bound to positions before this carrier is applied).
        # (The engine never combines replayed decorators with a ctx record: no hidden slots.)
        def forward(*args: Any) -> Any:
            return run(*args)

        forward.__qualname__ = fwd.__qualname__
    else:
        forward = _forward_with_signature(fwd, run, hidden)
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
        namespace["jvp"] = staticmethod(_jvp_method(spec.jvp, fsaved_idx, record))
    if spec.symbolic is not None:
        namespace["symbolic"] = staticmethod(spec.symbolic)
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
        if spec.fwd_needs_input_grad:  # what eager's ctx.needs_input_grad holds for these slots
            slot.needs_input_grad = tuple(isinstance(a, torch.Tensor) and a.requires_grad for a in args)
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
            saved_on_demand=spec.saved_on_demand,
            fsaved_idx=fsaved_idx,
            jvp=spec.jvp,
            check=check,
            record=record,
            fwd_needs_input_grad=spec.fwd_needs_input_grad,
        )
        if spec.decorated is not None:
            spec.decorated.eager_forward, eager_forward = eager_forward, spec.decorated.forward
            spec.decorated.eager_backward, eager_backward = eager_backward, spec.decorated.backward
        eager = type(
            name,
            (torch.autograd.Function,),
            {
                "forward": staticmethod(eager_forward),
                "backward": staticmethod(eager_backward),
                **({"jvp": staticmethod(eager_jvp)} if eager_jvp is not None else {}),
                **({"symbolic": staticmethod(spec.symbolic)} if spec.symbolic is not None else {}),
                "__module__": spec.module,
                "__qualname__": name,
            },
        )
    if spec.decorated is not None:
        spec.decorated.eager_ctx = eager._backward_cls
        if spec.fill_defaults:
            spec.decorated.eager_backward = backward
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


class _DynamoEntry:
    """What ``inliner.runtime._dynamo`` needs to present one flat callable to dynamo."""

    __slots__ = ("spec", "flat", "node", "public", "untraced", "dispatch", "__weakref__")

    def __init__(
        self, spec: Spec, flat: Callable, node: Callable, public: Callable, untraced: Callable, dispatch: Callable
    ) -> None:
        self.spec = spec
        self.flat = flat  # what the user's code calls (behind the island or input casting, if any)
        self.node = node  # the graph node of a traceable call
        self.public = public
        self.untraced = untraced  # (args, kwargs) -> the carrier's result, no tracer checks
        self.dispatch = dispatch


def _graph_node(flat: Callable) -> Callable:
    """A twin of ``flat`` for dynamo's graph: dynamo replaces ``flat`` itself by a shim
    (``inliner.runtime._dynamo``) whose plain-argument calls end in this one node."""

    def node(*args: Any, **kwargs: Any) -> Any:
        return flat(*args, **kwargs)

    return node


def _eager_island(target: Callable, message: str) -> Callable:
    """``target`` as an eager island: dynamo never traces it (a graph break at the call,
    or, under ``fullgraph=True``, an error with ``message``), and nothing it calls is
    traced either, as with ``torch.compiler.disable``. The original autograd.Function
    gets the same from dynamo when its bodies cannot be traced: its forward, its custom
    backward and their Python effects run on every call."""

    def island(*args: Any, **kwargs: Any) -> Any:
        prior = set_eval_frame(None)
        try:
            return target(*args, **kwargs)
        finally:
            if prior is not None:
                set_eval_frame(prior)

    # dynamo reads these two attributes of any function it is about to inline
    island._torchdynamo_disable = True  # type: ignore[attr-defined]
    island._torchdynamo_disable_msg = message  # type: ignore[attr-defined]
    return island


_COMPILE_KINDS = {
    "traceable": "",
    "opaque": "its bodies leave torch, so fake tensors cannot run them",
    "side_effecting": "its bodies have Python side effects that must happen on every call",
}


def _checked_compile_kind(kind: str) -> str:
    if kind not in _COMPILE_KINDS:
        raise ValueError(f"compile_kind must be one of {', '.join(map(repr, _COMPILE_KINDS))}, not {kind!r}")
    return kind


def _island_message(spec: Spec) -> str:
    """What ``torch.compile(fullgraph=True)`` says about an eager island: the Function,
    why, and how to override (dynamo's own hint below it names ``torch.compiler.disable``)."""
    reason = f" ({spec.compile_reason})" if spec.compile_reason else ""
    return (
        f"inliner: {spec.name} runs eagerly under torch.compile, a graph break at the call, as the "
        f"original autograd.Function did: {_COMPILE_KINDS[spec.compile_kind]}{reason}. If its forward "
        "and backward are pure torch, mark it traceable with `# inliner: compile=traceable` on its "
        "class line"
    )


class CompileFallbackWarning(UserWarning):
    """A flat callable ran eagerly inside a ``torch.compile`` region (a graph break at the call)."""


_fallback_warned: set[tuple[str, str]] = set()


def _warn_eager_fallback(name: str, args: tuple, kwargs: dict) -> None:
    """One warning per Function and argument type when dynamo could not carry an argument
    into its graph and ran the call eagerly instead (a graph break at the call)."""
    kind = _first_object_type(args, kwargs)
    if kind is None or (name, kind) in _fallback_warned:
        return
    _fallback_warned.add((name, kind))
    import warnings

    warnings.warn(
        f"inliner: {name} runs eagerly under torch.compile (a graph break at the call): "
        f"its argument of type {kind} could not be carried into the graph",
        CompileFallbackWarning,
        stacklevel=4,
    )


def _first_object_type(args: tuple, kwargs: dict) -> str | None:
    """The qualified name of the first argument that is not a tensor, a scalar, or a
    list/tuple/dict of those; None if there is none."""
    stack = list(reversed((*args, *kwargs.values())))
    while stack:
        value = stack.pop()
        kind = type(value)
        if kind in (list, tuple):
            stack.extend(reversed(value))
        elif kind is dict:
            stack.extend(reversed(list(value.values())))
        elif not isinstance(value, _LEAF_TYPES):
            return f"{kind.__module__}.{kind.__qualname__}"
    return None


_LEAF_TYPES = (torch.Tensor, int, float, bool, complex, str, bytes, type(None), torch.dtype, torch.device)

_pending_dynamo: "weakref.WeakSet[Callable]" = weakref.WeakSet()  # publics, with ``_inliner_dynamo``


def _register_with_dynamo(entry: _DynamoEntry) -> None:
    """Tell dynamo how to see the call (``inliner.runtime._dynamo``): now if it is loaded, else
    when something (``torch.compile``) first imports it. Importing ``torch._dynamo``
    costs about two seconds, which code that never compiles must not pay."""
    dynamo = sys.modules.get("torch._dynamo")
    if dynamo is not None and hasattr(dynamo, "allow_in_graph"):
        from inliner.runtime import _dynamo

        _dynamo.register(entry)
        return
    entry.public._inliner_dynamo = entry  # type: ignore[attr-defined]
    _pending_dynamo.add(entry.public)
    _after_import("torch._dynamo", _flush_dynamo)


def _flush_dynamo(_dynamo_module: Any) -> None:
    from inliner.runtime import _dynamo

    for public in list(_pending_dynamo):
        _dynamo.register(public._inliner_dynamo)
        del public._inliner_dynamo
    _pending_dynamo.clear()


_pending_thunder: "weakref.WeakKeyDictionary[Callable, Any]" = weakref.WeakKeyDictionary()


def _register_with_thunder(fns: tuple[Callable, ...], spec: Spec) -> None:
    """Give ``thunder.jit`` a lookaside for each of ``fns`` (``inliner.runtime._thunder``), now
    if thunder is loaded, else right after it is first imported."""
    if "thunder" in sys.modules:
        _thunder_register(fns, spec)
        return
    # keyed by the first (the flat callable); the others are kept weakly with it
    _pending_thunder[fns[0]] = (tuple(weakref.ref(fn) for fn in fns[1:]), spec)
    _after_import("thunder", _flush_thunder)


def _thunder_register(fns: tuple[Callable, ...], spec: Spec) -> None:
    try:
        from inliner.runtime import _thunder

        _thunder.register(fns, spec, _decorated_forward(spec))
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
    for fn, (others, spec) in list(_pending_thunder.items()):
        alive = tuple(f for f in (ref() for ref in others) if f is not None)
        _thunder_register((fn, *alive), spec)
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
