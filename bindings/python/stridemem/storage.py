"""Storage, and the unpickling functions of tensors and storages, under the
module path ``stridemem.storage`` that existing pickles may name
(``stridemem.storage._unpickle_tensor``, ``_unpickle_storage``). They are
defined in _tensor.py beside Tensor, which they return and which returns
them."""

from __future__ import annotations

from ._tensor import Storage, _export_shared, _unpickle_storage, _unpickle_tensor  # noqa: F401
