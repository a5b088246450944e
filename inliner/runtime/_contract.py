"""What ``custom_vjp`` checks of the index keywords it is given, with errors that name the function.

The indices are facts about what ``fwd`` returns (``saved_for_backward_idx`` and its kin
name residuals, ``non_differentiable_idx`` names outputs, ``dirty_idx`` inputs). A wrong
one would otherwise surface as an IndexError deep in a generated carrier, or as a
silently wrong gradient. So, as ``jax.custom_vjp`` does: the indices themselves are
checked when ``custom_vjp`` is called, and against what fwd returns on its first call.
After that first call the check is gone from the path (``first_call_checked``), so it
costs nothing per call.

This module must not import libcst or black, nor torch: it only looks at shapes.
"""

from __future__ import annotations

from collections.abc import Callable, Mapping, Sequence
from keyword import iskeyword
from typing import Any


def check_indices(
    name: str,
    *,
    saved_for_backward_idx: Sequence[int],
    saved_tensors_idx: int | None,
    non_differentiable_idx: Sequence[int],
    dirty_idx: Sequence[int],
    saved_for_forward_idx: Sequence[int],
) -> None:
    """The checks that need no call: non-negative integers, each residual saved once per route."""
    keywords = {
        "saved_for_backward_idx": tuple(saved_for_backward_idx),
        "non_differentiable_idx": tuple(non_differentiable_idx),
        "dirty_idx": tuple(dirty_idx),
        "saved_for_forward_idx": tuple(saved_for_forward_idx),
    }
    if saved_tensors_idx is not None:
        keywords["saved_tensors_idx"] = (saved_tensors_idx,)
    for keyword, indices in keywords.items():
        if not all(type(i) is int and i >= 0 for i in indices):
            raise TypeError(
                f"custom_vjp for {name}: {keyword} must hold non-negative integers, got {_spelled(indices, keyword)}"
            )
    for keyword in ("saved_for_backward_idx", "saved_for_forward_idx"):
        indices = keywords[keyword]
        if len(set(indices)) != len(indices):
            raise ValueError(f"custom_vjp for {name}: {keyword}={indices} names a residual twice")
        if saved_tensors_idx is not None and saved_tensors_idx in indices:
            raise ValueError(
                f"custom_vjp for {name}: residual {saved_tensors_idx} is both the saved_tensors group "
                f"(saved_tensors_idx) and in {keyword}={indices}"
            )


def check_attrs(
    name: str,
    ctx_attrs: Mapping[int, str],
    saved_for_backward_idx: Sequence[int],
    saved_tensors_idx: int | None,
    saved_for_forward_idx: Sequence[int],
) -> tuple[tuple[int, str], ...]:
    """``ctx_attrs`` as (index, attribute) pairs in index order, once checked: plain residuals
    (a saved tensor stays in ``saved_tensors``), named by identifiers the carriers do not use."""
    if not isinstance(ctx_attrs, Mapping):
        raise TypeError(f"custom_vjp for {name}: ctx_attrs must map residual indices to names, got {ctx_attrs!r}")
    routed = {*saved_for_backward_idx, *saved_for_forward_idx, saved_tensors_idx}
    pairs = sorted(ctx_attrs.items(), key=lambda pair: pair[0] if type(pair[0]) is int else -1)
    for index, attr in pairs:
        if not (type(index) is int and index >= 0):
            raise TypeError(f"custom_vjp for {name}: ctx_attrs keys must be non-negative integers, got {index!r}")
        if not (isinstance(attr, str) and attr.isidentifier() and not iskeyword(attr)) or attr.startswith(
            ("__", "_inliner_")
        ):
            raise ValueError(
                f"custom_vjp for {name}: ctx_attrs[{index}] must be an attribute name not starting with "
                f"'__' or '_inliner_', got {attr!r}"
            )
        if index in routed:
            raise ValueError(
                f"custom_vjp for {name}: residual {index} is saved (its tensors stay in saved_tensors), "
                f"so it cannot also be ctx_attrs[{index}]={attr!r}"
            )
    names = [attr for _, attr in pairs]
    if len(set(names)) != len(names):
        raise ValueError(f"custom_vjp for {name}: ctx_attrs={dict(pairs)!r} gives two residuals one name")
    return tuple(pairs)


