"""Enrich Dask DataFrames with fibkit, the table travelling as a compiled FIB
file that each worker process maps once.

    >>> import dask.dataframe as dd, fibkit.dask                  # doctest: +SKIP
    >>> flows = dd.read_parquet("flows/")                          # doctest: +SKIP
    >>> fibkit.dask.upload(client, "table.fib")  # workers without the file  # doctest: +SKIP
    >>> flows = fibkit.dask.enrich(flows, "src", "table.fib", value="asn")   # doctest: +SKIP

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

__all__ = ["enrich", "upload"]

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


def _enrich_partition(frame, column, path, value, prefix):
    return fibkit.enrich(frame, column, fibkit.open_once(_resolve(path)), value=value, prefix=prefix)


def enrich(frame, column, fib_file, value="value", prefix=None):
    """The Dask DataFrame ``frame`` with the route of each address of
    ``column`` added, partition by partition, as ``fibkit.enrich`` adds it
    to a pandas DataFrame: the value as column ``value``, and with
    ``prefix`` (a file compiled with ``--prefix`` or from a table loaded
    with ``prefixes=True``) the matched prefix as column ``prefix``.

    ``fib_file`` is the path of a compiled FIB file (``fibkit compile``,
    ``Table.save``), readable here (the output's columns are taken from it)
    and on the workers, or sent to them with ``upload``."""
    path = os.fspath(fib_file)
    meta = fibkit.enrich(frame._meta, column, fibkit.open_once(path), value=value, prefix=prefix)
    return frame.map_partitions(_enrich_partition, column, path, value, prefix, meta=meta)


def upload(client, fib_file):
    """Sends the compiled FIB file ``fib_file`` once to every worker of the
    ``distributed.Client`` ``client`` (and to workers that join later), into
    each worker's local directory, for workers that do not share this
    machine's file system. ``enrich`` finds it there by its file name."""
    from distributed.diagnostics.plugin import UploadFile

    plugin = UploadFile(os.fspath(fib_file), load=False)
    plugin.name = f"fibkit-{os.path.basename(os.fspath(fib_file))}"
    client.register_plugin(plugin)
