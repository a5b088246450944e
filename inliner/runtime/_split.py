"""The *split* path: what dynamo traces in place of a flat callable whose forward it may
trace as plain Python but whose call it must not put in the graph whole.

Imported with ``inliner.runtime._dynamo`` (once ``torch._dynamo`` is). The shim dynamo
inlines in place of the flat callable runs

    with torch.no_grad():          # as autograd.Function.forward runs
        outs, residuals = fwd(*args)
    return attach(outs, tensor args, tensor residuals, number residuals, layout key)

- ``fwd`` is traced by dynamo like any user function: its side effects are tracked and
  replayed, numpy goes through dynamo's numpy tracing, objects stay Python values. What
  dynamo cannot trace breaks the graph at the call (dynamo restarts there), and the call
  then runs eagerly through the carriers, as the original did: an eager island.
- ``attach`` is a first-order ``torch.library.custom_op``: its forward clones the outputs
  (a custom op may not return an alias), its autograd formula is the custom backward.
  A traceable ``bwd`` is called directly there (AOTAutograd traces it, inductor fuses
  it); any other goes through a second op, ``call_bwd``, whose real body runs ``bwd``
  eagerly on every backward, so its effects happen on every call.
- Residuals that are not tensors or numbers (None, strings, dtypes, functions, modules,
  nested tuples' and dicts' shapes, a ctx record's attributes: ``_split_records``) are
  kept, at trace time, in a *layout* numbered by an ``assume_constant_result`` function
  (dynamo guards the objects in it by identity); the op carries only the number. An
  object fwd made in the call has no runtime value to keep there: the call breaks the
  graph (``_objects_check``).
- ``call_bwd``'s fake returns a tensor per tensor input, so its None gradients must be
  known statically: the engine emits ``backward_nones`` (positions whose every return is
  a literal None). Without it an opaque backward keeps the call an island.

- Where thunder is loaded, the shim calls ``attach`` through ``attach_as_tuple``, one
  graph node returning a tuple, which thunderfx hands to thunder: thunder's jit runs the
  op as a symbol whose grad rule is the custom backward (``_thunder_split``); AOTAutograd
  traces through it to the op, as for a direct call.

What this path does not carry is decided from the ``Spec`` where it can be
(``refusal``), else at trace time (an output that is an input, a tensor returned twice):
the call then breaks the graph and runs as an island, with one warning naming the
Function and why (``inliner.runtime.CompileFallbackWarning``).
"""

from __future__ import annotations

import copy
import functools
import hashlib
import itertools
import sys
import types
import weakref
from collections.abc import Callable, Sequence
from pathlib import Path
from typing import Any, NamedTuple

import torch
import torch._dynamo
from torch import Tensor
from torch._dynamo.comptime import comptime

from inliner.runtime import _split_records
from inliner.runtime._outputs import _CtxStandIn
from inliner.runtime._record import Record


class _Layout(NamedTuple):
    """What one traced call's backward needs besides tensors and numbers."""

    spec: Any
    residuals: Any  # the residuals' static layout (see _flatten_residuals)
    objects: tuple  # the residuals that are neither tensors nor numbers
    outputs: tuple[bool, ...]  # per output of fwd: a tensor?
    needs_input_grad: tuple[bool, ...]  # per argument, as ctx.needs_input_grad
    arguments: tuple[bool, ...]  # per argument: a tensor?
    containers: bool  # may the residuals hold a list or dict (rebuilt for each backward)?


_LAYOUTS: list[_Layout] = []
_LAYOUT_KEYS: dict[tuple, int] = {}
_owners = itertools.count()
_SPECS: weakref.WeakValueDictionary[int, Any] = weakref.WeakValueDictionary()


#: Whether dynamo reads the attributes of an object made in the compiled region
#: (``vars(record)``, a stand-in ctx's ``__dict__``): measured on torch 2.13, not on 2.9,
#: whose dynamo stops at them ("Failed to trace builtin operator tuple"). Versions between
#: were not measured and count as 2.9.
READS_OBJECT_ATTRIBUTES = tuple(int(p) for p in torch.__version__.split("+")[0].split(".")[:2]) >= (2, 13)


