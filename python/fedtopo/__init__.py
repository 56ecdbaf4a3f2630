"""fedtopo from Python: the network clock of your own training loop.

Thin bindings over the fedtopo Rust library (the single implementation):

* :class:`Underlay` -- a network underlay (GML file or built-in name);
* :class:`Network` -- silos, access links and a workload on an underlay
  (the CLI's ``--access``, ``--core-capacity``, ``--workload``, ... knobs);
* :class:`Overlay` -- an overlay built on a network: arcs, exact max-plus
  cycle time, critical circuit, consensus matrices, networkx export;
* :class:`Clock` -- simulated wall-clock time of training rounds, the round
  stepper of ``fedtopo simulate`` and of the Rust trainer.

Errors from the library are raised as :class:`ValueError` with the Rust
message (a bad GML file names ``file:line:col``).
"""

from __future__ import annotations

from typing import Any, Iterable, Mapping

from ._fedtopo import Clock, Network, Overlay, Underlay, __version__

__all__ = ["Underlay", "Network", "Overlay", "Clock", "to_pandas", "__version__"]


def to_pandas(records: Iterable[Mapping[str, Any]]) -> "Any":
    """A ``pandas.DataFrame`` of records (e.g. ``net.compare(...)``).

    Nested values (the ``schedule`` of a schedule's row) are flattened to
    ``schedule.KEY`` columns. Needs pandas.
    """
    try:
        import pandas as pd
    except ImportError as e:  # pragma: no cover - depends on the environment
        raise ImportError("fedtopo.to_pandas needs pandas: pip install pandas") from e
    return pd.json_normalize(list(records), sep=".")
