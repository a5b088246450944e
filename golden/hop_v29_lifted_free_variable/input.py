import torch

W = torch.full((3,), 0.5, requires_grad=True)


class GraphModule(torch.nn.Module):
    def forward(self, L_x_: "f32[3]", G_W_: "f32[3]"):
        l_x_ = L_x_
        g_w_ = G_W_

        # File: /work/t.py:19 in f, code: return Free.apply(x).sum()
        fwd_body_0 = self.fwd_body_0
        bwd_body_0 = self.bwd_body_0
        autograd_function_apply = torch.ops.higher_order.autograd_function_apply(fwd_body_0, bwd_body_0, l_x_, g_w_, args_tensor_mask = [True], non_differentiable_idx = []);  fwd_body_0 = bwd_body_0 = l_x_ = g_w_ = None
        sum_1: "f32[]" = autograd_function_apply.sum();  autograd_function_apply = None
        return (sum_1,)

    class fwd_body_0(torch.nn.Module):
        def forward(self, ctx : torch.autograd.function.Function, l_x_: "f32[3]", g_w_: "f32[3]"):
            _set_grad_enabled = torch._C._set_grad_enabled(False);  _set_grad_enabled = None
            mul: "f32[3]" = l_x_ * g_w_;  l_x_ = g_w_ = None
            _set_grad_enabled_1 = torch._C._set_grad_enabled(True);  _set_grad_enabled_1 = None
            return (mul, [])

    class bwd_body_0(torch.nn.Module):
        def forward(self, ctx : torch.autograd.function.Function, g: "f32[3]"):
            _set_grad_enabled = torch._C._set_grad_enabled(False);  _set_grad_enabled = None
            mul: "f32[3]" = g * 3;  g = None
            _set_grad_enabled_1 = torch._C._set_grad_enabled(True);  _set_grad_enabled_1 = None
            return mul


def scenario_graph():
    x = torch.randn(3, requires_grad=True)
    return [x, W], GraphModule()(x, W)