def refusal(spec: Any) -> str | None:
    """Which feature of ``spec``'s Function the split path does not carry (None: it
    carries them all)."""
    if not READS_OBJECT_ATTRIBUTES and (spec.record or spec.decorated is not None):
        what = "a ctx record" if spec.record else "its replayed decorators' stand-in ctx"
        return f"this torch's dynamo cannot read the attributes of {what} (torch 2.13 can)"
    if spec.dirty:
        return "its forward modifies an input in place (mark_dirty)"
    if not spec.materialize_grads:
        return "its backward takes unmaterialized (None) gradients (set_materialize_grads(False))"
    if spec.jvp is not None:
        return "it has a forward-mode rule (jvp)"
    if spec.record and spec.backward_kind == "side_effecting" and not (spec.record_read_only or spec.record_sets_only):
        return "its ctx is kept as a record its backward may write to (each compiled backward gets a new one)"
    if spec.decorated is not None and not spec.split_decorators:
        return "decorators are replayed around its forward or backward"
    if spec.fwd_needs_input_grad and spec.fill_defaults:
        return "its forward reads needs_input_grad with defaults filled in"
    return None


def split_shim(spec: Any, refuse: Callable[[str], Any]) -> Callable:
    """What dynamo inlines in place of ``spec``'s flat callable; ``refuse(reason)`` breaks
    the graph so that the call runs as an eager island."""
    owner = next(_owners)
    _SPECS[owner] = spec
    slot = _hold_fwd(owner, spec)
    decorated = spec.decorated is not None
    if decorated and spec.decorated.standin_backward is None:
        spec.decorated.standin_backward = _standin_backward(spec)
    wants_flags = spec.fwd_needs_input_grad
    nondiff = spec.nondiff  # the shim reads no Spec (dynamo cannot wrap one)
    check_objects = _objects_check(spec.name)

    def shim(*args: Any, **kwargs: Any) -> Any:
        if thunder_refuses_attach():
            refuse("thunder is loaded without inliner's registration of attach (its custom backward)")
        if kwargs:
            refuse("it is called with keyword arguments")
        flags = tuple(isinstance(a, Tensor) and a.requires_grad for a in args)
        fwd = getattr(_FWDS, slot)  # a global read, so that dynamo gives fwd a source
        ctx: tuple = (_CtxStandIn(),) if decorated else ()  # what the decorators see as ctx
        with torch.no_grad():
            if wants_flags:
                outs, residuals = fwd(*ctx, *args, needs_input_grad=flags)
            else:
                outs, residuals = fwd(*ctx, *args)
        records = [r for r in residuals if type(r) is Record]  # fwd's ctx record, if it has one
        if decorated:  # what they set on ctx (custom_fwd's autocast state) goes to backward
            residuals = (tuple(residuals), tuple(ctx[0].__dict__.items()))
        single = not isinstance(outs, tuple)
        flat_out = (outs,) if single else outs
        marked = nondiff
        for record in records:
            why = _split_records.refusal(record)
            if why is not None:
                refuse(why)
            marked = marked + _split_records.non_differentiable(record, flat_out)
        tensors = [o for o in flat_out if isinstance(o, Tensor)]
        ins = [a for a in args if isinstance(a, Tensor)]
        for k, out in enumerate(tensors):
            if any(out is a for a in ins) or any(out is other for other in tensors[:k]) or _views_input(out, ins):
                refuse("its forward returns an input, a view of one, or one tensor twice (the original aliases them)")
        saved: list = []
        numbers: list = []
        objects: list = []
        layout = _flatten_residuals(tuple(residuals), saved, numbers, objects)
        if objects:
            comptime(check_objects)  # reads the local ``objects``
        out_layout = tuple(isinstance(o, Tensor) for o in flat_out)
        arg_layout = tuple(isinstance(a, Tensor) for a in args)
        key = _layout_key(owner, layout, out_layout, flags, arg_layout, *objects)
        tag = _tag(owner)
        if thunder_takes_it():
            made = attach_as_tuple(tensors, ins, saved, numbers, key, tag)
        else:
            made = attach(tensors, ins, saved, numbers, key, tag)
        result = _place_outputs(flat_out, made, marked)
        return result[0] if single else result

    return shim


