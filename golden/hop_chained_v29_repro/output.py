# A thunderfx reproducer (lightning-thunder 0.2.6, torch 2.9.1) of three nested Function calls;
# thunder's imports are moved into its test function so that the file imports without thunder.
from math import inf
from math import nan

from inliner.runtime import custom_vjp

NoneType = type(None)
import torch
from torch import device
import torch.fx._pytree as fx_pytree
import torch.utils._pytree as pytree


def save_inputs_fwd(x: "f32[4][1]cpu", w: "f32[4][1]cpu"):
    mul: "f32[4][1]cpu" = x * w
    return (mul, [w, x])


def save_inputs_bwd(residuals, g: "f32[4][1]cpu"):
    w, x = residuals
    mul: "f32[4][1]cpu" = g * w
    mul_1: "f32[4][1]cpu" = mul * 3
    mul_2: "f32[4][1]cpu" = g * x
    mul_3: "f32[4][1]cpu" = mul_2 * 5
    return (mul_1, mul_3)


SaveInputs = custom_vjp(save_inputs_fwd, save_inputs_bwd, name="SaveInputs")


def save_intermediate_fwd(x: "f32[4][1]cpu"):
    y: "f32[4][1]cpu" = x.sin()

    mul: "f32[4][1]cpu" = y * 2
    return (mul, [y])


def save_intermediate_bwd(residuals, g: "f32[4][1]cpu"):
    (y,) = residuals
    mul: "f32[4][1]cpu" = g * y
    mul_1: "f32[4][1]cpu" = mul * 7
    return mul_1


SaveIntermediate = custom_vjp(
    save_intermediate_fwd, save_intermediate_bwd, name="SaveIntermediate"
)


def non_tensor_attr_fwd(x: "f32[4][1]cpu"):
    mul: "f32[4][1]cpu" = x * 3.0
    return (mul, [])


def non_tensor_attr_bwd(residuals, g: "f32[4][1]cpu"):
    mul: "f32[4][1]cpu" = g * 3.0
    mul_1: "f32[4][1]cpu" = mul * 11
    return (mul_1,)


NonTensorAttr = custom_vjp(
    non_tensor_attr_fwd, non_tensor_attr_bwd, name="NonTensorAttr"
)


class DynamoModule(torch.nn.Module):
    def forward(self, l_h_: "f32[4][1]cpu", l_w_: "f32[4][1]cpu"):
         # File: /work/model.py:9 in f_nested, code: return o.NonTensorAttr.apply(o.SaveIntermediate.apply(o.SaveInputs.apply(h, w)), 3.0)
        save_inputs: "f32[4][1]cpu" = SaveInputs(l_h_, l_w_);  l_h_ = l_w_ = None
        save_intermediate: "f32[4][1]cpu" = SaveIntermediate(save_inputs);  save_inputs = None
        non_tensor_attr: "f32[4][1]cpu" = NonTensorAttr(save_intermediate);  save_intermediate = None
        return non_tensor_attr
            
def test_graph0_thunder_0():
    import thunder

    inputs = [
        torch.testing.make_tensor((4,), dtype=torch.float32,  device='cpu', requires_grad=True, low=-2.1787893772125244, high=1.5409960746765137,),
        torch.testing.make_tensor((4,), dtype=torch.float32,  device='cpu', requires_grad=True, low=-1.3985954523086548, high=0.8380263447761536,),
    ]

    model = DynamoModule()
    compiled_model = thunder.jit(model, fusion_type='dataflow',thunderfx_disable_split_autograd=True,)
    from thunder.dynamo.report import run_forward_backward
    fwd_result, grads = run_forward_backward(compiled_model, *inputs)
    eager_fwd_result, eager_grads = run_forward_backward(model, *inputs)
    torch.testing.assert_close(fwd_result, eager_fwd_result)
    torch.testing.assert_close(grads, eager_grads)


if __name__ == "__main__":
    test_graph0_thunder_0()


"""
Environment information get from `torch.utils.collect_env.get_pretty_env_info()`:
CUDA devices:
CUDA version: 12.8
torch==2.9.1

Versions of Thunder related libraries:
lightning-thunder==0.2.6

Split Information:
The original graph is not split, and is entirely run by Thunder.

"""


def scenario_repro():
    h = torch.randn(4, requires_grad=True)
    w = torch.randn(4, requires_grad=True)
    return [h, w], DynamoModule()(h, w)


def scenario_repro_h_only():
    h = torch.randn(4, requires_grad=True)
    w = torch.randn(4)
    return [h], DynamoModule()(h, w)
