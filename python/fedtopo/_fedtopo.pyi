"""Type stubs of the Rust extension ``fedtopo._fedtopo``."""

from __future__ import annotations

import os
from typing import Any, Sequence, Union, final

import numpy as np
import numpy.typing as npt

from ._records import Records

__all__ = ["Underlay", "Network", "Overlay", "Clock", "__version__"]
__version__: str

_Knob = Union[str, int, float, None]
_PathLike = Union[str, "os.PathLike[str]"]

@final
class Underlay:
    """A network underlay: routers and core links (GML file or built-in)."""

    @staticmethod
    def load(
        path_or_builtin: _PathLike | None = None,
        missing_coordinates: str = "estimate",
        largest_component: bool = False,
        isolated_routers: str = "drop",
        default_length_km: float | None = None,
        default_core_capacity: str = "1G",
    ) -> Underlay:
        """Loads a GML file or a built-in underlay (``aws-north-america``,
        ``aws-gaia``); policies as the CLI's loading options. Raises
        ValueError (``file:line:col: ...`` for a bad GML file)."""
    @property
    def name(self) -> str: ...
    @property
    def routers(self) -> list[str]:
        """Router labels in file order."""
    def info(self) -> dict[str, Any]:
        """``fedtopo underlay info --format json`` (``notes``: the lines the
        CLI prints), plus ``report``: what loading dropped, merged or
        estimated."""
    def __len__(self) -> int: ...

@final
class Network:
    """Silos on an underlay, their access links and a workload."""

    def __new__(
        cls,
        underlay: Underlay | _PathLike,
        access: _Knob = None,
        core_capacity: _Knob = None,
        workload: _Knob = None,
        model_bits: _Knob = None,
        compute_ms: _Knob = None,
        local_steps: _Knob = None,
        silos_csv: _Knob | os.PathLike[str] = None,
        links_csv: _Knob | os.PathLike[str] = None,
        access_csv: _Knob | os.PathLike[str] = None,
        connectivity: _Knob = None,
        silos_per_router: _Knob = None,
        silos: _Knob = None,
        placement_seed: _Knob = None,
        trace: _Knob | os.PathLike[str] = None,
        availability: _Knob = None,
    ) -> Network:
        """Knobs as the CLI options (``access="10G"``: bit/s with an SI
        unit, a bare number below 1000 warns; ``core_capacity="1G"`` or
        ``None`` for the file's values; ``workload="inaturalist"``;
        ``model_bits="42.88Mbit"``; ``compute_ms=25.4``; ``local_steps``,
        ``silos``, ``silos_per_router``: ints >= 1; ``trace``: a network
        dynamics CSV, ``time_s,target,value``; ``availability``: ``"wait"``,
        ``"skip"`` or ``"timeout:MS"`` with a trace; ...). Raises
        ValueError naming the knob; ``help(fedtopo.Network)`` lists every
        format."""
    @property
    def underlay(self) -> Underlay: ...
    @property
    def silos(self) -> list[str]:
        """Silo labels (index i = silo i)."""
    def __len__(self) -> int: ...
    def overlay(
        self,
        kind: str,
        center: str = "fastest",
        seed: int = 0,
        budget: float = 0.5,
        matcha_rounds: int = 1000,
    ) -> Overlay:
        """Builds an overlay: a kind (``star``, ``mst``, ``delta-mbst``,
        ``ring``, ``ring-opt``, ``matcha``, ...) or ``file:PATH``.
        ``center``: ``fastest``, ``load``, ``first`` or a silo label;
        ``seed``: 0 to 2**64-1; ``budget``: in [0.001, 1];
        ``matcha_rounds``: 1 to 1000000 (the CLI's bounds and messages;
        ValueError naming the argument)."""
    def compare(
        self,
        kinds: str | Sequence[str] | None = None,
        center: str = "fastest",
        seed: int = 0,
        budget: float = 0.5,
        matcha_rounds: int = 1000,
    ) -> Records:
        """The rows of ``fedtopo compare --format json`` (a list of dicts
        with ``.to_pandas()``). Runs without the GIL."""
    def comparison(
        self,
        kinds: str | Sequence[str] | None = None,
        center: str = "fastest",
        seed: int = 0,
        budget: float = 0.5,
        matcha_rounds: int = 1000,
    ) -> dict[str, Any]:
        """The whole ``fedtopo compare --format json`` document."""
    def description(self) -> dict[str, Any]:
        """Workload, per-silo compute times and access capacities."""
    def compute_round_ms(self) -> list[float]:
        """``s * Tc(i)`` per silo, ms."""