#: Each split Function's fwd, by slot name. The shim is a polyfill, which dynamo traces
#: without a source: fwd read from its closure would have none either, nor would what fwd
#: reads from its own closure, and dynamo refuses to call a class without one (a class
#: defined in the function that defines the Function, as tests and factories do). Read
#: as an attribute of this module-level namespace, fwd has a source, and so has its
#: closure; new slots add no guard on the namespace (no recompiles).
_FWDS = types.ModuleType(f"{__name__}.fwds")


def _hold_fwd(owner: int, spec: Any) -> str:
    """Put ``spec.fwd`` (behind the original's forward decorators, if it had any: the
    trampoline every carrier shares, ``inliner.runtime._replay``) in ``_FWDS`` for as
    long as ``spec`` lives; its slot name."""
    slot = f"fwd_{owner}"
    setattr(_FWDS, slot, spec.fwd if spec.decorated is None else spec.decorated.forward)
    weakref.finalize(spec, _FWDS.__dict__.pop, slot, None)
    return slot


_TAGS: dict[int, str] = {}


@torch._dynamo.assume_constant_result
def _tag(owner: int) -> str:
    """Run for real at trace time: ``owner``'s cache tag, computed at the first trace
    (not when the Function is defined: an import pays nothing for it)."""
    tag = _TAGS.get(owner)
    if tag is None:
        tag = _TAGS[owner] = cache_tag(_SPECS[owner])
    return tag


def cache_tag(spec: Any) -> str:
    """A constant argument of ``attach`` that changes with the code behind it: the files
    of fwd and bwd (the same-file helpers a traceable backward may call), their code,
    and this module. AOTAutograd's and inductor's on-disk caches key on dynamo's graph,
    where the backward is only this op: without the tag, a process would get the
    backward an earlier process traced from other code (a stale custom gradient). The
    same code gives the same tag in every process (a cache hit)."""
    digest = hashlib.sha256()
    for fn in (spec.fwd, spec.bwd):
        _hash_code(digest, fn.__code__)
    for name in sorted({spec.fwd.__code__.co_filename, spec.bwd.__code__.co_filename, __file__}):
        digest.update(_file_digest(name))
    return f"{spec.module}.{spec.name}:{digest.hexdigest()[:20]}"


def _hash_code(digest: Any, code: types.CodeType) -> None:
    """Feed ``digest`` what ``code`` does, deterministically (``marshal.dumps`` is not: its
    bytes depend on reference counts): its bytecode, names, flags and constants, nested
    code objects (inner functions, lambdas, comprehensions) recursively."""
    _hash_bytes(digest, code.co_code)
    for names in (code.co_names, code.co_varnames, code.co_freevars, code.co_cellvars):
        _hash_bytes(digest, "\0".join(names).encode())
    for text in (code.co_filename, getattr(code, "co_qualname", code.co_name)):
        _hash_bytes(digest, text.encode())
    counts = (code.co_argcount, code.co_posonlyargcount, code.co_kwonlyargcount, code.co_flags)
    _hash_bytes(digest, repr(counts).encode())
    _hash_constant(digest, code.co_consts)


def _hash_constant(digest: Any, value: Any) -> None:
    if isinstance(value, types.CodeType):
        _hash_bytes(digest, b"code")
        _hash_code(digest, value)
    elif type(value) is tuple or type(value) is frozenset:
        items = [_constant_digest(v) for v in value]
        _hash_bytes(digest, f"{type(value).__name__}:{len(items)}".encode())
        for item in items if type(value) is tuple else sorted(items):  # a set has no order
            digest.update(item)
    else:  # None, Ellipsis, numbers, strings, bytes: their repr says type and value
        _hash_bytes(digest, f"{type(value).__name__}:{value!r}".encode())


def _constant_digest(value: Any) -> bytes:
    digest = hashlib.sha256()
    _hash_constant(digest, value)
    return digest.digest()


def _hash_bytes(digest: Any, data: bytes) -> None:
    """``data`` with its length first, so that consecutive parts cannot run together."""
    digest.update(len(data).to_bytes(8, "little"))
    digest.update(data)


@functools.lru_cache(maxsize=256)
def _file_digest(name: str) -> bytes:
    try:
        return hashlib.sha256(Path(name).read_bytes()).digest()
    except OSError:  # code made by exec: its code objects are hashed
        return b""


#: Set once thunder is loaded and takes ``attach`` itself (``_thunder_split.register``).
_thunder_takes_attach: list[bool] = []


