"""Rows per second of the Parquet-to-Parquet pipelines against one process
on the same files, and of the patterns that send rows between processes:
``python crates/fibkit-py/bench_parquet.py [TABLE] [FILES] [ROWS]``
(``make bench-parquet``; default: the 2014 table of FIBKIT_DATA if there,
else 500,000 random prefixes; 8 files of 2 million random IPv4 address
strings, 4 row groups each).

The table is one of records: each route's ASN (int) and a name (text,
``AS<asn>``), compiled once to a file that every process maps. Each
figure is the median of three timed runs after an untimed one (the
workers started, the file opened), with the fastest and slowest:

- one process: ``fibkit.arrow.enrich_parquet_file`` over the files in a
  loop (read, add the fields, write);
- Dask: ``fibkit.dask.enrich_parquet`` on a LocalCluster of 2 worker
  processes of 1 thread, and ``dd.read_parquet`` → ``fibkit.dask.enrich``
  → ``to_parquet``;
- Spark: ``spark.read.parquet`` → ``fibkit.spark.enrich`` (mapInArrow) →
  ``write.parquet`` in ``local[2]``, at Spark's default Arrow batch (10,000
  rows) and at 200,000 rows; and, to see where Spark's time goes, the
  files read and written by Spark alone, and passed through ``mapInArrow``
  unchanged (200,000-row batches);
- Spark scheduling only: ``fibkit.spark.enrich_parquet``, a task per
  file that its Python worker reads and writes with pyarrow;
- the patterns that lose, on one file's rows held by the client as a
  pandas frame: ``fibkit.enrich`` in this process against
  ``dd.from_pandas`` → ``fibkit.dask.enrich`` → ``compute`` and
  ``createDataFrame`` → ``fibkit.spark.enrich`` → ``toPandas``.

Per worker is the rate divided by the 2 workers; its ratio is to the one
process's rate on the same work. CPU is the one process's CPU seconds
divided by the run's (this process and all under it): the per-worker
ratio a worker would reach on a core of its own, which a shared machine's
other jobs do not move as they move the rates.
"""

import gzip
import os
import pathlib
import shutil
import statistics
import sys
import tempfile
import time

import numpy as np
import pyarrow as pa
import pyarrow.compute as pc
import pyarrow.parquet as pq

import fibkit
import fibkit.arrow

WORKERS = 2
FIELDS = ["asn", "name"]


def ipv4_strings(count, rng):
    """``count`` random dotted quads as a pyarrow string array, made in
    Arrow (a Python loop would take minutes for millions)."""
    keys = rng.integers(0, 2**32, count, dtype=np.uint64)
    octets = [pc.cast(pa.array((keys >> shift) & 255), pa.string()) for shift in (24, 16, 8, 0)]
    return pc.binary_join_element_wise(*octets, ".")


def records_file(directory, source):
    """A table of records (asn:int, name:text ``AS<asn>``) from ``source``
    (a text table of ``PREFIX ASN`` lines, gzipped or not; None: 500,000
    random IPv4 prefixes of /8 to /24 with random ASNs), compiled into
    ``directory``. Answers its path and a description."""
    if source is None:
        rng = np.random.default_rng(2)
        lengths = rng.integers(8, 25, 500_000)
        keys = rng.integers(0, 2**32, 500_000, dtype=np.uint64) >> (32 - lengths) << (32 - lengths)
        routes = [(f"{key >> 24}.{key >> 16 & 255}.{key >> 8 & 255}.{key & 255}/{length}", asn) for key, length, asn
                  in zip(keys.tolist(), lengths.tolist(), rng.integers(1, 65_000, 500_000).tolist())]
    else:
        opener = gzip.open if source.endswith(".gz") else open
        with opener(source, "rt") as lines:
            routes = [line.split()[:2] for line in lines if line.strip() and not line.startswith(";")]
    lines = ["prefix,asn,name"] + [f"{prefix},{asn},AS{asn}" for prefix, asn in routes]
    (directory / "records.csv").write_text("\n".join(lines) + "\n")
    records = fibkit.Table.load(directory / "records.csv", fields="asn:int,name:text")
    records.save(directory / "records.fib")
    name = os.path.basename(source) if source else "random prefixes"
    return directory / "records.fib", f"{len(routes):,} routes of {name} as records (asn, name)"


