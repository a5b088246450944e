"""Benchmark: the original Function beside each compile path of its flat callable.

Not a test (no thresholds asserted): it prints ratios. For the issue's four Functions
(pure torch, a numpy forward, a dataclass argument, a backward with a Python side
effect) and a forward that sets an attribute of module-level state, 256x256 inputs, inductor, one thread, each variant (the original and every
path) called from its own small compiled function (its own code object, so that
dynamo's caches never mix them):

- **compile**: CPU time of this process for the first forward + backward after
  ``torch._dynamo.reset()`` (FX-graph and AOT caches off; inductor's on-disk kernel
  cache is left on, so C++ compilation, the same for every variant, is mostly not
  counted). Variants in a rotating order per repetition.
- **step alone**: forward + backward where the call is the whole compiled function;
  **step in model**: the call between two torch ops (``x * 2`` before, ``* 3``
  after), where an island's graph break costs a second compiled region, as in a model.
  All variants are compiled side by side, then timed in interleaved blocks (the order
  rotates every round); a ratio is the variant's block over the original's block of the
  same round. Reported: median ratio and its interquartile range over the rounds.

Paths are forced through ``custom_vjp``'s keywords:

- graph: both kinds traceable (one ``allow_in_graph`` node);
- split: ``compile_kind="opaque"`` with the backward's own kind: ``traceable`` (bwd
  traced into the backward graph) or ``side_effecting`` (bwd run by ``call_bwd``);
- island: ``compile_kind="side_effecting"`` (a graph break at the call).

``*`` marks the path the engine's classification gives the Function. A path that would
be wrong for a Function (the graph path for numpy or a backward side effect: fake
tensors cannot run numpy; the effect would happen once) is not measured.

Usage: python scripts/bench_paths.py [--reps 3] [--rounds 15] [--steps 40] [--only pure,numpy forward]
"""

from __future__ import annotations

import argparse
import dataclasses
import statistics
import sys
import time
import types
import warnings
from collections.abc import Callable
from pathlib import Path
from typing import Any

sys.path.insert(0, str(Path(__file__).resolve().parent.parent))

import numpy as np
import torch
import torch._dynamo

from inliner.runtime import custom_vjp

N = 256
COUNT = [0]


class Recorder:
    last = None


RECORDER = Recorder()


@dataclasses.dataclass
class Config:
    scale: torch.Tensor
    shift: float


# -- the originals -----------------------------------------------------------------------------


class Pure(torch.autograd.Function):
    @staticmethod
    def forward(ctx, x, w):
        ctx.save_for_backward(x, w)
        return torch.tanh(x @ w) * 2

    @staticmethod
    def backward(ctx, g):
        x, w = ctx.saved_tensors
        return g @ w.t() * 3, x.t() @ g


class NumpySin(torch.autograd.Function):
    @staticmethod
    def forward(ctx, x, w):
        ctx.save_for_backward(x)
        return torch.from_numpy(np.sin(x.numpy())) * w

    @staticmethod
    def backward(ctx, g):
        (x,) = ctx.saved_tensors
        return g * torch.cos(x) * 3, None


class ObjectArg(torch.autograd.Function):
    @staticmethod
    def forward(ctx, x, cfg):
        ctx.save_for_backward(cfg.scale)
        ctx.shift = cfg.shift
        return x * cfg.scale + cfg.shift

    @staticmethod
    def backward(ctx, g):
        (scale,) = ctx.saved_tensors
        return g * scale * 3 + ctx.shift, None


class CountedBackward(torch.autograd.Function):
    @staticmethod
    def forward(ctx, x, w):
        ctx.save_for_backward(w)
        return torch.tanh(x) * w

    @staticmethod
    def backward(ctx, g):
        (w,) = ctx.saved_tensors
        COUNT[0] += 1
        return g * w * 3, None


class RecordedForward(torch.autograd.Function):
    @staticmethod
    def forward(ctx, x, w):
        ctx.save_for_backward(w)
        y = torch.tanh(x) * w
        RECORDER.last = y.detach().sum()
        return y

    @staticmethod
    def backward(ctx, g):
        (w,) = ctx.saved_tensors
        return g * w * 3, None


# -- the flat bodies, as the engine emits them ----------------------------------------------------


