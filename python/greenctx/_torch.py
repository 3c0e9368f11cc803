"""PyTorch's view of greenctx streams: a torch.cuda.ExternalStream subclass holding its
greenctx Stream. PyTorch is imported only when a stream is asked for."""
from __future__ import annotations

import sys
from typing import Any

_torch_stream_class = None


def _torch_class(torch: Any) -> Any:
    """torch.cuda.ExternalStream holding its greenctx Stream (made once)."""
    global _torch_stream_class
    if _torch_stream_class is None:
        class GreenStream(torch.cuda.ExternalStream):  # type: ignore[misc]  # torch is untyped here
            """A torch.cuda.Stream on a green context; holds the green stream alive."""

            def __cuda_stream__(self) -> tuple[int, int]:
                return (0, self.cuda_stream)

            def close(self) -> None:
                """Drops this stream's reference to its green stream now (idempotent)."""
                self.greenctx_stream.close()

        GreenStream.__module__ = __name__
        _torch_stream_class = GreenStream
    return _torch_stream_class


_torch_missing = False  # `import torch` failed once: a retry would search sys.path each time


def _importable_torch() -> Any:
    global _torch_missing
    torch = sys.modules.get("torch")
    if torch is not None or _torch_missing:
        return torch
    try:
        import torch as imported  # noqa: PLC0415 - only when a stream is asked for
    except ImportError:
        # Not installed; a None in sys.modules is a block that may be lifted (tests do it).
        _torch_missing = "torch" not in sys.modules
        return None
    return imported


def as_torch_stream(stream: Any, context: Any = None) -> Any:
    """The stream as a torch.cuda.Stream when PyTorch can be imported and sees CUDA, else
    itself; context: its GreenContext where the caller has it (its device, without a call)."""
    torch = _importable_torch()
    if torch is None or not torch.cuda.is_available():
        return stream
    device = stream.device_id if context is None else context.device_id
    ts = _torch_class(torch)(stream_ptr=stream.handle, device=device)
    ts.greenctx_stream = stream  # the green stream lives as long as PyTorch's object
    return ts
