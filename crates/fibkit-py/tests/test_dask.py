"""fibkit.dask on a real dask.distributed LocalCluster of two worker
processes: a few million rows from Parquet enriched on the workers equal
the single-process result row for row, each worker opens the compiled file
once, and workers find a file sent to them with ``upload``."""

import ipaddress
import os

import numpy as np
import pytest

import fibkit
from test_fibkit import random_routes

dd = pytest.importorskip("dask.dataframe")
distributed = pytest.importorskip("distributed")
pd = pytest.importorskip("pandas")
pytest.importorskip("pyarrow")

import fibkit.dask  # noqa: E402 (after the skips: it needs nothing, its tests need dask)

ROWS = 2_000_000


@pytest.fixture(scope="module")
def cluster():
    with distributed.LocalCluster(n_workers=2, threads_per_worker=1, processes=True, dashboard_address=None) as cluster:
        with distributed.Client(cluster) as client:
            yield client


@pytest.fixture(scope="module")
def data(tmp_path_factory):
    """A compiled mixed table (ASNs and next-hop addresses as values, with
    prefixes) and a Parquet file of addresses of both families."""
    directory = tmp_path_factory.mktemp("dask")
    rng = np.random.default_rng(7)
    routes = random_routes(__import__("random").Random(7), 32, 3000) + random_routes(__import__("random").Random(8), 128, 1000)
    routes.append(("198.18.0.0/15", "192.0.2.1"))
    source = directory / "routes.txt"
    source.write_text("".join(f"{prefix} {value}\n" for prefix, value in routes))
    table = fibkit.Table.load(source, prefixes=True)
    table.save(directory / "routes.fib")
    v4 = [str(ipaddress.IPv4Address(int(key))) for key in rng.integers(0, 2**32, ROWS - ROWS // 10)]
    v6 = [str(ipaddress.IPv6Address(int(high) << 64)) for high in rng.integers(0, 2**63, ROWS // 10)]
    addresses = np.array(v4 + v6, dtype=object)
    rng.shuffle(addresses)
    frame = pd.DataFrame({"addr": addresses, "bytes": rng.integers(0, 1500, ROWS)})
    frame.to_parquet(directory / "flows.parquet", row_group_size=ROWS // 16)
    return directory, table


def assert_same_rows(result, expected):
    """Equal frames, row for row; the address column's string dtype may
    differ (Dask reads Parquet strings as Arrow strings, pandas as its own)."""
    result, expected = result.reset_index(drop=True), expected.reset_index(drop=True)
    assert result["addr"].astype(object).tolist() == expected["addr"].astype(object).tolist()
    pd.testing.assert_frame_equal(result.drop(columns="addr"), expected.drop(columns="addr"))


def test_two_worker_processes_enrich_as_one_process_does(cluster, data):
    directory, table = data
    flows = dd.read_parquet(directory / "flows.parquet", split_row_groups=True)
    assert flows.npartitions >= 8
    enriched = fibkit.dask.enrich(flows, "addr", directory / "routes.fib", value="asn", prefix="route")
    result = enriched.compute().reset_index(drop=True)
    expected = fibkit.enrich(pd.read_parquet(directory / "flows.parquet"), "addr", table, value="asn", prefix="route")
    assert len(result) == ROWS
    assert_same_rows(result, expected)
    assert result["asn"].notna().sum() > 0 and result["route"].notna().sum() > 0
    opens = cluster.run(fibkit._open_count)
    assert len(opens) == 2 and all(count == 1 for count in opens.values()), opens


def test_an_uploaded_file_is_found_by_workers_without_the_path(cluster, data, tmp_path):
    directory, table = data
    local = tmp_path / "shipped.fib"
    local.write_bytes((directory / "routes.fib").read_bytes())
    fibkit.dask.upload(cluster, local)
    flows = dd.read_parquet(directory / "flows.parquet", split_row_groups=True).head(100_000, npartitions=2, compute=False)
    enriched = fibkit.dask.enrich(flows, "addr", local, value="asn")
    os.remove(local)  # the graph is built: from here on the workers use their uploaded copies
    result = enriched.compute().reset_index(drop=True)
    expected = fibkit.enrich(flows.compute(), "addr", table, value="asn").reset_index(drop=True)
    assert_same_rows(result, expected)
    uploaded = cluster.run(lambda dask_worker: os.path.exists(os.path.join(dask_worker.local_directory, "shipped.fib")))
    assert list(uploaded.values()) == [True, True]
