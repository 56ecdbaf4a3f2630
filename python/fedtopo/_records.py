"""Records: the rows ``Network.compare`` returns."""

from __future__ import annotations

from typing import Any, Dict, Iterable, List, Mapping


class Records(List[Dict[str, Any]]):
    """A list of dicts, one per row (pandas-free), with :meth:`to_pandas`.

    Returned by ``Network.compare``; the rows of
    ``fedtopo compare --format json``.
    """

    def to_pandas(self) -> Any:
        """These rows as a ``pandas.DataFrame`` (see :func:`to_pandas`)."""
        return to_pandas(self)


def to_pandas(records: Iterable[Mapping[str, Any]]) -> Any:
    """A ``pandas.DataFrame`` of records (e.g. ``net.compare(...)``).

    Nested values (the ``schedule`` of a schedule's row) are flattened to
    ``schedule.KEY`` columns. Needs pandas.
    """
    try:
        import pandas as pd  # type: ignore[import-untyped, unused-ignore]
    except ImportError as e:  # pragma: no cover - depends on the environment
        raise ImportError("fedtopo.to_pandas needs pandas: pip install pandas") from e
    return pd.json_normalize(list(records), sep=".")
