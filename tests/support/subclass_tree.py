"""A package whose Function base is subclassed in other modules, for the surfaces' tests.

``preference.py`` defines a concrete Function the engine would flatten on its own, and an
unrelated one it flattens; ``losses/dpo.py`` (relative import) and ``losses/mine.py``
(``import pkg.preference as pref``) derive from the base, and ``use.py`` reaches it
through the package's re-export. Every backward is deliberately not the derivative.
"""

from __future__ import annotations

import importlib
import textwrap
from pathlib import Path

import torch

FILES = {
    "__init__.py": "from .preference import PreferenceBase\n",
    "preference.py": """
        import torch


        class PreferenceBase(torch.autograd.Function):
            @staticmethod
            def forward(ctx, x, weight, beta=0.5):
                ctx.save_for_backward(x, weight)
                ctx.beta = beta
                return torch.sigmoid(beta * x * weight).sum()

            @staticmethod
            def backward(ctx, grad_output):
                x, weight = ctx.saved_tensors
                return grad_output * weight * ctx.beta * 3, grad_output * x * 5, None


        class Scale(torch.autograd.Function):
            @staticmethod
            def forward(ctx, x):
                return x * 2

            @staticmethod
            def backward(ctx, g):
                return g * 7
        """,
    "losses/__init__.py": "",
    "losses/dpo.py": """
        from ..preference import PreferenceBase


        class DPO(PreferenceBase):
            @staticmethod
            def forward(ctx, x, weight):
                return PreferenceBase.forward(ctx, x, weight, 2.0)

            @staticmethod
            def backward(ctx, grad_output):
                return PreferenceBase.backward(ctx, grad_output)[:2]
        """,
    "losses/mine.py": """
        import torch

        import {package}.preference as pref


        class Mine(pref.PreferenceBase):
            @staticmethod
            def backward(ctx, grad_output):
                x, weight = ctx.saved_tensors
                return grad_output * torch.ones_like(x), grad_output * weight * 11, None
        """,
    "use.py": """
        import torch

        from {package} import PreferenceBase
        from {package}.losses.dpo import DPO
        from {package}.losses.mine import Mine
        from {package}.preference import Scale


        def calls(x, w):
            return {{
                "base": PreferenceBase.apply(x, w),
                "dpo": DPO.apply(x, w),
                "mine": Mine.apply(x, w, 0.25),
                "scale": Scale.apply(x).sum(),
            }}
        """,
}


def write_tree(root: Path, package: str, *, only: tuple[str, ...] | None = None) -> Path:
    """The package under ``root`` (only the files named in ``only``, when given)."""
    directory = root / package
    for name, text in FILES.items():
        if only is not None and name not in only:
            continue
        path = directory / name
        path.parent.mkdir(parents=True, exist_ok=True)
        path.write_text(textwrap.dedent(text).lstrip("\n").format(package=package))
    return directory


def outcomes(package: str) -> dict:
    """Each call's value and its gradients, from ``package.use`` (imported now)."""
    use = importlib.import_module(f"{package}.use")
    found = {}
    for name in use.calls(torch.ones(3), torch.ones(3)):
        x = torch.linspace(-1.0, 1.0, 3, requires_grad=True)
        w = torch.linspace(0.5, 2.0, 3, requires_grad=True)
        value = use.calls(x, w)[name]
        grads = torch.autograd.grad(value, (x, w), allow_unused=True)
        found[name] = {"value": value.detach(), "grads": [g for g in grads if g is not None]}
    return found
