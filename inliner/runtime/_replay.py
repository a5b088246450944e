"""The original's forward/backward decorators, applied once and shared by every carrier.

The original applied each decorator once, when its class body ran, to a function taking
``(ctx, *inputs)``; every ``apply`` then went through what the decorator returned, with
the real ctx. ``Decorated`` does the same at the flat callable's binding line (the
class's place in module order): it applies the decorators, innermost first, to two
trampolines, once. Every carrier's forward (backward) *is* the decorated trampoline, so
a decorator runs once per call, sees the real ctx in eager and the inputs (gradients)
the original's saw, and what it passes on reaches the flat ``fwd`` (``bwd``); its
return value is what ``apply`` returns. Where there is no real ctx (the torch.func
carrier's forward, thunder's lookaside) it sees a ``CtxStandIn``, whose attributes the
carrier then copies onto the real ctx.

Each trampoline routes by the type of its ctx: a stand-in goes straight to ``fwd``
(thunder's ``bwd``); a real ctx to the carrier that made it, registered here when the
carriers are built (they are built lazily, after the decorators were applied).
The forward trampoline has ``fwd``'s parameter names after ``ctx``, so a decorator that
returns the function itself leaves torch 2.13 binding ``apply`` keywords by the
original's names, as it did for the original.

It imports torch-free code only (rewritten code imports it through the runtime).
"""

from __future__ import annotations

import weakref
from collections.abc import Callable, Sequence
from typing import Any

from inliner.runtime._outputs import _CtxStandIn as CtxStandIn


class Decorated:
    """The decorated forward and backward trampolines of one flat callable."""

    def __init__(
        self,
        fwd: Callable,
        signature: tuple[list[str], list[str], dict[str, Any]],
        name: str,
        module: str,
        forward_decorators: Sequence[Callable],
        backward_decorators: Sequence[Callable],
        backward_name: str = "backward",
    ) -> None:
        """``signature``: ``fwd``'s parameter list as source text, the matching call
        arguments and the defaults they reference (``__defaults[...]``)."""
        self.eager_forward: Callable | None = None  # the eager carrier's undecorated forward
        # the eager carrier's ctx type, and its graph carriers' (one per call where F.backward
        # was patched from outside: held weakly)
        self.eager_ctxs: weakref.WeakSet[type] = weakref.WeakSet()
        self.eager_backward: Callable | None = None
        self.functorch_backward: Callable | None = None  # the setup_context carrier's backward
        self.standin_backward: Callable | None = None  # thunder's: reads the stand-in
        # what the original's methods were called: a decorator may read it (``fn.__qualname__``)
        scope = fwd.__qualname__.rpartition(".")[0]  # where the class stood, e.g. "make.<locals>"
        owner = f"{scope}.{name}" if scope else name
        forward = _forward_trampoline(fwd, signature, self)
        forward.__qualname__ = f"{owner}.forward"
        forward.__module__ = module
        self.forward = _apply(forward_decorators, forward)
        backward = self._backward_trampoline()
        backward.__name__ = backward_name
        backward.__qualname__ = f"{owner}.{backward_name}"
        backward.__module__ = module
        self.backward = _apply(backward_decorators, backward)

    def _backward_trampoline(self) -> Callable:
        def backward(ctx: Any, *grads: Any) -> Any:
            kind = type(ctx)
            if kind in self.eager_ctxs:
                return self.eager_backward(ctx, *grads)  # type: ignore[misc]
            if kind is CtxStandIn:
                return self.standin_backward(ctx, *grads)  # type: ignore[misc]
            return self.functorch_backward(ctx, *grads)  # type: ignore[misc]

        return backward


def _apply(decorators: Sequence[Callable], function: Callable) -> Callable:
    """``function`` under ``decorators`` (source order: the first is the outermost)."""
    for decorator in reversed(decorators):
        function = decorator(function)
    return function


def _forward_trampoline(
    fwd: Callable, signature: tuple[list[str], list[str], dict[str, Any]], decorated: Decorated
) -> Callable:
    """``forward(ctx, <fwd's parameters>)``: ``fwd`` itself for a stand-in ctx, else the
    eager carrier's forward (which saves, marks and returns what the original did)."""
    params, call, defaults = signature
    ctx = "ctx"
    while ctx in {p.lstrip("*").split("=")[0] for p in params}:
        ctx = "_" + ctx
    args = ", ".join(call)
    src = (
        f"def forward({', '.join([ctx, *params])}):\n"
        f"    if type({ctx}) is __StandIn:\n"
        f"        return __fwd({args})\n"
        f"    return __decorated.eager_forward({', '.join([ctx, *call])})\n"
    )
    namespace: dict[str, Any] = {
        "__defaults": defaults,
        "__fwd": fwd,
        "__StandIn": CtxStandIn,
        "__decorated": decorated,
    }
    exec(compile(src, f"<inliner decorated forward of {fwd.__qualname__}>", "exec"), namespace)
    return namespace["forward"]
