"""Benchmark (not a test): what the import hook costs at import time.

Generates a package of MODULES modules x 4 combined-style Functions and imports
all of it in fresh interpreters, the modes interleaved and repeated:

- plain:      the package as written, normal import (warm .pyc)
- hook-first: under inliner.hook with its cache emptied before each run (runs the engine)
- hook-cached: under inliner.hook with a warm cache (what every later run pays)
- on-disk:    the engine's output written to disk and imported normally (the runtime's
              own cost, with no hook: custom_vjp, torch._dynamo.allow_in_graph)

torch is imported before the clock starts in every mode; the hook's own start-up
(``import inliner.hook`` + ``install``) is inside the clock. With ``--preload-dynamo``
torch._dynamo is imported before the clock too, which removes the runtime's one-off
dynamo import from the flattened modes. With ``--control`` the classes derive from
a plain local base instead of torch.autograd.Function: nothing is flattened, so the
hook's own per-module overhead (finder, cache read) is all that differs from plain.

    python scripts/bench_import.py [--modules 50] [--reps 7] [--preload-dynamo] [--control]

With ``--startup`` it measures instead what the ``inliner-hook.pth`` the wheel ships
costs every interpreter when ``INLINER_HOOK`` is unset: ``python -c pass`` in a fresh
virtual environment, with and without the file in its site-packages (renamed away
between runs, the two interleaved), side by side with their ratio, and the line's own
cost measured in process.

    python scripts/bench_import.py --startup [--reps 300]
"""

from __future__ import annotations

import argparse
import json
import os
import shutil
import statistics
import subprocess
import sys
import tempfile
import textwrap
import time
from pathlib import Path

MODULE = '''\
"""Generated module {index}."""
import torch


class Linear{index}(torch.autograd.Function):
    @staticmethod
    def forward(ctx, x, w, scale):
        ctx.save_for_backward(x, w)
        ctx.scale = scale
        return x @ w.t() * scale

    @staticmethod
    def backward(ctx, g):
        x, w = ctx.saved_tensors
        return g @ w * ctx.scale, g.t() @ x * ctx.scale, None


class Square{index}(torch.autograd.Function):
    @staticmethod
    def forward(ctx, x):
        ctx.save_for_backward(x)
        return x * x

    @staticmethod
    def backward(ctx, g):
        (x,) = ctx.saved_tensors
        return 2 * g * x


class Clamp{index}(torch.autograd.Function):
    @staticmethod
    def forward(ctx, x, low, high):
        ctx.low, ctx.high = low, high
        ctx.save_for_backward(x)
        return x.clamp(low, high)

    @staticmethod
    def backward(ctx, g):
        (x,) = ctx.saved_tensors
        inside = (x >= ctx.low) & (x <= ctx.high)
        return g * inside, None, None


class TopK{index}(torch.autograd.Function):
    @staticmethod
    def forward(ctx, x, k):
        values, index = x.topk(k)
        ctx.mark_non_differentiable(index)
        ctx.save_for_backward(index)
        ctx.size = x.shape[-1]
        return values, index

    @staticmethod
    def backward(ctx, grad_values, grad_index):
        (index,) = ctx.saved_tensors
        grad = grad_values.new_zeros(grad_values.shape[:-1] + (ctx.size,))
        return grad.scatter(-1, index, grad_values), None


def layer(x, w):
    y = Linear{index}.apply(x, w, 0.5)
    y = Clamp{index}.apply(Square{index}.apply(y), -1.0, 1.0)
    return TopK{index}.apply(y, 2)[0]
'''

PROBE = """
import importlib, json, sys, time
import torch
{preload}
t0 = time.perf_counter()
{hook}
t1 = time.perf_counter()
modules = [importlib.import_module("{package}.m%02d" % i) for i in range({count})]
t2 = time.perf_counter()
flat = sum(not isinstance(getattr(m, "Linear%d" % i), type) for i, m in enumerate(modules))
print(json.dumps({{"hook": t1 - t0, "import": t2 - t1, "total": t2 - t0, "flat": flat,
                   "dynamo": "torch._dynamo" in sys.modules, "libcst": "libcst" in sys.modules}}))
"""
HOOK = "import inliner.hook; inliner.hook.install([{package!r}])"
MODES = ("plain", "hook-first", "hook-cached", "on-disk")


