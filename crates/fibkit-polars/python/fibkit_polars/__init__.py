"""fibkit's Polars expressions: the route of each address of a column, from
a compiled FIB file, computed inside Polars (a plugin: no Python per row
or per batch, no GIL, lazy and streaming queries included).

    >>> import polars as pl, fibkit.polars                          # doctest: +SKIP
    >>> flows.with_columns(geo=pl.col("src").fibkit.lookup("geo.fib", fields=["country", "asn"]))  # doctest: +SKIP

Importing this module (or ``fibkit.polars``) adds the ``fibkit``
namespace to Polars expressions: ``pl.col(c).fibkit.lookup(table, ...)``
and ``pl.col(c).fibkit.prefix(table)``, the same as ``lookup(c, table, ...)``
and ``prefix(c, table)`` here.

The column holds addresses as strings of either family (IPv4, IPv6, and
IPv4-mapped IPv6, answered from the IPv4 routes), or IPv4 addresses as
UInt32 numbers. The table is a compiled FIB file (``fibkit compile``,
``fibkit.Table.save``), opened once per process and opened again when the
file is replaced (write a new file and rename it over the old one).
"""

import os

import polars as pl
from polars.plugins import register_plugin_function

__all__ = ["lookup", "prefix"]

_LIBRARY = os.path.dirname(__file__)


def _fields(fields):
    """``fields`` as the plugin takes them: None, or a list of names."""
    if fields is None or fields is True:
        return None
    if isinstance(fields, str):
        return [name.strip() for name in fields.split(",") if name.strip()]
    names = list(fields)
    if not all(isinstance(name, str) for name in names):
        raise TypeError("fields is None, True, a string (\"asn,org\") or a list of field names")
    return names


def _table(table):
    """The table's path, absolute (a lazy query may run elsewhere)."""
    path = os.fspath(table)
    if not isinstance(path, str):
        path = os.fsdecode(path)
    return os.path.abspath(path)


def lookup(expr, table, fields=None, strict=True) -> pl.Expr:
    """The route of each address of ``expr`` (a column name or an
    expression) in the compiled FIB file ``table``: for a table of records,
    a struct of its fields (``fields``: all of them when None or True,
    else those named, as a list or ``"asn,org"``); for other tables, the
    value (UInt64 numbers, or text when some value is an address; UInt32
    next hops for a file compiled with ``--nexthops``). Null where no
    route, a null address, or a field the record lacks.

    With ``strict`` (the default) a string that is no address fails the
    query, naming its row and text; ``strict=False`` makes it null.
    Unknown fields, a missing or damaged file fail when the query is
    planned, naming the file."""
    if not isinstance(strict, bool):
        raise TypeError("strict is True or False")
    return register_plugin_function(
        plugin_path=_LIBRARY,
        function_name="lookup",
        args=[expr],
        kwargs={"table": _table(table), "fields": _fields(fields), "strict": strict},
        is_elementwise=True,
    )


def prefix(expr, table, strict=True) -> pl.Expr:
    """The matched prefix of each address of ``expr`` (``"10.0.0.0/8"``,
    null where no route), from a file compiled with prefixes
    (``fibkit compile --prefix``, or a table loaded with
    ``prefixes=True``)."""
    if not isinstance(strict, bool):
        raise TypeError("strict is True or False")
    return register_plugin_function(
        plugin_path=_LIBRARY,
        function_name="prefix",
        args=[expr],
        kwargs={"table": _table(table), "strict": strict},
        is_elementwise=True,
    )


@pl.api.register_expr_namespace("fibkit")
class FibkitExpressions:
    """``pl.col(c).fibkit``: lookups of the expression's addresses."""

    def __init__(self, expr: pl.Expr):
        self._expr = expr

    def lookup(self, table, fields=None, strict=True) -> pl.Expr:
        """``fibkit_polars.lookup`` of this expression."""
        return lookup(self._expr, table, fields=fields, strict=strict)

    def prefix(self, table, strict=True) -> pl.Expr:
        """``fibkit_polars.prefix`` of this expression."""
        return prefix(self._expr, table, strict=strict)
