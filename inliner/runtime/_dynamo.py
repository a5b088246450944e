"""What torch.compile (dynamo) sees of a flat callable, per ``compile_kind``.

Imported only once ``torch._dynamo`` is (``runtime._register_with_dynamo``).

- **traceable** (pure torch bodies): dynamo meets ``flat`` and inlines, in its place, a
  shim (``substitute_in_graph``) that it traces. Called with tensors, scalars and
  lists/tuples/dicts of those, the shim calls ``node``, a twin of ``flat`` registered
  with ``allow_in_graph``: the graph holds one plain call, AOTAutograd runs it on fake
  tensors and so traces the carrier's custom backward; no higher-order op.
- **object arguments** of a traceable call (a dataclass holding tensors, an
  ``nn.Module``, a function): the shim, still traced by dynamo, flattens every argument
  into leaves (tensors and scalars, read from the objects, so that dynamo makes them
  graph inputs and guards on them) and a static *plan* (types, field names, and the
  modules and functions themselves, which dynamo guards by identity). The graph holds
  one plain call ``Name(plan_key, *leaves)`` of ``objects_node``, which rebuilds the
  arguments from the leaves (dataclasses as new instances with the leaves as fields,
  modules as shallow copies whose parameters and buffers are the leaves, copied only
  where a leaf differs) and runs the call. A type no plan carries (any other object,
  a function that reads a tensor or a module from its closure or globals; on torch 2.9,
  whose ``assume_constant_result`` cannot be handed objects, modules and functions too)
  makes the shim break the graph (``torch._dynamo.graph_break``) with a message naming
  the Function and the type; the call then runs eagerly and warns once
  (``runtime.CompileFallbackWarning``).
- **opaque / side_effecting**: the user calls an eager island
  (``runtime._eager_island``); dynamo inlines, in its place, a shim that calls a function
  it refuses to inline (a graph break at the call, or the ``fullgraph`` error), except
  under strict ``torch.export``, which has no graph breaks: there the call is the node.

Frames of the runtime's own functions (``flat``, ``dispatch``, the island) are never
compiled by dynamo when they run eagerly after a graph break: their code is skipped,
and ``dispatch`` and the island turn dynamo's frame hook off for what they call.
"""

from __future__ import annotations

import copy
import dataclasses
import itertools
import types
import weakref
from collections.abc import Callable
from typing import Any

import torch
import torch._dynamo
from torch._dynamo.eval_frame import skip_code

from inliner.runtime import _allowed

_LEAF_TYPES = (
    torch.Tensor,
    int,
    float,
    bool,
    complex,
    str,
    bytes,
    type(None),
    torch.dtype,
    torch.device,
    torch.SymInt,
    torch.SymFloat,
    torch.SymBool,
)

#: How deep the shim looks into nested objects before giving up (a cycle, a huge tree).
_MAX_DEPTH = 8

try:  # the split path's ops (torch.library.custom_op with register_autograd)
    from inliner.runtime import _split
except Exception:  # a torch without them keeps the graph path and islands
    _split = None  # type: ignore[assignment]


def _decompose_attach_in_inductor() -> None:
    """Register inductor's decomposition of ``attach`` before inductor compiles anything."""
    import sys

    from inliner.runtime._import_watch import _after_import

    if _split is None:
        return
    if "torch._inductor.decomposition" in sys.modules:
        _split.register_inductor_decomposition()
    else:
        _after_import("torch._inductor.decomposition", _split.register_inductor_decomposition)


_decompose_attach_in_inductor()


def _register_attach_with_thunder(_thunder_module: Any = None) -> None:
    """Give thunder ``attach``'s backward (``_thunder_split``); a thunder whose internals
    moved keeps the split path off where it is loaded (``_split.thunder_refuses_attach``)."""
    try:
        from inliner.runtime import _thunder_split

        _thunder_split.register()
    except Exception:  # a thunder whose internals moved: the islands thunderfx had
        return


