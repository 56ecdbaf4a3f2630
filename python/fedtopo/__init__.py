"""fedtopo from Python: the network clock of your own training loop.

Thin bindings over the fedtopo Rust library (the single implementation):

* :class:`Underlay` -- a network underlay (GML file or built-in name);
* :class:`Network` -- silos, access links and a workload on an underlay
  (the CLI's ``--access``, ``--core-capacity``, ``--workload``, ... knobs);
* :class:`Overlay` -- an overlay built on a network: arcs, exact max-plus
  cycle time, critical circuit, consensus matrices, networkx export;
* :class:`Clock` -- simulated wall-clock time of training rounds, the round
  stepper of ``fedtopo simulate`` and of the Rust trainer.

``Network.compare`` returns :class:`Records` (a list of dicts with
``.to_pandas()``).

Errors from the library are raised as :class:`ValueError` with the Rust
message (a bad GML file names ``file:line:col``); every argument has the
CLI's bounds and messages, an out-of-range integer a ValueError naming the
argument. A :class:`Clock` belongs to the thread that created it (another
thread gets :class:`RuntimeError`) and keeps constant memory.
"""

from __future__ import annotations

from ._fedtopo import Clock, Network, Overlay, Underlay, __version__
from ._records import Records, to_pandas

__all__ = ["Underlay", "Network", "Overlay", "Clock", "Records", "to_pandas", "__version__"]
