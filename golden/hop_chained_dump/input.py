"""A torch 2.13 dynamo graph (print_readable) of three chained Functions: each result feeds the next call."""
import torch


class GraphModule(torch.nn.Module):
    def forward(self, L_x_: "f32[4]", L_w_: "f32[4]"):
        l_x_ = L_x_
        l_w_ = L_w_

        # File: /work/model.py:6 in f, code: a1 = SaveInputs.apply(x, w)
        fwd_body_0 = self.fwd_body_0
        bwd_body_0 = self.bwd_body_0
        autograd_function_apply = torch.ops.higher_order.autograd_function_apply(fwd_body_0, bwd_body_0, l_x_, l_w_, non_differentiable_idx = [], saved_for_backward_idx = [0, 1]);  fwd_body_0 = bwd_body_0 = l_x_ = None
        getitem: "f32[4]" = autograd_function_apply[0];  autograd_function_apply = None

        # File: /work/model.py:7 in f, code: a2 = SaveIntermediate.apply(a1)
        fwd_body_1 = self.fwd_body_1
        bwd_body_1 = self.bwd_body_1
        autograd_function_apply_1 = torch.ops.higher_order.autograd_function_apply(fwd_body_1, bwd_body_1, getitem, non_differentiable_idx = [], saved_for_backward_idx = [0]);  fwd_body_1 = bwd_body_1 = getitem = None
        getitem_1: "f32[4]" = autograd_function_apply_1[0];  autograd_function_apply_1 = None

        # File: /work/model.py:8 in f, code: a3 = SaveInputs.apply(a2, w)
        fwd_body_2 = self.fwd_body_2
        bwd_body_2 = self.bwd_body_2
        autograd_function_apply_2 = torch.ops.higher_order.autograd_function_apply(fwd_body_2, bwd_body_2, getitem_1, l_w_, non_differentiable_idx = [], saved_for_backward_idx = [0, 1]);  fwd_body_2 = bwd_body_2 = getitem_1 = l_w_ = None
        getitem_2: "f32[4]" = autograd_function_apply_2[0];  autograd_function_apply_2 = None
        return (getitem_2,)

    class fwd_body_0(torch.nn.Module):
        def forward(self, l_x_: "f32[4]", l_w_: "f32[4]"):
            # No stacktrace found for following nodes
            _set_grad_enabled = torch._C._set_grad_enabled(False);  _set_grad_enabled = None

            # File: /work/model.py:19 in forward, code: return x * w
            outs: "f32[4]" = l_x_ * l_w_

            # No stacktrace found for following nodes
            _set_grad_enabled_1 = torch._C._set_grad_enabled(True);  _set_grad_enabled_1 = None
            return ((outs,), (l_w_, l_x_))

    class bwd_body_0(torch.nn.Module):
        def forward(self, g: "f32[4]", l_w_: "f32[4]", l_x_: "f32[4]"):
            # No stacktrace found for following nodes
            _set_grad_enabled = torch._C._set_grad_enabled(False);  _set_grad_enabled = None

            # File: /work/model.py:24 in backward, code: return g * w * 3, g * x * 5
            mul: "f32[4]" = g * l_w_;  l_w_ = None
            mul_1: "f32[4]" = mul * 3;  mul = None
            mul_2: "f32[4]" = g * l_x_;  g = l_x_ = None
            mul_3: "f32[4]" = mul_2 * 5;  mul_2 = None

            # No stacktrace found for following nodes
            _set_grad_enabled_1 = torch._C._set_grad_enabled(True);  _set_grad_enabled_1 = None
            return (mul_1, mul_3)

    class fwd_body_1(torch.nn.Module):
        def forward(self, getitem: "f32[4]"):
            # No stacktrace found for following nodes
            _set_grad_enabled = torch._C._set_grad_enabled(False);  _set_grad_enabled = None

            # File: /work/model.py:30 in forward, code: y = x.sin()
            y: "f32[4]" = getitem.sin();  getitem = None

            # File: /work/model.py:32 in forward, code: return y * 2
            outs: "f32[4]" = y * 2

            # No stacktrace found for following nodes
            _set_grad_enabled_1 = torch._C._set_grad_enabled(True);  _set_grad_enabled_1 = None
            return ((outs,), (y,))

    class bwd_body_1(torch.nn.Module):
        def forward(self, g: "f32[4]", y: "f32[4]"):
            # No stacktrace found for following nodes
            _set_grad_enabled = torch._C._set_grad_enabled(False);  _set_grad_enabled = None

            # File: /work/model.py:37 in backward, code: return g * y * 7
            mul: "f32[4]" = g * y;  g = y = None
            mul_1: "f32[4]" = mul * 7;  mul = None

            # No stacktrace found for following nodes
            _set_grad_enabled_1 = torch._C._set_grad_enabled(True);  _set_grad_enabled_1 = None
            return (mul_1,)

    class fwd_body_2(torch.nn.Module):
        def forward(self, getitem_1: "f32[4]", l_w_: "f32[4]"):
            # No stacktrace found for following nodes
            _set_grad_enabled = torch._C._set_grad_enabled(False);  _set_grad_enabled = None

            # File: /work/model.py:19 in forward, code: return x * w
            outs: "f32[4]" = getitem_1 * l_w_

            # No stacktrace found for following nodes
            _set_grad_enabled_1 = torch._C._set_grad_enabled(True);  _set_grad_enabled_1 = None
            return ((outs,), (l_w_, getitem_1))

    class bwd_body_2(torch.nn.Module):
        def forward(self, g: "f32[4]", l_w_: "f32[4]", getitem_1: "f32[4]"):
            # No stacktrace found for following nodes
            _set_grad_enabled = torch._C._set_grad_enabled(False);  _set_grad_enabled = None

            # File: /work/model.py:24 in backward, code: return g * w * 3, g * x * 5
            mul: "f32[4]" = g * l_w_;  l_w_ = None
            mul_1: "f32[4]" = mul * 3;  mul = None
            mul_2: "f32[4]" = g * getitem_1;  g = getitem_1 = None
            mul_3: "f32[4]" = mul_2 * 5;  mul_2 = None

            # No stacktrace found for following nodes
            _set_grad_enabled_1 = torch._C._set_grad_enabled(True);  _set_grad_enabled_1 = None
            return (mul_1, mul_3)


def scenario_graph():
    x = torch.randn(4, requires_grad=True)
    w = torch.randn(4, requires_grad=True)
    return [x, w], GraphModule()(x, w)


def scenario_graph_x_only():
    x = torch.randn(4, requires_grad=True)
    w = torch.randn(4)
    return [x], GraphModule()(x, w)
