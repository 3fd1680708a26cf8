"""Rows per second of fibkit.dask.enrich on a LocalCluster of two worker
processes against fibkit.enrich in one process, on the same Parquet file:
``python crates/fibkit-py/bench_dask.py [TABLE] [ROWS]`` (default: the
embedded default table, 4 million rows; 90 % IPv4 and 10 % IPv6 address
strings in 32 row groups). Both read the Parquet file and end with the
enriched pandas DataFrame in this process; medians of three runs, with the
spread."""

import ipaddress
import pathlib
import statistics
import sys
import tempfile
import time

import numpy as np
import pandas as pd
import dask.dataframe as dd
from dask.distributed import Client, LocalCluster

import fibkit
import fibkit.dask


def addresses(rows, rng):
    v4 = [str(ipaddress.IPv4Address(int(key))) for key in rng.integers(0, 2**32, rows - rows // 10)]
    v6 = [str(ipaddress.IPv6Address((0x2000 << 112) | int(key) << 64)) for key in rng.integers(0, 2**48, rows // 10)]
    mixed = np.array(v4 + v6, dtype=object)
    rng.shuffle(mixed)
    return mixed


def timed(run, repeat=3):
    seconds = []
    for _ in range(repeat):
        start = time.perf_counter()
        result = run()
        seconds.append(time.perf_counter() - start)
    return statistics.median(seconds), min(seconds), max(seconds), result


def main():
    table_path = sys.argv[1] if len(sys.argv) > 1 else None
    rows = int(sys.argv[2]) if len(sys.argv) > 2 else 4_000_000
    directory = pathlib.Path(tempfile.mkdtemp())
    table = fibkit.Table.load(table_path) if table_path else fibkit.Table.default()
    table.save(directory / "table.fib")
    frame = pd.DataFrame({"addr": addresses(rows, np.random.default_rng(1)), "bytes": np.arange(rows) % 1500})
    frame.to_parquet(directory / "flows.parquet", row_group_size=rows // 32)
    enriched = lambda: fibkit.enrich(pd.read_parquet(directory / "flows.parquet"), "addr", table, value="asn")  # noqa: E731
    one = timed(enriched)
    one_sum = timed(lambda: enriched().groupby("asn")["bytes"].sum())
    with LocalCluster(n_workers=2, threads_per_worker=1, processes=True, dashboard_address=None) as cluster, Client(cluster):
        flows = lambda: dd.read_parquet(directory / "flows.parquet", split_row_groups=True)  # noqa: E731
        distributed = lambda: fibkit.dask.enrich(flows(), "addr", directory / "table.fib", value="asn")  # noqa: E731
        distributed().head(10)  # the workers started and the file opened
        two = timed(lambda: distributed().compute())
        two_sum = timed(lambda: distributed().groupby("asn")["bytes"].sum().compute())
    assert two[3]["asn"].astype(object).tolist() == one[3]["asn"].astype(object).tolist()
    assert two_sum[3].sort_index().tolist() == one_sum[3].sort_index().tolist()
    print(f"{rows:,} rows of {directory / 'flows.parquet'}, table {table}")
    for name, (median, fastest, slowest, _) in [
        ("one process, enrich", one),
        ("2 workers, enrich", two),
        ("one process, enrich + sum by ASN", one_sum),
        ("2 workers, enrich + sum by ASN", two_sum),
    ]:
        print(f"{name:>33}: {rows / median / 1e6:5.2f} M rows/s ({median:.2f} s, {fastest:.2f}-{slowest:.2f})")


if __name__ == "__main__":
    main()