def generate(root: Path, count: int, control: bool) -> None:
    from inliner import flatten

    for package, rewrite in (("benchpkg", False), ("benchpkg_flat", True)):
        directory = root / package
        directory.mkdir(parents=True)
        (directory / "__init__.py").write_text("")
        for index in range(count):
            text = MODULE.format(index=index)
            if control:
                text = text.replace("(torch.autograd.Function)", "(_Base)").replace(
                    "import torch\n", "import torch\n\n\nclass _Base:\n    pass\n", 1
                )
            if rewrite:
                result = flatten(text, path=f"m{index:02d}.py")
                assert result.changed != control and not result.refused, result.diagnostics
                text = result.source
            (directory / f"m{index:02d}.py").write_text(text)


def clear_hook_cache(root: Path) -> None:
    for entry in (root / "benchpkg" / "__pycache__").glob("*.inliner-*.pyc"):
        entry.unlink()


def run(mode: str, root: Path, count: int, preload: bool, control: bool) -> dict:
    package = "benchpkg_flat" if mode == "on-disk" else "benchpkg"
    hook = HOOK.format(package=package) if mode.startswith("hook") else "pass"
    code = PROBE.format(package=package, count=count, hook=hook, preload="import torch._dynamo" if preload else "")
    env = {k: v for k, v in os.environ.items() if k not in ("PYTHONDONTWRITEBYTECODE", "INLINER_HOOK")}
    env["PYTHONPATH"] = str(root)
    if mode == "hook-first":
        clear_hook_cache(root)
    done = subprocess.run([sys.executable, "-c", code], env=env, capture_output=True, text=True, cwd=root)
    if done.returncode != 0:
        raise SystemExit(f"{mode} failed:\n{done.stderr}")
    result = json.loads(done.stdout.strip().splitlines()[-1])
    expected = 0 if mode == "plain" or control else count
    assert result["flat"] == expected, (mode, result)
    assert mode != "hook-cached" or not result["libcst"], "a cached import must not load the engine"
    return result


def startup(reps: int) -> int:
    """Interpreter start-up with and without the shipped .pth, INLINER_HOOK unset."""
    import venv

    sys.path.insert(0, str(Path(__file__).resolve().parent.parent))
    from inliner.hook._pth import PTH_LINE, SHIPPED_PTH_NAME

    root = Path(tempfile.mkdtemp(prefix="inliner-startup-"))
    try:
        venv.EnvBuilder(with_pip=False).create(root / "venv")
        python = root / "venv" / ("Scripts/python.exe" if os.name == "nt" else "bin/python")
        purelib = subprocess.run(
            [str(python), "-c", "import sysconfig; print(sysconfig.get_paths()['purelib'])"],
            capture_output=True,
            text=True,
            check=True,
        ).stdout.strip()
        present, absent = Path(purelib) / SHIPPED_PTH_NAME, Path(purelib) / (SHIPPED_PTH_NAME + ".off")
        present.write_text(PTH_LINE, encoding="utf-8")
        env = {k: v for k, v in os.environ.items() if not k.startswith(("INLINER_", "PYTHON"))}
        # the file is read: with the variable set, its line runs (and says inliner is not installed there)
        said = subprocess.run(
            [str(python), "-c", "pass"], env={**env, "INLINER_HOOK": "x"}, capture_output=True, text=True
        )
        assert "INLINER_HOOK is set" in said.stderr, said.stderr
        probe = subprocess.run(
            [
                str(python),
                "-c",
                "import sys; print('inliner' in sys.modules or 'inliner.hook._startup' in sys.modules)",
            ],
            env=env,
            capture_output=True,
            text=True,
            check=True,
        )
        assert probe.stdout.strip() == "False", "unset: the line imports nothing"

        def once() -> float:
            t0 = time.perf_counter()
            subprocess.run([str(python), "-c", "pass"], env=env, check=True)
            return time.perf_counter() - t0

        samples: dict[str, list[float]] = {"without .pth": [], "with .pth": []}
        for _ in range(10):  # warm-up
            once()
        for rep in range(reps):
            for mode in ("with .pth", "without .pth") if rep % 2 else ("without .pth", "with .pth"):
                if mode == "with .pth":
                    absent.replace(present) if absent.exists() else None
                else:
                    present.replace(absent) if present.exists() else None
                samples[mode].append(once())

        # the file alone, cold: what site.py does with it (open, read, compile and exec the line),
        # timed around the first call in fresh interpreters started without site (-S)
        cold_code = (
            "import site, time; t = time.perf_counter(); "
            f"site.addpackage({purelib!r}, {SHIPPED_PTH_NAME!r}, set()); print(time.perf_counter() - t)"
        )
        absent.replace(present) if absent.exists() else None
        cold = [
            float(
                subprocess.run(
                    [str(python), "-S", "-c", cold_code], env=env, capture_output=True, text=True, check=True
                ).stdout
            )
            for _ in range(30)
        ]
    finally:
        shutil.rmtree(root, ignore_errors=True)

    with_, without = samples["with .pth"], samples["without .pth"]
    paired = sorted(a - b for a, b in zip(with_, without))
    quartiles = statistics.quantiles(paired, n=4)
    print(f"python -c pass in a fresh venv, INLINER_HOOK unset, {reps} interleaved pairs of runs")
    print(f"{'':<14} {'median ms':>10} {'mean ms':>9} {'min ms':>8}")
    for mode, values in samples.items():
        print(
            f"{mode:<14} {statistics.median(values) * 1e3:>10.2f} {statistics.fmean(values) * 1e3:>9.2f} "
            f"{min(values) * 1e3:>8.2f}"
        )
    print(
        textwrap.dedent(f"""
        with / without (medians): {statistics.median(with_) / statistics.median(without):.3f}x
        paired difference (with - without, same pair): median {statistics.median(paired) * 1e3:+.2f} ms, \
quartiles [{quartiles[0] * 1e3:+.2f}, {quartiles[2] * 1e3:+.2f}] ms
        the file alone, cold (site.addpackage, first call, median of {len(cold)} fresh interpreters): \
{statistics.median(cold) * 1e6:.0f} us = {statistics.median(cold) / statistics.median(without) * 100:.2f}% of the median start-up""")
    )
    return 0


