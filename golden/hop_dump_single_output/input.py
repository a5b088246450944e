import torch


class GraphModule(torch.nn.Module):
    def forward(self, L_x_: "f32[3]"):
        l_x_ = L_x_

        # File: /tmp/hop/gen2.py:23 in f_one, code: return One.apply(x).sum()
        fwd_body_0 = self.fwd_body_0
        bwd_body_0 = self.bwd_body_0
        autograd_function_apply = torch.ops.higher_order.autograd_function_apply(fwd_body_0, bwd_body_0, l_x_, non_differentiable_idx = [], saved_for_backward_idx = [0]);  fwd_body_0 = bwd_body_0 = l_x_ = None
        getitem: "f32[3]" = autograd_function_apply[0];  autograd_function_apply = None
        sum_1: "f32[]" = getitem.sum();  getitem = None
        return (sum_1,)

    class fwd_body_0(torch.nn.Module):
        def forward(self, l_x_: "f32[3]"):
            # No stacktrace found for following nodes
            _set_grad_enabled = torch._C._set_grad_enabled(False);  _set_grad_enabled = None

            # File: /tmp/hop/gen2.py:15 in forward, code: return x.exp()
            outs: "f32[3]" = l_x_.exp()

            # No stacktrace found for following nodes
            _set_grad_enabled_1 = torch._C._set_grad_enabled(True);  _set_grad_enabled_1 = None
            return ((outs,), (l_x_,))

    class bwd_body_0(torch.nn.Module):
        def forward(self, g: "f32[3]", l_x_: "f32[3]"):
            # No stacktrace found for following nodes
            _set_grad_enabled = torch._C._set_grad_enabled(False);  _set_grad_enabled = None

            # File: /tmp/hop/gen2.py:19 in backward, code: return g * x * 3
            mul: "f32[3]" = g * l_x_;  g = l_x_ = None
            mul_1: "f32[3]" = mul * 3;  mul = None

            # No stacktrace found for following nodes
            _set_grad_enabled_1 = torch._C._set_grad_enabled(True);  _set_grad_enabled_1 = None
            return (mul_1,)


def scenario_graph():
    x = torch.randn(3, requires_grad=True)
    return [x], GraphModule()(x)
