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
- The carriers are built on the first call (``inliner.runtime._carriers``), from the
  ``Spec`` that holds what ``custom_vjp`` was given (``inliner.runtime._spec``).
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
import sys
import weakref
from collections.abc import Callable, Iterable, Mapping, Sequence
from typing import Any, NamedTuple, Protocol, cast

import torch
import torch.fx

# dynamo's frame hook (None where no torch.compile is running); every torch inliner
# supports (2.9 and later) has it
from torch._C._dynamo.eval_frame import get_eval_frame_callback, set_eval_frame
from torch.autograd import Function

from inliner.runtime import _members
from inliner.runtime._carriers import Carriers, _build_carriers, _decorated_forward, _fast_apply
from inliner.runtime._contract import check_attrs, check_indices
from inliner.runtime._fallback import _LEAF_TYPES as _LEAF_TYPES
from inliner.runtime._fallback import CompileFallbackWarning as CompileFallbackWarning
from inliner.runtime._fallback import _fallback_warned as _fallback_warned
from inliner.runtime._fallback import _first_object_type as _first_object_type
from inliner.runtime._fallback import _warn_eager_fallback, _warn_fallback_once
from inliner.runtime._generated import _signature_parts
from inliner.runtime._import_watch import _after_import
from inliner.runtime._record import Record
from inliner.runtime._replay import Decorated
from inliner.runtime._residuals import SavedOnDemand as SavedOnDemand  # what bwd may be handed
from inliner.runtime._spec import Spec

__all__ = ["CompileFallbackWarning", "FlatClass", "FlatFunction", "Record", "custom_vjp"]

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


class FlatFunction:
    """Documentation of what ``custom_vjp`` returns: a plain function with these attributes."""

    fwd: Callable  # the flat forward
    bwd: Callable  # the flat backward
    apply: Callable  # the function itself, so ``Name.apply(...)`` keeps working
    carriers: Callable[[], Carriers]  # the autograd.Function carriers, built on first use
    compile_kind: str  # "traceable", "opaque" or "side_effecting" (see custom_vjp)
    call: Callable  # the node dynamo's graph holds for a plain call (an island: itself)
    objects_call: Callable  # the node for a call with object arguments (set once dynamo loads)
    # the eager carrier's members under the original's names, for code that reads, wraps or
    # patches ``F.forward`` / ``F.backward``: an eager call runs what stands there (_members)
    forward: Callable
    backward: Callable


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


def custom_vjp(
    fwd: Callable,
    bwd: Callable,
    *,
    name: str,
    saved_for_backward_idx: Sequence[int] = (),
    saved_tensors_idx: int | None = None,
    ctx_attrs: Mapping[int, str] | None = None,
    non_differentiable_idx: Sequence[int] = (),
    dirty_idx: Sequence[int] = (),
    materialize_grads: bool = True,
    fill_defaults: bool = False,
    forward_decorators: Sequence[Callable] | Callable[[], Sequence[Callable]] = (),
    backward_decorators: Sequence[Callable] | Callable[[], Sequence[Callable]] = (),
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
    backward_kind: str | None = None,
    backward_reason: str | None = None,
    backward_nones: Sequence[int] | None = None,
    split_decorators: bool = False,
    record_read_only: bool = False,
    record_sets_only: bool = False,
    forward_writes_arguments: Sequence[int] = (),
) -> Callable:
    """Bind ``fwd(*inputs) -> (outputs, residuals)`` and ``bwd(residuals, *grads) -> grads``.

    Each keyword is a fact about the original Function, documented on the ``Spec`` field
    that keeps it (``inliner.runtime._spec``). Nothing is built here but the flat function
    (and the decorated trampolines, if the original had decorators): the carriers are made
    on its first call, so importing a module with many flattened Functions stays cheap.
    The indices are checked here, and against what fwd returns on its first call
    (``inliner.runtime._contract``): a mismatch raises an error naming the function.

    Under torch.compile (a factory making a Function inside the compiled call), dynamo
    never traces this: one graph break at the call, where the original's class statement
    breaks the graph too, and it runs with dynamo's frame hook off.
    """
    arguments = dict(locals())
    prior = set_eval_frame(None)
    try:
        return _bind(**arguments)
    finally:
        if prior is not None:
            set_eval_frame(prior)


