"""Polars expressions of fibkit: ``import fibkit.polars`` adds the
``fibkit`` namespace to Polars expressions,

    >>> import polars as pl, fibkit.polars                          # doctest: +SKIP
    >>> flows.with_columns(pl.col("src").fibkit.lookup("geo.fib", fields=["country"]))  # doctest: +SKIP

The expressions are a Polars plugin, an extension of its own (the package
``fibkit-polars``, built by ``make python``): see ``fibkit_polars``.
"""

try:
    from fibkit_polars import lookup, prefix
except ImportError as error:  # pragma: no cover - the message is the point
    raise ImportError(
        "fibkit.polars needs the fibkit-polars package (make python builds it; "
        "or pip install crates/fibkit-polars)"
    ) from error

__all__ = ["lookup", "prefix"]
