from typing import Any, Iterable, Mapping

from ._fedtopo import Clock as Clock
from ._fedtopo import Network as Network
from ._fedtopo import Overlay as Overlay
from ._fedtopo import Underlay as Underlay
from ._fedtopo import __version__ as __version__

__all__ = ["Underlay", "Network", "Overlay", "Clock", "to_pandas", "__version__"]

def to_pandas(records: Iterable[Mapping[str, Any]]) -> Any: ...
