"""Benchmark: the rewritten flat callable against the original ``Function.apply``, side by side.

Not a test (no thresholds are asserted anywhere): it prints numbers and ratios.

- **eager**: per-call time of forward + backward on small tensors, where the
  Python overhead of the call dominates. Original and rewrite run in interleaved
  blocks (orig, new, new, orig, ...) so drift hits both alike. Times are CPU time of
  this process (``time.process_time``; torch runs single-threaded here and the CPU
  autograd engine runs in the calling thread), which a loaded machine disturbs far
  less than wall time. The ratio reported is the median of the per-pair ratios.
  Target: rewritten / original <= 1.05.
- **inductor**: compile time (first forward + first backward after
  ``torch._dynamo.reset()``, with inductor's FX-graph and AOT-autograd caches off
  so each side really compiles) and step time (median forward + backward of the
  compiled function). Target: the rewrite is no slower.
- **compile kinds** (tests/support/compile_kind_cases.py: Functions with side effects or bodies
  that leave torch, which the rewrite runs as an eager island, and pure-torch Functions
  taking a dataclass, a module or a lambda): ratios only, rewritten / original, of the
  eager step and of the step of ``torch.compile(fn)`` (inductor) once compiled, where the
  original is run by dynamo around a graph break (islands) or as a higher-order op
  (object arguments). Target: the island's compiled step costs no more than the
  original's graph break.

- **compile paths** (scripts/bench_paths.py, which owns this measurement and runs alone
  too): inductor compile time and step time of the original beside each path the
  runtime can give a flat callable (graph, split, island), on a pure, a numpy-bodied, an
  object-argument and a backward-side-effect Function, the call alone and inside a
  model, in interleaved rounds (median ratio and interquartile range). Targets: split
  within 1.05x of the original's step and 1.2x of its compile time.

Usage: python scripts/bench_overhead.py [--cases basic_linear,attrs_and_rebinding]
       [--blocks 30] [--calls 200] [--compile-reps 3] [--no-inductor]
       [--kind-cases forward_side_effect,numpy_body] [--no-kinds] [--no-paths]
"""

from __future__ import annotations

import argparse
import statistics
import sys
import time
import warnings
from pathlib import Path

sys.path.insert(0, str(Path(__file__).resolve().parent.parent))

import torch

from tests.support import tracer_cases as tc

DEFAULT_CASES = "basic_linear,attrs_and_rebinding,needs_input_grad,early_return_group,double_backward"
DEFAULT_KIND_CASES = (
    "forward_side_effect,backward_side_effect,numpy_body,fake_tensor_rejecting,"
    "dataclass_argument,module_argument,lambda_argument"
)


def _step(f, inputs, leaves, cot):
    out = f(*inputs)
    first = out[0] if isinstance(out, (tuple, list)) else out
    torch.autograd.grad(first, leaves, cot, allow_unused=True)


def _prepare(case: str, rewritten: bool):
    f = tc.body(case, rewritten)
    inputs = tc.make_inputs(case)
    leaves = [t for t in inputs if isinstance(t, torch.Tensor) and t.requires_grad]
    out = f(*inputs)
    first = out[0] if isinstance(out, (tuple, list)) else out
    cot = torch.ones_like(first)
    return f, inputs, leaves, cot


def _time_block(f, inputs, leaves, cot, calls: int, clock=time.process_time) -> float:
    start = clock()
    for _ in range(calls):
        _step(f, inputs, leaves, cot)
    return (clock() - start) / calls


def bench_eager(case: str, blocks: int, calls: int) -> tuple[float, float, float]:
    """(median original per call, median rewritten per call, median of per-pair ratios)."""
    sides = {rw: _prepare(case, rw) for rw in (False, True)}
    for rw in (False, True):  # warm up both
        _time_block(*sides[rw], calls)
    times: dict[bool, list[float]] = {False: [], True: []}
    for block in range(blocks):
        order = (False, True) if block % 2 == 0 else (True, False)
        for rw in order:
            times[rw].append(_time_block(*sides[rw], calls))
    ratios = [n / o for o, n in zip(times[False], times[True])]
    return statistics.median(times[False]), statistics.median(times[True]), statistics.median(ratios)


def bench_inductor(case: str, reps: int, steps: int) -> dict[bool, tuple[float, float]]:
    import torch._dynamo
    import torch._functorch.config as functorch_config
    import torch._inductor.config as inductor_config

    inductor_config.fx_graph_cache = False
    functorch_config.enable_autograd_cache = False
    compile_times: dict[bool, list[float]] = {False: [], True: []}
    step_times: dict[bool, list[float]] = {False: [], True: []}
    for rep in range(reps):
        order = (False, True) if rep % 2 == 0 else (True, False)
        for rw in order:
            f, inputs, leaves, cot = _prepare(case, rw)
            torch._dynamo.reset()
            compiled = torch.compile(f)
            start = time.process_time()
            _step(compiled, inputs, leaves, cot)
            compile_times[rw].append(time.process_time() - start)
            for _ in range(20):
                _step(compiled, inputs, leaves, cot)
            step_times[rw].append(_time_block(compiled, inputs, leaves, cot, steps))
            torch._dynamo.reset()
    return {rw: (statistics.median(compile_times[rw]), statistics.median(step_times[rw])) for rw in (False, True)}


