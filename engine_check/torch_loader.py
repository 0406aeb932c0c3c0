"""torch, loaded for a measurement, or one line that says why it cannot be."""

from __future__ import annotations

from types import ModuleType

from drill.errors import EngineError

INSTALL_HINT = (
    "torch is not installed; install it with `pip install 'kvdrill[engine]'`, "
    "or the build for your GPU from pytorch.org"
)


def load_torch() -> ModuleType:
    """The torch module; EngineError when it is missing or its native libraries fail."""
    try:
        import torch
    except ImportError:
        raise EngineError(INSTALL_HINT) from None
    except OSError as exc:  # a torch build whose native libraries cannot load
        raise EngineError(f"torch is installed but cannot load: {exc}") from None
    return torch
