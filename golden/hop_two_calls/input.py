import torch


class GraphModule(torch.nn.Module):
    def forward(self, L_x_: "f32[3]", L_w_: "f32[3]"):
        l_x_ = L_x_
        l_w_ = L_w_

        # File: /work/model.py:22 in f, code: return (SaveInputs.apply(x, w) + SaveIntermediate.apply(x)).sum()
        fwd_body_0 = self.fwd_body_0
        bwd_body_0 = self.bwd_body_0
        autograd_function_apply = torch.ops.higher_order.autograd_function_apply(fwd_body_0, bwd_body_0, l_x_, l_w_, non_differentiable_idx = [], saved_for_backward_idx = [0, 1]);  fwd_body_0 = bwd_body_0 = l_w_ = None
        getitem: "f32[3]" = autograd_function_apply[0];  autograd_function_apply = None
        fwd_body_1 = self.fwd_body_1
        bwd_body_1 = self.bwd_body_1
        autograd_function_apply_1 = torch.ops.higher_order.autograd_function_apply(fwd_body_1, bwd_body_1, l_x_, non_differentiable_idx = [], saved_for_backward_idx = [0]);  fwd_body_1 = bwd_body_1 = l_x_ = None
        getitem_1: "f32[3]" = autograd_function_apply_1[0];  autograd_function_apply_1 = None
        add: "f32[3]" = getitem + getitem_1;  getitem = getitem_1 = None
        sum_1: "f32[]" = add.sum();  add = None
        return (sum_1,)

    class fwd_body_0(torch.nn.Module):
        def forward(self, l_x_: "f32[3]", l_w_: "f32[3]"):
            # No stacktrace found for following nodes
            _set_grad_enabled = torch._C._set_grad_enabled(False);  _set_grad_enabled = None

            # File: /work/model.py:6 in forward, code: return x * w
            outs: "f32[3]" = l_x_ * l_w_

            # No stacktrace found for following nodes
            _set_grad_enabled_1 = torch._C._set_grad_enabled(True);  _set_grad_enabled_1 = None
            return ((outs,), (l_w_, l_x_))

    class bwd_body_0(torch.nn.Module):
        def forward(self, g: "f32[3]", l_w_: "f32[3]", l_x_: "f32[3]"):
            # No stacktrace found for following nodes
            _set_grad_enabled = torch._C._set_grad_enabled(False);  _set_grad_enabled = None

            # File: /work/model.py:10 in backward, code: return g * w * 3, g * x * 5
            mul: "f32[3]" = g * l_w_;  l_w_ = None
            mul_1: "f32[3]" = mul * 3;  mul = None
            mul_2: "f32[3]" = g * l_x_;  g = l_x_ = None
            mul_3: "f32[3]" = mul_2 * 5;  mul_2 = None

            # No stacktrace found for following nodes
            _set_grad_enabled_1 = torch._C._set_grad_enabled(True);  _set_grad_enabled_1 = None
            return (mul_1, mul_3)

    class fwd_body_1(torch.nn.Module):
        def forward(self, l_x_: "f32[3]"):
            # No stacktrace found for following nodes
            _set_grad_enabled = torch._C._set_grad_enabled(False);  _set_grad_enabled = None

            # File: /work/model.py:14 in forward, code: y = x.sin()
            y: "f32[3]" = l_x_.sin();  l_x_ = None

            # File: /work/model.py:16 in forward, code: return y * 2
            outs: "f32[3]" = y * 2

            # No stacktrace found for following nodes
            _set_grad_enabled_1 = torch._C._set_grad_enabled(True);  _set_grad_enabled_1 = None
            return ((outs,), (y,))

    class bwd_body_1(torch.nn.Module):
        def forward(self, g: "f32[3]", y: "f32[3]"):
            # No stacktrace found for following nodes
            _set_grad_enabled = torch._C._set_grad_enabled(False);  _set_grad_enabled = None

            # File: /work/model.py:20 in backward, code: return g * y * 7
            mul: "f32[3]" = g * y;  g = y = None
            mul_1: "f32[3]" = mul * 7;  mul = None

            # No stacktrace found for following nodes
            _set_grad_enabled_1 = torch._C._set_grad_enabled(True);  _set_grad_enabled_1 = None
            return (mul_1,)


def scenario_graph():
    x = torch.randn(3, requires_grad=True)
    w = torch.randn(3, requires_grad=True)
    return [x, w], GraphModule()(x, w)
