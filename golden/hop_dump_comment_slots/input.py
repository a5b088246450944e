"""Flat callables named from dynamo's comments, and comments that stay with what they describe.

A dump prints `# File: ..., code: <source line>` before the nodes that line made. The
calls under one comment are that line's `X.apply(` in the order they run, when there are
as many of each; the comment over CondGraph's call names two Functions, one of which did
not run, so it names no call. The flat functions go in above a statement's own comments.
"""
import torch

W = torch.full((3,), 0.5, requires_grad=True)


# dynamo's graph of `OneIn.apply(OneIn.apply(x))` (torch 2.13): one comment, two calls
class TwiceGraph(torch.nn.Module):
    def forward(self, L_x_: "f32[3]", G_W_: "f32[3]"):
        l_x_ = L_x_
        g_w_ = G_W_

        # File: /work/capture.py:58 in f_twice_nested, code: def f_twice_nested(x): return OneIn.apply(OneIn.apply(x))
        fwd_body_0 = self.fwd_body_0
        bwd_body_0 = self.bwd_body_0
        autograd_function_apply = torch.ops.higher_order.autograd_function_apply(fwd_body_0, bwd_body_0, l_x_, g_w_, non_differentiable_idx = [], saved_for_backward_idx = [0]);  fwd_body_0 = bwd_body_0 = l_x_ = None
        getitem: "f32[3]" = autograd_function_apply[0];  autograd_function_apply = None
        fwd_body_1 = self.fwd_body_1
        bwd_body_1 = self.bwd_body_1
        autograd_function_apply_1 = torch.ops.higher_order.autograd_function_apply(fwd_body_1, bwd_body_1, getitem, g_w_, non_differentiable_idx = [], saved_for_backward_idx = [0]);  fwd_body_1 = bwd_body_1 = getitem = g_w_ = None
        getitem_1: "f32[3]" = autograd_function_apply_1[0];  autograd_function_apply_1 = None
        return (getitem_1,)

    class fwd_body_0(torch.nn.Module):
        def forward(self, l_x_: "f32[3]", g_w_: "f32[3]"):
            # No stacktrace found for following nodes
            _set_grad_enabled = torch._C._set_grad_enabled(False);  _set_grad_enabled = None

            # File: /work/capture.py:42 in forward, code: return x * W
            outs: "f32[3]" = l_x_ * g_w_;  g_w_ = None

            # No stacktrace found for following nodes
            _set_grad_enabled_1 = torch._C._set_grad_enabled(True);  _set_grad_enabled_1 = None
            return ((outs,), (l_x_,))

    class bwd_body_0(torch.nn.Module):
        def forward(self, g: "f32[3]", l_x_: "f32[3]"):
            # No stacktrace found for following nodes
            _set_grad_enabled = torch._C._set_grad_enabled(False);  _set_grad_enabled = None

            # File: /work/capture.py:46 in backward, code: return g * x * 3
            mul: "f32[3]" = g * l_x_;  g = l_x_ = None
            mul_1: "f32[3]" = mul * 3;  mul = None

            # No stacktrace found for following nodes
            _set_grad_enabled_1 = torch._C._set_grad_enabled(True);  _set_grad_enabled_1 = None
            return (mul_1, None)

    class fwd_body_1(torch.nn.Module):
        def forward(self, getitem: "f32[3]", g_w_: "f32[3]"):
            # No stacktrace found for following nodes
            _set_grad_enabled = torch._C._set_grad_enabled(False);  _set_grad_enabled = None

            # File: /work/capture.py:42 in forward, code: return x * W
            outs: "f32[3]" = getitem * g_w_;  g_w_ = None

            # No stacktrace found for following nodes
            _set_grad_enabled_1 = torch._C._set_grad_enabled(True);  _set_grad_enabled_1 = None
            return ((outs,), (getitem,))

    class bwd_body_1(torch.nn.Module):
        def forward(self, g: "f32[3]", getitem: "f32[3]"):
            # No stacktrace found for following nodes
            _set_grad_enabled = torch._C._set_grad_enabled(False);  _set_grad_enabled = None

            # File: /work/capture.py:46 in backward, code: return g * x * 3
            mul: "f32[3]" = g * getitem;  g = getitem = None
            mul_1: "f32[3]" = mul * 3;  mul = None

            # No stacktrace found for following nodes
            _set_grad_enabled_1 = torch._C._set_grad_enabled(True);  _set_grad_enabled_1 = None
            return (mul_1, None)



# dynamo's graph of `OneIn.apply(x) if flag else OneInTuple.apply(x)[0]` with flag False
class CondGraph(torch.nn.Module):
    def forward(self, L_x_: "f32[3]", G_import_capture_W: "f32[3]"):
        l_x_ = L_x_
        g_import_capture_w = G_import_capture_W

        # File: /work/capture2.py:5 in f_cond, code: return OneIn.apply(x) if flag else OneInTuple.apply(x)[0]
        fwd_body_0 = self.fwd_body_0
        bwd_body_0 = self.bwd_body_0
        autograd_function_apply = torch.ops.higher_order.autograd_function_apply(fwd_body_0, bwd_body_0, l_x_, g_import_capture_w, non_differentiable_idx = [], saved_for_backward_idx = []);  fwd_body_0 = bwd_body_0 = l_x_ = g_import_capture_w = None
        getitem: "f32[3]" = autograd_function_apply[0];  autograd_function_apply = None
        return (getitem,)

    class fwd_body_0(torch.nn.Module):
        def forward(self, l_x_: "f32[3]", g_import_capture_w: "f32[3]"):
            # No stacktrace found for following nodes
            _set_grad_enabled = torch._C._set_grad_enabled(False);  _set_grad_enabled = None

            # File: /work/capture.py:51 in forward, code: return x * W, x.cos()
            out: "f32[3]" = l_x_ * g_import_capture_w;  g_import_capture_w = None
            out_1: "f32[3]" = l_x_.cos();  l_x_ = None

            # No stacktrace found for following nodes
            _set_grad_enabled_1 = torch._C._set_grad_enabled(True);  _set_grad_enabled_1 = None
            return ((out, out_1), ())

    class bwd_body_0(torch.nn.Module):
        def forward(self, g: "f32[3]", h: "f32[3]"):
            # No stacktrace found for following nodes
            _set_grad_enabled = torch._C._set_grad_enabled(False);  _set_grad_enabled = None

            # File: /work/capture.py:54 in backward, code: return (g * 3 + h,)
            mul: "f32[3]" = g * 3;  g = None
            add: "f32[3]" = mul + h;  mul = h = None

            # No stacktrace found for following nodes
            _set_grad_enabled_1 = torch._C._set_grad_enabled(True);  _set_grad_enabled_1 = None
            return (add, None)



def sum_fwd(x):
    return (x.sum(0, keepdim=True) * 2,), (x,)


def sum_bwd(g, x):
    return (g * x * 3,)


# the op on plain functions: a flat callable named `sum` would hide the builtin (from star-importers too)
def total(x):
    return torch.ops.higher_order.autograd_function_apply(
        sum_fwd, sum_bwd, x, non_differentiable_idx=[], saved_for_backward_idx=[0]
    )[0]


def scenario_twice():
    x = torch.randn(3, requires_grad=True)
    return [x, W], TwiceGraph()(x, W)


def scenario_cond():
    x = torch.randn(3, requires_grad=True)
    return [x, W], CondGraph()(x, W)


def scenario_total():
    x = torch.randn(3, requires_grad=True)
    return [x], (total(x),)