def _take_attach_to_thunder() -> None:
    """Register ``attach`` with thunder now if it is loaded, else right after it is imported."""
    import sys

    from inliner.runtime._import_watch import _after_import

    if _split is None:
        return
    if "thunder" in sys.modules:
        _register_attach_with_thunder()
    else:
        _after_import("thunder", _register_attach_with_thunder)


_take_attach_to_thunder()

_skipped_codes: set[types.CodeType] = set()
_flat_ids = itertools.count()


def compile_path(spec: Any) -> tuple[str, str]:
    """Which path dynamo takes for ``spec``'s flat callable, and why not the split path
    where that would have been the one (empty when it is not a fallback):

    - ``graph``: both bodies pure torch: one ``allow_in_graph`` node;
    - ``split``: dynamo traces fwd, a custom op carries the backward (``_split``);
    - ``island``: a graph break at the call, the call run eagerly.

    A forward whose effects are all writes into its arguments takes the split path where
    each is a list at the call, and the island elsewhere (``_argument_effects_shim``).
    """
    if spec.traceable:
        return "graph", ""
    if (spec.compile_kind == "side_effecting" and not spec.forward_writes_arguments) or _split is None:
        return "island", ""  # effects dynamo would guard and recompile on, or no split path here
    if spec.backward_kind != "traceable" and spec.backward_nones is None:
        return "island", ""  # the op running bwd must know statically where bwd gives None
    reason = _split.refusal(spec)
    return ("island", reason) if reason else ("split", "")


def register(entry: Any) -> None:
    """Present ``entry``'s flat callable to dynamo by its ``compile_path``."""
    _skip_frames(entry)
    torch._dynamo.allow_in_graph(entry.node)
    path, fallback = compile_path(entry.spec)
    # a record that may mark inputs dirty: the graph shim breaks the graph at every call
    entry.public.compile_path = "island" if path == "graph" and _may_mark_dirty(entry.spec) else path
    _allowed.watch(entry.public, entry.flat if path == "graph" else entry.public, entry.node)
    if path == "split":
        shim = _split_shim(entry)
        if entry.spec.forward_writes_arguments:
            island = _island_shim(entry.spec.name, entry.node, entry.public._torchdynamo_disable_msg)
            shim = _argument_effects_shim(entry.spec.forward_writes_arguments, shim, island)
        _substitute(entry.public, shim)
        return
    if path == "island":
        entry.public._inliner_fallback = fallback
        _substitute(entry.public, _island_shim(entry.spec.name, entry.node, entry.public._torchdynamo_disable_msg))
        return
    owner = next(_flat_ids)
    objects_node = _objects_node(entry.untraced)
    objects_node.__name__ = objects_node.__qualname__ = entry.spec.name
    objects_node.__module__ = entry.spec.module
    entry.public.objects_call = objects_node
    torch._dynamo.allow_in_graph(objects_node)
    split = _split_shim(entry) if _split is not None and _split.refusal(entry.spec) is None else None
    dirty = entry.spec.dirty if entry.spec.dirty or _may_mark_dirty(entry.spec) else None
    _substitute(entry.flat, _shim(entry.spec.name, owner, entry.node, objects_node, split, dirty))


def never_compile(fn: Callable) -> None:
    """Never compile ``fn``'s frame when it runs eagerly under torch.compile (after a graph break)."""
    if fn.__code__ not in _skipped_codes:
        _skipped_codes.add(fn.__code__)
        skip_code(fn.__code__)


def _skip_frames(entry: Any) -> None:
    """Never compile the runtime's own frames when they run eagerly under torch.compile
    (after a graph break at the call): ``flat``, ``dispatch`` and the island."""
    fns = [entry.flat, entry.dispatch]
    if getattr(entry.public, "_torchdynamo_disable", False):
        fns.append(entry.public)
    for fn in fns:
        code = fn.__code__
        if code not in _skipped_codes:
            _skipped_codes.add(code)
            skip_code(code)


