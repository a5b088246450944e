"""``F.forward`` and ``F.backward`` on a flat callable, for code the rewrite did not see.

Another module (a project's own tests) may read, wrap or patch an original Function's
members: ``unittest.mock.patch.object(F, "forward", wraps=F.forward)`` then checks that
the forward ran (gpytorch does this). The flat callable answers with trampolines to its
eager carrier's members, and an eager call made while one of them is replaced runs the
carrier with the replacement in its place, so the patch sees the call (and can change
what it does), as it would on the original. Under ``torch.compile`` and ``torch.func``
the flat callable runs its own carriers, as an original patched after compiling would.
"""

from __future__ import annotations

from collections.abc import Callable
from typing import Any

from torch.autograd import Function

MEMBERS = ("forward", "backward")


def trampolines(name: str, module: str, docs: dict[str, str | None], carriers: Callable[[], Any]) -> list[Callable]:
    """One trampoline per member, to the eager carrier's (built on first use)."""

    def make(member: str) -> Callable:
        def trampoline(*args: Any, **kwargs: Any) -> Any:
            return getattr(carriers().eager, member)(*args, **kwargs)

        trampoline.__name__ = member
        trampoline.__qualname__ = f"{name}.{member}"
        trampoline.__module__ = module
        trampoline.__doc__ = docs.get(member)
        return trampoline

    return [make(member) for member in MEMBERS]


def replaced(own: dict, defaults: list[Callable]) -> bool:
    """Whether something else stands where a trampoline stood (``own``: the flat
    callable's ``__dict__``)."""
    return any(own.get(member) is not default for member, default in zip(MEMBERS, defaults))


def with_replacements(eager: type[Function], own: dict, defaults: list[Callable]) -> type[Function]:
    """The eager carrier with what was set on the flat callable in its members' places."""
    members = {
        member: staticmethod(own[member])
        for member, default in zip(MEMBERS, defaults)
        if member in own and own[member] is not default
    }
    return carrier_with(eager, members)


def carrier_with(eager: type[Function], members: dict[str, Any]) -> type[Function]:
    """``eager`` with ``members`` in place of its own: a subclass under its names."""
    return type(
        eager.__name__, (eager,), {**members, "__module__": eager.__module__, "__qualname__": eager.__qualname__}
    )
