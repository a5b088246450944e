import torch


class GraphModule(torch.nn.Module):
    def forward(self, L_x_: "f32[3]"):
        l_x_ = L_x_

        # File: /work/t.py:17 in f, code: return H.apply(x, 2.0).sum()
        fwd_body_0 = self.fwd_body_0
        bwd_body_0 = self.bwd_body_0
        autograd_function_apply = torch.ops.higher_order.autograd_function_apply(fwd_body_0, bwd_body_0, l_x_, args_tensor_mask = [True, False], non_differentiable_idx = []);  fwd_body_0 = bwd_body_0 = l_x_ = None
        sum_1: "f32[]" = autograd_function_apply.sum();  autograd_function_apply = None
        return (sum_1,)

    class fwd_body_0(torch.nn.Module):
        def forward(self, ctx : torch.autograd.function.Function, l_x_: "f32[3]"):
            # No stacktrace found for following nodes
            _set_grad_enabled = torch._C._set_grad_enabled(False);  _set_grad_enabled = None

            # File: /work/t.py:7 in forward, code: return x.sin() * k
            sin: "f32[3]" = l_x_.sin()
            mul: "f32[3]" = sin * 2.0;  sin = None

            # No stacktrace found for following nodes
            _set_grad_enabled_1 = torch._C._set_grad_enabled(True);  _set_grad_enabled_1 = None
            return (mul, [l_x_])

    class bwd_body_0(torch.nn.Module):
        def forward(self, ctx : torch.autograd.function.Function, g: "f32[3]", l_x_: "f32[3]"):
            # No stacktrace found for following nodes
            _set_grad_enabled = torch._C._set_grad_enabled(False);  _set_grad_enabled = None

            # File: /work/t.py:12 in backward, code: return g * x.cos() * 7, None
            cos: "f32[3]" = l_x_.cos();  l_x_ = None
            mul: "f32[3]" = g * cos;  g = cos = None
            mul_1: "f32[3]" = mul * 7;  mul = None

            # No stacktrace found for following nodes
            _set_grad_enabled_1 = torch._C._set_grad_enabled(True);  _set_grad_enabled_1 = None
            return mul_1


def scenario_graph():
    x = torch.randn(3, requires_grad=True)
    return [x], GraphModule()(x)