def _substitute(flat: Callable, shim: Callable) -> None:
    """``substitute_in_graph(flat)(shim)``, minus the strong references it keeps to
    ``flat`` for ever (a Function made by a factory on every call would leak): dynamo
    finds the polyfill by ``id(flat)`` and reads it from ``flat.__torch_dynamo_polyfill__``;
    the ids go when ``flat`` does."""
    wrapped = torch._dynamo.substitute_in_graph(flat, skip_signature_check=True)(shim)
    try:
        from torch._dynamo.trace_rules import _polyfilled_function_ids, get_torch_obj_rule_map
        from torch._dynamo.variables import PolyfilledFunctionVariable
        from torch._dynamo.variables.builder import VariableBuilder

        rule_map = get_torch_obj_rule_map()
        handlers = PolyfilledFunctionVariable._get_polyfill_handlers()
        id_dispatch = VariableBuilder._id_dispatch()
        flat.__torch_dynamo_polyfill__ = shim  # type: ignore[attr-defined]
        for fn in (flat, wrapped):
            del rule_map[fn], handlers[fn]
        del id_dispatch[id(wrapped)]
        _polyfilled_function_ids.remove(id(wrapped))
    except Exception:  # internals moved: keep torch's own (strong) registration
        return
    flat_id = id(flat)

    def deregister() -> None:
        id_dispatch.pop(flat_id, None)
        _polyfilled_function_ids.remove(flat_id)

    weakref.finalize(flat, deregister)


# ----------------------------------------------------------------- the shims (traced by dynamo)


def _island_shim(name: str, node: Callable, message: str) -> Callable:
    """What dynamo traces in place of an eager island: under ``torch.export`` (strict),
    which has no graph breaks, the call becomes a graph node, run on fake tensors as the
    original's body is when exported (its Python effects happen once, at export time);
    under ``torch.compile``, a call of a function dynamo refuses to inline, with
    ``message``: a graph break at the call, after which the island runs eagerly."""

    def refused(*args: Any, **kwargs: Any) -> Any:
        raise AssertionError("dynamo never runs this: it breaks the graph before the call")

    refused.__name__ = refused.__qualname__ = name
    refused._torchdynamo_disable = True  # type: ignore[attr-defined]
    refused._torchdynamo_disable_msg = message  # type: ignore[attr-defined]

    def shim(*args: Any, **kwargs: Any) -> Any:
        # the flag torch.export sets (dynamo 2.9 folds torch.compiler.is_exporting() to True)
        if torch.compiler._is_exporting_flag:
            return node(*args, **kwargs)
        return refused(*args, **kwargs)

    return shim


def _argument_effects_shim(positions: tuple[int, ...], split: Callable, island: Callable) -> Callable:
    """A forward that writes into the arguments at ``positions``: dynamo guards a list its
    caller hands over, so the original recompiled on its every change and so would an
    island, which would add a graph break; the split path traces the writes as dynamo
    traced the original's. Any other object there (a dict, an object with ``append``) the
    island compiles once for, where the original recompiled: it stays an island. Dynamo
    reads the types while tracing, and guards them."""

    def shim(*args: Any, **kwargs: Any) -> Any:
        lists = not kwargs and all(i < len(args) and type(args[i]) is list for i in positions)
        if lists and not torch.compiler._is_exporting_flag:
            return split(*args)
        return island(*args, **kwargs)

    return shim


