"""fibkit's Python package against a pure-Python longest-prefix match."""

import gzip
import ipaddress
import os
import random
from pathlib import Path

import numpy as np
import pytest

import fibkit

# The data folder: FIBKIT_DATA (a relative path is taken from the repository
# root), else ../shared/data beside the repository.
SHARED = Path(__file__).resolve().parents[3] / (os.environ.get("FIBKIT_DATA") or "../shared/data")


def shared(name):
    path = SHARED / name
    if not path.exists():
        pytest.skip(f"{name} not found in the data folder {SHARED} (FIBKIT_DATA)")
    return path


class Reference:
    """Longest-prefix match by trying every prefix length, longest first."""

    def __init__(self, routes, bits):
        self.bits = bits
        self.by_len = {}
        for prefix, value in routes:
            net = ipaddress.ip_network(prefix)
            self.by_len.setdefault(net.prefixlen, {})[int(net.network_address)] = value
        self.lengths = sorted(self.by_len, reverse=True)

    def lookup(self, addr):
        for length in self.lengths:
            mask = ((1 << length) - 1) << (self.bits - length) if length else 0
            value = self.by_len[length].get(addr & mask)
            if value is not None:
                return value
        return None


def random_routes(rng, bits, count):
    """Nested and overlapping prefixes, the default route and host routes."""
    routes = {}
    version = 4 if bits == 32 else 6
    anchors = [rng.getrandbits(bits) for _ in range(8)]
    for _ in range(count):
        length = rng.choice([0, 1, 8, bits // 2, bits - 8, bits - 1, bits] + [rng.randint(0, bits)] * 4)
        base = rng.choice(anchors) ^ (rng.getrandbits(bits) >> rng.randint(0, bits))
        net = ipaddress.ip_network((base, length), strict=False)
        assert net.version == version
        routes[str(net)] = rng.randint(1, 40)
    return list(routes.items())


def boundary_keys(routes, bits):
    keys = []
    for prefix, _ in routes:
        net = ipaddress.ip_network(prefix)
        first, last = int(net.network_address), int(net.broadcast_address)
        keys += [first, last, max(first - 1, 0), min(last + 1, (1 << bits) - 1)]
    return keys


@pytest.mark.parametrize("engine", fibkit.engines())
def test_every_ipv4_engine_matches_the_reference(engine):
    rng = random.Random(engine)
    routes = random_routes(rng, 32, 300)
    reference = Reference(routes, 32)
    fib = fibkit.Fib(routes, engine=engine)
    keys = boundary_keys(routes, 32) + [rng.getrandbits(32) for _ in range(5000)]
    hops = fib.lookup_batch(np.array(keys, dtype=np.uint32))
    for key, hop in zip(keys, hops.tolist()):
        want = reference.lookup(key)
        assert fib.value(hop) == want, f"{engine}: {ipaddress.IPv4Address(key)}"
        assert fib.next_hop(key) == hop
        assert fib.lookup(key) == want
    assert fib.engine == engine
    assert fib.prefixes == len(routes)


@pytest.mark.parametrize("engine", fibkit.engines6())
def test_every_ipv6_engine_matches_the_reference(engine):
    rng = random.Random(engine + "6")
    routes = random_routes(rng, 128, 200)
    reference = Reference(routes, 128)
    fib = fibkit.Fib6(routes, engine=engine)
    keys = boundary_keys(routes, 128) + [rng.getrandbits(128) for _ in range(2000)]
    hops = fib.lookup_batch(fibkit.ipv6_array(keys))
    for key, hop in zip(keys, hops.tolist()):
        assert fib.value(hop) == reference.lookup(key), f"{engine}: {ipaddress.IPv6Address(key)}"
        assert fib.next_hop(str(ipaddress.IPv6Address(key))) == hop
        assert fib.lookup(str(ipaddress.IPv6Address(key))) == reference.lookup(key)
    halves = np.array([[key >> 64, key & (2**64 - 1)] for key in keys], dtype=np.uint64)
    assert fib.lookup_batch(halves).tolist() == hops.tolist()
    assert fib.lookup_batch(np.asfortranarray(halves)).tolist() == hops.tolist()


@pytest.mark.parametrize("family", [4, 6])
def test_auto_builds_a_measured_candidate_that_matches_the_reference(family):
    bits = 32 if family == 4 else 128
    rng = random.Random(f"auto{family}")
    routes = random_routes(rng, bits, 300)
    reference = Reference(routes, bits)
    fib = (fibkit.Fib if family == 4 else fibkit.Fib6)(routes, engine="auto")
    assert fib.engine.startswith(("d1", "d2", "poptrie1", "sail")), fib.engine
    keys = boundary_keys(routes, bits) + [rng.getrandbits(bits) for _ in range(2000)]
    array = np.array(keys, dtype=np.uint32) if family == 4 else fibkit.ipv6_array(keys)
    for key, hop in zip(keys, fib.lookup_batch(array).tolist()):
        assert fib.value(hop) == reference.lookup(key), f"{fib.engine}: {key:#x}"


def test_auto_measures_on_the_addresses_it_is_given(tmp_path):
    rng = random.Random(46)
    routes4, routes6 = random_routes(rng, 32, 300), random_routes(rng, 128, 300)
    path = tmp_path / "mixed.txt"
    path.write_text("".join(f"{prefix} {value}\n" for prefix, value in routes4 + routes6))
    keys4, keys6 = boundary_keys(routes4, 32), boundary_keys(routes6, 128)
    sample = [str(ipaddress.IPv4Address(key)) for key in keys4] + [str(ipaddress.IPv6Address(key)) for key in keys6]
    reference = fibkit.Table.load(path, engines=["d16r", "poptrie16"])
    for calibrate in (sample, np.array(sample), sample[: len(keys4)]):
        table = fibkit.Table.load(path, engines=["auto"], calibrate=calibrate)
        assert all(engine.startswith(("d1", "d2", "poptrie1", "sail")) for engine in table.engines), table.engines
        assert table.lookup_batch(sample).tolist() == reference.lookup_batch(sample).tolist()
    assert fibkit.Table.default(engines=["auto"], calibrate=["10.0.0.1"] * 100).engines[0] is not None
    with pytest.raises(ValueError, match=r"calibrate: addrs\[1\]: \"nope\""):
        fibkit.Table.load(path, engines=["auto"], calibrate=["10.0.0.1", "nope"])


@pytest.mark.parametrize("family", [4, 6])
def test_auto_of_fib_and_fib6_takes_the_addresses_to_measure_on(tmp_path, family):
    bits = 32 if family == 4 else 128
    rng = random.Random(f"calibrate{family}")
    routes = random_routes(rng, bits, 300)
    reference = Reference(routes, bits)
    keys = boundary_keys(routes, bits)
    text = ipaddress.IPv4Address if family == 4 else ipaddress.IPv6Address
    sample = [str(text(key)) for key in keys]
    array = np.array(keys, dtype=np.uint32) if family == 4 else fibkit.ipv6_array(keys)
    path = tmp_path / "routes.txt"
    path.write_text("".join(f"{prefix} {value}\n" for prefix, value in routes))
    cls = fibkit.Fib if family == 4 else fibkit.Fib6
    for fib in (
        cls(routes, engine="auto", calibrate=sample),
        cls(routes, engine="auto", calibrate=array),
        cls.load(path, engine="auto", calibrate=sample),
    ):
        assert fib.engine.startswith(("d1", "d2", "poptrie1", "sail")), fib.engine
        for key, hop in zip(keys, fib.lookup_batch(array).tolist()):
            assert fib.value(hop) == reference.lookup(key), f"{fib.engine}: {key:#x}"
    # The sample is read: a bad address is refused, naming it.
    with pytest.raises(ValueError, match=r"calibrate: addrs\[1\]: \"nope\""):
        cls(routes, engine="auto", calibrate=[sample[0], "nope"])
    with pytest.raises(ValueError, match=r"calibrate: addrs\[1\]: \"nope\""):
        cls.load(path, engine="auto", calibrate=[sample[0], "nope"])
    if family == 4:
        with pytest.raises(ValueError, match=r"calibrate: addrs\[0\]"):
            fibkit.Fib.default(engine="auto", calibrate=["nope"])


def test_values_map_indexes_back_to_route_values():
    fib = fibkit.Fib([("10.0.0.0/8", 64500), ("10.1.0.0/16", "192.0.2.1"), ("0.0.0.0/0", 7)])
    hops = fib.lookup_batch(fibkit.ipv4_array(["10.2.3.4", "10.1.0.0", "8.8.8.8"]))
    assert fib.value(int(hops[0])) == 64500
    assert fib.value(int(hops[1])) == "192.0.2.1"
    assert fib.values[hops].tolist() == [64500, int(ipaddress.IPv4Address("192.0.2.1")), 7]
    assert fib.value(0) is None
    modulo = fibkit.Fib([("10.0.0.0/8", 64500)], nexthops=239)
    # With nexthops, lookup answers the next hop the value was mapped onto.
    assert modulo.lookup("10.0.0.1") == modulo.next_hop("10.0.0.1") == 64500 % 239 + 1
    assert modulo.lookup("11.0.0.1") is None and modulo.next_hop("11.0.0.1") == 0
    assert modulo.values[64500 % 239 + 1] == 64500 % 239 + 1


def test_out_threads_and_strided_input_give_the_same_answers():
    rng = np.random.default_rng(5)
    routes = random_routes(random.Random(5), 32, 2000)
    fib = fibkit.Fib(routes, engine="d16r")
    keys = rng.integers(0, 2**32, size=300_001, dtype=np.uint32)
    plain = fib.lookup_batch(keys)
    assert plain.dtype == np.uint32 and plain.shape == keys.shape
    out = np.zeros(keys.shape[0] + 5, dtype=np.uint32)
    assert fib.lookup_batch(keys, out=out) is out
    assert np.array_equal(out[: keys.shape[0]], plain)
    assert np.array_equal(fib.lookup_batch(keys, threads=2), plain)
    assert np.array_equal(fib.lookup_batch(keys[::3]), plain[::3])
    assert np.array_equal(fib.lookup_batch(keys[:0]), plain[:0])
    assert [fib.next_hop(int(key)) for key in keys[:1000]] == plain[:1000].tolist()


def test_bad_input_is_named():
    with pytest.raises(ValueError, match="route 1"):
        fibkit.Fib([("10.0.0.0/8", 1), ("10.0.0.0/33", 2)])
    with pytest.raises(ValueError, match="Fib6"):
        fibkit.Fib([("2001:db8::/32", 1)])
    with pytest.raises(ValueError, match="unknown engine"):
        fibkit.Fib([("10.0.0.0/8", 1)], engine="d99r")
    with pytest.raises(ValueError, match="nexthops"):
        fibkit.Fib([("10.0.0.0/8", 1)], nexthops=0)
    fib = fibkit.Fib([("10.0.0.0/8", 1)])
    with pytest.raises(TypeError):
        fib.lookup_batch(np.zeros(4, dtype=np.int64))
    with pytest.raises(ValueError, match="slots"):
        fib.lookup_batch(np.zeros(4, dtype=np.uint32), out=np.zeros(3, dtype=np.uint32))
    with pytest.raises(ValueError, match="not an IPv4 address"):
        fib.lookup("10.0.0.300")
    with pytest.raises(OverflowError):
        fib.lookup(2**32)
    with pytest.raises(ValueError, match="not an IPv4 address"):
        fib.next_hop("10.0.0.300")
    fib6 = fibkit.Fib6([("2001:db8::/32", 1)])
    with pytest.raises(ValueError, match="shape"):
        fib6.lookup_batch(np.zeros((4, 8), dtype=np.uint8))


def test_tables_load_from_files_and_errors_name_the_line(tmp_path):
    table = tmp_path / "table.txt.gz"
    with gzip.open(table, "wt") as text:
        text.write("10.0.0.0/8 64500\n2001:db8::/32 64501\n")
    fib = fibkit.Fib.load(table)
    assert fib.value(fib.next_hop("10.9.9.9")) == fib.lookup("10.9.9.9") == 64500
    fib6 = fibkit.Fib6.load(table)
    assert fib6.value(fib6.next_hop("2001:db8::1")) == fib6.lookup("2001:db8::1") == 64501
    broken = tmp_path / "broken.txt"
    broken.write_text("10.0.0.0/8 64500\n10.0.0.0/99 1\n")
    with pytest.raises(ValueError, match=r"broken.txt:2: prefix length 99"):
        fibkit.Fib.load(broken)
    with pytest.raises(ValueError, match="missing.txt"):
        fibkit.Fib.load(tmp_path / "missing.txt")


def test_stats_and_report():
    fib = fibkit.Fib([("10.0.0.0/8", 1), ("10.1.0.0/16", 2)], engine="d16r")
    stats = fib.stats()
    assert stats["engine"] == "d16r" and stats["prefixes"] == 2
    assert stats["bytes_total"] == fib.footprint
    assert "d16r" in repr(fib)
    assert fib.report().strip()
    assert fib.footprint >= 4 << 16 and fib.build_ms >= 0


def test_2014_table_agrees_with_the_radix_reference_and_pytricia():
    path = shared("routeviews-2014-05-13.ipasn.gz")
    fib = fibkit.Fib.load(path, engine="d18r", nexthops=239)
    radix = fibkit.Fib.load(path, engine="radix", nexthops=239)
    assert fib.prefixes > 500_000
    keys = np.random.default_rng(2014).integers(0, 2**32, size=1_000_000, dtype=np.uint32)
    assert np.array_equal(fib.lookup_batch(keys, threads=2), radix.lookup_batch(keys))
    pytricia = pytest.importorskip("pytricia")
    trie = pytricia.PyTricia(32)
    with gzip.open(path, "rt") as text:
        for line in text:
            if line.startswith(";") or not line.strip():
                continue
            prefix, asn = line.split()[:2]
            trie[prefix] = int(asn.split("_")[0].split(",")[0]) % 239 + 1
    sample = keys[:50_000]
    hops = fib.lookup_batch(sample)
    for key, hop in zip(sample.tolist(), hops.tolist()):
        assert trie.get(str(ipaddress.IPv4Address(key)), 0) == hop


def test_linx_ipv6_table_agrees_with_the_radix_reference():
    path = shared("linx-p69-2014-12-25.rib6.gz")
    fib = fibkit.Fib6.load(path, engine="poptrie18")
    radix = fibkit.Fib6.load(path, engine="radix")
    rng = np.random.default_rng(6)
    keys = rng.integers(0, 256, size=(200_000, 16), dtype=np.uint8)
    keys[:, 0] = 0x20 | (keys[:, 0] & 0x1F)  # inside 2000::/3, where routes are
    assert np.array_equal(fib.lookup_batch(keys), radix.lookup_batch(keys))
    assert np.count_nonzero(fib.lookup_batch(keys)) > 0


def test_address_strings_parse_in_every_container_as_ipaddress_reads_them():
    rng = random.Random(19)
    v4 = [str(ipaddress.IPv4Address(rng.getrandbits(32) >> rng.randint(0, 32))) for _ in range(20000)]
    v6 = [str(ipaddress.IPv6Address(rng.getrandbits(128) >> rng.randint(0, 128))) for _ in range(5000)]
    expected4 = [int(ipaddress.IPv4Address(addr)) for addr in v4]
    expected6 = [ipaddress.IPv6Address(addr).packed for addr in v6]
    for container in (list, np.array, lambda addrs: np.array(addrs, dtype=object),
                      lambda addrs: np.array([addr.encode() for addr in addrs]), tuple, iter):
        assert fibkit.ipv4_array(container(v4)).tolist() == expected4
        assert [row.tobytes() for row in fibkit.ipv6_array(container(v6))] == expected6
    assert fibkit.ipv4_array(np.array(v4[:100]).reshape(10, 10)).tolist() == expected4[:100]
    assert fibkit.ipv4_array(np.array(v4[:100])[::-3]).tolist() == expected4[:100][::-3]
    assert fibkit.ipv4_array(np.array(v4[:50], dtype=">U15")).tolist() == expected4[:50]
    assert fibkit.ipv4_array([" 10.0.0.1\r", "::ffff:10.0.0.2"]).tolist() == [0x0A000001, 0x0A000002]
    assert fibkit.ipv4_array(["10.0.0.1", 167772162]).tolist() == [0x0A000001, 0x0A000002]
    assert fibkit.ipv4_array([]).tolist() == []
    assert fibkit.ipv6_array(np.array([], dtype=str)).shape == (0, 16)


def test_bad_address_strings_name_their_index_and_the_reason():
    cases = [
        (fibkit.ipv4_array, ["10.0.0.1", "10.0.0.256"], r"addrs\[1\]: \"10.0.0.256\": not an IPv4 or IPv6 address"),
        (fibkit.ipv4_array, ["010.0.0.1"], r"addrs\[0\]: \"010.0.0.1\": an octet has a leading zero"),
        (fibkit.ipv4_array, ["10.0.0.1", "2001:db8::1"], r"addrs\[1\]: .*an IPv6 address \(ipv6_array takes it\)"),
        (fibkit.ipv6_array, ["10.0.0.1"], r"addrs\[0\]: .*an IPv4 address \(ipv4_array takes it\)"),
        (fibkit.ipv4_array, ["", "1.2.3.4"], r"addrs\[0\]: \"\": no address"),
        (fibkit.ipv4_array, ["1.2.3.4", "ñ.1.1.1"], r"addrs\[1\]: \"ñ.1.1.1\": not an IPv4"),
        (fibkit.ipv4_array, ["1" * 100], r"addrs\[0\]: \"1{60}\.\.\. \(100 bytes\)\": not an IPv4"),
    ]
    for parse, addrs, message in cases:
        with pytest.raises(ValueError, match=message):
            parse(addrs)
    assert fibkit.ipv4_array(["1.2.3.4" + " " * 100]).tolist() == [0x01020304]
    with pytest.raises(ValueError, match="family must be 4 or 6"):
        fibkit.parse_addresses(np.zeros((1, 4), dtype=np.uint32), 5)
    with pytest.raises(TypeError, match=r"addrs\[1\] is not a str"):
        fibkit.parse_addresses(["1.2.3.4", 5], 4)
    with pytest.raises(TypeError, match="uint32 or uint8"):
        fibkit.parse_addresses(np.zeros((1, 4), dtype=np.int16), 4)


def test_a_table_answers_a_mixed_column_as_each_family_alone(tmp_path):
    rng = random.Random(20)
    routes4, routes6 = random_routes(rng, 32, 300), random_routes(rng, 128, 300)
    path = tmp_path / "mixed.txt"
    path.write_text("".join(f"{prefix} {value}\n" for prefix, value in routes4 + routes6))
    table = fibkit.Table.load(path, engines=["d16r", "poptrie16"])
    assert table.engines == ("d16r", "poptrie16")
    fib, fib6 = fibkit.Fib(routes4), fibkit.Fib6(routes6)
    keys4 = boundary_keys(routes4, 32)
    keys6 = boundary_keys(routes6, 128)
    mixed = [str(ipaddress.IPv4Address(key)) for key in keys4] + [str(ipaddress.IPv6Address(key)) for key in keys6]
    order = list(range(len(mixed)))
    rng.shuffle(order)
    shuffled = [mixed[index] for index in order]
    expected = [fib.values[fib.next_hop(key)] for key in keys4] + [fib6.values[fib6.next_hop(key)] for key in keys6]
    for container in (list, np.array, tuple):
        values = table.values[table.lookup_batch(container(shuffled))]
        assert values.tolist() == [expected[index] for index in order]
    # One address: next_hop as lookup_batch answers it, lookup the route's value.
    assert [table.next_hop(addr) for addr in shuffled] == table.lookup_batch(shuffled).tolist()
    assert [table.lookup(addr) for addr in mixed] == [fib.lookup(key) for key in keys4] + [
        fib6.lookup(key) for key in keys6
    ]
    with pytest.raises(ValueError, match=r'"nope": not an IPv4 or IPv6 address'):
        table.lookup("nope")
    with pytest.raises(TypeError, match="a Table's address is a string"):
        table.next_hop(167772161)
    with pytest.raises(ValueError, match=r"addrs\[1\]: \"nope\""):
        table.lookup_batch(["10.0.0.1", "nope"])
    with pytest.raises(TypeError, match=r"addrs\[0\] is not a str"):
        table.lookup_batch([1, 2])
    with pytest.raises(ValueError, match="prefixes=True"):
        table.lookup_batch(["10.0.0.1"], prefixes=True)
    with_prefixes = fibkit.Table.load(path, prefixes=True)
    hops, matched = with_prefixes.lookup_batch(shuffled, prefixes=True)
    same_hops, networks, lengths = with_prefixes.lookup_batch(shuffled, prefixes="arrays")
    assert same_hops.tolist() == hops.tolist() and networks.shape == (len(shuffled), 16) and lengths.dtype == np.int16
    for text, network, length in zip(matched, networks, lengths.tolist()):
        if text is None:
            assert length == -1 and not network.any()
            continue
        address = ipaddress.IPv6Address(network.tobytes())
        address = address.ipv4_mapped or address
        assert text == f"{address}/{length}"
    with pytest.raises(ValueError, match="prefixes must be False, True"):
        with_prefixes.lookup_batch(shuffled, prefixes="tuples")
    assert with_prefixes.values[hops].tolist() == [expected[index] for index in order]
    networks = [ipaddress.ip_network(route) for route, _ in routes4 + routes6]
    for text, prefix in zip(shuffled[:500], matched[:500]):
        address = ipaddress.ip_address(text)
        covering = [net for net in networks if net.version == address.version and address in net]
        longest = max(covering, key=lambda net: net.prefixlen, default=None)
        assert prefix == (None if longest is None else str(longest)), text
    only4 = fibkit.Table.default(nexthops=7)
    assert only4.engines == ("d18r", None)
    assert only4.lookup_batch(["2001:db8::1"]).tolist() == [0]
    assert "fibkit.Table" in repr(only4)


def test_arrow_string_arrays_and_dataframes_are_answered_without_python_loops(tmp_path):
    pa = pytest.importorskip("pyarrow")
    pd = pytest.importorskip("pandas")
    path = tmp_path / "mixed.txt"
    path.write_text("10.0.0.0/8 64500\n10.1.0.0/16 64501\n2001:db8::/32 2001:db8::9\n")
    table = fibkit.Table.load(path, prefixes=True)
    addrs = ["10.1.2.3", "2001:db8::1", "11.0.0.0", "10.200.0.1"]
    expected = table.lookup_batch(addrs).tolist()
    for array in (pa.array(addrs), pa.array(addrs, type=pa.large_string()), pa.chunked_array([addrs[:1], addrs[1:]]),
                  pa.array(["x"] + addrs)[1:]):
        assert table.lookup_batch(array).tolist() == expected
    assert fibkit.ipv4_array(pa.array(["10.0.0.1", "10.0.0.2"])).tolist() == [0x0A000001, 0x0A000002]
    with pytest.raises(ValueError, match=r"addrs\[1\]: null"):
        table.lookup_batch(pa.array(["10.0.0.1", None]))
    with pytest.raises(ValueError, match=r"addrs\[1\]: \"bad\""):
        fibkit.ipv4_array(pa.array(["10.0.0.1", "bad"]))
    # pandas string columns: Arrow-backed ones read in place, others converted by pandas.
    for dtype in ("string[pyarrow]", "string[python]", object):
        series = pd.Series(addrs, dtype=dtype)
        assert table.lookup_batch(series).tolist() == expected, dtype
        if dtype == "string[pyarrow]":
            assert isinstance(fibkit._text(series), tuple)
    with pytest.raises(ValueError, match=r"addrs\[1\]: null"):
        table.lookup_batch(pd.Series(["10.0.0.1", None], dtype="string[pyarrow]"))
    frame = pd.DataFrame({"src": addrs, "bytes": [1, 2, 3, 4]})
    enriched = fibkit.enrich(frame, "src", table, value="asn", prefix="route")
    assert list(enriched.columns) == ["src", "bytes", "asn", "route"]
    assert enriched["asn"].tolist() == [64501, "2001:db8::9", None, 64500]
    routes = [None if pd.isna(route) else route for route in enriched["route"]]
    assert routes == ["10.1.0.0/16", "2001:db8::/32", None, "10.0.0.0/8"]
    path.write_text("10.0.0.0/8 64500\n10.1.0.0/16 64501\n2001:db8::/32 64502\n")
    numbers = fibkit.enrich(frame, "src", fibkit.Table.load(path))
    assert str(numbers["value"].dtype) == "UInt64"
    assert numbers["value"].tolist() == [64501, 64502, pd.NA, 64500]
    assert "asn" not in frame.columns
