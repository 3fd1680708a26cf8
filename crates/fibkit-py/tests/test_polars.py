"""The Polars plugin (fibkit-polars): pl.col(c).fibkit.lookup and .prefix
answer as fibkit.Table does, in eager, lazy and streaming queries, on
string (view) and UInt32 columns; bad input fails naming what is wrong."""

import ipaddress
import os
import random
import shutil

import pytest

import fibkit

pl = pytest.importorskip("polars")
pa = pytest.importorskip("pyarrow")
fibkit_polars = pytest.importorskip("fibkit.polars")

from test_fibkit import shared  # noqa: E402


def records_table(tmp_path, rng, count=400):
    """A table of records of both families, saved with its prefixes: the
    Table and its compiled file's path."""
    lines = ["prefix,asn,org,share,up,path,via"]
    for index in range(count):
        if index % 4 == 0:
            network = ipaddress.ip_network((rng.getrandbits(128) >> 3 | 1 << 125, rng.randint(16, 64)), strict=False)
        else:
            network = ipaddress.ip_network((rng.getrandbits(32), rng.randint(8, 30)), strict=False)
        org = rng.choice(["Example, Inc.", "Zürich AG", "", "a-rather-long-organisation-name"])
        org = f'"{org}"' if "," in org else org
        share = rng.choice(["", repr(rng.random())])
        path = " ".join(str(rng.randint(1, 70000)) for _ in range(rng.randint(0, 4)))
        via = rng.choice(["", "192.0.2.1", "2001:db8::1"])
        lines.append(f"{network},{rng.randint(1, 2**32 - 1)},{org},{share},{rng.choice(['true', 'false', ''])},"
                     f"{path},{via}")
    source = tmp_path / "records.csv"
    source.write_text("\n".join(lines) + "\n")
    table = fibkit.Table.load(str(source), fields="asn:int,org:text,share:float,up:bool,path:ints,via:addr",
                              prefixes=True)
    table.save(str(tmp_path / "records.fib"))
    return table, tmp_path / "records.fib"


