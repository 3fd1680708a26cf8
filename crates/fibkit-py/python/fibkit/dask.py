"""Enrich Dask DataFrames with fibkit, the table travelling as a compiled FIB
file that each worker process maps once.

    >>> import dask.dataframe as dd, fibkit.dask                  # doctest: +SKIP
    >>> flows = dd.read_parquet("flows/")                          # doctest: +SKIP
    >>> fibkit.dask.upload(client, "table.fib")  # workers without the file  # doctest: +SKIP
    >>> flows = fibkit.dask.enrich(flows, "src", "table.fib", value="asn")   # doctest: +SKIP
    >>> fibkit.dask.enrich_parquet("flows/", "enriched/", "src", "asn.fib")  # doctest: +SKIP

``enrich_parquet`` is the pipeline for data at scale: each task reads one
Parquet file on a worker, adds the routes (``fibkit.arrow``: Arrow in,
Arrow out) and writes its Parquet file there, so that no row passes
through the client or the task graph; only a count of rows comes back.
``enrich`` adds the routes to a Dask DataFrame, for a pipeline that goes
on in Dask (a DataFrame made with ``from_pandas`` carries its rows in the
graph, and ``compute`` gathers every row into the client: docs/python.md
measures what that costs).

The graph holds only the file's name: no table is pickled into a task.
A worker opens the file the first time one of its tasks needs it
(``fibkit.open_once``: mapped, nothing built, the worker processes of a
machine sharing its pages) and keeps it for the tasks after; a file
replaced on disk (another modification time or size) is opened again. Workers that
see the client's file system use the path as given; others get the file
from ``upload``, which sends it once to every worker (distributed's
``UploadFile`` plugin) into the worker's local directory, where tasks look
for it by name when the path does not exist on the worker.
"""

import os

import fibkit
import fibkit.arrow

__all__ = ["enrich", "enrich_parquet", "upload"]

def _resolve(path):
    """``path`` if it exists here, else the file of that name ``upload``
    put in this worker's local directory."""
    if os.path.exists(path):
        return path
    try:
        from distributed import get_worker

        uploaded = os.path.join(get_worker().local_directory, os.path.basename(path))
    except (ImportError, ValueError):  # not on a distributed worker
        uploaded = None
    if uploaded is not None and os.path.exists(uploaded):
        return uploaded
    raise FileNotFoundError(f"{path}: no such compiled FIB file here, nor uploaded to this worker (fibkit.dask.upload)")


def _enrich_partition(frame, column, path, value, prefix, fields):
    return fibkit.enrich(frame, column, fibkit.open_once(_resolve(path)), value=value, prefix=prefix, fields=fields)


def enrich(frame, column, fib_file, value="value", prefix=None, fields=None):
    """The Dask DataFrame ``frame`` with the route of each address of
    ``column`` added, partition by partition, as ``fibkit.enrich`` adds it
    to a pandas DataFrame: the value as column ``value``, and with
    ``prefix`` (a file compiled with ``--prefix`` or from a table loaded
    with ``prefixes=True``) the matched prefix as column ``prefix``; with
    ``fields`` (a file of records: their names, or True for all) a column
    per field in place of ``value``.

    ``fib_file`` is the path of a compiled FIB file (``fibkit compile``,
    ``Table.save``), readable here (the output's columns are taken from it)
    and on the workers, or sent to them with ``upload``."""
    path = os.fspath(fib_file)
    meta = fibkit.enrich(frame._meta, column, fibkit.open_once(path), value=value, prefix=prefix, fields=fields)
    return frame.map_partitions(_enrich_partition, column, path, value, prefix, fields, meta=meta)


def _enrich_file(source, destination, filesystem, column, path, value, prefix, fields):
    table = fibkit.open_once(_resolve(path))
    return fibkit.arrow.enrich_parquet_path(
        source, destination, filesystem, column, table, value=value, prefix=prefix, fields=fields
    )


def enrich_parquet(source, destination, column, fib_file, value="value", prefix=None, fields=None):
    """Enriches every Parquet file of ``source`` (a directory, a file, a
    list of files, or a URI pyarrow reads) into a Parquet file of the same
    name in the directory ``destination`` (made if missing, on the same
    file system), a task per file on the current Dask scheduler (a
    ``distributed.Client``'s if one is active): the task reads its file on
    the worker, row group by row group, adds the routes of ``column`` as
    ``fibkit.arrow.enrich`` does (a value column, or a column per field of
    a table of records) and writes them there. Answers the number of rows
    written. ``fib_file``: as for ``enrich``."""
    import dask

    path = os.fspath(fib_file)
    pairs, filesystem = fibkit.arrow.parquet_pairs(
        source, destination, column, fibkit.open_once(path), value=value, prefix=prefix, fields=fields
    )
    task = dask.delayed(_enrich_file, pure=False)
    return sum(dask.compute(*[task(file, out, filesystem, column, path, value, prefix, fields) for file, out in pairs]))


def upload(client, fib_file):
    """Sends the compiled FIB file ``fib_file`` once to every worker of the
    ``distributed.Client`` ``client`` (and to workers that join later), into
    each worker's local directory, for workers that do not share this
    machine's file system. ``enrich`` finds it there by its file name."""
    from distributed.diagnostics.plugin import UploadFile

    plugin = UploadFile(os.fspath(fib_file), load=False)
    plugin.name = f"fibkit-{os.path.basename(os.fspath(fib_file))}"
    client.register_plugin(plugin)