# dynamo reads these two attributes of any function it is about to inline (a graph break)
custom_vjp._torchdynamo_disable = True  # type: ignore[attr-defined]
custom_vjp._torchdynamo_disable_msg = (  # type: ignore[attr-defined]
    "inliner: custom_vjp makes a flat callable here, inside the compiled region (a graph break at "
    "the call, as the original's class statement has)"
)


def _bind(backward_name: str, **fields: Any) -> Callable:
    """``custom_vjp``'s work: the spec, the flat callable, its registrations."""
    spec = _spec(**fields)
    spec = dataclasses.replace(spec, decorated=_decorations(spec, backward_name))
    made = _callables(spec)
    node = _graph_node(made.graph_call)
    _describe(spec, made, node)
    _register_with_dynamo(_DynamoEntry(spec, made.flat, node, made.public, made.untraced, made.dispatch))
    _register_with_thunder((made.flat, node, made.public), spec)
    return made.public


def _spec(
    fwd: Callable,
    bwd: Callable,
    name: str,
    saved_for_backward_idx: Sequence[int],
    saved_tensors_idx: int | None,
    ctx_attrs: Mapping[int, str] | None,
    non_differentiable_idx: Sequence[int],
    dirty_idx: Sequence[int],
    materialize_grads: bool,
    fill_defaults: bool,
    forward_decorators: Sequence[Callable] | Callable[[], Sequence[Callable]],
    backward_decorators: Sequence[Callable] | Callable[[], Sequence[Callable]],
    bwd_needs_input_grad: bool,
    bwd_reads_saved: bool,
    saved_on_demand: bool,
    generate_vmap_rule: bool,
    vmap: Callable | None,
    jvp: Callable | None,
    saved_for_forward_idx: Sequence[int],
    symbolic: Callable | None,
    ctx_record: bool,
    fwd_needs_input_grad: bool,
    compile_kind: str,
    compile_reason: str | None,
    backward_kind: str | None,
    backward_reason: str | None,
    backward_nones: Sequence[int] | None,
    split_decorators: bool,
    record_read_only: bool,
    record_sets_only: bool,
    forward_writes_arguments: Sequence[int],
) -> Spec:
    """The keywords ``custom_vjp`` was given, checked, as the ``Spec`` its carriers read."""
    # decorators may come as a function returning them (what the engine writes in a function)
    forward_decorators = forward_decorators() if callable(forward_decorators) else forward_decorators
    backward_decorators = backward_decorators() if callable(backward_decorators) else backward_decorators
    check_indices(
        name,
        saved_for_backward_idx=saved_for_backward_idx,
        saved_tensors_idx=saved_tensors_idx,
        non_differentiable_idx=non_differentiable_idx,
        dirty_idx=dirty_idx,
        saved_for_forward_idx=saved_for_forward_idx,
    )
    attrs = check_attrs(name, ctx_attrs or {}, saved_for_backward_idx, saved_tensors_idx, saved_for_forward_idx)
    if forward_decorators and fill_defaults:
        raise TypeError(
            f"custom_vjp {name}: a setup_context-style forward (fill_defaults=True) takes no ctx to decorate"
        )
    return Spec(
        fwd=fwd,
        bwd=bwd,
        name=name,
        module=getattr(fwd, "__module__", __name__),
        saved_idx=tuple(saved_for_backward_idx),
        saved_tensors_idx=saved_tensors_idx,
        attrs=attrs,
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
        backward_kind=_checked_compile_kind(backward_kind or compile_kind),
        backward_reason=backward_reason if backward_kind else compile_reason,
        backward_nones=None if backward_nones is None else frozenset(backward_nones),
        split_decorators=split_decorators,
        record_read_only=record_read_only,
        record_sets_only=record_sets_only,
        forward_writes_arguments=tuple(forward_writes_arguments),
    )


