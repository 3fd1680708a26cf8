"""fibkit's lookups as DuckDB SQL functions (DuckDB's Arrow-vectorised
Python functions: each call answers a whole vector of addresses).

    >>> import duckdb, fibkit.duckdb                                   # doctest: +SKIP
    >>> con = duckdb.connect()                                         # doctest: +SKIP
    >>> fibkit.duckdb.register(con, "asn.fib")                         # doctest: +SKIP
    >>> con.sql("SELECT ip, fibkit_lookup(ip).org FROM flows")         # doctest: +SKIP

DuckDB fixes a function's return type when it is registered, so each
table is a function of its own: ``register(con, table, name)`` makes
``name(ip)`` (``fibkit_lookup`` by default) answer a STRUCT of the table's
fields (a table of records), or ``name(ip)`` the route's value as a
BIGINT (a table of numbers). Addresses are VARCHAR of either family; NULL,
and addresses without a route, answer NULL fields.
"""

import fibkit
from fibkit.arrow import non_null as _non_null

_SQL_TYPES = {"int": "BIGINT", "float": "DOUBLE", "bool": "BOOLEAN", "text": "VARCHAR", "addr": "VARCHAR",
              "ints": "BIGINT[]"}


def _table(table):
    if isinstance(table, fibkit.Table):
        return table
    return fibkit.open_once(str(table))


def register(connection, table, name="fibkit_lookup", fields=None):
    """Registers ``name(ip VARCHAR)`` on the DuckDB ``connection``, looking
    addresses up in ``table`` (a ``fibkit.Table``, or the path of a compiled
    FIB file, opened once per process). With records, the function answers
    a STRUCT of ``fields`` (all the table's by default); otherwise the
    route's value as BIGINT. Returns the connection."""
    import duckdb
    import pyarrow as pa

    table = _table(table)
    schema = table.fields
    if schema is None:
        if fields is not None:
            raise ValueError("fields=: the table's values are not records")
        values = table.values

        def answer_values(addresses):
            hops = table.lookup_batch(addresses)
            return pa.array(values[hops].astype("int64"), mask=hops == 0)

        def lookup_values(addresses):
            return _non_null(addresses, answer_values)

        return connection.create_function(name, lookup_values, [duckdb.sqltype("VARCHAR")],
                                          duckdb.sqltype("BIGINT"), type="arrow", null_handling="special")
    chosen = [name for name, _ in schema] if fields is None else list(fields)
    kinds = dict(schema)
    missing = [field for field in chosen if field not in kinds]
    if missing:
        raise ValueError(f"the table has no field {missing[0]!r} (its fields: {', '.join(kinds)})")
    struct = "STRUCT(" + ", ".join(f'"{field}" {_SQL_TYPES[kinds[field]]}' for field in chosen) + ")"

    def answer_records(addresses):
        batch = table.lookup_batch(addresses, fields=chosen)
        return pa.StructArray.from_arrays(batch.columns, names=chosen)

    def lookup_records(addresses):
        return _non_null(addresses, answer_records)

    return connection.create_function(name, lookup_records, [duckdb.sqltype("VARCHAR")], duckdb.sqltype(struct),
                                      type="arrow", null_handling="special")