def thunder_takes_attach() -> None:
    """Record that thunder runs ``attach`` by its registered backward (``_thunder_split``)."""
    _thunder_takes_attach.append(True)


@torch._dynamo.assume_constant_result
def thunder_takes_it() -> bool:
    """Run at trace time: thunder is loaded and takes ``attach`` itself."""
    return bool(_thunder_takes_attach)


def attach_as_tuple(outs: list, ins: list, saved: list, numbers: list, key: int, tag: str) -> tuple:
    """``attach`` as one graph node returning a tuple (where thunder is loaded): dynamo
    reads an op's list result with ``getitem`` nodes, of which thunderfx's splitter cannot
    make a proxy (it sends them to inductor, which fails on a list input). Traced through
    by AOTAutograd; thunder's jit meets ``attach`` inside."""
    return tuple(attach(outs, ins, saved, numbers, key, tag))


attach_as_tuple.thunder_supported = True  # type: ignore[attr-defined]
torch._dynamo.allow_in_graph(attach_as_tuple)


@torch._dynamo.assume_constant_result
def thunder_refuses_attach() -> bool:
    """Run at trace time. Where thunder is loaded without ``attach``'s registration (its
    internals moved), thunderfx would meet the op with no rule of its own: the split path
    is not taken there (thunder.jit itself has its lookaside per flat callable,
    ``inliner.runtime._thunder``)."""
    return "thunder" in sys.modules and not _thunder_takes_attach


def _objects_check(name: str) -> Callable[[Any], None]:
    """What the shim runs at trace time (``comptime``) on the residuals that are neither
    tensors nor numbers: an object fwd made in this call (``Box(...)``, a closure) has no
    runtime value dynamo could hand the layout (it hands a bare instance, without the
    attributes fwd set), so the call breaks the graph and runs as an island. Objects that
    existed before the call (arguments, globals, what they hold) and constants pass."""

    def check(ctx: Any) -> None:
        listed = ctx.get_local("objects")._i_will_not_complain_if_bc_breaks_VariableTracker()
        made = [v for v in listed.items if v.source is None and not v.is_python_constant()]
        if made:
            from inliner.runtime._fallback import _warn_fallback_once, eager_message

            kind = made[0].python_type().__qualname__
            reason = f"its forward keeps an object it made ({kind}) for backward, which a compiled call cannot carry"
            _warn_fallback_once(name, reason)
            ctx.graph_break(eager_message(name, reason))

    return check


def _views_input(out: Tensor, ins: list) -> bool:
    """Whether ``out`` is a view of an input (or of what an input views): the original's
    output then shares its storage, where ``attach``'s copy would not."""
    base = out._base
    return base is not None and any(base is a or base is a._base for a in ins)


def _place_outputs(flat_out: tuple, made: Sequence, nondiff: tuple) -> tuple:
    """fwd's outputs with attach's clones in the tensor positions (detached where the
    original marked them non-differentiable)."""
    made_iter = iter(made)
    result = []
    for j, out in enumerate(flat_out):
        if isinstance(out, Tensor):
            clone = next(made_iter)
            result.append(clone.detach() if j in nondiff else clone)
        else:
            result.append(out)
    return tuple(result)


def _flatten_residuals(value: Any, saved: list, numbers: list, objects: list) -> Any:
    """The static layout of one residual (or the tuple of them); its tensors, numbers and
    other objects are appended to the lists the op and the layout key carry."""
    if isinstance(value, Tensor):
        saved.append(value)
        return "T"
    if isinstance(value, bool):
        numbers.append(value)
        return "b"
    if isinstance(value, (int, float, torch.SymInt, torch.SymFloat)):
        numbers.append(value)
        return "n"
    if isinstance(value, torch.Size):
        return ("size", tuple(_flatten_residuals(v, saved, numbers, objects) for v in value))
    if type(value) is tuple or type(value) is list:
        kind = "tuple" if type(value) is tuple else "list"
        return (kind, tuple(_flatten_residuals(v, saved, numbers, objects) for v in value))
    if type(value) is dict and all(type(k) is str or type(k) is int for k in value):
        return ("dict", tuple(value), tuple(_flatten_residuals(v, saved, numbers, objects) for v in value.values()))
    if type(value) is Record:
        return _split_records.flatten(value, lambda v: _flatten_residuals(v, saved, numbers, objects))
    objects.append(value)
    return ("o", len(objects) - 1)


