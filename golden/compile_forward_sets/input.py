"""Forwards whose only effects are plain sets of state they did not create: an argument's
attribute, a module-level cache entry, a lazily built module-level object. Dynamo traces
and replays such a set as it did the original's, and nothing it guards changes on every
call, so the rewrite takes the split path: the original's graphs and no graph break (a
counter or an append keeps the island, golden compile_side_effect_forward)."""
import torch

CACHE = {}
_SCALES = None


class Scales:
    def __init__(self):
        self.factor = 2.0


class Recorder:
    def __init__(self):
        self.last = None


RECORDER = Recorder()


class RecordLast(torch.autograd.Function):
    @staticmethod
    def forward(ctx, x, recorder):
        recorder.last = x.detach() * 2
        return x * 3

    @staticmethod
    def backward(ctx, grad):
        return grad * 5, None


class CachedScale(torch.autograd.Function):
    @staticmethod
    def forward(ctx, x):
        key = (x.dtype, x.shape[-1])
        if key not in CACHE:
            CACHE[key] = 2.0
        ctx.scale = CACHE[key]
        return x * ctx.scale

    @staticmethod
    def backward(ctx, grad):
        return grad * ctx.scale * 3


class LazyScale(torch.autograd.Function):
    @staticmethod
    def forward(ctx, x):
        global _SCALES
        if _SCALES is None:
            _SCALES = Scales()
        return x * _SCALES.factor

    @staticmethod
    def backward(ctx, grad):
        return grad * 7


def side_effect_log():
    last = RECORDER.last
    return [last, sorted(CACHE.items(), key=str), _SCALES is not None]


def reset_side_effects():
    global _SCALES
    RECORDER.last = None
    CACHE.clear()
    _SCALES = None


def scenario_record_last():
    x = torch.randn(4, requires_grad=True)
    return [x], RecordLast.apply(x, RECORDER) + RecordLast.apply(x * 2, RECORDER)


def scenario_cached_scale():
    x = torch.randn(2, 3, requires_grad=True)
    return [x], CachedScale.apply(x) + CachedScale.apply(x * 2)


def scenario_lazy_scale():
    x = torch.randn(3, requires_grad=True)
    return [x], LazyScale.apply(x)
