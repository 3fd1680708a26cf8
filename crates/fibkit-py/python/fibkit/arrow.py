"""Route columns added to Arrow data, and Parquet files enriched into
Parquet files: the one step that the Dask and Spark pipelines run on their
workers (``fibkit.dask.enrich_parquet``, ``fibkit.spark.enrich``) and that
one process runs in a loop, so that the three are measured on the same
work.

    >>> import fibkit, fibkit.arrow                                         # doctest: +SKIP
    >>> table = fibkit.open("asn.fib")                                      # doctest: +SKIP
    >>> fibkit.arrow.enrich(batch, "src", table, fields=["asn", "org"])     # doctest: +SKIP
    >>> fibkit.arrow.enrich_parquet_file("flows/a.parquet", "out/a.parquet", "src", table)  # doctest: +SKIP

Arrow, not pandas, because a Parquet file is Arrow when read and Arrow
when written: the address column's strings are parsed in place, a field
of a record is an Arrow array built from the table's buffers, and nothing
becomes a Python object on the way. A null address answers nulls, as an
address without a route does.
"""

import os
import posixpath
import re

import numpy as np

__all__ = [
    "enrich", "enrich_parquet_file", "enrich_parquet_path", "enriched_schema", "non_null", "parquet_files",
    "parquet_pairs",
]

_INT64_MAX = 2**63 - 1


def non_null(addresses, answer):
    """``answer`` (a function of a pyarrow array of addresses to a pyarrow
    array or RecordBatch of as many rows) of the non-null ``addresses``,
    with a null row where an address is null."""
    import pyarrow as pa

    if isinstance(addresses, pa.ChunkedArray):
        addresses = addresses.combine_chunks()
    if addresses.null_count == 0:
        return answer(addresses)
    valid = addresses.is_valid().to_numpy(zero_copy_only=False)
    try:
        answered = answer(addresses.filter(pa.array(valid)))
    except ValueError as error:  # its index among the non-null addresses: the row's in its place
        rows = np.flatnonzero(valid)
        message = re.sub(r"^addrs\[(\d+)\]", lambda found: f"addrs[{rows[int(found[1])]}]", str(error))
        raise ValueError(message) from None
    positions = np.cumsum(valid) - 1
    return answered.take(pa.array(positions, mask=~valid))


def _value_column(table, hops):
    """The route value of each next hop of ``hops`` (``lookup_batch``'s
    answers): int64 (a table of numbers) or the value as the table wrote it
    (some values are addresses); null where no route."""
    import pyarrow as pa

    values = table.values
    if values.dtype == np.uint64:
        if len(values) and int(values.max()) > _INT64_MAX:
            raise ValueError(f"a route value above {_INT64_MAX} does not fit an Arrow int64 column")
        return pa.array(values.astype(np.int64)[hops], mask=hops == 0)
    distinct, where = np.unique(hops, return_inverse=True)
    labels = pa.array([None if hop == 0 else str(table.value(hop)) for hop in distinct.tolist()], pa.string())
    return labels.take(pa.array(where.reshape(-1)))


def _route_columns(table, addresses, value, prefix, fields):
    """(names, arrays) of the columns that ``enrich`` adds for a pyarrow
    string array of addresses, none of them null."""
    import pyarrow as pa

    names, arrays = [], []
    # One lookup gives the next hops and the prefixes (records take their
    # own: `fields=` does not combine with `prefixes=`).
    hops, prefixes = table.lookup_batch(addresses, prefixes=True) if prefix is not None else (None, None)
    if table.fields is not None:
        batch = table.lookup_batch(addresses, fields=True if fields is None else fields)
        names += batch.schema.names
        arrays += batch.columns
    else:
        if fields is not None:
            raise ValueError("fields= needs a table of records (Table.load(..., fields=...), fibkit compile --fields)")
        names.append(value)
        arrays.append(_value_column(table, table.lookup_batch(addresses) if hops is None else hops))
    if prefix is not None:
        names.append(prefix)
        arrays.append(pa.array(prefixes, pa.string()))
    return names, arrays


