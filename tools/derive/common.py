import torch, torch.nn as nn

def count_params(m):
    return sum(p.numel() for p in m.parameters())

class MacCounter:
    """Counts multiply-accumulates of Conv/ConvTranspose/Linear modules via forward hooks,
    plus explicit matmuls registered by models (attention) through add()."""
    def __init__(self, model):
        self.macs = 0
        self.hs = []
        for mod in model.modules():
            if isinstance(mod, (nn.Conv1d, nn.Conv2d, nn.Conv3d)):
                self.hs.append(mod.register_forward_hook(self._conv))
            elif isinstance(mod, (nn.ConvTranspose2d, nn.ConvTranspose3d)):
                self.hs.append(mod.register_forward_hook(self._convT))
            elif isinstance(mod, nn.Linear):
                self.hs.append(mod.register_forward_hook(self._lin))
    def _conv(self, m, i, o):
        k = 1
        for s in m.kernel_size: k *= s
        self.macs += o.numel() * (m.in_channels // m.groups) * k
    def _convT(self, m, i, o):
        k = 1
        for s in m.kernel_size: k *= s
        x = i[0]
        self.macs += x.numel() * (m.out_channels // m.groups) * k
    def _lin(self, m, i, o):
        self.macs += o.numel() * m.in_features
    def add(self, n):
        self.macs += n
    def close(self):
        for h in self.hs: h.remove()

def saved_bytes(model, inputs, exclude_params=True, forward=None):
    """Bytes of tensors autograd keeps for backward during one forward pass
    (PyTorch eager semantics), de-duplicated by storage. Parameters excluded."""
    pptrs = set(p.data_ptr() for p in model.parameters()) if exclude_params else set()
    seen = {}
    params = list(model.parameters())
    pkeys = set(p.storage()._cdata for p in params)
    def pack(t):
        st = t.storage()
        key = st._cdata
        if key in pkeys:
            return t
        nb = st.size() * st.element_size()
        if nb > seen.get(key, (0,))[0]:
            seen[key] = (nb, st)   # keep the storage alive so its id is not reused
        return t
    def unpack(t):
        return t
    with torch.autograd.graph.saved_tensors_hooks(pack, unpack):
        out = forward(*inputs) if forward else model(*inputs)
    total = sum(v[0] for v in seen.values())
    return total, out
