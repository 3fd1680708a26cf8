"""fibkit.spark on a real local[2] Spark session (one for the module: a
session takes seconds to start): Parquet read by Spark, enriched in its
Python workers through mapInArrow and written as Parquet, every row's
fields and prefix checked against the table's one-address lookups (no
route and no address included); a file given with upload is found by the
workers."""

import os
import shutil
import sys

import pytest

pytest.importorskip("pyspark", reason="pyspark is not installed (pip install pyspark)")
if shutil.which("java") is None:
    pytest.skip("Spark needs Java (apt-get install openjdk-17-jre-headless)", allow_module_level=True)
pa = pytest.importorskip("pyarrow")
pq = pytest.importorskip("pyarrow.parquet")

import fibkit  # noqa: E402
import fibkit.spark  # noqa: E402
from flows_data import assert_rows_match, records_table, write_flows  # noqa: E402

FILES, ROWS = 3, 4000
FIELDS = ["asn", "org", "share", "path"]


@pytest.fixture(scope="module")
def spark():
    from pyspark.sql import SparkSession

    os.environ.setdefault("PYSPARK_PYTHON", sys.executable)  # the workers run this Python
    session = (SparkSession.builder.master("local[2]").appName("fibkit-tests")
               .config("spark.ui.enabled", "false").config("spark.sql.shuffle.partitions", "2").getOrCreate())
    session.sparkContext.setLogLevel("ERROR")
    yield session
    session.stop()


@pytest.fixture(scope="module")
def data(tmp_path_factory):
    directory = tmp_path_factory.mktemp("spark")
    fib_file, table = records_table(directory)
    return directory, fib_file, table, write_flows(directory / "flows", FILES, ROWS, seed=21)


def test_parquet_enriched_by_map_in_arrow_into_parquet(spark, data, tmp_path):
    directory, fib_file, table, flows = data
    enriched = fibkit.spark.enrich(spark.read.parquet(str(flows)), "src", fib_file, prefix="route")
    assert [(field.name, field.dataType.simpleString()) for field in enriched.schema.fields] == [
        ("src", "string"), ("bytes", "bigint"), ("asn", "bigint"), ("org", "string"), ("share", "double"),
        ("path", "array<bigint>"), ("route", "string"),
    ]
    enriched.write.parquet(str(tmp_path / "enriched"))
    result = pq.read_table(tmp_path / "enriched")
    assert len(result) == FILES * ROWS
    assert sorted(result.column("src").to_pylist(), key=str) == sorted(
        pq.read_table(flows).column("src").to_pylist(), key=str)
    assert_rows_match(result, table, FIELDS)


def test_python_workers_enrich_parquet_files_into_parquet_files(spark, data, tmp_path):
    directory, fib_file, table, flows = data
    rows = fibkit.spark.enrich_parquet(spark, flows, tmp_path / "enriched", "src", fib_file, prefix="route")
    assert rows == FILES * ROWS
    for number in range(FILES):
        name = f"part-{number}.parquet"
        result = pq.read_table(tmp_path / "enriched" / name)
        assert result.column("src").to_pylist() == pq.read_table(flows / name).column("src").to_pylist()
        assert_rows_match(result, table, FIELDS)
    with pytest.raises(KeyError, match="no column 'dst'"):  # before any task runs
        fibkit.spark.enrich_parquet(spark, flows, tmp_path / "none", "dst", fib_file)


def test_values_chosen_fields_an_uploaded_file_and_errors(spark, data, tmp_path):
    directory, fib_file, table, flows = data
    frame = spark.read.parquet(str(flows / "part-0.parquet"))
    (tmp_path / "given").mkdir()
    (tmp_path / "here").mkdir()
    shutil.copy(fib_file, tmp_path / "given" / "shipped.fib")
    shutil.copy(fib_file, tmp_path / "here" / "shipped.fib")
    fibkit.spark.upload(spark, tmp_path / "given" / "shipped.fib")
    enriched = fibkit.spark.enrich(frame, "src", tmp_path / "here" / "shipped.fib", fields=["org"])
    os.remove(tmp_path / "here" / "shipped.fib")  # the schema is made: the workers use the file Spark gives them
    rows = enriched.collect()
    assert [row["org"] for row in rows] == [
        (table.lookup(row["src"]) or {}).get("org") if row["src"] is not None else None for row in rows]
    values = fibkit.Table.default(nexthops=1000)
    values.save(tmp_path / "values.fib")
    asns = fibkit.spark.enrich(frame.limit(500), "src", tmp_path / "values.fib", value="asn").collect()
    assert [row["asn"] for row in asns] == [values.lookup(row["src"]) if row["src"] else None for row in asns]
    with pytest.raises(TypeError, match="'bytes' is bigint, not address strings"):
        fibkit.spark.enrich(frame, "bytes", fib_file)
    bad = spark.createDataFrame([("10.0.0.1",), ("10.0.0.300",)], "src string")
    with pytest.raises(Exception, match=r"addrs\[1\]: \"10.0.0.300\""):
        fibkit.spark.enrich(bad.coalesce(1), "src", fib_file).collect()