@torch._dynamo.assume_constant_result
def _layout_key(owner: int, layout: Any, outputs: Any, flags: Any, arguments: Any, *objects: Any) -> int:
    """The number of one residual layout (run for real while dynamo traces: the objects
    are the real ones, which dynamo guards by identity)."""
    identity = (owner, layout, outputs, flags, arguments, tuple(id(o) for o in objects))
    key = _LAYOUT_KEYS.get(identity)
    if key is None or any(a is not b for a, b in zip(_LAYOUTS[key].objects, objects)):
        key = _LAYOUT_KEYS[identity] = len(_LAYOUTS)
        containers = _may_hold_containers(layout)
        _LAYOUTS.append(_Layout(_SPECS[owner], layout, tuple(objects), outputs, flags, arguments, containers))
    return key


def _may_hold_containers(layout: Any) -> bool:
    """Whether a residual layout has a list, a dict or a record in it."""
    if type(layout) is not tuple:
        return False
    if layout and layout[0] in ("list", "dict", "record"):
        return True
    return any(_may_hold_containers(part) for part in layout)


def _rebuild(layout: Any, saved: Any, numbers: Any, objects: tuple, flags: tuple[bool, ...]) -> Any:
    if layout == "T":
        return next(saved)
    if layout == "b":
        return bool(next(numbers))
    if layout == "n":
        return next(numbers)
    if layout[0] == "record":
        return _split_records.rebuild(layout, lambda part: _rebuild(part, saved, numbers, objects, flags), flags)
    if layout[0] == "dict":
        _, keys, parts = layout
        return {k: _rebuild(part, saved, numbers, objects, flags) for k, part in zip(keys, parts)}
    kind, inner = layout
    if kind == "o":
        return objects[inner]
    items = [_rebuild(part, saved, numbers, objects, flags) for part in inner]
    if kind == "size":
        return torch.Size(items)
    return tuple(items) if kind == "tuple" else items


def _residuals(key: int, saved: list, numbers: list) -> tuple[tuple, tuple]:
    """bwd's residuals, and what forward's decorators set on ctx (empty without them)."""
    entry = _LAYOUTS[key]
    spec = entry.spec
    rebuilt = _rebuild(entry.residuals, iter(saved), iter(numbers), entry.objects, entry.needs_input_grad)
    ctx_attrs: tuple = ()
    if spec.decorated is not None:
        rebuilt, ctx_attrs = rebuilt
    residuals = list(rebuilt)
    if not spec.bwd_reads_saved:  # the carriers hand such a bwd None in the saved slots
        for i in spec.saved_idx:
            residuals[i] = None
        if spec.saved_tensors_idx is not None:
            residuals[spec.saved_tensors_idx] = None
    return tuple(residuals), ctx_attrs


def _run_bwd(key: int, grads: list, saved: list, numbers: list, check_kept: bool = False) -> list:
    """``bwd``'s gradients for the call's tensor inputs, in order (None where it gave None);
    ``check_kept``: raise if it changed a list or dict among its residuals."""
    entry = _LAYOUTS[key]
    it = iter(grads)
    all_grads = [next(it) if is_tensor else None for is_tensor in entry.outputs]
    residuals, ctx_attrs = _residuals(key, saved, numbers)
    spec = entry.spec
    kept = _kept_containers(residuals, []) if check_kept and entry.containers else []
    result = _call_bwd_body(entry, residuals, ctx_attrs, all_grads)
    _check_kept(spec.name, kept)
    result = result if isinstance(result, tuple) else (result,)
    return [result[p] if p < len(result) else None for p, tensor in enumerate(entry.arguments) if tensor]


def _kept_containers(value: Any, found: list) -> list:
    """The lists and dicts among bwd's residuals (a record's attributes included), each
    with a shallow copy: the split path rebuilds them for each backward, so a change bwd
    makes to one would not reach the next backward or the object forward kept."""
    if type(value) is list or type(value) is dict:
        found.append((value, copy.copy(value)))
    children: Any = ()
    if type(value) is dict:
        children = value.values()
    elif type(value) is list or type(value) is tuple:
        children = value
    elif type(value) is Record:
        children = vars(value).values()
    for child in children:
        _kept_containers(child, found)
    return found