@final
class Overlay:
    """An overlay built on a network."""

    @property
    def name(self) -> str: ...
    @property
    def silos(self) -> list[str]: ...
    @property
    def is_schedule(self) -> bool:
        """True when the overlay changes every round."""
    @property
    def arcs(self) -> list[tuple[int, int]]:
        """Arcs ``(src, dst)`` as silo indices (round 0's for schedules)."""
    def arcs_at(self, round: int) -> list[tuple[int, int]]:
        """Arcs of round ``round`` (an int >= 0)."""
    def __len__(self) -> int: ...
    def cycle_time_ms(self) -> float:
        """Exact max-plus cycle time, ms per round (MATCHA: the paper's
        estimate)."""
    def critical_circuit(self) -> list[str]:
        """A critical circuit as silo labels (empty for schedules)."""
    def consensus_matrix(
        self, rule: str = "auto", round: int = 0
    ) -> npt.NDArray[np.float64]:
        """Row-stochastic consensus matrix of round ``round`` under
        ``rule`` (``auto``, ``local-degree``, ``mh``, ``half``,
        ``average``, ``fedavg``, ``matcha:ALPHA`` with ALPHA in (0, 1],
        ``decavg``, ``fastest``, ``file:PATH``)."""
    def to_networkx(self, round: int = 0) -> Any:
        """A ``networkx.DiGraph`` (nodes: silo labels with ``index``,
        ``latitude``, ``longitude``; arcs: ``delay_ms``)."""

@final
class Clock:
    """Simulated wall-clock time of training rounds. Constant memory
    however many rounds; belongs to the thread that created it (another
    thread gets RuntimeError)."""

    def __new__(
        cls,
        net: Network,
        overlay: Overlay,
        network_model: str = "maxplus",
        stragglers: str | None = None,
        seed: int = 0,
        failures: str | None = None,
        breakdown: bool = False,
    ) -> Clock:
        """``network_model``: ``maxplus``, ``paper`` or ``flow``;
        ``stragglers``: ``None`` or ``"lognormal:SIGMA"`` (SIGMA in (0,
        10]); ``failures``: ``None``, ``"node-down:Q"`` / ``"link-down:Q"``
        (Q: probability of failure per round, in [0, 1)) or ``"node-up:P"``
        / ``"link-up:P"`` (P = 1 - Q; the older ``"node:P"`` means
        ``node-up:P``, FutureWarning; gossip overlays); random draws from
        ``seed`` (0 to 2**64-1) -- as ``fedtopo simulate --network
        --straggler --failures --seed``; ``breakdown``: record where each
        round's time goes (``breakdown()``)."""
    def step(self) -> npt.NDArray[np.float64]:
        """Times the next round; per-silo finish times, ms since start."""
    def breakdown(self) -> dict[str, npt.NDArray[Any]] | None:
        """Where the last round went, per silo (``breakdown=True``):
        ``start_ms``, ``compute_ms``, ``transfer_ms``, ``wait_ms``,
        ``end_ms``, ``via`` (int64 sender of the model the silo waited for
        last, -1: its own computation) and ``via_sent_ms``; None before
        the first step."""
    def participation(self) -> dict[str, list[Any]] | None:
        """Who took part in the last round under ``availability="skip"`` or
        ``"timeout:MS"``: ``computed`` (bool per silo), ``used`` (per silo
        the in-neighbours whose model it averaged, or None), ``joined`` (per
        silo the silos whose new models it starts from, or None); None
        before the first step or without such a policy."""
    def advance(self, rounds: int) -> npt.NDArray[np.float64]:
        """Times ``rounds`` rounds (1 to 1000000 per call; Ctrl-C
        interrupts); the last round's finish times."""
    @property
    def round(self) -> int:
        """Rounds timed so far."""
    @property
    def now_ms(self) -> float:
        """Latest finish time of the rounds timed so far, ms."""
    @property
    def network(self) -> str:
        """The network model run: ``"maxplus"``, ``"paper"``, ``"flow"``,
        with ``"+traces"`` when the network has a trace (event replay) and
        ``"+skip"`` / ``"+timeout:MS"`` under that availability policy."""
