"""Records beside their anchors, on one MaxMind DB file and the same
addresses, in one run (a benchmark, not a test: `make bench-records`).

- the maxminddb reader (its C extension), one `get` an address, the same
  fields picked from each record;
- fibkit's Python batch (`Table.lookup_batch(..., fields=...)`) on a
  compiled file of the same database;
- DuckDB: the inet extension's containment join of the addresses against
  the database's networks, and fibkit's DuckDB function;
- polars-iptools' `geoip.full` (its own MaxMind reader) on a Polars column,
  and fibkit's Polars plugin (`.fibkit.lookup(fields=...)`) on the same one;
- opening the compiled file against building it.

Every figure is the median of `--repeat` runs with its range; the CPU is
named first. The database is python-geoip-geolite2's GeoLite2-City (2015)
unless `--mmdb` names another.
"""

import argparse
import ipaddress
import os
import random
import statistics
import tempfile
import time

import numpy as np

import fibkit

FIELDS = ["country.iso_code", "city.names.en", "location.latitude", "location.longitude"]


def cpu_name():
    with open("/proc/cpuinfo") as info:
        for line in info:
            if line.startswith("model name"):
                return line.split(":", 1)[1].strip()
    return "unknown CPU"


def timed(runs, work):
    """Median and range of ``runs`` timings of ``work()`` in seconds, and
    its last result."""
    times, result = [], None
    for _ in range(runs):
        start = time.perf_counter()
        result = work()
        times.append(time.perf_counter() - start)
    return statistics.median(times), min(times), max(times), result


def report(name, count, timing):
    median, low, high, _ = timing
    print(f"{name:<44} {median * 1e9 / count:9.1f} ns/address  ({low * 1e9 / count:.1f} to {high * 1e9 / count:.1f}),"
          f" {count / median / 1e6:7.2f} M addresses/s")
    return median / count


def pick(record, path):
    for part in path.split("."):
        if record is None:
            return None
        record = record.get(part)
    return record


def main():
    parser = argparse.ArgumentParser(description=__doc__.split("\n\n")[0])
    parser.add_argument("--mmdb", help="a MaxMind DB file (default: GeoLite2-City of python-geoip-geolite2)")
    parser.add_argument("--addresses", type=int, default=1_000_000)
    parser.add_argument("--repeat", type=int, default=3)
    parser.add_argument("--join-addresses", type=int, default=2000,
                        help="addresses in DuckDB's containment join (it compares each with every network)")
    args = parser.parse_args()
    if args.mmdb is None:
        import _geoip_geolite2

        args.mmdb = os.path.join(os.path.dirname(_geoip_geolite2.__file__), "GeoLite2-City.mmdb")
    print(f"CPU: {cpu_name()}; {os.cpu_count()} cores; database {os.path.basename(args.mmdb)}; "
          f"{args.addresses} random IPv4 addresses; median of {args.repeat} runs (range)")
    rng = random.Random(1)
    addresses = [str(ipaddress.IPv4Address(rng.getrandbits(32))) for _ in range(args.addresses)]

    import pyarrow as pa

    column = pa.array(addresses, type=pa.string())
    with tempfile.TemporaryDirectory() as folder:
        compiled = os.path.join(folder, "city.fib")
        build = timed(1, lambda: fibkit.Table.load(args.mmdb, fields=",".join(FIELDS)))
        build[3].save(compiled)
        opened = timed(args.repeat, lambda: fibkit.open(compiled))
        print(f"build from the .mmdb: {build[0]:.2f} s; open the compiled file: {opened[0] * 1e3:.2f} ms "
              f"({opened[1] * 1e3:.2f} to {opened[2] * 1e3:.2f}); ratio {opened[0] / build[0]:.4f}")
        table = opened[3]

        import maxminddb

        reader = maxminddb.open_database(args.mmdb, maxminddb.MODE_MMAP_EXT)

        def maxmind():
            return [tuple(pick(reader.get(address), path) for path in FIELDS) for address in addresses]

        anchor = report("maxminddb reader (C extension), get()", len(addresses), timed(args.repeat, maxmind))
        batch = report("fibkit Table.lookup_batch(fields=...)", len(addresses),
                       timed(args.repeat, lambda: table.lookup_batch(column, fields=FIELDS)))
        print(f"  fibkit / maxminddb: {anchor / batch:.1f} times faster (target: 20)")
        expected = maxmind()[:1000]
        got = table.lookup_batch(column[:1000], fields=FIELDS).to_pylist()
        assert [tuple(row[path] for path in FIELDS) for row in got] == expected, "fibkit and maxminddb disagree"

        duckdb_figures(args, table, compiled, addresses, reader)
        polars_figures(args, addresses, table, compiled)


