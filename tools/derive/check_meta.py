import torch, torchvision, sys
sys.path.insert(0,'/tmp/derive')
from common import *
for dev in ('cpu','meta'):
    m = torchvision.models.resnet50().to(dev); m.train()
    b,_ = saved_bytes(m, (torch.randn(1,3,224,224,device=dev),))
    print('resnet50', dev, round(b/2**20,2))
    m = torchvision.models.vit_b_16().to(dev); m.train()
    b,_ = saved_bytes(m, (torch.randn(1,3,224,224,device=dev),))
    print('vit_b_16', dev, round(b/2**20,2))
