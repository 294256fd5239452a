# The bound of tests/cuda/test_cuda_few_outputs.cpp (CUDA conv_out against the CPU op) checked by emulating both
# kernels' float32 arithmetic in numpy (no GPU was lent after the test moved to the CPU reference): the kernel's
# worst / bound, the control's (one centre tap dropped), and a planted fault (the staged values' lo dropped).
import numpy as np
rng=np.random.default_rng(0)
def bf16(a):
    a=np.asarray(a,np.float32); u=a.view(np.uint32).astype(np.uint64)
    r=((u+0x7FFF+((u>>16)&1))>>16)<<16
    return r.astype(np.uint32).view(np.float32)
def run(Ci,Co,H,W,drop_lo=False,seed=0):
    rng=np.random.default_rng(seed)
    x=(rng.standard_normal((Ci,H,W))*2+1.5).astype(np.float32)
    w=bf16(rng.standard_normal((Co,Ci,3,3))*0.05)
    hi=bf16(x); lo=bf16(x-hi); s=(hi+lo).astype(np.float32)
    if drop_lo: s=hi
    xp=np.pad(x,((0,0),(1,1),(1,1))); sp=np.pad(s,((0,0),(1,1),(1,1)))
    cpu=np.zeros((Co,H,W),np.float32); gpu=np.zeros((Co,H,W),np.float32); ctl=np.zeros((Co,H,W),np.float32)
    terms=np.zeros((Co,H,W))
    wd=w.copy(); wd[:,0,1,1]=0
    for o in range(Co):
        for c in range(Ci):              # cpu order: ci, ky, kx
            for ky in range(3):
                for kx in range(3):
                    xv=xp[c,ky:ky+H,kx:kx+W].astype(np.float64)
                    cpu[o]=(cpu[o].astype(np.float64)+xv*float(w[o,c,ky,kx])).astype(np.float32)
                    ctl[o]=(ctl[o].astype(np.float64)+xv*float(wd[o,c,ky,kx])).astype(np.float32)
                    terms[o]+=np.abs(xv*float(w[o,c,ky,kx]))
        for c in range(Ci):              # gpu order: chunk/c, kx, ky
            for kx in range(3):
                for ky in range(3):
                    sv=sp[c,ky:ky+H,kx:kx+W].astype(np.float64)
                    gpu[o]=(gpu[o].astype(np.float64)+sv*float(w[o,c,ky,kx])).astype(np.float32)
    n=Ci*9+2; b=2**-16+2*n*2**-24
    bound=b*(terms+np.abs(gpu))
    return (np.abs(gpu.astype(np.float64)-cpu)/bound).max(), (np.abs(gpu.astype(np.float64)-ctl)/bound).max()
print("ok  ", run(96,3,37,70))
print("drop", run(96,3,37,70,drop_lo=True))
print("ok64", run(64,1,7,5))