def _split_shim(entry: Any) -> Callable:
    """The split path's shim (``_split``), whose refusals at trace time break the graph
    at the call (the island then runs it) and warn once."""
    name = entry.spec.name

    def refuse(reason: str) -> None:
        torch._dynamo.graph_break(msg=_refusal_message(name, reason))

    split = _split.split_shim(entry.spec, refuse)
    if entry.spec.decorated is None:
        return split
    node = entry.node

    def decorated_shim(*args: Any, **kwargs: Any) -> Any:
        # Under strict torch.export a decorated Function is the graph node it was as an
        # island (rewritten code from before the split path carried decorators exports so).
        if torch.compiler._is_exporting_flag:
            return node(*args, **kwargs)
        return split(*args, **kwargs)

    return decorated_shim


@torch._dynamo.assume_constant_result
def _refusal_message(name: str, reason: str) -> str:
    """Run for real at trace time: the one warning, and the graph break's message."""
    from inliner.runtime._fallback import _warn_fallback_once, eager_message

    _warn_fallback_once(name, reason)
    return eager_message(name, reason)


def _shim(
    name: str, owner: int, node: Callable, objects_node: Callable, split: Callable | None, dirty: tuple | None
) -> Callable:
    """What dynamo traces in place of a traceable flat callable; where no plan carries
    its object arguments into one node, the split path's shim (``split``) if it can take
    the Function (dynamo then traces fwd with the objects as Python values), else a graph
    break at the call. ``dirty``: the inputs a Function marks dirty (``()``: a record
    that may, which ones unknown), see ``_dirty_call``."""

    def shim(*args: Any, **kwargs: Any) -> Any:
        plain = _all_plain(args) and _all_plain(kwargs.values())
        if dirty is not None and not torch.compiler._is_exporting_flag:  # export: one node, as before
            why = _dirty_refusal(dirty, args, kwargs) if plain else "it marks an input dirty and takes objects"
            if why is not None:
                torch._dynamo.graph_break(msg=_refusal_message(name, why))
            return _dirty_call(node, dirty, args)
        if plain:
            return node(*args, **kwargs)
        leaves: list = []
        objects: list = []
        unsupported: list = []
        arg_specs = tuple(_flatten(a, leaves, objects, unsupported, 0) for a in args)
        kw_specs = tuple((k, _flatten(v, leaves, objects, unsupported, 0)) for k, v in kwargs.items())
        if unsupported:
            if split is not None and not _split.thunder_refuses_attach():
                return split(*args, **kwargs)
            torch._dynamo.graph_break(msg=_fallback_message(name, unsupported[0]))
        key = _plan_key(owner, (arg_specs, kw_specs), *objects)
        if key < 0:
            if split is not None and not _split.thunder_refuses_attach():
                return split(*args, **kwargs)
            torch._dynamo.graph_break(msg=_fallback_message(name, _PLAN_REFUSALS[-key - 1]))
        return objects_node(key, *leaves)

    return shim


# ------------------------------------------------------------------ mark_dirty on the graph path


def _may_mark_dirty(spec: Any) -> bool:
    """A ctx record whose forward names ``mark_dirty``: which inputs it dirties is known
    only once it has run."""
    return spec.record and _names(spec.fwd.__code__, "mark_dirty")


def _names(code: types.CodeType, name: str) -> bool:
    return name in code.co_names or any(
        isinstance(const, types.CodeType) and _names(const, name) for const in code.co_consts
    )


def _dirty_refusal(dirty: tuple[int, ...], args: tuple, kwargs: dict) -> str | None:
    """Why the graph node cannot take a call of a Function that marks inputs dirty (traced
    by dynamo; see ``_dirty_call``): None where it can."""
    if not dirty:
        return "its forward may modify inputs in place (mark_dirty on a ctx record), which torch.compile differentiates wrongly"
    if kwargs or max(dirty) >= len(args):
        return "it marks an input dirty and is called with keywords"
    for i in dirty:
        if isinstance(args[i], torch.Tensor) and any(_shares_base(args[i], a) for j, a in enumerate(args) if j != i):
            return "an input it marks dirty is also passed as another argument"
    return None


