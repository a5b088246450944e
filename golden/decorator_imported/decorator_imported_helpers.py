"""Decorators the engine cannot see from input.py: it replays them as they are."""

import functools

import torch

RANGES = []  # what a profiler range marker would push and pop, per call


def marked(name):
    def decorator(fn):
        @functools.wraps(fn)
        def wrapper(*args, **kwargs):
            RANGES.append(name)
            try:
                return fn(*args, **kwargs)
            finally:
                RANGES.append("/" + name)

        return wrapper

    return decorator


def in_float64(fn):
    """Run in float64 and give back the first tensor argument's dtype."""

    @functools.wraps(fn)
    def wrapper(ctx, *args):
        dtype = next(a.dtype for a in args if isinstance(a, torch.Tensor))
        wide = [a.double() if isinstance(a, torch.Tensor) else a for a in args]
        out = fn(ctx, *wide)
        if isinstance(out, tuple):
            return tuple(o.to(dtype) if isinstance(o, torch.Tensor) else o for o in out)
        return out.to(dtype)

    return wrapper
