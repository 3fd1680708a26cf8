"""Batch lookups from Python: fibkit against pytricia on one table.

    python bench.py [TABLE] [--engine d18r] [--nexthops 239] [--keys 10000000]

TABLE defaults to routeviews-2014-05-13.ipasn.gz of the data folder
($FIBKIT_DATA, else ../shared/data beside the repository). pytricia is
timed per call (its only interface) on string keys made beforehand; fibkit
per call (`lookup`, which answers the route's value as pytricia does: with
--nexthops, the next hop) and through `lookup_batch` (next-hop indexes) on
a uint32 array, with 1 thread and with every core. Figures are million
lookups per second, median of --runs runs.
"""

import argparse
import gzip
import ipaddress
import os
import statistics
import time
from pathlib import Path

import numpy as np

import fibkit

# The data folder: FIBKIT_DATA (a relative path is taken from the repository
# root), else ../shared/data beside the repository.
DATA = Path(__file__).resolve().parents[2] / (os.environ.get("FIBKIT_DATA") or "../shared/data")
DEFAULT_TABLE = DATA / "routeviews-2014-05-13.ipasn.gz"


def median_mlps(function, lookups, runs):
    rates = []
    for _ in range(runs):
        start = time.perf_counter()
        function()
        rates.append(lookups / (time.perf_counter() - start) / 1e6)
    return statistics.median(rates)


def pytricia_trie(path, nexthops):
    import pytricia

    trie = pytricia.PyTricia(32)
    opener = gzip.open if str(path).endswith(".gz") else open
    with opener(path, "rt") as text:
        for line in text:
            fields = line.split()
            if len(fields) < 2 or line.startswith(";") or ":" in fields[0]:
                continue
            value = int(fields[1])
            trie[fields[0]] = value % nexthops + 1 if nexthops else value
    return trie


def main():
    parser = argparse.ArgumentParser(description=__doc__, formatter_class=argparse.RawDescriptionHelpFormatter)
    parser.add_argument("table", nargs="?", default=DEFAULT_TABLE, type=Path)
    parser.add_argument("--engine", default="d18r")
    parser.add_argument("--nexthops", type=int, default=239)
    parser.add_argument("--keys", type=int, default=10_000_000, help="keys per batch run")
    parser.add_argument("--calls", type=int, default=300_000, help="keys per per-call run")
    parser.add_argument("--runs", type=int, default=5)
    args = parser.parse_args()

    fib = fibkit.Fib.load(args.table, engine=args.engine, nexthops=args.nexthops)
    print(f"{args.table.name}: {fib.prefixes} prefixes; {fib!r}, built in {fib.build_ms:.1f} ms")
    rng = np.random.default_rng(1)
    keys = rng.integers(0, 2**32, size=args.keys, dtype=np.uint32)
    out = np.empty_like(keys)
    call_keys = keys[: args.calls].tolist()
    call_strings = [str(ipaddress.IPv4Address(key)) for key in call_keys]
    cores = os.cpu_count() or 1

    rows = []
    try:
        trie = pytricia_trie(args.table, args.nexthops)
        rows.append(("pytricia, per call", median_mlps(lambda: [trie.get(key) for key in call_strings], args.calls, args.runs)))
        hops = fib.lookup_batch(keys[: args.calls])
        assert all(trie.get(key, 0) == hop for key, hop in zip(call_strings, hops.tolist())), "pytricia disagrees"
    except ImportError:
        print("pytricia is not installed: pip install pytricia")
    rows.append((f"fibkit {fib.engine}, per call", median_mlps(lambda: [fib.lookup(key) for key in call_keys], args.calls, args.runs)))
    rows.append((f"fibkit {fib.engine}, lookup_batch", median_mlps(lambda: fib.lookup_batch(keys, out=out), args.keys, args.runs)))
    if cores > 1:
        rows.append((
            f"fibkit {fib.engine}, lookup_batch, {cores} threads",
            median_mlps(lambda: fib.lookup_batch(keys, out=out, threads=cores), args.keys, args.runs),
        ))
    baseline = rows[0][1]
    print(f"{'':40} {'Mlps':>9} {'x ' + rows[0][0]:>24}")
    for name, mlps in rows:
        print(f"{name:40} {mlps:9.2f} {mlps / baseline:24.1f}")


if __name__ == "__main__":
    main()