def main(argv: list[str] | None = None) -> int:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--modules", type=int, default=50)
    parser.add_argument("--reps", type=int, default=None, help="runs per mode (default: 7, or 300 with --startup)")
    parser.add_argument("--preload-dynamo", action="store_true")
    parser.add_argument("--control", action="store_true", help="no autograd.Function: the hook's bare overhead")
    parser.add_argument("--startup", action="store_true", help="interpreter start-up with and without the .pth")
    args = parser.parse_args(argv)
    if args.startup:
        return startup(args.reps or 300)
    args.reps = args.reps or 7

    root = Path(tempfile.mkdtemp(prefix="inliner-bench-"))
    try:
        generate(root, args.modules, args.control)
        for mode in MODES:  # warm-up: the normal .pyc files and the hook's cache
            run(mode, root, args.modules, args.preload_dynamo, args.control)
        samples: dict[str, list[dict]] = {mode: [] for mode in MODES}
        for rep in range(args.reps):
            order = MODES[rep % len(MODES) :] + MODES[: rep % len(MODES)]  # rotate: no mode always first
            for mode in order:
                samples[mode].append(run(mode, root, args.modules, args.preload_dynamo, args.control))
    finally:
        shutil.rmtree(root, ignore_errors=True)

    kind = "classes with a plain base (control)" if args.control else "autograd.Functions"
    print(
        f"{args.modules} modules x 4 {kind}, {args.reps} interleaved runs per mode, fresh interpreters; "
        f"torch{' and torch._dynamo' if args.preload_dynamo else ''} imported before the clock"
    )
    plain = statistics.median(s["total"] for s in samples["plain"])
    print(f"{'mode':<12} {'median ms':>10} {'min ms':>8} {'hook ms':>8} {'x plain':>8}  dynamo loaded")
    for mode in MODES:
        totals = [s["total"] for s in samples[mode]]
        median = statistics.median(totals)
        hook = statistics.median(s["hook"] for s in samples[mode])
        dynamo = samples[mode][0]["dynamo"]
        print(
            f"{mode:<12} {median * 1e3:>10.1f} {min(totals) * 1e3:>8.1f} {hook * 1e3:>8.1f} {median / plain:>8.2f}  {dynamo}"
        )
    cached = statistics.median(s["total"] for s in samples["hook-cached"])
    on_disk = statistics.median(s["total"] for s in samples["on-disk"])
    print(
        textwrap.dedent(f"""
        cached hook / plain      = {cached / plain:.2f}x (target <= 1.2x)
        cached hook / on-disk    = {cached / on_disk:.2f}x (the hook's own overhead over the same flattened code)
        first hook / cached hook = {statistics.median(s["total"] for s in samples["hook-first"]) / cached:.1f}x""")
    )
    return 0


if __name__ == "__main__":
    sys.exit(main())