def _check_kept(name: str, kept: list) -> None:
    """The engine keeps a backward that changes its residuals eager; this catches a change
    it cannot see (a helper or an extension given the list), loudly rather than lost."""
    for now, before in kept:
        if not _unchanged(now, before):
            kind = type(now).__name__
            raise RuntimeError(
                f"inliner: {name}'s backward changed a {kind} its forward kept for it. Under torch.compile "
                f"that {kind} is rebuilt for each backward, so the change would be lost to the next backward "
                "and to whoever else holds it. Mark the Function `# inliner: compile=side_effecting` to keep "
                "it eager"
            )


def _unchanged(now: Any, before: Any) -> bool:
    """The same length and the same objects in it (a dict: under the same keys, in order)."""
    if len(now) != len(before):
        return False
    if type(now) is dict:
        return list(now) == list(before) and all(now[k] is before[k] for k in before)
    return all(a is b for a, b in zip(now, before))


def _call_bwd_body(entry: _Layout, residuals: tuple, ctx_attrs: tuple, all_grads: list) -> Any:
    spec = entry.spec
    if spec.decorated is not None:  # bwd behind the original's backward decorators
        ctx = _CtxStandIn()
        for name, value in ctx_attrs:
            setattr(ctx, name, value)
        ctx._inliner_residuals = residuals
        ctx._inliner_needs_input_grad = entry.needs_input_grad
        ctx.needs_input_grad = entry.needs_input_grad
        return spec.decorated.backward(ctx, *all_grads)
    if spec.bwd_needs_input_grad:
        return spec.bwd(residuals, *all_grads, needs_input_grad=entry.needs_input_grad)
    return spec.bwd(residuals, *all_grads)


def _standin_backward(spec: Any) -> Callable:
    """What the decorated backward trampoline runs for a stand-in ctx: bwd on the
    residuals the stand-in carries (as thunder's lookaside does)."""
    bwd = spec.bwd

    def backward(ctx: Any, *grads: Any) -> Any:
        if spec.bwd_needs_input_grad:
            return bwd(ctx._inliner_residuals, *grads, needs_input_grad=ctx._inliner_needs_input_grad)
        return bwd(ctx._inliner_residuals, *grads)

    return backward


# ----------------------------------------------------------------------- the first-order ops


@torch.library.custom_op("inliner::attach", mutates_args=())
def attach(
    outs: list[Tensor],
    ins: list[Tensor],
    saved: list[Tensor],
    numbers: list[int | float | bool],
    key: int,
    tag: str,
) -> list[Tensor]:
    """fwd's tensor outputs, as fresh tensors whose autograd formula is the custom backward."""
    return [o.clone() for o in outs]


@attach.register_fake
def _attach_fake(outs: list, ins: list, saved: list, numbers: list, key: int, tag: str) -> list:
    return [torch.empty_like(o) for o in outs]


@torch.library.custom_op("inliner::call_bwd", mutates_args=())
def call_bwd(
    grads: list[Tensor], ins: list[Tensor], saved: list[Tensor], numbers: list[int | float | bool], key: int
) -> list[Tensor]:
    """An opaque ``bwd``, run for real on every backward: a gradient per tensor input (an
    empty placeholder where nobody reads it: the caller gives None there)."""
    with _autograd_available():
        gradients = _run_bwd(key, grads, saved, numbers, check_kept=True)
    gradients = [g.detach() if isinstance(g, Tensor) else g for g in gradients]
    _check_nones(key, gradients)
    storages = {t.untyped_storage().data_ptr() for t in (*grads, *ins, *saved)}
    return [
        i.new_empty(0) if drop else _as_gradient(g, i, storages) for g, i, drop in zip(gradients, ins, _dropped(key))
    ]


_AUTOGRAD_KEYS = (
    torch._C.DispatchKey.AutogradFunctionality,
    torch._C.DispatchKey.AutogradOther,
    torch._C.DispatchKey.AutogradNestedTensor,
)


def _autograd_available() -> Any:
    """The dispatcher runs an op's kernel below autograd; the original's backward ran with
    autograd available, so that ``torch.enable_grad()`` and ``torch.autograd.grad`` inside
    it record and differentiate (checkpoint-style backwards that recompute forward)."""
    excluded = torch._C._dispatch_tls_local_exclude_set()
    for key in _AUTOGRAD_KEYS:
        excluded = excluded.remove(key)
    return torch._C._ForceDispatchKeyGuard(torch._C._dispatch_tls_local_include_set(), excluded)


