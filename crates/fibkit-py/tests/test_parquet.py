"""The Parquet-to-Parquet pipeline: fibkit.arrow.enrich on Arrow data and
Parquet files, and fibkit.dask.enrich_parquet on a real dask.distributed
LocalCluster of two worker processes, every row's fields and prefix
checked against the table's one-address lookups (no route, no address,
missing fields included)."""

import os

import pytest

pa = pytest.importorskip("pyarrow")
pq = pytest.importorskip("pyarrow.parquet")

import fibkit  # noqa: E402
import fibkit.arrow  # noqa: E402
from flows_data import assert_rows_match, records_table, write_flows  # noqa: E402

FILES, ROWS = 4, 5000
FIELDS = ["asn", "org", "share", "path"]


@pytest.fixture(scope="module")
def data(tmp_path_factory):
    directory = tmp_path_factory.mktemp("parquet")
    fib_file, table = records_table(directory)
    return directory, fib_file, table, write_flows(directory / "flows", FILES, ROWS)


def test_a_parquet_file_enriched_row_group_by_row_group(data, tmp_path):
    directory, fib_file, table, flows = data
    source, destination = flows / "part-0.parquet", tmp_path / "out.parquet"
    rows = fibkit.arrow.enrich_parquet_file(source, destination, "src", table, prefix="route")
    assert rows == ROWS
    written = pq.ParquetFile(tmp_path / "out.parquet")
    assert written.num_row_groups == 4
    result = written.read()
    assert result.schema.names == ["src", "bytes"] + FIELDS + ["route"]
    assert result.schema.types[2:] == [pa.int64(), pa.large_string(), pa.float64(), pa.large_list(pa.int64()),
                                       pa.string()]
    assert result.column("bytes").to_pylist() == pq.read_table(flows / "part-0.parquet").column("bytes").to_pylist()
    assert_rows_match(result, table, FIELDS)


def test_arrow_enrich_names_fields_values_and_bad_rows(data):
    directory, fib_file, table, flows = data
    batch = pa.record_batch({"src": pa.array(["10.0.0.1", None, "x"])})
    with pytest.raises(ValueError, match=r"addrs\[2\]: \"x\""):  # its row, the null counted
        fibkit.arrow.enrich(batch, "src", table)
    with pytest.raises(KeyError, match="no column 'dst'"):
        fibkit.arrow.enrich(batch, "dst", table)
    with pytest.raises(TypeError, match="not address strings"):
        fibkit.arrow.enrich(pa.record_batch({"src": pa.array([1])}), "src", table)
    one = pa.record_batch({"src": pa.array(["8.8.8.8", None], pa.large_string())})
    assert fibkit.arrow.enrich(one, "src", table, fields=["org"]).schema.names == ["src", "org"]
    values = fibkit.Table.default(nexthops=1000)
    enriched = fibkit.arrow.enrich(one, "src", values, value="asn")
    assert enriched.column("asn").to_pylist() == [values.lookup("8.8.8.8"), None]
    with pytest.raises(ValueError, match="fields= needs a table of records"):
        fibkit.arrow.enrich(one, "src", values, fields=True)
    replaced = fibkit.arrow.enrich(pa.table({"src": ["8.8.8.8"], "asn": ["old"]}), "src", values, value="asn")
    assert replaced.schema.names == ["src", "asn"] and replaced.column("asn").type == pa.int64()


def test_an_error_names_the_file_and_row_group(data, tmp_path):
    directory, fib_file, table, flows = data
    pq.write_table(pa.table({"src": ["10.0.0.1", "10.0.0.2", "not an address"]}), tmp_path / "bad.parquet",
                   row_group_size=2)
    with pytest.raises(ValueError, match=r"bad.parquet, row group 1: addrs\[0\]"):
        fibkit.arrow.enrich_parquet_file(tmp_path / "bad.parquet", tmp_path / "out.parquet", "src", table)


dd = pytest.importorskip("dask.dataframe")
distributed = pytest.importorskip("distributed")
import fibkit.dask  # noqa: E402 (after the skips: its tests need dask)


@pytest.fixture(scope="module")
def cluster():
    with distributed.LocalCluster(n_workers=2, threads_per_worker=1, processes=True, dashboard_address=None) as cluster:
        with distributed.Client(cluster) as client:
            yield client


def test_two_workers_enrich_parquet_files_into_parquet_files(cluster, data, tmp_path):
    directory, fib_file, table, flows = data
    rows = fibkit.dask.enrich_parquet(flows, tmp_path / "enriched", "src", fib_file, prefix="route")
    assert rows == FILES * ROWS
    written = sorted(os.listdir(tmp_path / "enriched"))
    assert written == [f"part-{number}.parquet" for number in range(FILES)]
    for name in written:  # file by file, in the order of their rows
        result = pq.read_table(tmp_path / "enriched" / name)
        assert result.column("src").to_pylist() == pq.read_table(flows / name).column("src").to_pylist()
        assert_rows_match(result, table, FIELDS)
    # Each worker that ran a task opened the file once; the client received counts, not rows.
    opens = cluster.run(fibkit._open_count)
    assert sorted(opens.values()) in ([1, 1], [0, 1]), opens


def test_enrich_parquet_chosen_fields_and_a_list_of_files(cluster, data, tmp_path):
    directory, fib_file, table, flows = data
    files = [str(flows / "part-1.parquet"), str(flows / "part-3.parquet")]
    assert fibkit.dask.enrich_parquet(files, tmp_path / "out", "src", fib_file, fields=["org"]) == 2 * ROWS
    result = pq.read_table(tmp_path / "out" / "part-3.parquet")
    assert result.schema.names == ["src", "bytes", "org"]
    expected = [table.lookup(address)["org"] if address and table.lookup(address) else None
                for address in result.column("src").to_pylist()]
    assert result.column("org").to_pylist() == expected
    with pytest.raises(KeyError, match="no column 'dst'"):  # before any task runs
        fibkit.dask.enrich_parquet(flows, tmp_path / "none", "dst", fib_file)
    with pytest.raises(FileNotFoundError, match="missing"):
        fibkit.dask.enrich_parquet(tmp_path / "missing", tmp_path / "none", "src", fib_file)
    (tmp_path / "empty").mkdir()
    with pytest.raises(ValueError, match="empty: no Parquet files"):
        fibkit.dask.enrich_parquet(tmp_path / "empty", tmp_path / "none", "src", fib_file)


def test_dask_dataframes_enrich_with_fields(cluster, data):
    directory, fib_file, table, flows = data
    frame = dd.read_parquet(flows / "part-2.parquet")
    enriched = fibkit.dask.enrich(frame.dropna(subset=["src"]), "src", fib_file, fields=["asn", "path"]).compute()
    assert len(enriched) > 0
    for address, asn, path in zip(enriched["src"], enriched["asn"], enriched["path"]):
        record = table.lookup(address) or {}
        assert (None if asn is pd_na() else asn) == record.get("asn")
        assert (None if path is pd_na() else list(path)) == record.get("path")


def pd_na():
    import pandas as pd

    return pd.NA


def test_a_worker_error_names_the_file(cluster, data, tmp_path):
    directory, fib_file, table, flows = data
    (tmp_path / "in").mkdir()
    pq.write_table(pa.table({"src": ["10.0.0.1", "10.0.0.2", "10.0.0.300"]}), tmp_path / "in" / "bad.parquet")
    with pytest.raises(ValueError, match=r"bad.parquet, row group 0: addrs\[2\]: \"10.0.0.300\""):
        fibkit.dask.enrich_parquet(tmp_path / "in", tmp_path / "out", "src", fib_file)
