from ._fedtopo import Clock as Clock
from ._fedtopo import Network as Network
from ._fedtopo import Overlay as Overlay
from ._fedtopo import Underlay as Underlay
from ._fedtopo import __version__ as __version__
from ._records import Records as Records
from ._records import to_pandas as to_pandas

__all__ = ["Underlay", "Network", "Overlay", "Clock", "Records", "to_pandas", "__version__"]
