"""
A thunderfx reproducer (torch 2.9 form of the op: a leading ctx, args_tensor_mask):
the result of each autograd_function_apply is the operand of the next.

Environment information get from `torch.utils.collect_env.get_pretty_env_info()`:
PyTorch version: 2.9.1+cu128

Versions of Thunder related libraries:
lightning-thunder==0.2.6
"""
import os
import torch
import torch._dynamo.config
import torch._inductor.config
from torch import device


class DynamoModule(torch.nn.Module):
    def forward(self, l_h_: "f32[4]", l_w_: "f32[4]"):
        # File: /work/model.py:30 in forward, code: a1 = Scale.apply(h, w)
        fwd_body_0 = self.fwd_body_0()
        bwd_body_0 = self.bwd_body_0()
        autograd_function_apply: "f32[4]" = torch.ops.higher_order.autograd_function_apply(fwd_body_0, bwd_body_0, l_h_, l_w_, args_tensor_mask = [True, True], non_differentiable_idx = []);  fwd_body_0 = bwd_body_0 = l_h_ = None

        # File: /work/model.py:31 in forward, code: a2 = Sine.apply(a1)
        fwd_body_1 = self.fwd_body_1()
        bwd_body_1 = self.bwd_body_1()
        autograd_function_apply_1: "f32[4]" = torch.ops.higher_order.autograd_function_apply(fwd_body_1, bwd_body_1, autograd_function_apply, args_tensor_mask = [True], non_differentiable_idx = []);  fwd_body_1 = bwd_body_1 = autograd_function_apply = None

        # File: /work/model.py:32 in forward, code: a3 = Scale.apply(a2, w)
        fwd_body_2 = self.fwd_body_2()
        bwd_body_2 = self.bwd_body_2()
        autograd_function_apply_2: "f32[4]" = torch.ops.higher_order.autograd_function_apply(fwd_body_2, bwd_body_2, autograd_function_apply_1, l_w_, args_tensor_mask = [True, True], non_differentiable_idx = []);  fwd_body_2 = bwd_body_2 = autograd_function_apply_1 = l_w_ = None
        return (autograd_function_apply_2,)

    class fwd_body_0(torch.nn.Module):
        def forward(self, ctx : torch.autograd.function.Function, l_h_: "f32[4]", l_w_: "f32[4]"):
            # No stacktrace found for following nodes
            _set_grad_enabled = torch._C._set_grad_enabled(False);  _set_grad_enabled = None

            # File: /work/model.py:8 in forward, code: return x * w
            mul: "f32[4]" = l_h_ * l_w_

            # No stacktrace found for following nodes
            _set_grad_enabled_1 = torch._C._set_grad_enabled(True);  _set_grad_enabled_1 = None
            return (mul, [l_h_, l_w_])

    class bwd_body_0(torch.nn.Module):
        def forward(self, ctx : torch.autograd.function.Function, g: "f32[4]", l_h_: "f32[4]", l_w_: "f32[4]"):
            # No stacktrace found for following nodes
            _set_grad_enabled = torch._C._set_grad_enabled(False);  _set_grad_enabled = None

            # File: /work/model.py:13 in backward, code: return g * w * 3, g * x * 5
            mul: "f32[4]" = g * l_w_;  l_w_ = None
            mul_1: "f32[4]" = mul * 3;  mul = None
            mul_2: "f32[4]" = g * l_h_;  g = l_h_ = None
            mul_3: "f32[4]" = mul_2 * 5;  mul_2 = None

            # No stacktrace found for following nodes
            _set_grad_enabled_1 = torch._C._set_grad_enabled(True);  _set_grad_enabled_1 = None
            return (mul_1, mul_3)

    class fwd_body_1(torch.nn.Module):
        def forward(self, ctx : torch.autograd.function.Function, autograd_function_apply: "f32[4]"):
            # No stacktrace found for following nodes
            _set_grad_enabled = torch._C._set_grad_enabled(False);  _set_grad_enabled = None

            # File: /work/model.py:19 in forward, code: y = x.sin()
            y: "f32[4]" = autograd_function_apply.sin();  autograd_function_apply = None

            # File: /work/model.py:21 in forward, code: return y * 2
            mul: "f32[4]" = y * 2

            # No stacktrace found for following nodes
            _set_grad_enabled_1 = torch._C._set_grad_enabled(True);  _set_grad_enabled_1 = None
            return (mul, [y])

    class bwd_body_1(torch.nn.Module):
        def forward(self, ctx : torch.autograd.function.Function, g: "f32[4]", y: "f32[4]"):
            # No stacktrace found for following nodes
            _set_grad_enabled = torch._C._set_grad_enabled(False);  _set_grad_enabled = None

            # File: /work/model.py:26 in backward, code: return g * y * 7
            mul: "f32[4]" = g * y;  g = y = None
            mul_1: "f32[4]" = mul * 7;  mul = None

            # No stacktrace found for following nodes
            _set_grad_enabled_1 = torch._C._set_grad_enabled(True);  _set_grad_enabled_1 = None
            return mul_1

    class fwd_body_2(torch.nn.Module):
        def forward(self, ctx : torch.autograd.function.Function, autograd_function_apply_1: "f32[4]", l_w_: "f32[4]"):
            # No stacktrace found for following nodes
            _set_grad_enabled = torch._C._set_grad_enabled(False);  _set_grad_enabled = None

            # File: /work/model.py:8 in forward, code: return x * w
            mul: "f32[4]" = autograd_function_apply_1 * l_w_

            # No stacktrace found for following nodes
            _set_grad_enabled_1 = torch._C._set_grad_enabled(True);  _set_grad_enabled_1 = None
            return (mul, [autograd_function_apply_1, l_w_])

    class bwd_body_2(torch.nn.Module):
        def forward(self, ctx : torch.autograd.function.Function, g: "f32[4]", autograd_function_apply_1: "f32[4]", l_w_: "f32[4]"):
            # No stacktrace found for following nodes
            _set_grad_enabled = torch._C._set_grad_enabled(False);  _set_grad_enabled = None

            # File: /work/model.py:13 in backward, code: return g * w * 3, g * x * 5
            mul: "f32[4]" = g * l_w_;  l_w_ = None
            mul_1: "f32[4]" = mul * 3;  mul = None
            mul_2: "f32[4]" = g * autograd_function_apply_1;  g = autograd_function_apply_1 = None
            mul_3: "f32[4]" = mul_2 * 5;  mul_2 = None

            # No stacktrace found for following nodes
            _set_grad_enabled_1 = torch._C._set_grad_enabled(True);  _set_grad_enabled_1 = None
            return (mul_1, mul_3)


def scenario_repro():
    h = torch.randn(4, requires_grad=True)
    w = torch.randn(4, requires_grad=True)
    return [h, w], DynamoModule()(h, w)


def scenario_repro_h_only():
    h = torch.randn(4, requires_grad=True)
    w = torch.randn(4)
    return [h], DynamoModule()(h, w)
