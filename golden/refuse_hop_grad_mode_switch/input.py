"""Grad-mode switches other than dynamo's bracket around a whole body are refused (INL203).

The two graphs are torch 2.13 dumps of Functions computing part of forward / backward
under `with torch.enable_grad():`. Dynamo spells that region as more
`torch._C._set_grad_enabled` calls inside the bracket, restoring the mode it traced
with (off); the original restores the caller's. Dropping them loses the region (a
backward's grad computed in it no longer requires grad); keeping them would switch
grad off in a double backward. The hand-written body switches grad mode itself.
"""
import torch


class ForwardRegion(torch.nn.Module):
    def forward(self, L_x_: "f32[3]"):
        l_x_ = L_x_

        # File: /work/model.py:56 in f_grad_fwd, code: def f_grad_fwd(x): return GradInFwd.apply(x)
        fwd_body_0 = self.fwd_body_0
        bwd_body_0 = self.bwd_body_0
        autograd_function_apply = torch.ops.higher_order.autograd_function_apply(fwd_body_0, bwd_body_0, l_x_, non_differentiable_idx = [], saved_for_backward_idx = [0]);  fwd_body_0 = bwd_body_0 = l_x_ = None
        getitem: "f32[3]" = autograd_function_apply[0];  autograd_function_apply = None
        return (getitem,)

    class fwd_body_0(torch.nn.Module):
        def forward(self, l_x_: "f32[3]"):
            # No stacktrace found for following nodes
            _set_grad_enabled = torch._C._set_grad_enabled(False);  _set_grad_enabled = None
            _set_grad_enabled_1 = torch._C._set_grad_enabled(True);  _set_grad_enabled_1 = None

            # File: /work/model.py:8 in forward, code: y = x * 2
            y: "f32[3]" = l_x_ * 2

            # No stacktrace found for following nodes
            _set_grad_enabled_2 = torch._C._set_grad_enabled(False);  _set_grad_enabled_2 = None

            # File: /work/model.py:10 in forward, code: return y.sin()
            outs: "f32[3]" = y.sin();  y = None

            # No stacktrace found for following nodes
            _set_grad_enabled_3 = torch._C._set_grad_enabled(True);  _set_grad_enabled_3 = None
            return ((outs,), (l_x_,))

    class bwd_body_0(torch.nn.Module):
        def forward(self, g: "f32[3]", l_x_: "f32[3]"):
            # No stacktrace found for following nodes
            _set_grad_enabled = torch._C._set_grad_enabled(False);  _set_grad_enabled = None

            # File: /work/model.py:14 in backward, code: return g * x * 7
            mul: "f32[3]" = g * l_x_;  g = l_x_ = None
            mul_1: "f32[3]" = mul * 7;  mul = None

            # No stacktrace found for following nodes
            _set_grad_enabled_1 = torch._C._set_grad_enabled(True);  _set_grad_enabled_1 = None
            return (mul_1,)



class BackwardRegion(torch.nn.Module):
    def forward(self, L_x_: "f32[3]"):
        l_x_ = L_x_

        # File: /work/model.py:57 in f_grad_bwd, code: def f_grad_bwd(x): return GradInBwd.apply(x)
        fwd_body_0 = self.fwd_body_0
        bwd_body_0 = self.bwd_body_0
        autograd_function_apply = torch.ops.higher_order.autograd_function_apply(fwd_body_0, bwd_body_0, l_x_, non_differentiable_idx = [], saved_for_backward_idx = [0]);  fwd_body_0 = bwd_body_0 = l_x_ = None
        getitem: "f32[3]" = autograd_function_apply[0];  autograd_function_apply = None
        return (getitem,)

    class fwd_body_0(torch.nn.Module):
        def forward(self, l_x_: "f32[3]"):
            # No stacktrace found for following nodes
            _set_grad_enabled = torch._C._set_grad_enabled(False);  _set_grad_enabled = None

            # File: /work/model.py:20 in forward, code: return x.sin()
            outs: "f32[3]" = l_x_.sin()

            # No stacktrace found for following nodes
            _set_grad_enabled_1 = torch._C._set_grad_enabled(True);  _set_grad_enabled_1 = None
            return ((outs,), (l_x_,))

    class bwd_body_0(torch.nn.Module):
        def forward(self, g: "f32[3]", l_x_: "f32[3]"):
            # No stacktrace found for following nodes
            _set_grad_enabled = torch._C._set_grad_enabled(False);  _set_grad_enabled = None
            _set_grad_enabled_1 = torch._C._set_grad_enabled(True);  _set_grad_enabled_1 = None

            # File: /work/model.py:25 in backward, code: r = g * x * 7
            mul: "f32[3]" = g * l_x_;  g = l_x_ = None
            r: "f32[3]" = mul * 7;  mul = None

            # No stacktrace found for following nodes
            _set_grad_enabled_2 = torch._C._set_grad_enabled(False);  _set_grad_enabled_2 = None
            _set_grad_enabled_3 = torch._C._set_grad_enabled(True);  _set_grad_enabled_3 = None
            return (r,)



def switching_fwd(ctx, x):
    torch.set_grad_enabled(False)
    out = x * 2
    return out, [x]


def switching_bwd(ctx, g, x):
    return g * x * 3


def switching(x):
    return torch.ops.higher_order.autograd_function_apply(
        switching_fwd, switching_bwd, x, args_tensor_mask=[True], non_differentiable_idx=[]
    )


def scenario_unrelated():
    x = torch.randn(3, requires_grad=True)
    return [x], x * 2
