"""torch.compile, opened: dump what TorchDynamo makes of each frame, as Python source that
the program then runs. Needs ``torch`` (an optional extra); importing this package does not
import it. Every touch of PyTorch internals lives in :mod:`unveil.torch._dynamo`."""

from __future__ import annotations

from .dump import prepare_debug

__all__ = ["prepare_debug"]
