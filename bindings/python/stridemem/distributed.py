"""stridemem tensors in torch.distributed (gloo, NCCL), zero copy through DLPack.

``torch.from_dlpack(t)`` already gives a torch tensor over t's own memory, so
``dist.all_reduce(torch.from_dlpack(t))`` reduces in place into t. These two
helpers add the checks that torch does not make, each of which otherwise
ends in a dead process or silently wrong memory (seen with torch 1.13):

* torch cannot hold a negative stride: ``torch.from_dlpack`` of a view with
  one aborts the whole process (an uncaught C++ error). as_torch refuses it.
* torch.distributed's collectives (gloo on the CPU) reduce ``numel``
  elements starting at the data pointer whatever the strides: a column view
  gets its result written into the wrong elements, an expanded view past the
  end of its storage. all_reduce refuses a tensor that is not contiguous.

torch is imported only when a function here needs it.
"""

from __future__ import annotations

from typing import Any

import stridemem as _sm

__all__ = ["as_torch", "all_reduce"]


def _torch() -> Any:
    try:
        import torch
    except ImportError as e:
        raise ImportError("stridemem.distributed needs PyTorch (Debian: apt install "
                          "python3-torch): %s" % e) from e
    return torch


def as_torch(t: _sm.Tensor) -> Any:
    """A torch.Tensor over t's memory (``torch.from_dlpack``), never a copy:
    writes through either are seen by the other, and the torch tensor keeps
    t's storage alive. Refused, with nothing exported: a negative stride on
    a dim of more than one element (ValueError: torch has no negative
    strides and would abort the process; ``t.contiguous()`` or ``t.clone()``
    first); a tensor carved from a stack of views (DLPackExportError, from
    ``__dlpack__``). A negative stride on a size-1 dim moves no element and
    is replaced by 1. dtypes torch lacks raise torch's error (torch 1.13:
    bool, uint16, uint32, uint64)."""
    torch = _torch()
    shape, strides = t.shape, t.strides
    if any(s < 0 and n > 1 for n, s in zip(shape, strides)):
        raise ValueError("stridemem.distributed.as_torch: shape %s has negative strides %s, "
                         "which torch cannot hold (torch.from_dlpack would abort the "
                         "process); pass t.contiguous() or t.clone()" % (shape, strides))
    src = t
    if any(s < 0 for s in strides):
        src = t.as_strided(shape, [1 if s < 0 else s for s in strides], t.storage_offset)
    x = torch.from_dlpack(src)
    if t.numel and x.data_ptr() != t.data_ptr:
        raise RuntimeError("stridemem.distributed.as_torch: torch.from_dlpack copied the "
                           "tensor (data pointer %#x, not %#x)" % (x.data_ptr(), t.data_ptr))
    return x


def all_reduce(t: _sm.Tensor, op: Any = None, group: Any = None, async_op: bool = False) -> Any:
    """``torch.distributed.all_reduce`` into t itself: op (default
    ``ReduceOp.SUM``), group, async_op as torch's; returns what torch returns
    (None, or a work handle to ``wait()`` when async_op). t must be
    contiguous: a strided view is refused with ValueError before any
    collective starts, so all ranks must refuse alike (they do when their
    layouts agree); reduce ``c = t.contiguous()`` and ``t.copy_(c)``.
    Otherwise as as_torch."""
    if not t.is_contiguous():
        raise ValueError("stridemem.distributed.all_reduce: shape %s with strides %s is not "
                         "contiguous; torch.distributed reduces numel elements from the data "
                         "pointer and would write the wrong memory: reduce c = t.contiguous() "
                         "and t.copy_(c)" % (t.shape, t.strides))
    import torch.distributed as dist
    x = as_torch(t)
    return dist.all_reduce(x, op=dist.ReduceOp.SUM if op is None else op, group=group,
                           async_op=async_op)