def _decorations(spec: Spec, backward_name: str) -> Decorated | None:
    """The original's decorators applied, once, to the trampolines every carrier shares
    (``inliner.runtime._replay``); None without decorators."""
    if not (spec.forward_decorators or spec.backward_decorators):
        return None
    params, call, defaults, _ = _signature_parts(spec.fwd)
    return Decorated(
        spec.fwd,
        (params, call, defaults),
        spec.name,
        spec.module,
        spec.forward_decorators,
        spec.backward_decorators,
        backward_name,
    )


class _Callables(NamedTuple):
    """The closures of one flat callable (see ``_callables``)."""

    flat: Callable  # the fast path, else ``dispatch``
    public: Callable  # what the user calls: ``flat``, behind input casting and an island if any
    carriers: Callable[[], Carriers]  # the carriers, built on the first call
    dispatch: Callable  # (args, kwargs): an fx node, or the call with no tracer checks
    untraced: Callable  # (args, kwargs) -> the graph carrier's result, no tracer checks
    graph_call: Callable  # (args, kwargs): what dynamo's graph node runs (the graph carrier)


def _callables(spec: Spec) -> _Callables:
    """The flat callable and what it calls, as closures made once: a call does no lookup
    but of locals (the fast path's types and checks are bound here, not read per call)."""
    name = spec.name
    built: list[Carriers] = []
    eager_apply: list[Callable] = []  # what the fast path calls, once built (the hot path)
    plain_types = _PLAIN_TYPES
    tensor_types = _TENSOR_TYPES
    is_wrapped = torch._C._functorch.is_functorch_wrapped_tensor
    functorch_active = torch._C._are_functorch_transforms_active
    not_objects = _NOT_OBJECTS
    frame_hook = get_eval_frame_callback
    own: dict = {}  # the public callable's attributes, once it is made
    graph_carrier: list[type[Function]] = []  # the eager carrier as dynamo's graph node runs it
    members: list[Callable] = []  # its F.forward and F.backward trampolines (_members)

    def carriers() -> Carriers:
        if not built:
            made = _build_carriers(spec)
            built.append(made)
            eager_apply.append(_fast_apply(made.eager, spec.fill_defaults))
        return built[0]

    def flat(*args: Any, **kwargs: Any) -> Any:
        # Fast path: plain tensors (no functorch wrapper, not even a dead one), scalars
        # and objects (a module, a dataclass, a function: what dispatch would pass to the
        # carrier's apply as they are), no keywords, no torch.func transform, and no
        # torch.compile frame hook (a call dynamo did not capture: dispatch then runs it
        # untraced, so that dynamo compiles none of the frames below it).
        if not kwargs:
            for arg in args:
                kind = type(arg)
                if kind in plain_types:
                    if kind in tensor_types and is_wrapped(arg):
                        break
                elif isinstance(arg, not_objects):
                    break
            else:
                if not functorch_active() and frame_hook() is None:
                    if not eager_apply:
                        carriers()
                    if own["forward"] is members[0] and own["backward"] is members[1]:
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

    def untraced(args: tuple, kwargs: dict, graph: bool = False) -> Any:
        if functorch_active():
            return carriers().functorch_apply(*args, **kwargs)
        eager = carriers().eager
        if _members.replaced(own, members):  # F.forward patched from outside
            eager = _members.with_replacements(eager, own, members)
            return (_graph_carrier(eager, spec.decorated) if graph else eager).apply(*args, **kwargs)
        if graph:
            if not graph_carrier:
                graph_carrier.append(_graph_carrier(eager, spec.decorated))
            eager = graph_carrier[0]
        return eager.apply(*args, **kwargs)

    def graph_call(args: tuple, kwargs: dict) -> Any:
        # dynamo's graph node: run at compile time by AOTAutograd (fake tensors), or at run
        # time by a backend without it; never by eager code
        if _find_proxy((args, kwargs)) is not None or functorch_active():
            return dispatch(args, kwargs)
        prior = set_eval_frame(None)
        try:
            return untraced(args, kwargs, graph=True)
        finally:
            if prior is not None:
                set_eval_frame(prior)

    public = _public(spec, flat)
    docs = {"forward": getattr(spec.fwd, "__doc__", None), "backward": getattr(spec.bwd, "__doc__", None)}
    members.extend(_members.trampolines(spec.name, spec.module, docs, carriers))
    own = public.__dict__
    own.update(zip(_members.MEMBERS, members))
    return _Callables(flat, public, carriers, dispatch, functools.partial(untraced, graph=True), graph_call)