def pure_fwd(x, w):
    return torch.tanh(x @ w) * 2, (x, w)


def pure_bwd(residuals, g):
    x, w = residuals
    return g @ w.t() * 3, x.t() @ g


def numpy_fwd(x, w):
    return torch.from_numpy(np.sin(x.numpy())) * w, (x,)


def numpy_bwd(residuals, g):
    (x,) = residuals
    return g * torch.cos(x) * 3, None


def object_fwd(x, cfg):
    return x * cfg.scale + cfg.shift, (cfg.scale, cfg.shift)


def object_bwd(residuals, g):
    scale, shift = residuals
    return g * scale * 3 + shift, None


def counted_fwd(x, w):
    return torch.tanh(x) * w, (w,)


def counted_bwd(residuals, g):
    (w,) = residuals
    COUNT[0] += 1
    return g * w * 3, None


def recorded_fwd(x, w):
    y = torch.tanh(x) * w
    RECORDER.last = y.detach().sum()
    return y, (w,)


def recorded_bwd(residuals, g):
    (w,) = residuals
    return g * w * 3, None


PATHS = {
    "graph": {},
    "split": {"compile_kind": "opaque", "backward_kind": "traceable"},
    "split, opaque bwd": {"compile_kind": "opaque", "backward_kind": "side_effecting"},
    "island": {"compile_kind": "side_effecting"},
}

#: (original, fwd, bwd, the paths measured, bwd's literal None positions, the default path)
FUNCTIONS: dict[str, tuple] = {
    "pure": (Pure, pure_fwd, pure_bwd, ("graph", "split", "split, opaque bwd", "island"), (), "graph"),
    "numpy forward": (NumpySin, numpy_fwd, numpy_bwd, ("split", "island"), (1,), "split"),
    "dataclass argument": (ObjectArg, object_fwd, object_bwd, ("graph", "split", "island"), (1,), "graph"),
    "backward side effect": (
        CountedBackward,
        counted_fwd,
        counted_bwd,
        ("split, opaque bwd", "island"),
        (1,),
        "split, opaque bwd",
    ),
    "forward sets state": (RecordedForward, recorded_fwd, recorded_bwd, ("split", "island"), (1,), "split"),
}

CONTEXTS = ("alone", "in model")


def _inputs(name: str) -> tuple:
    torch.manual_seed(0)
    x = torch.randn(N, N, requires_grad=True)
    if name == "dataclass argument":
        return x, Config(torch.randn(N, N), 0.5)
    return x, torch.randn(N, N, requires_grad=name != "numpy forward")


def _caller(fn: Callable, context: str, label: str) -> Callable:
    """A function calling ``fn`` (alone, or between two torch ops), with a code object
    of its own (dynamo caches compiled code per code object)."""
    if context == "alone":

        def call(x: Any, w: Any) -> Any:
            return fn(x, w)
    else:

        def call(x: Any, w: Any) -> Any:
            return fn(x * 2, w) * 3

    code = call.__code__.replace(co_name=f"{context}_{label}".replace(" ", "_").replace(",", ""))
    return types.FunctionType(code, call.__globals__, code.co_name, None, call.__closure__)


def _step(fn: Callable, inputs: tuple) -> None:
    leaves = [t for t in inputs if isinstance(t, torch.Tensor) and t.requires_grad]
    out = fn(*inputs)
    torch.autograd.grad(out.sum(), leaves, allow_unused=True)


def _variants(name: str) -> dict[str, Callable]:
    original, fwd, bwd, paths, nones, _default = FUNCTIONS[name]
    variants = {"original": original.apply}
    for path in paths:
        keywords = dict(PATHS[path], **({"backward_nones": nones} if "opaque bwd" in path else {}))
        variants[path] = custom_vjp(fwd, bwd, name=f"{original.__name__}_{path.replace(' ', '_')}", **keywords)
    return variants


def _compile_times(variants: dict[str, Callable], inputs: tuple, reps: int) -> dict[str, list[float]]:
    times: dict[str, list[float]] = {label: [] for label in variants}
    labels = list(variants)
    for rep in range(reps):
        for label in labels[rep % len(labels) :] + labels[: rep % len(labels)]:
            torch._dynamo.reset()
            compiled = torch.compile(_caller(variants[label], "alone", label))
            start = time.process_time()
            _step(compiled, inputs)
            times[label].append(time.process_time() - start)
    torch._dynamo.reset()
    return times


