"""
A thunderfx reproducer (torch 2.9 form of the op: a leading ctx, args_tensor_mask):
the result of each autograd_function_apply is the operand of the next.

Environment information get from `torch.utils.collect_env.get_pretty_env_info()`:
PyTorch version: 2.9.1+cu128

Versions of Thunder related libraries:
lightning-thunder==0.2.6
"""
from inliner.runtime import custom_vjp
import os
import torch
import torch._dynamo.config
import torch._inductor.config
from torch import device


def scale_fwd(l_h_: "f32[4]", l_w_: "f32[4]"):
    mul: "f32[4]" = l_h_ * l_w_
    return (mul, [l_h_, l_w_])


def scale_bwd(residuals, g: "f32[4]"):
    l_h_, l_w_ = residuals
    mul: "f32[4]" = g * l_w_
    mul_1: "f32[4]" = mul * 3
    mul_2: "f32[4]" = g * l_h_
    mul_3: "f32[4]" = mul_2 * 5
    return (mul_1, mul_3)


Scale = custom_vjp(scale_fwd, scale_bwd, name="Scale")


def sine_fwd(scale: "f32[4]"):
    y: "f32[4]" = scale.sin()

    mul: "f32[4]" = y * 2
    return (mul, [y])


def sine_bwd(residuals, g: "f32[4]"):
    (y,) = residuals
    mul: "f32[4]" = g * y
    mul_1: "f32[4]" = mul * 7
    return mul_1


Sine = custom_vjp(sine_fwd, sine_bwd, name="Sine")


def scale_1_fwd(sine: "f32[4]", l_w_: "f32[4]"):
    mul: "f32[4]" = sine * l_w_
    return (mul, [sine, l_w_])


def scale_1_bwd(residuals, g: "f32[4]"):
    sine, l_w_ = residuals
    mul: "f32[4]" = g * l_w_
    mul_1: "f32[4]" = mul * 3
    mul_2: "f32[4]" = g * sine
    mul_3: "f32[4]" = mul_2 * 5
    return (mul_1, mul_3)


Scale_1 = custom_vjp(scale_1_fwd, scale_1_bwd, name="Scale_1")


class DynamoModule(torch.nn.Module):
    def forward(self, l_h_: "f32[4]", l_w_: "f32[4]"):
        # File: /work/model.py:30 in forward, code: a1 = Scale.apply(h, w)
        scale: "f32[4]" = Scale(l_h_, l_w_);  l_h_ = None

        # File: /work/model.py:31 in forward, code: a2 = Sine.apply(a1)
        sine: "f32[4]" = Sine(scale);  scale = None

        # File: /work/model.py:32 in forward, code: a3 = Scale.apply(a2, w)
        scale_1: "f32[4]" = Scale_1(sine, l_w_);  sine = l_w_ = None
        return (scale_1,)


def scenario_repro():
    h = torch.randn(4, requires_grad=True)
    w = torch.randn(4, requires_grad=True)
    return [h, w], DynamoModule()(h, w)


def scenario_repro_h_only():
    h = torch.randn(4, requires_grad=True)
    w = torch.randn(4)
    return [h], DynamoModule()(h, w)
