"""Benchmark: the original Function beside each compile path of its flat callable.

Not a test. For four Functions (pure torch, a numpy forward, a dataclass argument, a
backward with a Python side effect), 256x256 inputs, inductor: compile time (first
forward + backward after ``torch._dynamo.reset()``, FX-graph and AOT caches off) and
step time (median of blocks of forward + backward, CPU time of this process). Each
path is forced through ``custom_vjp``'s keywords:

- graph: both kinds traceable (one ``allow_in_graph`` node);
- split: ``compile_kind="opaque"`` with the backward's own kind: ``traceable`` (bwd
  traced into the backward graph) or ``side_effecting`` (bwd run by ``call_bwd``);
- island: ``compile_kind="side_effecting"`` (a graph break at the call).

A path that would be wrong for a Function (the graph path for numpy or a backward side
effect: fake tensors cannot run numpy; the effect would happen once) is not measured.

Usage: python scripts/bench_paths.py [--reps 3] [--steps 200] [--only pure,numpy forward]
"""

from __future__ import annotations

import argparse
import dataclasses
import statistics
import sys
import time
import warnings
from collections.abc import Callable
from pathlib import Path

sys.path.insert(0, str(Path(__file__).resolve().parent.parent))

import numpy as np
import torch

from inliner.runtime import custom_vjp

N = 256
COUNT = [0]


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


PATHS = {
    "graph": {},
    "split": {"compile_kind": "opaque", "backward_kind": "traceable"},
    "split, opaque bwd": {"compile_kind": "opaque", "backward_kind": "side_effecting"},
    "island": {"compile_kind": "side_effecting"},
}

#: (original, fwd, bwd, the paths measured, bwd's literal None positions)
FUNCTIONS: dict[str, tuple] = {
    "pure": (Pure, pure_fwd, pure_bwd, ("graph", "split", "split, opaque bwd", "island"), ()),
    "numpy forward": (NumpySin, numpy_fwd, numpy_bwd, ("split", "island"), (1,)),
    "dataclass argument": (ObjectArg, object_fwd, object_bwd, ("graph", "split", "island"), (1,)),
    "backward side effect": (CountedBackward, counted_fwd, counted_bwd, ("split, opaque bwd", "island"), (1,)),
}


def _inputs(name: str) -> tuple:
    torch.manual_seed(0)
    x = torch.randn(N, N, requires_grad=True)
    if name == "dataclass argument":
        return x, Config(torch.randn(N, N), 0.5)
    return x, torch.randn(N, N, requires_grad=name != "numpy forward")


def _step(fn: Callable, inputs: tuple) -> None:
    leaves = [t for t in inputs if isinstance(t, torch.Tensor) and t.requires_grad]
    out = fn(*inputs)
    torch.autograd.grad(out.sum(), leaves, allow_unused=True)


def _measure(fn: Callable, inputs: tuple, reps: int, steps: int) -> tuple[float, float]:
    """(median compile time, median step time) of ``torch.compile(fn)``, inductor."""
    import torch._dynamo

    compile_times, step_times = [], []
    for _ in range(reps):
        torch._dynamo.reset()
        compiled = torch.compile(fn)
        start = time.process_time()
        _step(compiled, inputs)
        compile_times.append(time.process_time() - start)
        for _ in range(10):
            _step(compiled, inputs)
        blocks = []
        for _ in range(5):
            start = time.process_time()
            for _ in range(steps // 5):
                _step(compiled, inputs)
            blocks.append((time.process_time() - start) / (steps // 5))
        step_times.append(statistics.median(blocks))
    torch._dynamo.reset()
    return statistics.median(compile_times), statistics.median(step_times)


def report(reps: int = 3, steps: int = 200, only: str = "") -> dict:
    import torch._functorch.config as functorch_config
    import torch._inductor.config as inductor_config

    inductor_config.fx_graph_cache = False
    functorch_config.enable_autograd_cache = False
    warnings.simplefilter("ignore")
    print(f"compile paths, inductor, {N}x{N}: compile time and step time (fwd+bwd), medians of {reps}")
    print(f"{'function':22} {'path':18} {'compile':>9} {'ratio':>6} {'step':>10} {'ratio':>6}")
    results = {}
    _measure(Pure.apply, _inputs("pure"), 1, 10)  # inductor's own first-compile costs, paid by nobody
    for name, (original, fwd, bwd, paths, nones) in FUNCTIONS.items():
        if only and name not in only.split(","):
            continue
        inputs = _inputs(name)
        base = _measure(original.apply, inputs, reps, steps)
        results[(name, "original")] = base
        print(f"{name:22} {'original':18} {base[0]:8.2f}s {1:6.2f} {base[1] * 1e6:8.0f}us {1:6.2f}")
        for path in paths:
            keywords = dict(PATHS[path], **({"backward_nones": nones} if "opaque bwd" in path else {}))
            flat = custom_vjp(fwd, bwd, name=f"{original.__name__}_{path.replace(' ', '_')}", **keywords)
            got = _measure(flat, inputs, reps, steps)
            results[(name, path)] = got
            print(
                f"{'':22} {path:18} {got[0]:8.2f}s {got[0] / base[0]:6.2f} "
                f"{got[1] * 1e6:8.0f}us {got[1] / base[1]:6.2f}"
            )
    return results


def main(argv: list[str] | None = None) -> int:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--reps", type=int, default=3)
    parser.add_argument("--steps", type=int, default=200)
    parser.add_argument("--only", default="", help="comma-separated Function names (default: all)")
    args = parser.parse_args(argv)
    torch.set_num_threads(1)
    report(args.reps, args.steps, args.only)
    return 0


if __name__ == "__main__":
    raise SystemExit(main())