def probes(table_path, rng, extra=2000):
    """Every route's first and last address and the one after, and random
    addresses of both families."""
    table = fibkit.open(str(table_path))
    addresses = []
    for prefix in table.within("0.0.0.0/0").field("prefix").to_pylist() + table.within("::/0").field("prefix").to_pylist():
        network = ipaddress.ip_network(prefix)
        after = int(network.broadcast_address) + 1
        addresses += [str(network.network_address), str(network.broadcast_address)]
        if after < 2 ** network.max_prefixlen:
            addresses.append(str(ipaddress.ip_address(after) if network.version == 6 else ipaddress.IPv4Address(after)))
    addresses += [str(ipaddress.IPv4Address(rng.getrandbits(32))) for _ in range(extra)]
    addresses += [str(ipaddress.IPv6Address(1 << 125 | rng.getrandbits(125))) for _ in range(extra // 4)]
    return addresses


def test_lookup_answers_every_field_as_the_table(tmp_path):
    rng = random.Random(3)
    table, path = records_table(tmp_path, rng)
    addresses = probes(path, rng)
    frame = pl.DataFrame({"ip": addresses})
    got = frame.select(pl.col("ip").fibkit.lookup(path))
    assert got.schema["ip"] == pl.Struct({"asn": pl.Int64, "org": pl.String, "share": pl.Float64, "up": pl.Boolean,
                                          "path": pl.List(pl.Int64), "via": pl.String})
    expected = table.lookup_batch(addresses, fields=True).to_pylist()
    rows = got["ip"].to_list()
    assert len(rows) == len(expected)
    for address, row, want in zip(addresses, rows, expected):
        assert row == want, address
    assert sum(row["asn"] is not None for row in rows) > 500
    # A choice of fields, in the order asked, as a list or a string.
    chosen = frame.select(fibkit.polars.lookup("ip", str(path), fields="org,asn"))["ip"].to_list()
    assert chosen == [{"org": row["org"], "asn": row["asn"]} for row in expected]
    assert frame.select(pl.col("ip").fibkit.lookup(path, fields=["path"]))["ip"].to_list() == [
        {"path": row["path"]} for row in expected
    ]


def test_matched_prefixes_answer_as_the_table(tmp_path):
    rng = random.Random(4)
    table, path = records_table(tmp_path, rng, count=200)
    addresses = probes(path, rng, extra=500)
    got = pl.DataFrame({"ip": addresses}).select(pl.col("ip").fibkit.prefix(path))["ip"].to_list()
    _, expected = table.lookup_batch(addresses, prefixes=True)
    assert got == list(expected)


def test_nulls_malformed_rows_and_uint32_columns(tmp_path):
    source = tmp_path / "asn.csv"
    source.write_text("start,end,asn,org\n1.0.0.0,1.0.0.255,13335,Cloudflare\n"
                      "8.8.8.0,8.8.8.255,15169,Google\n2001:db8::,2001:db8::ffff,64500,\"Doc, Net\"\n")
    fibkit.Table.load(str(source), fields="asn,org").save(str(tmp_path / "asn.fib"))
    path = tmp_path / "asn.fib"
    frame = pl.DataFrame({"ip": ["8.8.8.8", None, "9.9.9.9", "2001:db8::1", "::ffff:1.0.0.7", "10.1.2.300"]})
    with pytest.raises(pl.exceptions.ComputeError, match=r'row 5 of column "ip": "10.1.2.300" is not an IP address'):
        frame.select(pl.col("ip").fibkit.lookup(path))
    loose = frame.select(pl.col("ip").fibkit.lookup(path, fields=["asn"], strict=False))["ip"].to_list()
    # A row without an address is null; a row without a route, a struct of nulls.
    assert loose == [{"asn": 15169}, None, {"asn": None}, {"asn": 64500}, {"asn": 13335}, None]
    numbers = pl.DataFrame({"ip": pl.Series([int(ipaddress.IPv4Address("8.8.8.8")), None, 16777217],
                                            dtype=pl.UInt32)})
    assert numbers.select(pl.col("ip").fibkit.lookup(path, fields="org"))["ip"].to_list() == [
        {"org": "Google"}, None, {"org": "Cloudflare"}]
    with pytest.raises(pl.exceptions.ComputeError, match=r'column "ip" is i64; addresses are String'):
        pl.DataFrame({"ip": [1, 2]}).lazy().select(pl.col("ip").fibkit.lookup(path)).collect_schema()


def test_plain_values_numbers_addresses_and_next_hops(tmp_path):
    source = tmp_path / "plain.txt"
    source.write_text("10.0.0.0/8 64500\n10.1.0.0/16 64501\n2001:db8::/32 64502\n")
    fibkit.Table.load(str(source)).save(str(tmp_path / "numbers.fib"))
    frame = pl.DataFrame({"ip": ["10.1.2.3", "10.2.0.0", "11.0.0.0", "2001:db8::9"]})
    got = frame.select(pl.col("ip").fibkit.lookup(tmp_path / "numbers.fib"))["ip"]
    assert got.dtype == pl.UInt64 and got.to_list() == [64501, 64500, None, 64502]
    source.write_text("10.0.0.0/8 192.0.2.1\n10.1.0.0/16 64501\n")
    fibkit.Table.load(str(source)).save(str(tmp_path / "hops.fib"))
    got = frame.select(pl.col("ip").fibkit.lookup(tmp_path / "hops.fib"))["ip"]
    assert got.dtype == pl.String and got.to_list() == ["64501", "192.0.2.1", None, None]
    fibkit.Table.load(str(source), nexthops=4).save(str(tmp_path / "modulo.fib"))
    got = frame.select(pl.col("ip").fibkit.lookup(tmp_path / "modulo.fib"))["ip"]
    table = fibkit.open(str(tmp_path / "modulo.fib"))
    hops = [int(hop) or None for hop in table.lookup_batch(["10.1.2.3", "10.2.0.0", "11.0.0.0", "2001:db8::9"])]
    assert got.dtype == pl.UInt32 and got.to_list() == hops


def test_lazy_and_streaming_queries_over_many_chunks(tmp_path):
    rng = random.Random(5)
    table, path = records_table(tmp_path, rng, count=300)
    addresses = probes(path, rng, extra=60000)
    rng.shuffle(addresses)
    parts = [pl.DataFrame({"ip": addresses[start:start + 7000], "n": range(start, start + len(addresses[start:start + 7000]))})
             for start in range(0, len(addresses), 7000)]
    chunked = pl.concat(parts, rechunk=False)
    assert chunked.n_chunks() > 1
    expected = table.lookup_batch(addresses, fields=["asn", "org"]).to_pylist()
    query = chunked.lazy().with_columns(geo=pl.col("ip").fibkit.lookup(path, fields="asn,org")).filter(pl.col("n") >= 0)
    assert query.collect_schema()["geo"] == pl.Struct({"asn": pl.Int64, "org": pl.String})
    assert query.collect()["geo"].to_list() == expected
    chunked.write_parquet(tmp_path / "flows.parquet", row_group_size=5000)
    streamed = (pl.scan_parquet(tmp_path / "flows.parquet")
                .with_columns(pl.col("ip").fibkit.lookup(path, fields="asn,org").alias("geo"))
                .collect(engine="streaming"))
    assert streamed["geo"].to_list() == expected
    (pl.scan_parquet(tmp_path / "flows.parquet")
     .select("n", pl.col("ip").fibkit.lookup(path, fields=["org"]).struct.field("org"))
     .sink_parquet(tmp_path / "out.parquet"))
    written = pl.read_parquet(tmp_path / "out.parquet").sort("n")
    assert written["org"].to_list() == [row["org"] for row in expected]


def test_errors_name_the_file_and_the_field(tmp_path):
    rng = random.Random(6)
    _, path = records_table(tmp_path, rng, count=20)
    frame = pl.DataFrame({"ip": ["8.8.8.8"]})
    with pytest.raises(pl.exceptions.ComputeError, match=r'has no field "city" \(its fields: asn, org'):
        frame.lazy().select(pl.col("ip").fibkit.lookup(path, fields=["city"])).collect_schema()
    with pytest.raises(pl.exceptions.ComputeError, match="missing.fib"):
        frame.select(pl.col("ip").fibkit.lookup(tmp_path / "missing.fib"))
    (tmp_path / "junk.fib").write_bytes(b"not a fib file at all" * 10)
    with pytest.raises(pl.exceptions.ComputeError, match="junk.fib"):
        frame.select(pl.col("ip").fibkit.lookup(tmp_path / "junk.fib"))
    (tmp_path / "plain.txt").write_text("10.0.0.0/8 1\n")
    fibkit.Table.load(str(tmp_path / "plain.txt")).save(str(tmp_path / "plain.fib"))
    with pytest.raises(pl.exceptions.ComputeError, match="not records"):
        frame.select(pl.col("ip").fibkit.lookup(tmp_path / "plain.fib", fields="asn"))
    with pytest.raises(pl.exceptions.ComputeError, match="without its prefixes"):
        frame.select(pl.col("ip").fibkit.prefix(tmp_path / "plain.fib"))
    with pytest.raises(TypeError, match="fields is None"):
        pl.col("ip").fibkit.lookup(path, fields=[1])


def test_a_file_replaced_by_rename_is_opened_again(tmp_path):
    (tmp_path / "a.txt").write_text("10.0.0.0/8 1\n")
    (tmp_path / "b.txt").write_text("10.0.0.0/8 2\n")
    fibkit.Table.load(str(tmp_path / "a.txt")).save(str(tmp_path / "t.fib"))
    frame = pl.DataFrame({"ip": ["10.0.0.1"]})
    assert frame.select(pl.col("ip").fibkit.lookup(tmp_path / "t.fib"))["ip"].to_list() == [1]
    fibkit.Table.load(str(tmp_path / "b.txt")).save(str(tmp_path / "new.fib"))
    os.replace(tmp_path / "new.fib", tmp_path / "t.fib")
    assert frame.select(pl.col("ip").fibkit.lookup(tmp_path / "t.fib"))["ip"].to_list() == [2]


def test_real_asn_ranges_answer_as_the_table(tmp_path):
    source = shared("ipdb-asn-2026-06/asn-ipv6.csv.gz")
    table = fibkit.Table.load(str(source), fields="asn:int,org:text")
    table.save(str(tmp_path / "asn.fib"))
    rng = random.Random(8)
    addresses = [str(ipaddress.IPv6Address(0x2000 << 112 | rng.getrandbits(116))) for _ in range(100000)]
    addresses += [str(ipaddress.IPv4Address(rng.getrandbits(32))) for _ in range(20000)]
    got = pl.DataFrame({"ip": addresses}).select(pl.col("ip").fibkit.lookup(tmp_path / "asn.fib"))["ip"].to_list()
    expected = table.lookup_batch(addresses, fields=True).to_pylist()
    assert got == expected
    assert sum(row["asn"] is not None for row in got) > 5000


def test_geolite2_city_answers_as_the_table(tmp_path):
    from test_records import geolite2_city

    if geolite2_city() is None:
        pytest.skip("python-geoip-geolite2 is not installed (make setup)")
    fields = "country.iso_code,city.names.en,location.latitude,location.longitude"
    table = fibkit.Table.load(geolite2_city(), fields=fields)
    table.save(str(tmp_path / "city.fib"))
    rng = random.Random(9)
    addresses = [str(ipaddress.IPv4Address(rng.getrandbits(32))) for _ in range(50000)]
    got = pl.DataFrame({"ip": addresses}).select(pl.col("ip").fibkit.lookup(tmp_path / "city.fib"))["ip"].to_list()
    assert got == table.lookup_batch(addresses, fields=True).to_pylist()
    assert sum(row["city.names.en"] is not None for row in got) > 1000


def test_the_plugin_stub_matches_the_module():
    import ast
    import inspect
    import pathlib

    import fibkit_polars

    stub = pathlib.Path(fibkit_polars.__file__).with_name("__init__.pyi")
    tree = ast.parse(stub.read_text(encoding="utf-8"))
    functions = {node.name: node for node in tree.body if isinstance(node, ast.FunctionDef)}
    assert set(functions) == set(fibkit_polars.__all__) == set(fibkit.polars.__all__)
    for name, node in functions.items():
        assert [arg.arg for arg in node.args.args] == list(inspect.signature(getattr(fibkit_polars, name)).parameters)
    methods = {node.name: node for node in next(node for node in tree.body if isinstance(node, ast.ClassDef)).body}
    for name in ("lookup", "prefix"):
        runtime = inspect.signature(getattr(fibkit_polars.FibkitExpressions, name)).parameters
        assert [arg.arg for arg in methods[name].args.args] == list(runtime)
