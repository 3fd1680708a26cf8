"""Enrich Spark DataFrames with fibkit through ``mapInArrow``, the table
travelling as a compiled FIB file that each Python worker maps once.

    >>> import fibkit.spark                                                # doctest: +SKIP
    >>> fibkit.spark.upload(spark, "asn.fib")  # executors without the file   # doctest: +SKIP
    >>> flows = spark.read.parquet("flows/")                               # doctest: +SKIP
    >>> fibkit.spark.enrich(flows, "src", "asn.fib").write.parquet("enriched/")  # doctest: +SKIP

Read from Parquet and written to Parquet, no row passes through the
driver: Spark hands each Python worker Arrow record batches of its
partition and takes Arrow batches back (``mapInArrow``), and
``fibkit.arrow.enrich`` adds the routes to them in place of rows of
Python objects. ``enrich_parquet`` is the other way: a Spark task per
Parquet file, which its Python worker reads and writes with pyarrow, the
JVM only scheduling (docs/python.md measures both).

A DataFrame made with ``createDataFrame`` from a pandas
frame or a list has its rows on the driver, sent to the executors:
docs/python.md measures what that costs.
"""

import os

import fibkit
import fibkit.arrow

__all__ = ["enrich", "enrich_parquet", "upload"]


def _resolve(path):
    """``path`` if it exists here, else the file of that name ``upload``
    gave this executor (``SparkFiles``)."""
    if os.path.exists(path):
        return path
    from pyspark import SparkFiles

    shipped = SparkFiles.get(os.path.basename(path))
    if os.path.exists(shipped):
        return shipped
    raise FileNotFoundError(f"{path}: no such compiled FIB file here, nor given to this executor (fibkit.spark.upload)")


def _spark_types(schema):
    """``schema`` with the types Spark reads from Python workers: its
    large strings and large lists as strings and lists."""
    import pyarrow as pa

    def narrow(kind):
        if pa.types.is_large_string(kind):
            return pa.string()
        if pa.types.is_large_list(kind):
            return pa.list_(narrow(kind.value_type))
        return kind

    return pa.schema([field.with_type(narrow(field.type)) for field in schema])


def _enricher(column, path, value, prefix, fields, added):
    """The function ``mapInArrow`` runs on each partition's batches, the
    added columns cast to the pyarrow types of ``added``."""

    def enrich_batches(batches):
        table = fibkit.open_once(_resolve(path))
        for batch in batches:
            enriched = fibkit.arrow.enrich(batch, column, table, value=value, prefix=prefix, fields=fields)
            for field in added:
                where = enriched.schema.get_field_index(field.name)
                enriched = enriched.set_column(where, field, enriched.column(where).cast(field.type))
            yield enriched

    return enrich_batches


def enrich(frame, column, fib_file, value="value", prefix=None, fields=None):
    """The Spark DataFrame ``frame`` with the route of each address of
    ``column`` added by ``mapInArrow``, as ``fibkit.arrow.enrich`` adds it:
    a table of values its value as column ``value`` (a long; a string
    where some values are addresses), a table of records a column per
    field (``fields`` names them, None for all), with ``prefix`` the
    matched prefix; null where no route or no address. An added column
    replaces one of the same name.

    ``fib_file`` is the path of a compiled FIB file, readable here (the
    added columns' types are taken from it) and on the executors, or given
    to them with ``upload``."""
    import pyarrow as pa
    from pyspark.sql.pandas.types import from_arrow_schema
    from pyspark.sql.types import StringType, StructType

    path = os.fspath(fib_file)
    if not isinstance(frame.schema[column].dataType, StringType):
        raise TypeError(f"column {column!r} is {frame.schema[column].dataType.simpleString()}, not address strings")
    alone = pa.schema([pa.field(column, pa.string())])
    table = fibkit.open_once(path)
    added = _spark_types(
        fibkit.arrow.enriched_schema(alone, column, table, value=value, prefix=prefix, fields=fields)
    ).remove(0)
    added_spark = {field.name: field for field in from_arrow_schema(added).fields}
    kept = [added_spark.pop(field.name, field) for field in frame.schema.fields]
    schema = StructType(kept + list(added_spark.values()))
    return frame.mapInArrow(_enricher(column, path, value, prefix, fields, added), schema)


def _enrich_file(pair, filesystem, column, path, value, prefix, fields):
    table = fibkit.open_once(_resolve(path))
    source, destination = pair
    return fibkit.arrow.enrich_parquet_path(
        source, destination, filesystem, column, table, value=value, prefix=prefix, fields=fields
    )


def enrich_parquet(spark, source, destination, column, fib_file, value="value", prefix=None, fields=None):
    """Enriches every Parquet file of ``source`` (a directory, a file, a
    list of files, or a URI pyarrow reads) into a Parquet file of the same
    name in the directory ``destination``, a Spark task per file, as
    ``fibkit.dask.enrich_parquet`` does: the Python worker reads and writes
    its file with pyarrow, and no row passes through the JVM (Spark
    schedules, the file's rows stay in the worker that reads them). Answers
    the number of rows written. ``fib_file``: as for ``enrich``."""
    path = os.fspath(fib_file)
    pairs, filesystem = fibkit.arrow.parquet_pairs(
        source, destination, column, fibkit.open_once(path), value=value, prefix=prefix, fields=fields
    )
    tasks = spark.sparkContext.parallelize(pairs, len(pairs))
    return sum(tasks.map(lambda pair: _enrich_file(pair, filesystem, column, path, value, prefix, fields)).collect())


def upload(spark, fib_file):
    """Gives the compiled FIB file ``fib_file`` to every executor of the
    ``SparkSession`` ``spark`` (``SparkContext.addFile``), for executors
    that do not share this machine's file system. ``enrich`` finds it
    there by its file name."""
    spark.sparkContext.addFile(os.fspath(fib_file))