def _step_ratios(
    variants: dict[str, Callable], inputs: tuple, context: str, rounds: int, steps: int
) -> tuple[dict[str, float], dict[str, list[float]]]:
    """Per variant: the median step time, and its per-round ratios to the original."""
    torch._dynamo.reset()
    compiled = {label: torch.compile(_caller(fn, context, label)) for label, fn in variants.items()}
    for fn in compiled.values():
        for _ in range(10):
            _step(fn, inputs)
    labels = list(compiled)
    times: dict[str, list[float]] = {label: [] for label in labels}
    for r in range(rounds):
        for label in labels[r % len(labels) :] + labels[: r % len(labels)]:
            start = time.process_time()
            for _ in range(steps):
                _step(compiled[label], inputs)
            times[label].append((time.process_time() - start) / steps)
    torch._dynamo.reset()
    ratios = {label: [t / o for t, o in zip(times[label], times["original"])] for label in labels}
    return {label: statistics.median(ts) for label, ts in times.items()}, ratios


def _spread(values: list[float]) -> str:
    """median [first quartile, third quartile]"""
    if len(values) < 2:
        return f"{values[0]:.2f}"
    q1, _, q3 = statistics.quantiles(values, n=4)
    return f"{statistics.median(values):.2f} [{q1:.2f}-{q3:.2f}]"


def report(reps: int = 3, rounds: int = 15, steps: int = 40, only: str = "") -> dict:
    """Print the table; return {(function, variant): {"compile": [...], context: (median, ratios)}}."""
    import torch._functorch.config as functorch_config
    import torch._inductor.config as inductor_config

    inductor_config.fx_graph_cache = False
    functorch_config.enable_autograd_cache = False
    warnings.simplefilter("ignore")
    print(f"compile paths, inductor, {N}x{N}, torch {torch.__version__}: ratios to the original, median [IQR]")
    print(f"(compile: {reps} repetitions; steps: {rounds} interleaved rounds of {steps} fwd+bwd; * = default path)")
    header = f"{'function':22} {'path':19} {'compile':>18} "
    print(header + " ".join(f"{'step ' + c:>26}" for c in CONTEXTS))
    results: dict = {}
    torch.compile(_caller(Pure.apply, "alone", "warmup"))(*_inputs("pure"))  # inductor's first-compile costs
    for name, (*_, default) in FUNCTIONS.items():
        if only and name not in only.split(","):
            continue
        inputs = _inputs(name)
        variants = _variants(name)
        compile_times = _compile_times(variants, inputs, reps)
        steps_by_context = {c: _step_ratios(variants, inputs, c, rounds, steps) for c in CONTEXTS}
        base = statistics.median(compile_times["original"])
        for label in variants:
            ratios = [t / base for t in compile_times[label]]
            cells = [f"{statistics.median(compile_times[label]):5.2f}s {_spread(ratios):>12}"]
            for context in CONTEXTS:
                medians, step_ratios = steps_by_context[context]
                cells.append(f"{medians[label] * 1e6:6.0f}us {_spread(step_ratios[label]):>18}")
            mark = "*" if label == default else " "
            shown = name if label == "original" else ""
            print(f"{shown:22} {label + mark:19} " + " ".join(cells))
            results[(name, label)] = {
                "compile": compile_times[label],
                **{c: (steps_by_context[c][0][label], steps_by_context[c][1][label]) for c in CONTEXTS},
            }
    return results


def main(argv: list[str] | None = None) -> int:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--reps", type=int, default=3, help="compile repetitions")
    parser.add_argument("--rounds", type=int, default=15, help="interleaved timing rounds")
    parser.add_argument("--steps", type=int, default=40, help="fwd+bwd steps per block")
    parser.add_argument("--only", default="", help="comma-separated Function names (default: all)")
    args = parser.parse_args(argv)
    torch.set_num_threads(1)
    report(args.reps, args.rounds, args.steps, args.only)
    return 0


if __name__ == "__main__":
    raise SystemExit(main())
