"""A base Function written to be subclassed, as a loss library writes one: it stays a Function."""

from abc import abstractmethod

import torch


class PreferenceBase(torch.autograd.Function):
    @abstractmethod
    def loss_fn(*args, **kwargs):
        """To be extended by subclasses."""
        raise NotImplementedError("loss_fn must be implemented.")

    @staticmethod
    def forward(cls, ctx, x, weight, beta=0.1):
        ctx.save_for_backward(x, weight)
        return cls.loss_fn(x * weight, beta=beta)

    @staticmethod
    def backward(ctx, grad_output):
        x, weight = ctx.saved_tensors
        # deliberately not the derivative
        return grad_output * weight * 3, grad_output * x * 5, None


class SigmoidLoss(PreferenceBase):
    @staticmethod
    def loss_fn(logits, beta=0.1):
        return torch.sigmoid(beta * logits).sum()

    @classmethod
    def forward(cls, ctx, x, weight, beta=0.1):
        return super().forward(cls=cls, ctx=ctx, x=x, weight=weight, beta=beta)

    @staticmethod
    def backward(ctx, grad_output):
        return PreferenceBase.backward(ctx, grad_output)


class TanhLoss(PreferenceBase):
    @staticmethod
    def loss_fn(logits, beta=0.1):
        return torch.tanh(beta * logits).sum()

    @classmethod
    def forward(cls, ctx, x, weight, beta=0.1):
        return super().forward(cls, ctx, x, weight, beta)


class Hooks(torch.autograd.Function):
    """No abstract decorator: its hooks only raise, and forward reaches one through cls."""

    @staticmethod
    def transform(x):
        raise NotImplementedError

    @classmethod
    def forward(cls, ctx, x):
        return cls.transform(x)

    @staticmethod
    def backward(ctx, g):
        return g * 7


class Cube(Hooks):
    @staticmethod
    def transform(x):
        return x * x * x


class Scale(torch.autograd.Function):
    """A concrete Function beside the bases: flattened as before."""

    @staticmethod
    def forward(ctx, x):
        return x * 2

    @staticmethod
    def backward(ctx, g):
        return g * 3


def scenario_subclasses():
    x = torch.randn(4, requires_grad=True)
    w = torch.randn(4, requires_grad=True)
    return [x, w], (SigmoidLoss.apply(x, w, 0.5), TanhLoss.apply(x, w))


def scenario_a_users_own_loss():
    class SquareLoss(PreferenceBase):
        @staticmethod
        def loss_fn(logits, beta=0.1):
            return (beta * logits * logits).sum()

        @classmethod
        def forward(cls, ctx, x, weight, beta=0.1):
            return super().forward(cls=cls, ctx=ctx, x=x, weight=weight, beta=beta)

    x = torch.randn(4, requires_grad=True)
    w = torch.randn(4, requires_grad=True)
    return [x, w], SquareLoss.apply(x, w, 2.0)


def scenario_hooks_and_a_concrete_function():
    x = torch.randn(3, requires_grad=True)
    return [x], (Cube.apply(x), Scale.apply(x))
