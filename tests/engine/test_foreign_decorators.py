"""A decorator imported from another module of the project is walked there
(inliner/engine/analysis/foreign.py): one that only does what dynamo traces puts the call
on the split path (``compile_kind="opaque"``, ``split_decorators=True``), one that writes
outside state keeps it an island (``side_effecting``), and one whose module the engine
cannot read, or whose binding it does not follow, stays an island as before.

The compile paths these give are checked under torch.compile in
tests/runtime/test_split_decorators.py; the surfaces' readers in
tests/surfaces/test_project_sources.py.
"""

from __future__ import annotations

import pytest

from inliner import flatten

UTILS = """\
import functools

import torch

CALLS = []


def ensure_contiguous(fn):
    @functools.wraps(fn)
    def wrapper(ctx, *args, **kwargs):
        args = [a.contiguous() if isinstance(a, torch.Tensor) else a for a in args]
        return fn(ctx, *args, **kwargs)

    return wrapper


def counted(fn):
    @functools.wraps(fn)
    def wrapper(*args, **kwargs):
        CALLS.append(1)
        return fn(*args, **kwargs)

    return wrapper


def twice(fn):
    return fn


def twice(fn):  # bound twice: which one runs is not known statically
    return fn
"""

CLASS = """\
import torch
{imports}


class Fn(torch.autograd.Function):
    @staticmethod
    @{decorator}
    def forward(ctx, x):
        return x * 2

    @staticmethod
    def backward(ctx, g):
        return g * 3
"""

#: the project: pkg/utils.py, pkg/__init__.py re-exporting from it (as fla.utils does), and
#: the module flattened, pkg/ops/fn.py (or pkg/__init__.py)
PROJECT = {"pkg.utils": UTILS, "pkg": "from .utils import counted, ensure_contiguous\n"}


def _kind(imports: str, decorator: str, *, module: str = "pkg.ops.fn", path: str = "pkg/ops/fn.py", sources=PROJECT):
    source = CLASS.format(imports=imports, decorator=decorator)
    result = flatten(source, path=path, module=module, sources=sources.get if sources is not None else None)
    assert result.flattened == ("Fn",), [d.format() for d in result.diagnostics]
    kind = dict(result.compile_kinds)["Fn"].kind
    return kind, "split_decorators=True" in result.source


@pytest.mark.parametrize(
    "imports,decorator",
    [
        ("from pkg.utils import ensure_contiguous", "ensure_contiguous"),
        ("from ..utils import ensure_contiguous", "ensure_contiguous"),
        ("from ..utils import ensure_contiguous as contiguous", "contiguous"),
        ("from pkg import utils", "utils.ensure_contiguous"),
        ("from .. import utils", "utils.ensure_contiguous"),
        ("import pkg.utils", "pkg.utils.ensure_contiguous"),
        ("import pkg.utils as u", "u.ensure_contiguous"),
        ("from pkg import ensure_contiguous", "ensure_contiguous"),  # re-exported
    ],
)
def test_an_imported_wrapper_that_writes_nothing_outside_takes_the_split_path(imports, decorator):
    assert _kind(imports, decorator) == ("opaque", True)


def test_a_relative_import_in_a_package_s_init_resolves_from_that_package():
    assert _kind("from .utils import ensure_contiguous", "ensure_contiguous", module="pkg", path="pkg/__init__.py") == (
        "opaque",
        True,
    )


@pytest.mark.parametrize(
    "imports,decorator,sources",
    [
        # walked there: it appends to a module-level list, which dynamo would guard
        ("from pkg.utils import counted", "counted", PROJECT),
        ("from pkg import counted", "counted", PROJECT),  # re-exported
        # not seen into: no reader, a module it cannot read, a name bound twice there,
        # a name not defined there, a relative import above the top-level package
        ("from pkg.utils import ensure_contiguous", "ensure_contiguous", None),
        ("from other.utils import ensure_contiguous", "ensure_contiguous", PROJECT),
        ("from pkg.utils import twice", "twice", PROJECT),
        ("from pkg.utils import missing", "missing", PROJECT),
        ("from ....utils import ensure_contiguous", "ensure_contiguous", PROJECT),
    ],
)
def test_an_imported_wrapper_the_engine_cannot_clear_keeps_the_island(imports, decorator, sources):
    assert _kind(imports, decorator, sources=sources) == ("side_effecting", False)


def test_a_module_that_does_not_parse_is_not_seen_into():
    broken = {"pkg.utils": "def ensure_contiguous(fn:\n"}
    assert _kind("from pkg.utils import ensure_contiguous", "ensure_contiguous", sources=broken) == (
        "side_effecting",
        False,
    )