def _dirty_call(node: Callable, dirty: tuple[int, ...], args: tuple) -> Any:
    """The graph node's call for a Function that marks inputs dirty, as dynamo traces it.

    A ``mark_dirty`` input of the compiled region is an input mutation to AOTAutograd, made
    under ``no_grad`` (forward's grad mode), so AOTAutograd hides it from autograd: the input
    keeps its old history, and its gradient, through the output or the input itself, skips
    the custom backward (torch 2.13; the original, through the higher-order op, loses it
    too). So the node dirties a clone, and the input takes the clone's value by a ``copy_``
    that autograd records: its gradient then flows through the custom backward into its old
    history, as eager's ``mark_dirty`` rebases it. The outputs are the node's own (under
    torch.compile not the input object itself, as for the original). ``_dirty_refusal``
    says where this cannot be done.
    """
    values = list(args)
    originals = {}
    for i in dirty:
        if isinstance(values[i], torch.Tensor):
            originals[i] = values[i]
            values[i] = values[i].clone()
    outputs = node(*values)
    for i, value in originals.items():
        value.copy_(values[i])
    return outputs


def _shares_base(tensor: torch.Tensor, other: Any) -> bool:
    if not isinstance(other, torch.Tensor):
        return False
    base = tensor if tensor._base is None else tensor._base
    return other is tensor or other is base or other._base is base


def _all_plain(values: Any) -> bool:
    for value in values:
        if isinstance(value, _LEAF_TYPES):
            continue
        if type(value) in (list, tuple):
            if not _all_plain(value):
                return False
        elif type(value) is dict:
            if not _all_plain(value.values()):
                return False
        else:
            return False
    return True


def _flatten(value: Any, leaves: list, objects: list, unsupported: list, depth: int) -> Any:
    """The static spec of ``value`` (constants only); its leaves and objects are appended."""
    if isinstance(value, _LEAF_TYPES):
        leaves.append(value)
        return None
    kind, names = _kind_of(type(value))
    if depth >= _MAX_DEPTH:
        kind = "unsupported"
    if kind in ("list", "tuple", "namedtuple"):
        return (kind, type(value), tuple(_flatten(v, leaves, objects, unsupported, depth + 1) for v in value))
    if kind == "dict":
        keys = tuple(value.keys())
        return (kind, keys, tuple(_flatten(value[k], leaves, objects, unsupported, depth + 1) for k in keys))
    if kind == "dataclass":
        fields = tuple(_flatten(getattr(value, n), leaves, objects, unsupported, depth + 1) for n in names)
        return (kind, type(value), names, fields)
    if kind == "module":
        tensor_names, scalar_names = _module_layout(value)
        leaves.extend(_get_dotted(value, n) for n in tensor_names)
        # read only so that dynamo guards on them (train() / eval() must recompile)
        leaves.extend(_get_dotted(value, n) for n in scalar_names)
        objects.append(value)
        return (kind, len(objects) - 1, tensor_names, len(scalar_names))
    if kind == "object":
        objects.append(value)
        return (kind, len(objects) - 1)
    unsupported.append(type(value))
    return None


def _get_dotted(obj: Any, name: str) -> Any:
    for part in name.split("."):
        obj = getattr(obj, part)
    return obj


# ------------------------------------------------------------ run for real while dynamo traces


@torch._dynamo.assume_constant_result
def _kind_of(cls: type) -> tuple[str, tuple[str, ...]]:
    """How the shim takes apart an instance of ``cls``."""
    if cls in (list, tuple, dict):
        return cls.__name__, ()
    if issubclass(cls, tuple) and hasattr(cls, "_fields"):
        return "namedtuple", ()
    if dataclasses.is_dataclass(cls):
        return "dataclass", tuple(f.name for f in dataclasses.fields(cls))
    if issubclass(cls, torch.nn.Module):
        return ("module" if _HANDS_OVER_OBJECTS else "unsupported"), ()
    if cls in (types.FunctionType, types.BuiltinFunctionType):
        return ("object" if _HANDS_OVER_OBJECTS else "unsupported"), ()
    return "unsupported", ()