def check_first_result(spec: Any, result: Any, inputs: tuple) -> None:
    """``fwd``'s first ``(outputs, residuals)`` against every index keyword of ``spec``."""
    label = f"custom_vjp fwd rule {_qualname(spec.fwd)} for {spec.name}"
    if not (isinstance(result, (tuple, list)) and len(result) == 2):
        got = (
            f"a {type(result).__name__} of length {len(result)}"
            if isinstance(result, (tuple, list))
            else type(result).__name__
        )
        raise TypeError(f"{label} must return a pair (outputs, residuals), got {got}")
    outputs, residuals = result
    try:
        residuals = tuple(residuals)
    except TypeError:
        raise TypeError(f"{label} must return its residuals as a tuple, got {type(residuals).__name__}") from None
    residual_keywords = {"saved_for_backward_idx": spec.saved_idx, "saved_for_forward_idx": spec.fsaved_idx}
    if spec.saved_tensors_idx is not None:
        residual_keywords["saved_tensors_idx"] = (spec.saved_tensors_idx,)
    for keyword, indices in residual_keywords.items():
        _in_range(
            indices,
            len(residuals),
            f"{label} returned {_count(len(residuals), 'residual')}, but {_spelled(indices, keyword)}",
            "residual",
        )
    _in_range(
        [i for i, _ in spec.attrs],
        len(residuals),
        f"{label} returned {_count(len(residuals), 'residual')}, but ctx_attrs={dict(spec.attrs)!r}",
        "residual",
    )
    if spec.saved_tensors_idx is not None and not isinstance(residuals[spec.saved_tensors_idx], (tuple, list)):
        got = type(residuals[spec.saved_tensors_idx]).__name__
        raise TypeError(
            f"{label}: residual {spec.saved_tensors_idx} (saved_tensors_idx) must be a tuple of tensors, got {got}"
        )
    n_outputs = len(outputs) if isinstance(outputs, tuple) else 1
    _in_range(
        spec.nondiff,
        n_outputs,
        f"{label} returned {_count(n_outputs, 'output')}, but {_spelled(spec.nondiff, 'non_differentiable_idx')}",
        "output",
    )
    _in_range(
        spec.dirty,
        len(inputs),
        f"{spec.name} was called with {_count(len(inputs), 'positional input')}, but {_spelled(spec.dirty, 'dirty_idx')}",
        "input",
    )


def first_call_checked(
    fwd: Callable, check: Callable[[Any, tuple], None], install: Callable[[Callable], None]
) -> Callable:
    """A stand-in for ``fwd`` that checks its first result, then ``install``s ``fwd`` itself
    where the stand-in was (a failed check leaves the stand-in, so the next call checks again)."""

    def first_call(*args: Any, **kwargs: Any) -> Any:
        result = fwd(*args, **kwargs)
        check(result, args)
        install(fwd)
        return result

    return first_call


def _in_range(indices: Sequence[int], size: int, message: str, what: str) -> None:
    bad = [i for i in indices if i >= size]
    if bad:
        raise ValueError(f"{message}, which names {what} {bad[0]}")


def _count(n: int, what: str) -> str:
    return f"{n} {what}" + ("" if n == 1 else "s")


def _spelled(indices: Sequence[Any], keyword: str) -> str:
    if keyword == "saved_tensors_idx":
        return f"{keyword}={indices[0]!r}"
    return f"{keyword}={tuple(indices)!r}"


def _qualname(fn: Callable) -> str:
    return getattr(fn, "__qualname__", None) or repr(fn)
