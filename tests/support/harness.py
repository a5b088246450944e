"""Run an original module and its rewrite side by side and compare what autograd observes.

A case module defines ``scenario_*()`` functions. Each builds its inputs itself
(seeded), calls the module's Functions through the module's own call sites, and
returns ``(leaves, outputs)``. The harness records, for both versions: output
values, structure, ``requires_grad``, view/identity relations, the backward node's
class name, the gradients of ``leaves`` under seeded cotangents, and any exception
(type and message). Two results must be identical.
"""

from __future__ import annotations

import contextlib
import importlib.util
import itertools
import sys
import warnings
from pathlib import Path
from typing import Any

import torch

#: the installed torch's (major, minor); 2.13 and 2.9 differ where tests say so
TORCH_VERSION = tuple(int(part) for part in torch.__version__.split("+")[0].split(".")[:2])
TORCH_2_13 = TORCH_VERSION >= (2, 13)

_counter = itertools.count()


def load_module(source: str, label: str, directory: Path | None = None):
    """Import ``source`` as a fresh module (its own name, its own globals).

    ``directory`` (a golden case's folder) may hold modules the source imports (a
    decorator defined in another module): they are importable while ``source`` runs,
    and each load imports its own fresh copy, so no state is shared between loads (the
    last copy stays in ``sys.modules``, where dynamo looks a traced function's module up).
    """
    name = f"_inliner_case_{label}_{next(_counter)}"
    path = Path(sys.prefix) / f"{name}.py"  # only used for tracebacks
    spec = importlib.util.spec_from_loader(name, loader=None, origin=str(path))
    module = importlib.util.module_from_spec(spec)
    module.__file__ = str(path)
    sys.modules[name] = module
    code = compile(source, f"<{label}>", "exec")
    with warnings.catch_warnings(), _importable(directory):
        warnings.simplefilter("ignore")  # e.g. torch.cuda.amp's FutureWarning at decoration time
        exec(code, module.__dict__)
    return module


@contextlib.contextmanager
def _importable(directory: Path | None):
    if directory is None:
        yield
        return
    for stem in {p.stem for p in directory.glob("*.py")} - {"input", "output", "reference"}:
        sys.modules.pop(stem, None)
    sys.path.insert(0, str(directory))
    try:
        yield
    finally:
        sys.path.remove(str(directory))


def scenarios(module) -> list[str]:
    return sorted(n for n in vars(module) if n.startswith("scenario") and callable(getattr(module, n)))


def _describe_value(value: Any, leaves: list[torch.Tensor]) -> Any:
    if isinstance(value, torch.Tensor):
        return {
            "tensor": value.detach().clone(),
            "dtype": value.dtype,
            "requires_grad": value.requires_grad,
            "is_view": value._is_view(),
            "is_leaf_input": [value is leaf for leaf in leaves],
            "base_is_input": [value._base is leaf for leaf in leaves] if value._is_view() else None,
            "grad_fn": type(value.grad_fn).__name__ if value.grad_fn is not None else None,
        }
    if isinstance(value, (tuple, list)):
        return (type(value).__name__, [_describe_value(v, leaves) for v in value])
    if isinstance(value, dict):
        return ("dict", {k: _describe_value(v, leaves) for k, v in value.items()})
    return ("value", repr(value))


def _flat_tensors(value: Any) -> list[torch.Tensor]:
    if isinstance(value, torch.Tensor):
        return [value]
    if isinstance(value, (tuple, list)):
        return [t for v in value for t in _flat_tensors(v)]
    if isinstance(value, dict):
        return [t for v in value.values() for t in _flat_tensors(v)]
    return []


def _error(exc: BaseException) -> tuple[str, str]:
    message = str(exc)
    return (type(exc).__name__, message)


def run_scenario(module, name: str) -> dict:
    """Everything autograd lets a user observe about one scenario."""
    record: dict[str, Any] = {}
    torch.manual_seed(0)
    with warnings.catch_warnings():
        warnings.simplefilter("ignore")
        try:
            leaves, outputs = getattr(module, name)()
        except Exception as exc:  # the original may raise on purpose
            record["error"] = _error(exc)
            return record
        record["outputs"] = _describe_value(outputs, leaves)
        differentiable = [t for t in _flat_tensors(outputs) if t.requires_grad and t.is_floating_point()]
        if not differentiable:
            record["backward"] = "no differentiable output"
            return record
        generator = torch.Generator().manual_seed(1)
        total = sum((t * torch.randn(t.shape, generator=generator, dtype=t.dtype)).sum() for t in differentiable)
        try:
            grads = torch.autograd.grad(total, leaves, allow_unused=True)
        except Exception as exc:
            record["backward_error"] = _error(exc)
            return record
        record["grads"] = [None if g is None else g.detach().clone() for g in grads]
    return record


def run_all(module) -> dict[str, dict]:
    return {name: run_scenario(module, name) for name in scenarios(module)}


def assert_same(original: Any, rewritten: Any, where: str = "") -> None:
    """Exact equality; tensors by value, dtype and shape (the same ops run in the same order)."""
    if isinstance(original, torch.Tensor) or isinstance(rewritten, torch.Tensor):
        assert isinstance(original, torch.Tensor) and isinstance(rewritten, torch.Tensor), where
        assert original.dtype == rewritten.dtype and original.shape == rewritten.shape, where
        assert torch.equal(original, rewritten) or (
            original.is_floating_point() and torch.allclose(original, rewritten, equal_nan=True, rtol=0, atol=0)
        ), f"{where}: {original} != {rewritten}"
        return
    if isinstance(original, dict):
        assert isinstance(rewritten, dict) and original.keys() == rewritten.keys(), (
            f"{where}: {original} != {rewritten}"
        )
        for key in original:
            assert_same(original[key], rewritten[key], f"{where}.{key}")
        return
    if isinstance(original, (list, tuple)):
        assert isinstance(rewritten, (list, tuple)) and len(original) == len(rewritten), (
            f"{where}: {original} != {rewritten}"
        )
        for i, (a, b) in enumerate(zip(original, rewritten)):
            assert_same(a, b, f"{where}[{i}]")
        return
    assert original == rewritten, f"{where}: {original!r} != {rewritten!r}"


def differs(original: Any, rewritten: Any) -> bool:
    try:
        assert_same(original, rewritten)
    except AssertionError:
        return True
    return False


def run_scenario_safe(module, name: str) -> dict:
    """``run_scenario``, but an error raised while *describing* the outputs is recorded, not raised.

    (Reading ``grad_fn`` of a view whose base was modified in place raises; the
    fuzzer compares that error like any other.)
    """
    try:
        return run_scenario(module, name)
    except Exception as exc:
        return {"describe_error": _error(exc)}


def run_all_safe(module) -> dict[str, dict]:
    return {name: run_scenario_safe(module, name) for name in scenarios(module)}