def duckdb_figures(args, table, compiled, addresses, reader):
    try:
        import duckdb
        import duckdb_extensions
    except ImportError:
        print("DuckDB: skipped (pip install duckdb duckdb-extensions duckdb-extension-inet: make setup)")
        return
    import pyarrow as pa

    import fibkit.duckdb

    con = duckdb.connect()
    duckdb_extensions.import_extension("inet", con=con)
    con.sql("LOAD inet")
    networks, countries = [], []
    for network, record in reader:
        if network.version == 4:
            networks.append(str(network))
            countries.append(pick(record, "country.iso_code"))
    nets = pa.table({"net": networks, "country": countries})
    con.sql("CREATE TABLE nets AS SELECT net::INET AS net, country FROM nets")
    count = args.join_addresses
    sample = pa.table({"ip": addresses[:count]})
    con.sql("CREATE TABLE sample AS SELECT ip, ip::INET AS addr FROM sample")
    # count(): answers aggregated in DuckDB, none converted to Python objects.
    join = "SELECT count(n.country) FROM sample s LEFT JOIN nets n ON n.net >>= s.addr"
    join_rows = "SELECT s.ip, n.country FROM sample s LEFT JOIN nets n ON n.net >>= s.addr"
    join_time = report(f"DuckDB inet containment join ({count} addresses)", count,
                       timed(args.repeat, lambda: con.sql(join).fetchall()))
    fibkit.duckdb.register(con, compiled, fields=["country.iso_code"])
    con.register("everything", pa.table({"ip": addresses}))
    query = 'SELECT count(fibkit_lookup(ip)."country.iso_code") FROM everything'
    query_rows = 'SELECT ip, fibkit_lookup(ip)."country.iso_code" FROM sample'
    function = report("DuckDB fibkit_lookup(ip) function", len(addresses),
                      timed(args.repeat, lambda: con.sql(query).fetchall()))
    print(f"  fibkit function / inet join: {join_time / function:.0f} times faster per address (target: 10)")
    joined = dict(con.sql(join_rows).fetchall())
    answered = dict(con.sql(query_rows).fetchall())
    assert joined == answered, "DuckDB's join and fibkit's function disagree"


def polars_figures(args, addresses, table, compiled):
    try:
        import polars as pl
        import polars_iptools as ip
    except ImportError:
        print("Polars: skipped (pip install polars polars-iptools: make setup)")
        return
    # Its reader opens GeoLite2-ASN.mmdb beside GeoLite2-City.mmdb: a folder
    # with the City file and a one-network ASN file written here.
    folder = tempfile.mkdtemp()
    os.symlink(args.mmdb, os.path.join(folder, "GeoLite2-City.mmdb"))
    from mmdb_writer import MMDBWriter
    from netaddr import IPSet

    writer = MMDBWriter(ip_version=6, database_type="GeoLite2-ASN", ipv4_compatible=True)
    writer.insert_network(IPSet(["192.0.2.0/24"]), {"autonomous_system_number": 64500,
                                                    "autonomous_system_organization": "Example"})
    writer.to_db_file(os.path.join(folder, "GeoLite2-ASN.mmdb"))
    os.environ["MAXMIND_MMDB_DIR"] = folder
    frame = pl.DataFrame({"ip": addresses})
    try:
        anchor = report("polars-iptools geoip.full (City and ASN)", len(addresses),
                        timed(args.repeat, lambda: frame.with_columns(ip.geoip.full(pl.col("ip")).alias("geo"))))
    except Exception as error:  # its reader wants GeoLite2-ASN.mmdb beside the City file
        print(f"polars-iptools geoip.full: failed: {str(error).splitlines()[0]}")
        anchor = None
    try:
        import fibkit.polars  # noqa: F401  (the namespace)
    except ImportError:
        print("fibkit's Polars plugin: skipped (make python builds fibkit-polars)")
        return
    lookup = pl.col("ip").fibkit.lookup(compiled, fields=FIELDS).alias("geo")
    plugin = report("fibkit Polars plugin .fibkit.lookup(fields=...)", len(addresses),
                    timed(args.repeat, lambda: frame.with_columns(lookup)))
    lazy = frame.lazy().with_columns(lookup)
    report("  the same, streaming engine", len(addresses),
           timed(args.repeat, lambda: lazy.collect(engine="streaming")))
    if anchor is not None:
        print(f"  fibkit plugin / polars-iptools: {anchor / plugin:.1f} times faster (target: 5)")
    got = frame.head(1000).with_columns(lookup)["geo"].to_list()
    assert got == table.lookup_batch(addresses[:1000], fields=FIELDS).to_pylist(), "the plugin and the table disagree"


if __name__ == "__main__":
    main()
