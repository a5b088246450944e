"""torch 2.9.1 dumps of Functions that read a module-level tensor W (a lifted operand, with no
gradient slot of its own): backward bodies returning one tensor, a 1-tuple and a 2-tuple."""
import torch
from inliner.runtime import custom_vjp

W = torch.full((3,), 0.5, requires_grad=True)


def one_in_fwd(x: "f32[3]", g_w_: "f32[3]"):
    mul: "f32[3]" = x * g_w_
    return (mul, [x])


def one_in_bwd(residuals, g: "f32[3]"):
    (x,) = residuals
    mul: "f32[3]" = g * x
    mul_1: "f32[3]" = mul * 3
    return (mul_1, None)


OneIn = custom_vjp(one_in_fwd, one_in_bwd, name="OneIn")


class OneInGraph(torch.nn.Module):
    def forward(self, L_x_: "f32[3]", G_W_: "f32[3]"):
        l_x_ = L_x_
        g_w_ = G_W_

         # File: /work/model.py:64 in f_one_in, code: def f_one_in(x): return OneIn.apply(x)
        one_in: "f32[3]" = OneIn(l_x_, g_w_);  l_x_ = g_w_ = None
        return (one_in,)



def one_in_tuple_fwd(x: "f32[3]", g_w_: "f32[3]"):
    mul: "f32[3]" = x * g_w_
    cos: "f32[3]" = x.cos()
    return ((mul, cos), [])


def one_in_tuple_bwd(residuals, g: "f32[3]", h: "f32[3]"):
    mul: "f32[3]" = g * 3
    add: "f32[3]" = mul + h
    return (add, None)


OneInTuple = custom_vjp(one_in_tuple_fwd, one_in_tuple_bwd, name="OneInTuple")


class OneInTupleGraph(torch.nn.Module):
    def forward(self, L_x_: "f32[3]", G_W_: "f32[3]"):
        l_x_ = L_x_
        g_w_ = G_W_

         # File: /work/model.py:65 in f_one_in_tuple, code: def f_one_in_tuple(x): return OneInTuple.apply(x)
        one_in_tuple = OneInTuple(l_x_, g_w_);  l_x_ = g_w_ = None
        getitem: "f32[3]" = one_in_tuple[0]
        getitem_1: "f32[3]" = one_in_tuple[1];  one_in_tuple = None
        return (getitem, getitem_1)



def two_in_fwd(x: "f32[3]", y: "f32[3]", g_w_: "f32[3]"):
    mul: "f32[3]" = x * y
    mul_1: "f32[3]" = mul * g_w_
    return (mul_1, [y, x])


def two_in_bwd(residuals, g: "f32[3]"):
    y, x = residuals
    mul: "f32[3]" = g * y
    mul_1: "f32[3]" = mul * 3
    mul_2: "f32[3]" = g * x
    mul_3: "f32[3]" = mul_2 * 5
    return (mul_1, mul_3, None)


TwoIn = custom_vjp(two_in_fwd, two_in_bwd, name="TwoIn")


class TwoInGraph(torch.nn.Module):
    def forward(self, L_x_: "f32[3]", L_y_: "f32[3]", G_W_: "f32[3]"):
        l_x_ = L_x_
        l_y_ = L_y_
        g_w_ = G_W_

         # File: /work/model.py:63 in f_two_in, code: def f_two_in(x, y): return TwoIn.apply(x, y)
        two_in: "f32[3]" = TwoIn(l_x_, l_y_, g_w_);  l_x_ = l_y_ = g_w_ = None
        return (two_in,)



def scenario_one_tensor():
    x = torch.randn(3, requires_grad=True)
    return [x, W], OneInGraph()(x, W)


def scenario_one_tuple():
    x = torch.randn(3, requires_grad=True)
    return [x, W], OneInTupleGraph()(x, W)


def scenario_two_tuple():
    x = torch.randn(3, requires_grad=True)
    y = torch.randn(3, requires_grad=True)
    return [x, y, W], TwoInGraph()(x, y, W)