def cpu_seconds():
    """CPU seconds (user and system) used so far by this process and every
    process under it (Dask's nannies and workers; Spark's JVM and its
    Python workers), from /proc: what a run costs whatever else the machine
    runs at the same time."""
    parents, used = {}, {}
    for entry in os.listdir("/proc"):
        if not entry.isdigit():
            continue
        try:
            with open(f"/proc/{entry}/stat") as stat:
                fields = stat.read().rsplit(")", 1)[1].split()
        except OSError:  # ended meanwhile
            continue
        parents[int(entry)] = int(fields[1])
        used[int(entry)] = int(fields[11]) + int(fields[12])
    ours, total = {os.getpid()}, 0
    changed = True
    while changed:
        grown = {pid for pid, parent in parents.items() if parent in ours} | ours
        changed, ours = grown != ours, grown
    total = sum(used[pid] for pid in ours)
    return total / os.sysconf("SC_CLK_TCK")


def timed(run, repeat=3):
    """(median, fastest, slowest) seconds of ``repeat`` runs after an
    untimed one, and the median CPU seconds of a run."""
    run()
    seconds, cpu = [], []
    for _ in range(repeat):
        start, start_cpu = time.perf_counter(), cpu_seconds()
        run()
        seconds.append(time.perf_counter() - start)
        cpu.append(cpu_seconds() - start_cpu)
    return statistics.median(seconds), min(seconds), max(seconds), statistics.median(cpu)


def fresh(path):
    shutil.rmtree(path, ignore_errors=True)
    return path


def one_process(files, out, fib_file):
    table = fibkit.open_once(fib_file)
    fresh(out).mkdir()
    return sum(fibkit.arrow.enrich_parquet_file(file, out / file.name, "src", table) for file in files)


def dask_figures(flows, out, fib_file, frame):
    import dask.dataframe as dd
    from dask.distributed import Client, LocalCluster

    import fibkit.dask

    figures = {}
    with LocalCluster(n_workers=WORKERS, threads_per_worker=1, processes=True, dashboard_address=None) as cluster, \
            Client(cluster):
        figures["Dask enrich_parquet"] = timed(
            lambda: fibkit.dask.enrich_parquet(flows, fresh(out), "src", fib_file, fields=FIELDS))
        figures["Dask read_parquet, enrich, to_parquet"] = timed(lambda: fibkit.dask.enrich(
            dd.read_parquet(flows), "src", fib_file, fields=FIELDS).to_parquet(fresh(out), write_index=False))
        figures["Dask from_pandas, enrich, compute"] = timed(lambda: fibkit.dask.enrich(
            dd.from_pandas(frame, npartitions=8), "src", fib_file, fields=FIELDS).compute())
    return figures


def _unchanged(batches):
    yield from batches


def spark_figures(flows, out, fib_file, frame):
    from pyspark.sql import SparkSession

    import fibkit.spark

    os.environ.setdefault("PYSPARK_PYTHON", sys.executable)
    spark = (SparkSession.builder.master(f"local[{WORKERS}]").config("spark.ui.enabled", "false")
             .config("spark.driver.memory", "4g").getOrCreate())
    spark.sparkContext.setLogLevel("ERROR")
    figures = {}
    try:
        figures["Spark enrich_parquet (a task per file, pyarrow)"] = timed(
            lambda: fibkit.spark.enrich_parquet(spark, flows, fresh(out), "src", fib_file, fields=FIELDS))
        for batch in (10_000, 200_000):
            spark.conf.set("spark.sql.execution.arrow.maxRecordsPerBatch", str(batch))
            figures[f"Spark mapInArrow, batches of {batch:,}"] = timed(lambda: fibkit.spark.enrich(
                spark.read.parquet(str(flows)), "src", fib_file, fields=FIELDS).write.parquet(str(fresh(out))))
        # Where Spark's time goes: Parquet read and written by the JVM alone,
        # then the batches through the Python workers and back unchanged.
        figures["Spark read.parquet, write.parquet (no Python)"] = timed(
            lambda: spark.read.parquet(str(flows)).write.parquet(str(fresh(out))))
        figures["Spark mapInArrow returning its batches"] = timed(lambda: spark.read.parquet(str(flows)).mapInArrow(
            _unchanged, spark.read.parquet(str(flows)).schema).write.parquet(str(fresh(out))))
        spark.conf.set("spark.sql.execution.arrow.pyspark.enabled", "true")
        figures["Spark createDataFrame, enrich, toPandas"] = timed(lambda: fibkit.spark.enrich(
            spark.createDataFrame(frame), "src", fib_file, fields=FIELDS).toPandas())
    finally:
        spark.stop()
    return figures