def test_each_module_is_read_once_per_flattening():
    asked: list[str] = []

    def read(module: str) -> str | None:
        asked.append(module)
        return PROJECT.get(module)

    source = CLASS.format(imports="from pkg.utils import ensure_contiguous", decorator="ensure_contiguous")
    source += source.split("\n\n\n", 1)[1].replace("class Fn", "class Other")
    result = flatten(source, path="pkg/ops/fn.py", module="pkg.ops.fn", sources=read)
    assert result.flattened == ("Fn", "Other")
    assert asked == ["pkg.utils"]


AMP = """\
import functools

import torch

from pkg.env import check_version

device = "cuda"
device_torch_lib = getattr(torch, device)

if check_version("2.4"):
    autocast_custom_fwd = functools.partial(torch.amp.custom_fwd, device_type=device)
else:
    autocast_custom_fwd = device_torch_lib.amp.custom_fwd

if check_version("2.4"):
    from torch.amp import custom_fwd
else:
    from torch.cuda.amp import custom_fwd

mixed = torch.amp.custom_fwd
if check_version("2.4"):
    mixed = torch.amp.custom_bwd

maybe = torch.amp.custom_fwd
if check_version("2.4"):
    maybe = functools.lru_cache

rebound = torch.amp.custom_fwd


def rebind():
    global rebound
    rebound = functools.lru_cache


def get_amp_custom_fwd_bwd():
    device = "cuda"
    if check_version("2.4"):
        return (
            functools.partial(torch.amp.custom_fwd, device_type=device),
            functools.partial(torch.amp.custom_bwd, device_type=device),
        )
    return torch.cuda.amp.custom_fwd, torch.cuda.amp.custom_bwd


amp_custom_fwd, amp_custom_bwd = get_amp_custom_fwd_bwd()


def get_mixed():
    if check_version("2.4"):
        return torch.amp.custom_fwd, functools.lru_cache
    return functools.lru_cache, torch.amp.custom_fwd


mixed_fwd, mixed_other = get_mixed()


def get_local():
    torch = object()
    return (torch.amp.custom_fwd,)


(local_fwd,) = get_local()


def custom_amp_decorator(dec, cuda_amp_deprecated):
    def decorator(*args, **kwargs):
        if cuda_amp_deprecated:
            kwargs["device_type"] = "cuda"
        return dec(*args, **kwargs)

    return decorator


def counting_decorator(dec):
    def decorator(*args, **kwargs):
        CALLS.append(1)
        return dec(*args, **kwargs)

    return decorator


CALLS = []

if check_version("2.4"):
    deprecated = True
    from torch.amp import custom_fwd as adapted, custom_bwd as counted
else:
    deprecated = False
    from torch.cuda.amp import custom_fwd as adapted, custom_bwd as counted

adapted = custom_amp_decorator(adapted, deprecated)
counted = counting_decorator(counted)
"""


@pytest.mark.parametrize("name", ["autocast_custom_fwd", "custom_fwd", "amp_custom_fwd", "adapted"])
def test_a_name_bound_only_to_torch_s_amp_decorators_in_each_branch_takes_the_split_path(name):
    """fla's ``autocast_custom_fwd`` (liger-kernel's ``amp_custom_fwd``, unpacked from what
    a function returns; mamba-ssm's ``custom_fwd``, passed through a factory that adds a
    keyword): which branch ran is not known, but each makes it torch's ``custom_fwd``,
    which dynamo traces around fwd as around the original's forward."""
    sources = {"pkg.utils": AMP, "pkg": "from .utils import autocast_custom_fwd\n"}
    assert _kind(f"from pkg.utils import {name}", name, sources=sources) == ("opaque", True)
    assert _kind("from pkg import autocast_custom_fwd", "autocast_custom_fwd", sources=sources) == ("opaque", True)


@pytest.mark.parametrize("name", ["mixed", "maybe", "rebound", "mixed_fwd", "local_fwd", "counted"])
def test_a_name_that_may_be_something_else_keeps_the_island(name):
    """Bound to custom_fwd in one branch and custom_bwd in the other, to a function that is
    not torch's, rebound by a function through ``global``, unpacked from a function one of
    whose returns gives something else there, or a name that function binds itself, or
    passed through a factory whose decorator does more than call it."""
    assert _kind(f"from pkg.utils import {name}", name, sources={"pkg.utils": AMP}) == ("side_effecting", False)