def enrich(data, column, table, value="value", prefix=None, fields=None):
    """The ``pyarrow.RecordBatch`` or ``pyarrow.Table`` ``data`` with the
    route of each address of ``column`` (strings of either family; null:
    no address) added as columns, null where no route.

    A table of values adds its value as column ``value`` (int64; strings
    where some values are addresses). A table of records adds a column per
    field (their Arrow types, docs/records.md): ``fields`` names them, None
    for all. With ``prefix`` (a table with prefixes), the matched prefix
    as column ``prefix``. An added column replaces one of the same name.
    A string that is not an address is a ``ValueError`` naming its row."""
    import pyarrow as pa

    try:
        addresses = data.column(column)
    except KeyError:
        raise KeyError(f"no column {column!r} (columns: {', '.join(data.schema.names)})") from None
    if not (pa.types.is_string(addresses.type) or pa.types.is_large_string(addresses.type)):
        raise TypeError(f"column {column!r} is {addresses.type}, not address strings")
    names = []

    def answer(present):
        nonlocal names
        names, arrays = _route_columns(table, present, value, prefix, fields)
        return pa.RecordBatch.from_arrays(arrays, names=names)

    routes = non_null(addresses, answer)
    for name, array in zip(names, routes.columns):
        if isinstance(data, pa.Table):
            array = pa.chunked_array([array], array.type)
        where = data.schema.get_field_index(name)
        data = data.set_column(where, name, array) if where >= 0 else data.append_column(name, array)
    return data


def enriched_schema(schema, column, table, value="value", prefix=None, fields=None):
    """The schema of ``enrich``'s answer for data of the pyarrow
    ``schema``: the columns it adds and their types, without data."""
    return enrich(schema.empty_table(), column, table, value=value, prefix=prefix, fields=fields).schema


def enrich_parquet_file(source, destination, column, table, value="value", prefix=None, fields=None):
    """Reads the Parquet file ``source`` row group by row group, adds the
    routes (as ``enrich``) and writes each as a row group of the Parquet
    file ``destination`` (replaced if it exists). Both are paths or
    pyarrow file objects (``pyarrow.fs``' ``open_input_file`` and
    ``open_output_stream``, for other file systems). Answers the number of
    rows. An error names the source (a path) and its row group."""
    import pyarrow.parquet as pq

    named = f"{os.fspath(source)}, " if isinstance(source, (str, os.PathLike)) else ""
    reader = pq.ParquetFile(source)
    rows = 0
    schema = enriched_schema(reader.schema_arrow, column, table, value=value, prefix=prefix, fields=fields)
    with pq.ParquetWriter(destination, schema) as writer:
        for group in range(reader.num_row_groups):
            data = reader.read_row_group(group)
            try:
                enriched = enrich(data, column, table, value=value, prefix=prefix, fields=fields)
            except (ValueError, TypeError) as error:
                raise type(error)(f"{named}row group {group}: {error}") from None
            writer.write_table(enriched)
            rows += len(data)
    return rows


def enrich_parquet_path(source, destination, filesystem, column, table, value="value", prefix=None, fields=None):
    """``enrich_parquet_file`` of the paths ``source`` and ``destination``
    on the ``pyarrow.fs.FileSystem`` ``filesystem``, the task that a worker
    runs; an error names ``source``."""
    with filesystem.open_input_file(source) as reader, filesystem.open_output_stream(destination) as writer:
        try:
            return enrich_parquet_file(reader, writer, column, table, value=value, prefix=prefix, fields=fields)
        except (ValueError, TypeError) as error:
            raise type(error)(f"{source}, {error}") from None


def parquet_files(source):
    """The Parquet files of ``source`` (a directory, a file, or a list of
    files; or a URI pyarrow reads, such as ``s3://bucket/flows/``) in name
    order, and their ``pyarrow.fs.FileSystem``."""
    import pyarrow.dataset

    dataset = pyarrow.dataset.dataset(source if isinstance(source, list) else os.fspath(source), format="parquet")
    return sorted(dataset.files), dataset.filesystem


def parquet_pairs(source, destination, column, table, value="value", prefix=None, fields=None):
    """The work of a Parquet pipeline, checked before any task runs: each
    Parquet file of ``source`` (``parquet_files``) with the file of the
    same name in the directory ``destination`` (made if missing, on the
    same file system), and that file system. A missing column, a column of
    another type, a field the table has not, no files, or two files of one
    name are errors here, naming them."""
    import pyarrow.parquet as pq

    files, filesystem = parquet_files(source)
    if not files:
        raise ValueError(f"{source}: no Parquet files")
    names = [posixpath.basename(file) for file in files]
    if len(set(names)) < len(names):
        raise ValueError(f"{source}: two Parquet files have the same name; they would write one file")
    with filesystem.open_input_file(files[0]) as first:
        enriched_schema(pq.read_schema(first), column, table, value=value, prefix=prefix, fields=fields)
    destination = os.fspath(destination)
    if "://" in destination:
        destination = type(filesystem).from_uri(destination)[1]
    elif type(filesystem).__name__ == "LocalFileSystem":
        destination = os.path.abspath(destination)
    filesystem.create_dir(destination, recursive=True)
    return [(file, posixpath.join(destination, name)) for file, name in zip(files, names)], filesystem