def _public(spec: Spec, flat: Callable) -> Callable:
    """What the user calls: ``flat`` itself, or, for a ``custom_fwd(cast_inputs=...)``
    original, ``flat`` behind that decorator's input casting (see _with_input_casting);
    that, for a Function torch.compile must not trace, as an eager island."""
    cast = _cast_inputs_of(spec.forward_decorators)
    public = flat if cast is None else _with_input_casting(flat, *cast)
    if not spec.traceable:
        public = _eager_island(public, _island_message(spec))
    return public


def _describe(spec: Spec, made: _Callables, node: Callable) -> None:
    """Name the callables after the original, and give the public one what
    ``FlatFunction`` documents."""
    public = made.public
    for fn in {made.flat, public, node}:
        fn.__name__ = spec.name
        fn.__qualname__ = spec.name
        fn.__module__ = spec.module
        fn.__doc__ = getattr(spec.fwd, "__doc__", None)
    public.fwd = spec.fwd  # type: ignore[attr-defined]
    public.bwd = spec.bwd  # type: ignore[attr-defined]
    public.apply = public  # type: ignore[attr-defined]  # modules that still call Name.apply keep working
    public.carriers = made.carriers  # type: ignore[attr-defined]
    public.compile_kind = spec.compile_kind  # type: ignore[attr-defined]
    public.compile_reason = spec.compile_reason  # type: ignore[attr-defined]
    # the call node dynamo's graph holds (the island itself: dynamo never captures it)
    public.call = node if spec.traceable else public  # type: ignore[attr-defined]
    public.__mro_entries__ = _not_a_base(spec)  # type: ignore[attr-defined]


def _not_a_base(spec: Spec) -> Callable[[tuple], tuple]:
    """``class Sub(Name)`` in a module the rewrite did not see: Python asks a base that is
    no class for ``__mro_entries__`` (PEP 560); the answer says why, where Python alone
    would say ``function() argument 'code' must be code, not str``."""

    def refuse(bases: tuple) -> tuple:
        raise TypeError(
            f"a class derives from {spec.name}, which inliner flattened in module {spec.module}: "
            f"{spec.name} is no longer a torch.autograd.Function. Exclude {spec.module} from the "
            f"rewrite, or rewrite it together with the module that defines the subclass (the "
            f"command line keeps a base that another module of the tree derives from as a Function)."
        )

    return refuse


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


class _DynamoEntry:
    """What ``inliner.runtime._dynamo`` needs to present one flat callable to dynamo."""

    __slots__ = ("__weakref__", "dispatch", "flat", "node", "public", "spec", "untraced")

    def __init__(
        self, spec: Spec, flat: Callable, node: Callable, public: Callable, untraced: Callable, dispatch: Callable
    ) -> None:
        self.spec = spec
        self.flat = flat  # what the user's code calls (behind the island or input casting, if any)
        self.node = node  # the graph node of a traceable call
        self.public = public
        self.untraced = untraced  # (args, kwargs) -> the carrier's result, no tracer checks
        self.dispatch = dispatch


def _graph_node(graph_call: Callable) -> Callable:
    """A twin of ``flat`` for dynamo's graph, what it holds for a traceable call: dynamo
    replaces ``flat`` itself by a shim (``inliner.runtime._dynamo``) whose plain-argument
    calls end in this one node, which runs the graph carrier (``_graph_carrier``)."""

    def node(*args: Any, **kwargs: Any) -> Any:
        return graph_call(args, kwargs)

    return node


