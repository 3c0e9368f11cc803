#!/usr/bin/env python3
"""An unmodified PyTorch program for `greenctx run`: kernels on the main thread, a new thread,
after torch.cuda.set_device, a side stream and a CUDA graph. Writes every block's SM id per
case to the JSON file argv[1]; the test compares them with the report's partition."""
import json
import sys
import threading

import torch

from smid import SmidKernel

BLOCKS = 4 * torch.cuda.get_device_properties(0).multi_processor_count

torch.zeros(1, device="cuda")  # CUDA up, the program's context current
kernel = SmidKernel()
cases = {}


def observe(name, stream=None, graph=False):
    out = torch.full((BLOCKS,), -1, dtype=torch.int32, device="cuda")
    if graph:
        g = torch.cuda.CUDAGraph()
        with torch.cuda.graph(g):
            kernel.launch(torch.cuda.current_stream().cuda_stream, out.data_ptr(), BLOCKS)
        out.fill_(-1)
        g.replay()
    elif stream is not None:
        with torch.cuda.stream(stream):
            kernel.launch(stream.cuda_stream, out.data_ptr(), BLOCKS)
    else:
        kernel.launch(torch.cuda.current_stream().cuda_stream, out.data_ptr(), BLOCKS)
    torch.cuda.synchronize()
    cases[name] = out.tolist()


observe("main thread")
a = torch.randn(1024, 1024, device="cuda")
(a @ a).sum().item()  # a torch kernel (cuBLAS) in between


def on_thread():
    torch.ones(4, device="cuda").add_(1)
    observe("new thread")


t = threading.Thread(target=on_thread)
t.start()
t.join()
torch.cuda.set_device(0)
observe("after torch.cuda.set_device")
observe("side stream", stream=torch.cuda.Stream())
observe("CUDA graph", graph=True)
json.dump({"device_sm_count": BLOCKS // 4, "cases": cases}, open(sys.argv[1], "w"))
print("observed", ", ".join(f"{k}: {len(set(v))} SMs" for k, v in cases.items()))