def _interleaved_ratio(sides: dict[bool, tuple], blocks: int, calls: int) -> float:
    """Median of per-pair ratios (rewritten / original) of interleaved timing blocks."""
    for rw in (False, True):  # warm up both (a compiled side compiles here)
        _time_block(*sides[rw], 3)
    times: dict[bool, list[float]] = {False: [], True: []}
    for block in range(blocks):
        for rw in (False, True) if block % 2 == 0 else (True, False):
            times[rw].append(_time_block(*sides[rw], calls))
    return statistics.median(n / o for o, n in zip(times[False], times[True]))


def bench_kind(name: str, blocks: int, calls: int) -> tuple[float, float]:
    """(eager ratio, compiled-step ratio) for one case of tests/support/compile_kind_cases.py."""
    import torch._dynamo

    from tests.support import compile_kind_cases as ck

    case = ck.CASES[name]
    torch._dynamo.reset()

    def side(rw: bool, compiled: bool) -> tuple:
        body = torch.compile(case.body(rw)) if compiled else case.body(rw)

        def f(*tensors: torch.Tensor) -> torch.Tensor:
            # a log that grows makes dynamo re-guard (and recompile) the original: keep it short
            ck.SIDE_EFFECT_LOG.clear()
            return body(*tensors)

        inputs = ck.make_inputs()
        out = case.body(rw)(*inputs)
        return f, inputs, list(inputs), torch.ones_like(out)

    ratios = []
    for compiled in (False, True):
        ratios.append(_interleaved_ratio({rw: side(rw, compiled) for rw in (False, True)}, blocks, calls))
        ck.SIDE_EFFECT_LOG.clear()
    torch._dynamo.reset()
    return ratios[0], ratios[1]


def main(argv: list[str] | None = None) -> int:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--cases", default=DEFAULT_CASES)
    parser.add_argument("--blocks", type=int, default=30)
    parser.add_argument("--calls", type=int, default=200)
    parser.add_argument("--compile-reps", type=int, default=3)
    parser.add_argument("--steps", type=int, default=200)
    parser.add_argument("--no-inductor", action="store_true")
    parser.add_argument("--kind-cases", default=DEFAULT_KIND_CASES)
    parser.add_argument("--no-kinds", action="store_true")
    parser.add_argument("--no-paths", action="store_true")
    args = parser.parse_args(argv)
    warnings.simplefilter("ignore")
    torch.set_num_threads(1)
    cases = [c for c in args.cases.split(",") if c]

    print(f"torch {torch.__version__}, {torch.get_num_threads()} thread(s)")
    print()
    print("eager forward+backward per call (median of interleaved blocks)")
    print(f"{'case':24} {'original':>12} {'rewritten':>12} {'ratio':>7}")
    ratios = []
    for case in cases:
        orig, new, ratio = bench_eager(case, args.blocks, args.calls)
        ratios.append(ratio)
        print(f"{case:24} {orig * 1e6:10.1f}us {new * 1e6:10.1f}us {ratio:7.3f}")
    print(f"{'geometric mean':24} {'':>12} {'':>12} {statistics.geometric_mean(ratios):7.3f}   (target <= 1.05)")

    if not args.no_inductor:
        print()
        print("inductor: compile time (first fwd+bwd) and step time (fwd+bwd), medians")
        print(
            f"{'case':24} {'compile orig':>13} {'compile new':>12} {'ratio':>7} {'step orig':>11} {'step new':>10} {'ratio':>7}"
        )
        for case in cases:
            result = bench_inductor(case, args.compile_reps, args.steps)
            (co, so), (cn, sn) = result[False], result[True]
            print(
                f"{case:24} {co:12.2f}s {cn:11.2f}s {cn / co:7.3f} {so * 1e6:9.1f}us {sn * 1e6:8.1f}us {sn / so:7.3f}"
            )

    if not args.no_kinds:
        print()
        print("compile kinds: rewritten / original, eager step and torch.compile (inductor) step")
        print(f"{'case':24} {'kind':>15} {'eager':>7} {'compiled':>9}")
        from tests.support import compile_kind_cases as ck

        for name in [c for c in args.kind_cases.split(",") if c]:
            eager, compiled = bench_kind(name, max(args.blocks // 3, 4), max(args.calls // 4, 20))
            print(f"{name:24} {ck.CASES[name].kind:>15} {eager:7.3f} {compiled:9.3f}")

    if not args.no_paths:
        import bench_paths

        print()
        bench_paths.report(args.compile_reps)
    return 0


if __name__ == "__main__":
    raise SystemExit(main())
