# MLPerf DLRM (Criteo Terabyte, --max-ind-range=40000000): facebookresearch/dlrm dlrm_s_pytorch.py + bench/run_and_time.sh
import torch, torch.nn as nn, sys
sys.path.insert(0, '/tmp/derive')
from common import *
rows = [39884406,39043,17289,7420,20263,3,7120,1543,63,38532951,2953546,403346,10,2208,11938,155,4,976,14,39979771,25641295,39664984,585935,12972,108,36]
D = 128
def mlp(sizes, sigmoid_last=False):
    layers = []
    for i in range(len(sizes) - 1):
        layers += [nn.Linear(sizes[i], sizes[i+1]), nn.Sigmoid() if (sigmoid_last and i == len(sizes) - 2) else nn.ReLU()]
    return nn.Sequential(*layers)
class DLRMDense(nn.Module):
    def __init__(s):
        super().__init__(); s.bot = mlp([13, 512, 256, 128]); s.top = mlp([479, 1024, 1024, 512, 256, 1], True)
    def forward(s, dense, emb):          # emb: [B, 26, D] rows gathered from the tables
        x = s.bot(dense)
        T = torch.cat([x.unsqueeze(1), emb], 1)      # [B, 27, D]
        Z = torch.bmm(T, T.transpose(1, 2))          # dot interaction
        li, lj = torch.tril_indices(27, 27, -1)
        R = torch.cat([x, Z[:, li, lj]], 1)          # 128 + 351 = 479
        return s.top(R)
m = DLRMDense(); m.train()
emb_params = sum(rows) * D
print("rows", f"{sum(rows):,}", "embedding params", f"{emb_params:,}", "MLP params", f"{count_params(m):,}", "total", f"{emb_params + count_params(m):,}")
mc = MacCounter(m)
with torch.no_grad(): m(torch.randn(1, 13), torch.randn(1, 26, D))
macs = mc.macs + 27 * 27 * D; mc.close()
print("MACs per sample %.3fM FLOPs %.2fM" % (macs / 1e6, 2 * macs / 1e6))
B = 1024
emb = torch.randn(B, 26, D, requires_grad=True)   # gathered rows are activations too (their grads are scattered back)
b, _ = saved_bytes(m, (torch.randn(B, 13), emb))
print("saved per sample %.1f KiB (fp32, batch %d)" % (b / B / 1024, B))
