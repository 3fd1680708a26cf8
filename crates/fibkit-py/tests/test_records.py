"""Records: tables whose routes carry named, typed fields, loaded from CSV
and from MaxMind DB files, answered as pyarrow RecordBatches; checked
against a brute-force scan of the CSV and against the maxminddb reader."""

import ipaddress
import os
import pickle
import random

import pytest

import fibkit

pa = pytest.importorskip("pyarrow")


def brute_force(routes, address):
    """The record of the longest prefix of ``routes`` covering ``address``."""
    addr = ipaddress.ip_address(address)
    best = None
    for network, record in routes:
        if addr.version == network.version and addr in network:
            if best is None or network.prefixlen > best[0].prefixlen:
                best = (network, record)
    return None if best is None else best[1]


def test_csv_records_answer_every_boundary_as_a_scan_does(tmp_path):
    rng = random.Random(7)
    orgs = ["Example, Inc.", "Zürich AG", "", 'Quote "Q" Ltd']
    lines, routes = ["prefix,asn,org,share,path"], []
    for index in range(300):
        if index % 3 == 0:
            network = ipaddress.ip_network((rng.getrandbits(128) >> 3 | 1 << 125, rng.randint(16, 64)), strict=False)
        else:
            network = ipaddress.ip_network((rng.getrandbits(32), rng.randint(8, 30)), strict=False)
        record = {
            "asn": rng.randint(1, 2**32 - 1),
            "org": rng.choice(orgs) or None,
            "share": rng.choice([None, rng.random()]),
            "path": [rng.randint(1, 70000) for _ in range(rng.randint(1, 4))],
        }
        org = record["org"] or ""
        org = '"' + org.replace('"', '""') + '"' if ("," in org or '"' in org) else org
        share = "" if record["share"] is None else repr(record["share"])
        lines.append(f"{network},{record['asn']},{org},{share},{' '.join(map(str, record['path']))}")
        routes = [(net, rec) for net, rec in routes if net != network] + [(network, record)]
    path = tmp_path / "records.csv"
    path.write_text("\n".join(lines) + "\n")
    table = fibkit.Table.load(str(path), fields="*")
    addresses = []
    for network, _ in routes:
        addresses += [str(network.network_address), str(network.broadcast_address)]
        after = int(network.broadcast_address) + 1
        if after < 2 ** network.max_prefixlen:
            addresses.append(str(ipaddress.ip_address(after) if network.version == 6 else ipaddress.IPv4Address(after)))
    batch = table.lookup_batch(addresses, fields=True)
    assert batch.schema.names == ["asn", "org", "share", "path"]
    assert batch.schema.field("path").type == pa.large_list(pa.int64())
    got = batch.to_pylist()
    for address, row in zip(addresses, got):
        expected = brute_force(routes, address)
        if expected is None:
            assert row == {"asn": None, "org": None, "share": None, "path": None}, address
        else:
            assert row == expected, address
        assert table.lookup(address) == (None if expected is None else row)
    # The same answers from a compiled file, opened or unpickled.
    table.save(str(tmp_path / "records.fib"))
    opened = fibkit.open(str(tmp_path / "records.fib"))
    assert opened.lookup_batch(addresses, fields="org,asn").to_pylist() == [
        {"org": row["org"], "asn": row["asn"]} for row in got
    ]
    assert pickle.loads(pickle.dumps(opened)).lookup_batch(addresses, fields=["share"]).column(0).to_pylist() == [
        row["share"] for row in got
    ]


def test_fields_are_refused_where_they_do_not_fit(tmp_path):
    path = tmp_path / "plain.csv"
    path.write_text("10.0.0.0/8,64500\n")
    with pytest.raises(ValueError, match="not records"):
        fibkit.Table.load(str(path)).lookup_batch(["10.0.0.1"], fields=True)
    table = fibkit.Table.load(str(path), fields="asn")
    with pytest.raises(ValueError, match=r'no field "org" \(its fields: asn\)'):
        table.lookup_batch(["10.0.0.1"], fields=["org"])
    with pytest.raises(ValueError, match="unknown type"):
        fibkit.Table.load(str(path), fields="asn:integer")


mmdb_writer = pytest.importorskip("mmdb_writer")
maxminddb = pytest.importorskip("maxminddb")


def value_at(record, path):
    """The value at dotted ``path`` in a maxminddb record (None if absent)."""
    for part in path.split("."):
        if record is None:
            return None
        if isinstance(record, list):
            index = int(part)
            record = record[index] if index < len(record) else None
        else:
            record = record.get(part)
    return record


def compare_with_maxminddb(db_path, fields, addresses):
    reader = maxminddb.open_database(db_path)
    table = fibkit.Table.load(db_path, fields=",".join(fields))
    rows = table.lookup_batch(addresses, fields=True).to_pylist()
    for address, row in zip(addresses, rows):
        record = reader.get(address)
        assert row == {field: value_at(record, field) for field in fields}, address
    return rows