def _dropped(key: int) -> list[bool]:
    """Per tensor input: whether its gradient is never read (a literal None in every
    return of bwd, or an input that does not require grad), known when tracing."""
    entry = _LAYOUTS[key]
    return [
        p in entry.spec.backward_nones or not entry.needs_input_grad[p]
        for p, tensor in enumerate(entry.arguments)
        if tensor
    ]


def _check_nones(key: int, gradients: list) -> None:
    """A None the engine did not see (not a literal None in every return of bwd), for an
    input that requires grad, cannot be given back as None by this op: say so, rather
    than hand autograd a zero gradient the original did not give."""
    entry = _LAYOUTS[key]
    positions = [p for p, tensor in enumerate(entry.arguments) if tensor]
    for p, grad in zip(positions, gradients):
        if grad is None and entry.needs_input_grad[p] and p not in entry.spec.backward_nones:
            raise RuntimeError(
                f"inliner: {entry.spec.name}'s backward gave None for input {p}, which requires grad, where "
                "the engine saw no literal None: under torch.compile its backward runs in an op that must "
                "return a tensor there. Mark the Function `# inliner: compile=side_effecting` to keep it eager"
            )


@call_bwd.register_fake
def _call_bwd_fake(grads: list, ins: list, saved: list, numbers: list, key: int) -> list:
    return [i.new_empty(0) if drop else torch.empty_like(i) for i, drop in zip(ins, _dropped(key))]


def _as_gradient(grad: Any, inp: Tensor, storages: set[int]) -> Tensor:
    """``grad`` as autograd would take it for ``inp``: summed to its shape where broadcast,
    in its dtype, laid out as the fake announces (``empty_like(inp)``: inductor checks
    a custom op's strides). A copy only where the layout differs or it shares storage
    with the op's inputs (an op may not return an alias)."""
    if grad.shape != inp.shape:
        grad = grad.sum_to_size(inp.shape)
    grad = grad.to(inp.dtype)
    if grad.stride() != inp.stride() or grad.untyped_storage().data_ptr() in storages:
        return torch.empty_like(inp).copy_(grad)
    return grad


def _setup_context(ctx: Any, inputs: tuple, output: Any) -> None:
    outs, ins, saved, numbers, key, _tag = inputs
    ctx.save_for_backward(*ins, *saved)
    ctx.n_ins, ctx.n_outs, ctx.n_saved, ctx.numbers, ctx.key = len(ins), len(outs), len(saved), numbers, key


def _backward(ctx: Any, grads: list) -> tuple:
    tensors = ctx.saved_tensors
    ins, saved = list(tensors[: ctx.n_ins]), list(tensors[ctx.n_ins :])
    entry = _LAYOUTS[ctx.key]
    spec = entry.spec
    if spec.backward_kind == "traceable":
        gradients = _run_bwd(ctx.key, list(grads), saved, ctx.numbers)
    else:
        gradients = call_bwd(list(grads), ins, saved, ctx.numbers, ctx.key)
        gradients = [None if drop else g for g, drop in zip(gradients, _dropped(ctx.key))]
    # one entry per input, in the inputs' structure (an empty list stays a list)
    return [None] * ctx.n_outs, gradients, [None] * ctx.n_saved, None if ctx.numbers else [], None, None


attach.register_autograd(_backward, setup_context=_setup_context)


def register_inductor_decomposition(_module: Any = None) -> None:
    """Inductor decomposes ``attach`` into clones (below autograd, so the custom backward
    stays): the forward is then one fused kernel instead of a Python call of the op.
    Inductor caches its table at its first compile: where that came first (a model
    compiled before the first flattened Function is defined), the cache is cleared."""
    from torch._inductor import decomposition

    decomposition.register_decomposition(torch.ops.inliner.attach.default)(_clones)
    clear = getattr(getattr(decomposition, "fast_random_decomps", None), "cache_clear", None)
    if clear is not None:
        clear()


def _clones(outs: list, ins: list, saved: list, numbers: list, key: int, tag: str) -> list:
    return [o.clone() for o in outs]
