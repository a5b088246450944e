"""Flat callables named from dynamo's comments, and comments that stay with what they describe.

A dump prints `# File: ..., code: <source line>` before the nodes that line made. The
calls under one comment are that line's `X.apply(` in the order they run, when there are
as many of each; the comment over CondGraph's call names two Functions, one of which did
not run, so it names no call. The flat functions go in above a statement's own comments.
"""
import torch
from inliner.runtime import custom_vjp

W = torch.full((3,), 0.5, requires_grad=True)


def one_in_fwd(l_x_: "f32[3]", g_w_: "f32[3]"):
    outs: "f32[3]" = l_x_ * g_w_
    return ((outs,), (l_x_,))


def one_in_bwd(residuals, g: "f32[3]"):
    (l_x_,) = residuals
    mul: "f32[3]" = g * l_x_
    mul_1: "f32[3]" = mul * 3
    return (mul_1, None)


OneIn = custom_vjp(one_in_fwd, one_in_bwd, name="OneIn", saved_for_backward_idx=(0,))


def one_in_1_fwd(getitem: "f32[3]", g_w_: "f32[3]"):
    outs: "f32[3]" = getitem * g_w_
    return ((outs,), (getitem,))


def one_in_1_bwd(residuals, g: "f32[3]"):
    (getitem,) = residuals
    mul: "f32[3]" = g * getitem
    mul_1: "f32[3]" = mul * 3
    return (mul_1, None)


OneIn_1 = custom_vjp(
    one_in_1_fwd, one_in_1_bwd, name="OneIn_1", saved_for_backward_idx=(0,)
)


# dynamo's graph of `OneIn.apply(OneIn.apply(x))` (torch 2.13): one comment, two calls
class TwiceGraph(torch.nn.Module):
    def forward(self, L_x_: "f32[3]", G_W_: "f32[3]"):
        l_x_ = L_x_
        g_w_ = G_W_

        # File: /work/capture.py:58 in f_twice_nested, code: def f_twice_nested(x): return OneIn.apply(OneIn.apply(x))
        one_in = OneIn(l_x_, g_w_);  l_x_ = None
        getitem: "f32[3]" = one_in[0];  one_in = None
        one_in_1 = OneIn_1(getitem, g_w_);  getitem = g_w_ = None
        getitem_1: "f32[3]" = one_in_1[0];  one_in_1 = None
        return (getitem_1,)



def autograd_function_fwd(l_x_: "f32[3]", g_import_capture_w: "f32[3]"):
    out: "f32[3]" = l_x_ * g_import_capture_w
    out_1: "f32[3]" = l_x_.cos()
    return ((out, out_1), ())


def autograd_function_bwd(residuals, g: "f32[3]", h: "f32[3]"):
    mul: "f32[3]" = g * 3
    add: "f32[3]" = mul + h
    return (add, None)


autograd_function = custom_vjp(
    autograd_function_fwd, autograd_function_bwd, name="autograd_function"
)


# dynamo's graph of `OneIn.apply(x) if flag else OneInTuple.apply(x)[0]` with flag False
class CondGraph(torch.nn.Module):
    def forward(self, L_x_: "f32[3]", G_import_capture_W: "f32[3]"):
        l_x_ = L_x_
        g_import_capture_w = G_import_capture_W

        # File: /work/capture2.py:5 in f_cond, code: return OneIn.apply(x) if flag else OneInTuple.apply(x)[0]
        autograd_function_1 = autograd_function(l_x_, g_import_capture_w);  l_x_ = g_import_capture_w = None
        getitem: "f32[3]" = autograd_function_1[0];  autograd_function_1 = None
        return (getitem,)



def sum_fwd(x):
    return (x.sum(0, keepdim=True) * 2,), (x,)


def sum_bwd(g, x):
    return (g * x * 3,)


def sum_op_fwd(x):
    return (x.sum(0, keepdim=True) * 2,), (x,)


def sum_op_bwd(residuals, g):
    (x,) = residuals
    return (g * x * 3,)


sum_op = custom_vjp(sum_op_fwd, sum_op_bwd, name="sum_op", saved_for_backward_idx=(0,))


# the op on plain functions: a flat callable named `sum` would hide the builtin (from star-importers too)
def total(x):
    return sum_op(x)[0]


def scenario_twice():
    x = torch.randn(3, requires_grad=True)
    return [x, W], TwiceGraph()(x, W)


def scenario_cond():
    x = torch.randn(3, requires_grad=True)
    return [x, W], CondGraph()(x, W)


def scenario_total():
    x = torch.randn(3, requires_grad=True)
    return [x], (total(x),)