def _hands_over_objects() -> bool:
    """Whether this dynamo hands a module or function the shim passes to an
    ``assume_constant_result`` function over as the real object (torch 2.13: yes; 2.9
    raises for modules and for functions made inside the region, so it gets neither)."""
    import inspect

    from torch._dynamo.variables import functions

    try:
        source = inspect.getsource(functions.invoke_and_store_as_constant)
    except (AttributeError, OSError, TypeError):
        return False
    return "UserDefinedObjectVariable" in source


_HANDS_OVER_OBJECTS = _hands_over_objects()


@torch._dynamo.assume_constant_result
def _module_layout(module: torch.nn.Module) -> tuple[tuple[str, ...], tuple[str, ...]]:
    """Dotted names of ``module``'s tensors (parameters, buffers, plain tensor attributes)
    and of its scalar attributes (``training``, sizes, flags), submodules included."""
    tensors: list[str] = []
    scalars: list[str] = []
    for prefix, sub in module.named_modules(remove_duplicate=False):
        dot = prefix + "." if prefix else ""
        tensors.extend(dot + n for n, _ in sub.named_parameters(recurse=False, remove_duplicate=False))
        tensors.extend(dot + n for n, _ in sub.named_buffers(recurse=False, remove_duplicate=False))
        for n, v in vars(sub).items():
            if isinstance(v, torch.Tensor):
                tensors.append(dot + n)
            elif isinstance(v, _LEAF_TYPES):
                scalars.append(dot + n)
    return tuple(tensors), tuple(scalars)


@torch._dynamo.assume_constant_result
def _fallback_message(name: str, cls: type) -> str:
    from inliner.runtime._fallback import eager_message

    what = cls if isinstance(cls, str) else f"an argument of type {cls.__module__}.{cls.__qualname__}"
    return eager_message(name, f"no mechanism carries {what} into the graph")


#: Per plan key: (spec, objects): the modules (weakly) and functions of one distinct
#: compiled plan.
_PLANS: list[tuple[Any, tuple]] = []
_PLAN_KEYS: dict[tuple, int] = {}
#: Why ``_plan_key`` refused (key ``-1 - i``).
_PLAN_REFUSALS = (
    "a function that reads a tensor or a module from its closure or its globals",
    "a module made inside the compiled region",
)


@torch._dynamo.assume_constant_result
def _plan_key(owner: int, spec: Any, *objects: Any) -> int:
    """The key of the plan that rebuilds a call's arguments (``owner`` numbers the flat
    callable): ``objects`` are the real modules and functions, which dynamo guards by
    identity; negative if no plan can carry them."""
    for obj in objects:
        if isinstance(obj, types.FunctionType) and _closes_over_state(obj):
            return -1
        if isinstance(obj, torch.nn.Module) and "_parameters" not in vars(obj):
            return -2
    identity = (owner, spec, tuple(id(o) for o in objects))
    key = _PLAN_KEYS.get(identity)
    if key is None or any(_deref(ref) is not obj for ref, obj in zip(_PLANS[key][1], objects)):
        key = _PLAN_KEYS[identity] = len(_PLANS)
        _PLANS.append((spec, tuple(_weak(o) for o in objects)))
    return key


def _weak(obj: Any) -> Any:
    """Modules weakly (their tensors must not outlive them); functions strongly (dynamo
    may hand over one it made while tracing, which nothing else keeps)."""
    return weakref.ref(obj) if isinstance(obj, torch.nn.Module) else obj


def _deref(ref: Any) -> Any:
    return ref() if isinstance(ref, weakref.ref) else ref


