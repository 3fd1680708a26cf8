"""`fibkit lookup` end to end against a Python loop with pyasn on one file.

    python bench_lookup.py FIBKIT [TABLE] [--lines 50000000] [--loop-lines 2000000] [--runs 3]

FIBKIT is the built binary (target/release/fibkit), TABLE an .ipasn file
(gzip or plain; default routeviews-2014-05-13.ipasn.gz of the data folder,
$FIBKIT_DATA, else ../shared/data beside the repository). The script writes --lines random dotted quads
into a temporary file, reads it once so it is in the page cache, then
times `fibkit lookup TABLE FILE -o OUT` --runs times (the whole command:
loading and compiling the table included) and the Python loop that reads,
strips, looks up with pyasn and writes the first --loop-lines lines (a
loop over the whole file would take minutes). It checks that both wrote
the same answers for those lines and prints addresses per second: the
median of the runs and their range.
"""

import argparse
import gzip
import os
import shutil
import statistics
import subprocess
import tempfile
import time
from pathlib import Path

import numpy as np

# The data folder: FIBKIT_DATA (a relative path is taken from the repository
# root), else ../shared/data beside the repository.
DATA = Path(__file__).resolve().parents[2] / (os.environ.get("FIBKIT_DATA") or "../shared/data")
DEFAULT_TABLE = DATA / "routeviews-2014-05-13.ipasn.gz"


def write_addresses(path, lines, seed=1):
    """`lines` uniform random IPv4 addresses, dotted, one a line."""
    rng = np.random.default_rng(seed)
    with open(path, "w") as out:
        for start in range(0, lines, 1_000_000):
            octets = rng.integers(0, 256, size=(min(1_000_000, lines - start), 4))
            out.write("\n".join(f"{a}.{b}.{c}.{d}" for a, b, c, d in octets.tolist()))
            out.write("\n")


def plain_ipasn(table, directory):
    """pyasn reads plain text: the table, decompressed if need be."""
    with open(table, "rb") as probe:
        compressed = probe.read(2) == b"\x1f\x8b"
    if not compressed:
        return table
    plain = Path(directory) / "table.ipasn"
    with gzip.open(table, "rb") as source, open(plain, "wb") as out:
        shutil.copyfileobj(source, out)
    return plain


def pyasn_loop(table, addresses, out_path, lines):
    """Reads, strips, looks up and writes, as a user's script would."""
    import pyasn

    database = pyasn.pyasn(str(table))
    start = time.perf_counter()
    with open(addresses) as source, open(out_path, "w") as out:
        for number, line in enumerate(source):
            if number == lines:
                break
            address = line.strip()
            asn, _ = database.lookup(address)
            out.write(f"{address}\t{'' if asn is None else asn}\n")
    return lines / (time.perf_counter() - start)


def main():
    parser = argparse.ArgumentParser(description=__doc__.split("\n\n")[0])
    parser.add_argument("fibkit")
    parser.add_argument("table", nargs="?", default=DEFAULT_TABLE, type=Path)
    parser.add_argument("--lines", type=int, default=50_000_000)
    parser.add_argument("--loop-lines", type=int, default=2_000_000)
    parser.add_argument("--runs", type=int, default=3)
    args = parser.parse_args()
    with tempfile.TemporaryDirectory() as directory:
        addresses = Path(directory) / "addresses.txt"
        print(f"writing {args.lines:,} addresses ...", flush=True)
        write_addresses(addresses, args.lines)
        with open(addresses, "rb") as warm:
            while warm.read(1 << 24):
                pass
        rates = []
        for run in range(args.runs):
            out = Path(directory) / f"fibkit-{run}.txt"
            start = time.perf_counter()
            subprocess.run([args.fibkit, "lookup", str(args.table), str(addresses), "-o", str(out)], check=True)
            rates.append(args.lines / (time.perf_counter() - start))
            if run:
                os.remove(out)
        loop_lines = min(args.loop_lines, args.lines)
        loop_out = Path(directory) / "pyasn.txt"
        loop_rate = pyasn_loop(plain_ipasn(args.table, directory), addresses, loop_out, loop_lines)
        with open(Path(directory) / "fibkit-0.txt") as fibkit_out, open(loop_out) as python_out:
            for number, (ours, theirs) in enumerate(zip(fibkit_out, python_out)):
                if ours != theirs:
                    raise SystemExit(f"line {number + 1}: fibkit wrote {ours!r}, the pyasn loop {theirs!r}")
        median = statistics.median(rates)
        print(f"fibkit lookup, {args.lines:,} lines, {os.cpu_count()} cores: {median / 1e6:.2f} M addresses/s "
              f"(runs {min(rates) / 1e6:.2f} to {max(rates) / 1e6:.2f}), table loading and compiling included")
        print(f"Python loop with pyasn, {loop_lines:,} lines: {loop_rate / 1e6:.3f} M addresses/s")
        print(f"fibkit lookup / pyasn loop: {median / loop_rate:.0f}x; answers equal on the loop's {loop_lines:,} lines")


if __name__ == "__main__":
    main()
