"""Forwards whose only effects are plain sets of state they did not create: an argument's
attribute, a module-level cache entry, a lazily built module-level object. Dynamo traces
and replays such a set as it did the original's, and nothing it guards changes on every
call, so the rewrite takes the split path: the original's graphs and no graph break (a
counter or an append keeps the island, golden compile_side_effect_forward)."""
import torch
from inliner.runtime import custom_vjp

CACHE = {}
_SCALES = None


class Scales:
    def __init__(self):
        self.factor = 2.0


class Recorder:
    def __init__(self):
        self.last = None


RECORDER = Recorder()


def record_last_fwd(x, recorder):
    recorder.last = x.detach() * 2
    return x * 3, ()


def record_last_bwd(residuals, grad):
    return grad * 5, None


RecordLast = custom_vjp(
    record_last_fwd,
    record_last_bwd,
    name="RecordLast",
    compile_kind="opaque",
    compile_reason="forward sets argument recorder.last",
    backward_kind="traceable",
)


def cached_scale_fwd(x):
    key = (x.dtype, x.shape[-1])
    if key not in CACHE:
        CACHE[key] = 2.0
    scale = CACHE[key]
    return x * scale, (scale,)


def cached_scale_bwd(residuals, grad):
    (scale,) = residuals
    return grad * scale * 3


CachedScale = custom_vjp(
    cached_scale_fwd,
    cached_scale_bwd,
    name="CachedScale",
    ctx_attrs={0: "scale"},
    compile_kind="opaque",
    compile_reason="forward reads module-level CACHE, which the module changes at run time",
    backward_kind="traceable",
)


def lazy_scale_fwd(x):
    global _SCALES
    if _SCALES is None:
        _SCALES = Scales()
    return x * _SCALES.factor, ()


def lazy_scale_bwd(residuals, grad):
    return grad * 7


LazyScale = custom_vjp(
    lazy_scale_fwd,
    lazy_scale_bwd,
    name="LazyScale",
    compile_kind="opaque",
    compile_reason="forward reads module-level _SCALES, which the module changes at run time",
    backward_kind="traceable",
)


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
    return [x], RecordLast(x, RECORDER) + RecordLast(x * 2, RECORDER)


def scenario_cached_scale():
    x = torch.randn(2, 3, requires_grad=True)
    return [x], CachedScale(x) + CachedScale(x * 2)


def scenario_lazy_scale():
    x = torch.randn(3, requires_grad=True)
    return [x], LazyScale(x)