def _closes_over_state(fn: types.FunctionType) -> bool:
    """A function that reads a tensor or a module from its closure or its module's
    globals: AOTAutograd would meet the real tensor while it runs on fake ones (and a
    graph holding it as a constant would not see it rebound)."""
    values = [cell.cell_contents for cell in fn.__closure__ or () if _cell_is_full(cell)]
    values += [fn.__globals__[n] for n in fn.__code__.co_names if n in fn.__globals__]
    return any(isinstance(v, (torch.Tensor, torch.nn.Module)) for v in values)


def _cell_is_full(cell: Any) -> bool:
    try:
        cell.cell_contents  # noqa: B018 (reading an empty cell raises ValueError)
    except ValueError:
        return False
    return True


# ------------------------------------------------------------------ the graph node (run by AOT)


def _objects_node(untraced: Callable) -> Callable:
    def objects_node(key: int, *leaves: Any) -> Any:
        (arg_specs, kw_specs), refs = _PLANS[key]
        objects = tuple(_deref(ref) for ref in refs)
        values = iter(leaves)
        args = tuple(_build(s, values, objects) for s in arg_specs)
        kwargs = {k: _build(s, values, objects) for k, s in kw_specs}
        return untraced(args, kwargs)

    return objects_node


def _build(spec: Any, leaves: Any, objects: tuple) -> Any:
    """The argument ``spec`` describes, with the next leaves in place of its tensors and scalars."""
    if spec is None:
        return next(leaves)
    kind = spec[0]
    if kind in ("list", "tuple", "namedtuple"):
        items = [_build(s, leaves, objects) for s in spec[2]]
        return list(items) if kind == "list" else tuple(items) if kind == "tuple" else spec[1](*items)
    if kind == "dict":
        return {k: _build(s, leaves, objects) for k, s in zip(spec[1], spec[2])}
    if kind == "dataclass":
        cls, names, fields = spec[1], spec[2], spec[3]
        obj = cls.__new__(cls)
        for n, s in zip(names, fields):
            object.__setattr__(obj, n, _build(s, leaves, objects))
        return obj
    if kind == "module":
        module, names, n_flags = objects[spec[1]], spec[2], spec[3]
        tensors = dict(zip(names, itertools.islice(leaves, len(names))))
        for _ in itertools.islice(leaves, n_flags):  # read only for dynamo's guards
            pass
        return _with_tensors(module, tensors)
    return objects[spec[1]]


def _with_tensors(module: torch.nn.Module, tensors: dict[str, Any]) -> torch.nn.Module:
    """``module`` with the given parameters and buffers (by dotted name): itself where
    they are its own, else a shallow copy (and copies of the submodules on the way).
    The module itself is never modified, and what forward keeps of it for backward
    (the copy) still holds the tensors AOTAutograd traces."""
    changed: dict[str, dict[str, Any]] = {}
    own: dict[str, Any] = {}
    for name, tensor in tensors.items():
        head, _, rest = name.partition(".")
        if rest:
            changed.setdefault(head, {})[rest] = tensor
        elif _own_tensor(module, head) is not tensor:
            own[head] = tensor
    children = {}
    for head, sub in changed.items():
        child = module._modules[head]
        assert child is not None  # the dotted names come from named_modules(), which skips None entries
        new_child = _with_tensors(child, sub)
        if new_child is not child:
            children[head] = new_child
    if not own and not children:
        return module
    new = copy.copy(module)
    state = new.__dict__
    for slot in ("_parameters", "_buffers", "_modules"):
        state[slot] = dict(state[slot])
    for name, tensor in own.items():
        if name in module._parameters:
            state["_parameters"][name] = tensor
        elif name in module._buffers:
            state["_buffers"][name] = tensor
        else:  # a plain tensor attribute
            state[name] = tensor
    state["_modules"].update(children)
    return new


def _own_tensor(module: torch.nn.Module, name: str) -> Any:
    if name in module._parameters:
        return module._parameters[name]
    if name in module._buffers:
        return module._buffers[name]
    return vars(module).get(name)