def _graph_carrier(eager: type[Function], decorated: Decorated | None) -> type[Function]:
    """``eager`` as dynamo's graph node runs it: a gradient backward gives for an input
    that needs none (a number, a module, a dataclass passed to forward) is dropped, as the
    compiled original drops it (``autograd_function_apply`` differentiates its tensor
    inputs alone); eager autograd raises on one given for a non-tensor, and a compiled
    call would raise while AOTAutograd traces the backward, at the forward call."""
    backward = eager.backward

    def graph_backward(ctx: Any, *grads: Any) -> Any:
        result = backward(ctx, *grads)
        needs = ctx.needs_input_grad
        if not isinstance(result, tuple):
            return result if needs and needs[0] else None
        return tuple(g if i >= len(needs) or needs[i] else None for i, g in enumerate(result))

    carrier = _members.carrier_with(eager, {"backward": staticmethod(graph_backward)})
    if decorated is not None:  # its backward trampoline tells the eager carrier's ctx by type
        decorated.eager_ctxs.add(carrier._backward_cls)
    return carrier


def _eager_island(target: Callable, message: str) -> Callable:
    """``target`` as an eager island: dynamo never traces it (a graph break at the call,
    or, under ``fullgraph=True``, an error with ``message``), and nothing it calls is
    traced either, as with ``torch.compiler.disable``. The original autograd.Function
    gets the same from dynamo when its bodies cannot be traced: its forward, its custom
    backward and their Python effects run on every call."""

    def island(*args: Any, **kwargs: Any) -> Any:
        prior = set_eval_frame(None)
        if prior is not None and island._inliner_fallback:  # type: ignore[attr-defined]
            _warn_fallback_once(target.__name__, island._inliner_fallback)  # type: ignore[attr-defined]
        try:
            return target(*args, **kwargs)
        finally:
            if prior is not None:
                set_eval_frame(prior)

    # dynamo reads these two attributes of any function it is about to inline
    island._torchdynamo_disable = True  # type: ignore[attr-defined]
    island._torchdynamo_disable_msg = message  # type: ignore[attr-defined]
    # why the split path could not take it, where it could have (set by _dynamo.register)
    island._inliner_fallback = ""  # type: ignore[attr-defined]
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
    kind, why = spec.compile_kind, spec.compile_reason
    if kind == "traceable" or (spec.backward_kind == "side_effecting" and kind == "opaque"):
        kind, why = spec.backward_kind, spec.backward_reason
    reason = f" ({why})" if why else ""
    return (
        f"inliner: {spec.name} runs eagerly under torch.compile, a graph break at the call, as the "
        f"original autograd.Function did: {_COMPILE_KINDS[kind]}{reason}. If its forward "
        "and backward are pure torch, mark it traceable with `# inliner: compile=traceable` on its "
        "class line"
    )


class _Pending(Protocol):
    """A public flat callable waiting for dynamo, its entry kept on it (a registry entry
    holds its public, so a weak set of publics is what lets an unused one go)."""

    _inliner_dynamo: _DynamoEntry


_pending_dynamo: weakref.WeakSet[_Pending] = weakref.WeakSet()


def _register_with_dynamo(entry: _DynamoEntry) -> None:
    """Tell dynamo how to see the call (``inliner.runtime._dynamo``): now if it is loaded, else
    when something (``torch.compile``) first imports it. Importing ``torch._dynamo``
    costs about two seconds, which code that never compiles must not pay."""
    dynamo = sys.modules.get("torch._dynamo")
    if dynamo is not None and hasattr(dynamo, "allow_in_graph"):
        from inliner.runtime import _dynamo

        _dynamo.never_compile(custom_vjp)
        _dynamo.register(entry)
        return
    pending = cast(_Pending, entry.public)
    pending._inliner_dynamo = entry
    _pending_dynamo.add(pending)
    _after_import("torch._dynamo", _flush_dynamo)


def _flush_dynamo(_dynamo_module: Any) -> None:
    from inliner.runtime import _dynamo

    _dynamo.never_compile(custom_vjp)
    for public in list(_pending_dynamo):
        _dynamo.register(public._inliner_dynamo)
        del public._inliner_dynamo
    _pending_dynamo.clear()


_pending_thunder: weakref.WeakKeyDictionary[Callable, Any] = weakref.WeakKeyDictionary()


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
