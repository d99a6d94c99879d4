import torch, torchvision, sys
sys.path.insert(0, '/tmp/derive')
from common import *
torch.manual_seed(0)
MiB = 2**20
for name, ctor in [('resnet50', torchvision.models.resnet50), ('vit_b_16', torchvision.models.vit_b_16), ('vit_l_16', torchvision.models.vit_l_16)]:
    m = ctor()
    m.train()
    x = torch.randn(1, 3, 224, 224)
    mc = MacCounter(m)
    with torch.no_grad():
        m(x)
    macs = mc.macs; mc.close()
    # attention matmuls for vit (QK^T and AV): 2 * L * heads * N^2 * hd
    if name.startswith('vit'):
        L = len(m.encoder.layers); h = m.hidden_dim; N = 197
        macs += L * 2 * N * N * h
    x.requires_grad_(False)
    b, _ = saved_bytes(m, (x,))
    # batch-2 difference to remove any batch-independent saved tensors
    b2, _ = saved_bytes(m, (torch.randn(2,3,224,224),))
    print(f"{name}: params {count_params(m):,}  MACs {macs/1e9:.3f}G  FLOPs {2*macs/1e9:.2f}G  saved b1 {b/MiB:.1f} MiB  b2-b1 {(b2-b)/MiB:.1f} MiB")
