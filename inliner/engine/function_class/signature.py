"""The parameters of a Function's members: the leading ctx (or cls) parameter and those after it."""

from __future__ import annotations

import libcst as cst

from inliner.engine.codes import Code
from inliner.engine.model import Refuse


def first_param(func: cst.FunctionDef, cls_name: str) -> str:
    """The name of ``func``'s ctx parameter; refuses a member that takes none."""
    params = func.params.posonly_params or func.params.params
    if not params:
        raise Refuse(Code.SIGNATURE, f"`{func.name.value}` takes no ctx parameter", func)
    return params[0].name.value


def params_without_first(params: cst.Parameters) -> cst.Parameters:
    """``params`` without the leading ctx (or cls): what the flat function takes."""
    if params.posonly_params:
        return params.with_changes(posonly_params=params.posonly_params[1:])
    return params.with_changes(params=params.params[1:])


def param_names(params: cst.Parameters) -> list[str]:
    """Every name ``params`` binds, ``*args`` and ``**kwargs`` included."""
    out = [p.name.value for p in (*params.posonly_params, *params.params)]
    if isinstance(params.star_arg, cst.Param):
        out.append(params.star_arg.name.value)
    out.extend(p.name.value for p in params.kwonly_params)
    if params.star_kwarg is not None:
        out.append(params.star_kwarg.name.value)
    return out