def main():
    data = pathlib.Path(os.environ.get("FIBKIT_DATA", "../shared/data")) / "routeviews-2014-05-13.ipasn.gz"
    source = sys.argv[1] if len(sys.argv) > 1 and sys.argv[1] else (str(data) if data.exists() else None)
    files = int(sys.argv[2]) if len(sys.argv) > 2 else 8
    rows = int(sys.argv[3]) if len(sys.argv) > 3 else 2_000_000
    directory = pathlib.Path(tempfile.mkdtemp(prefix="fibkit-bench-parquet-"))
    try:
        fib_file, described = records_file(directory, source)
        rng = np.random.default_rng(1)
        flows = directory / "flows"
        flows.mkdir()
        for number in range(files):
            data = pa.table({"src": ipv4_strings(rows, rng), "bytes": pa.array(np.arange(rows) % 1500)})
            pq.write_table(data, flows / f"part-{number}.parquet", row_group_size=rows // 4)
        paths = sorted(flows.iterdir())
        total = files * rows
        frame = pq.read_table(paths[0]).to_pandas()
        table = fibkit.open_once(fib_file)
        figures = {"one process, enrich_parquet_file in a loop": timed(lambda: one_process(paths, directory / "out",
                                                                                           fib_file))}
        expected = pq.read_table(directory / "out")
        figures["one process, fibkit.enrich of a pandas frame"] = timed(
            lambda: fibkit.enrich(frame, "src", table, fields=FIELDS))
        figures.update(dask_figures(flows, directory / "out", fib_file, frame))
        dask_out = pq.read_table(directory / "out")  # the last Parquet the Dask pipelines wrote: the same rows
        assert dask_out.column("asn").to_pylist()[:1000] == expected.column("asn").to_pylist()[:1000]
        try:
            figures.update(spark_figures(flows, directory / "out", fib_file, frame))
        except ImportError as error:
            print(f"Spark not measured: {error}")
        print(f"{files} files x {rows:,} random IPv4 rows; {described}; "
              f"{WORKERS} workers; {os.cpu_count()} CPUs; load {os.getloadavg()[0]:.2f}")
        print("rate (median of 3 s, fastest-slowest); per worker: the rate / workers, as a share of one process's;"
              " CPU: one process's CPU seconds a row / the run's (all its processes)")
        alone = figures["one process, enrich_parquet_file in a loop"]
        alone_frame = figures["one process, fibkit.enrich of a pandas frame"]
        for name, (median, fastest, slowest, cpu) in figures.items():
            in_memory = "pandas" in name or "compute" in name or "toPandas" in name
            count, one = (len(frame), alone_frame) if in_memory else (total, alone)
            rate = count / median
            per_worker = rate / WORKERS
            share = "" if name.startswith("one process") else \
                f", per worker {per_worker / 1e6:.2f} M/s = {per_worker / (count / one[0]):.2f}, CPU {one[3] / cpu:.2f}"
            print(f"{name:>48}: {rate / 1e6:5.2f} M rows/s ({median:.2f} s, {fastest:.2f}-{slowest:.2f}){share}")
    finally:
        shutil.rmtree(directory, ignore_errors=True)


if __name__ == "__main__":
    main()