def test_a_written_mmdb_answers_as_the_maxminddb_reader(tmp_path):
    from netaddr import IPSet

    writer = mmdb_writer.MMDBWriter(ip_version=6, database_type="fibkit-test", ipv4_compatible=True)
    rng = random.Random(3)
    inside = []
    for index in range(400):
        if index % 2:
            network = ipaddress.ip_network((rng.getrandbits(32), rng.randint(8, 32)), strict=False)
        else:
            network = ipaddress.ip_network((rng.getrandbits(128) >> 3 | 1 << 125, rng.randint(12, 64)), strict=False)
        record = {"country": {"iso_code": rng.choice(["DE", "FR", "JP"])}, "asn": rng.randint(1, 400000)}
        if index % 5:
            record["location"] = {"latitude": rng.uniform(-90, 90), "longitude": rng.uniform(-180, 180)}
        writer.insert_network(IPSet([str(network)]), record)
        inside += [network.network_address, network.broadcast_address, network[rng.randrange(network.num_addresses)]]
    path = str(tmp_path / "test.mmdb")
    writer.to_db_file(path)
    addresses = [str(ipaddress.IPv4Address(rng.getrandbits(32))) for _ in range(3000)]
    addresses += [str(ipaddress.IPv6Address(rng.getrandbits(128) >> 3 | 1 << 125)) for _ in range(3000)]
    addresses += [str(address) for address in inside]
    rows = compare_with_maxminddb(path, ["country.iso_code", "asn", "location.latitude"], addresses)
    assert sum(row["asn"] is not None for row in rows) > 1000
    with pytest.raises(ValueError, match="name the fields to keep with --fields"):
        fibkit.Table.load(path)
    with pytest.raises(ValueError, match="is a map: name a value inside it"):
        fibkit.Table.load(path, fields="country")


def geolite2_city():
    try:
        import _geoip_geolite2
    except ImportError:
        return None
    path = os.path.join(os.path.dirname(_geoip_geolite2.__file__), "GeoLite2-City.mmdb")
    return path if os.path.exists(path) else None


@pytest.mark.skipif(geolite2_city() is None, reason="python-geoip-geolite2 is not installed (make setup)")
def test_geolite2_city_answers_as_the_maxminddb_reader():
    rng = random.Random(11)
    addresses = [str(ipaddress.IPv4Address(rng.getrandbits(32))) for _ in range(20000)]
    addresses += [str(ipaddress.IPv6Address(0x2000 << 112 | rng.getrandbits(112))) for _ in range(5000)]
    fields = ["country.iso_code", "city.names.en", "location.latitude", "location.longitude", "subdivisions.0.iso_code"]
    rows = compare_with_maxminddb(geolite2_city(), fields, addresses)
    assert sum(row["city.names.en"] is not None for row in rows) > 1000


def asn_table(tmp_path):
    path = tmp_path / "asn.csv"
    path.write_text("start,end,asn,org\n1.0.0.0,1.0.0.255,13335,Cloudflare\n"
                    "8.8.8.0,8.8.8.255,15169,Google\n2001:db8::,2001:db8::ffff,64500,\"Doc, Net\"\n")
    return fibkit.Table.load(str(path), fields="asn,org", prefixes=True)


def test_enrich_adds_a_column_a_field(tmp_path):
    pd = pytest.importorskip("pandas")
    table = asn_table(tmp_path)
    frame = pd.DataFrame({"src": ["8.8.8.8", "1.0.0.1", "9.9.9.9", "2001:db8::1"], "n": [1, 2, 3, 4]}, index=[5, 6, 7, 8])
    enriched = fibkit.enrich(frame, "src", table, fields=True, prefix="route")
    assert list(enriched.columns) == ["src", "n", "asn", "org", "route"]
    def listed(series):
        return [None if pd.isna(item) else item for item in series.tolist()]

    assert isinstance(enriched["org"].dtype, pd.ArrowDtype)
    assert listed(enriched["asn"]) == [15169, 13335, None, 64500]
    assert listed(enriched["org"]) == ["Google", "Cloudflare", None, "Doc, Net"]
    assert listed(enriched["route"]) == ["8.8.8.0/24", "1.0.0.0/24", None, "2001:db8::/112"]
    assert list(enriched.index) == [5, 6, 7, 8]


duckdb = pytest.importorskip("duckdb")


def test_duckdb_functions_answer_as_the_table(tmp_path):
    import fibkit.duckdb

    table = asn_table(tmp_path)
    table.save(str(tmp_path / "asn.fib"))
    con = duckdb.connect()
    fibkit.duckdb.register(con, str(tmp_path / "asn.fib"))
    fibkit.duckdb.register(con, table, name="org_of", fields=["org"])
    rows = con.sql("SELECT ip, fibkit_lookup(ip) AS r, org_of(ip).org AS o FROM (VALUES ('8.8.8.8'), ('9.9.9.9'), "
                   "(NULL), ('2001:db8::5')) t(ip)").fetchall()
    assert rows == [
        ("8.8.8.8", {"asn": 15169, "org": "Google"}, "Google"),
        ("9.9.9.9", {"asn": None, "org": None}, None),
        (None, None, None),
        ("2001:db8::5", {"asn": 64500, "org": "Doc, Net"}, "Doc, Net"),
    ]
    # Many vectors: a column of 10,000 addresses answers as lookup_batch does.
    rng = random.Random(5)
    addresses = [f"{rng.choice([1, 8, 9])}.{rng.randrange(256)}.{rng.randrange(256)}.{rng.randrange(256)}"
                 for _ in range(10000)]
    frame = pa.table({"ip": addresses})
    got = con.sql("SELECT fibkit_lookup(ip).org FROM frame").fetchall()
    assert [row[0] for row in got] == table.lookup_batch(addresses, fields=["org"]).column(0).to_pylist()
    with pytest.raises(duckdb.Error, match="\"10.1.2.300\": not an IPv4 or IPv6 address"):
        con.sql("SELECT fibkit_lookup('10.1.2.300')").fetchall()
    with pytest.raises(ValueError, match="no field 'city'"):
        fibkit.duckdb.register(con, table, name="x", fields=["city"])
