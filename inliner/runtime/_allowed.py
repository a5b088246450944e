"""A user's own ``torch._dynamo.allow_in_graph`` / ``torch.compiler.allow_in_graph`` on a
flattened class (a ``FlatClass``) or on a flat callable.

On the original Function, ``allow_in_graph(F)`` makes dynamo put ``F.apply(...)`` in its
graph as one call it does not trace into (forward runs only when AOTAutograd runs the
graph on fake tensors): ``fullgraph=True`` compiles even a forward that calls
``graph_break()``. Dynamo makes the allowed twin class a torch function instead, and then
cannot call ``.apply`` on it. So dynamo's set of allowed ids is watched (``_WatchedIds``):
a flattened class or flat callable the user allows never enters it (dynamo reads
``F.apply`` as a plain attribute), and its flat callable takes the graph path whatever its
compile kind instead: dynamo meets one plain call of its graph node, as it met the
original's ``apply``. Eager and ``torch.func`` calls never see any of this.
"""

from __future__ import annotations

import sys
import weakref
from collections.abc import Callable
from typing import Any

from torch._dynamo import trace_rules

#: id -> the public flat callables dynamo knows (``watch``), kept weakly.
_publics: weakref.WeakValueDictionary[int, Any] = weakref.WeakValueDictionary()


def watch(public: Callable, polyfilled: Callable, node: Callable) -> None:
    """Remember ``public``, whose dynamo shim is ``polyfilled``'s polyfill, and ``node``,
    the call the graph holds if the user allows it (kept on the function: a cycle the
    collector frees with it, not a registry that would keep it alive)."""
    public._inliner_allowed_path = (polyfilled, node)  # type: ignore[attr-defined]
    _publics[id(public)] = public
    _install_once()


def _ours(idx: int) -> Callable | None:
    """The public flat callable of the flattened class or flat callable whose id is ``idx``."""
    public = _publics.get(idx)
    if public is not None:
        return public
    # the package that imports this module, read without an import (no cycle)
    stack = list(sys.modules["inliner.runtime"].FlatClass.__subclasses__())
    while stack:
        cls = stack.pop()
        stack.extend(cls.__subclasses__())
        if id(cls) == idx:
            return _public_of(cls)
    return None


class _WatchedIds(set):
    """Dynamo's set of allowed ids, but what the user allows of ours takes the graph path
    instead of entering the set."""

    def add(self, idx: int) -> None:
        public = _ours(idx)
        if public is None:
            super().add(idx)
        else:
            _as_graph_node(public)


def _public_of(cls: type) -> Callable | None:
    apply = cls.__dict__.get("apply")
    fn = apply.__func__ if isinstance(apply, staticmethod) else apply
    return fn if hasattr(fn, "_inliner_allowed_path") else None


def _as_graph_node(public: Callable) -> None:
    """Dynamo's shim for ``public`` becomes one call of its graph node."""
    polyfilled, node = public._inliner_allowed_path  # type: ignore[attr-defined]

    def shim(*args: Any, **kwargs: Any) -> Any:
        return node(*args, **kwargs)

    polyfilled.__torch_dynamo_polyfill__ = shim
    public.compile_path = "graph"  # type: ignore[attr-defined]
    _keep_out_of_thunder(node)


def _keep_out_of_thunder(node: Callable) -> None:
    """thunderfx: the allowed original reaches thunder's splitter as
    ``trampoline_autograd_apply``, which it never runs inside thunder (the call goes to
    its fallback, whatever the body); the allowed node goes there too, so a body thunder
    cannot trace (an ``aten`` overload) runs as the original's does. Read by
    ``inliner.runtime._thunder.register`` when thunder is loaded later."""
    node._inliner_user_allowed = True  # type: ignore[attr-defined]
    if hasattr(node, "thunder_supported"):
        node.thunder_supported = False


_installed: list[bool] = []


def _install_once() -> None:
    """Watch dynamo's allowed set from now on (an id of ours already in it leaves it)."""
    if _installed:
        return
    _installed.append(True)
    ids = getattr(trace_rules, "_allowed_callable_ids", None)
    if ids is None or not hasattr(ids, "function_ids"):
        return  # internals moved: dynamo keeps its own behaviour
    watched = _WatchedIds()
    for idx in ids():
        watched.add(idx)
    ids.function_ids = watched
