"""Table.covering and Table.within against a brute force over the routes
with ``ipaddress``: random tables of both families (loaded, and a compiled
file opened), the IPv4 cut shipped in data/, the 2014 table when the data
folder has it; the Arrow types, and the errors."""

import gzip
import ipaddress
import random
from pathlib import Path

import numpy as np
import pytest

import fibkit
from test_fibkit import shared

pa = pytest.importorskip("pyarrow")

REPOSITORY = Path(__file__).resolve().parents[3]
CUT = REPOSITORY / "data" / "routeviews-2014-05-13-cut.ipasn"
ROUTE = pa.struct([("prefix", pa.string()), ("prefix_len", pa.uint8()), ("next_hop", pa.uint32())])


class Brute:
    """The routes, each as (version, first address, last address, length,
    text, value) in ints, scanned whole for every question."""

    def __init__(self, routes):
        self.routes = []
        for prefix, value in routes:
            net = ipaddress.ip_network(prefix)
            first, last = int(net.network_address), int(net.broadcast_address)
            self.routes.append((net.version, first, last, net.prefixlen, str(net), value))

    def covering(self, address):
        address = ipaddress.ip_address(address)
        at, version = int(address), address.version
        found = [route for route in self.routes if route[0] == version and route[1] <= at <= route[2]]
        return [(text, length, value) for _, _, _, length, text, value in sorted(found, key=lambda route: route[3])]

    def within(self, prefix):
        query = ipaddress.ip_network(prefix)
        first, last, version = int(query.network_address), int(query.broadcast_address), query.version
        found = [route for route in self.routes if route[0] == version and first <= route[1] and route[2] <= last]
        found.sort(key=lambda route: (route[1], route[3]))
        return [(text, length, value) for _, _, _, length, text, value in found]


def rows(table, routes):
    """A StructArray of routes (or a list's) as (prefix, length, value) triples."""
    return [(route["prefix"], route["prefix_len"], table.value(route["next_hop"])) for route in routes]


def check(table, brute, addresses, prefixes):
    expected = [brute.covering(address) for address in addresses]
    for form in (list, np.array, pa.array):
        answered = table.covering(form(addresses))
        assert answered.type == pa.list_(ROUTE) and len(answered) == len(addresses)
        for address, routes, want in zip(addresses, answered.to_pylist(), expected):
            assert rows(table, routes) == want, address
    lists = table.within(prefixes)
    assert lists.type == pa.list_(ROUTE) and len(lists) == len(prefixes)
    for prefix, routes in zip(prefixes, lists.to_pylist()):
        assert rows(table, routes) == brute.within(prefix), prefix
    for prefix in prefixes[:20]:
        one = table.within(prefix)
        assert one.type == ROUTE
        assert rows(table, one.to_pylist()) == brute.within(prefix), prefix


def random_routes(generator, count):
    """Routes of both families clustered so that they nest."""
    routes = {}
    for _ in range(count):
        if generator.random() < 0.7:
            bits, base, noise = 32, 0x0A000000, generator.getrandbits(16) << 8
            length = generator.randint(0, 32)
        else:
            bits, base, noise = 128, 0x20010DB8 << 96, generator.getrandbits(16) << 80
            length = generator.randint(0, 64)
        kind = ipaddress.IPv4Network if bits == 32 else ipaddress.IPv6Network
        network = kind(((base ^ noise) >> (bits - length) << (bits - length), length))
        if bits == 128 and network.subnet_of(ipaddress.ip_network("::ffff:0:0/96")):
            continue
        routes[str(network)] = generator.randint(1, 65000)
    return list(routes.items())


def probes(generator, routes, count):
    """Addresses in, at the edges of and around the routes."""
    addresses = []
    for prefix, _ in routes:
        net = ipaddress.ip_network(prefix)
        addresses += [str(net.network_address), str(net.broadcast_address)]
    for _ in range(count):
        addresses.append(str(ipaddress.IPv4Address(0x0A000000 ^ generator.getrandbits(24))))
        addresses.append(str(ipaddress.IPv6Address((0x20010DB8 << 96) ^ (generator.getrandbits(32) << 72))))
    return addresses


def queries(generator, routes):
    """Every route's prefix, each cut shorter, and the default routes."""
    prefixes = ["0.0.0.0/0", "::/0"]
    for prefix, _ in routes:
        net = ipaddress.ip_network(prefix)
        prefixes += [prefix, str(net.supernet(new_prefix=generator.randint(0, net.prefixlen)))]
    return prefixes


@pytest.mark.parametrize("seed", range(6))
def test_random_tables_answer_as_a_brute_force_loaded_and_from_their_file(tmp_path, seed):
    generator = random.Random(seed)
    routes = random_routes(generator, 30 + 40 * seed)
    path = tmp_path / "routes.txt"
    path.write_text("".join(f"{prefix} {value}\n" for prefix, value in routes))
    brute = Brute(routes)
    addresses, prefixes = probes(generator, routes, 100), queries(generator, routes)
    table = fibkit.Table.load(path, prefixes=True)
    check(table, brute, addresses, prefixes)
    table.save(tmp_path / "routes.fib")
    check(fibkit.open(tmp_path / "routes.fib"), brute, addresses, prefixes)


def test_the_shipped_cut_answers_as_a_brute_force():
    routes = [line.split("\t") for line in CUT.read_text().splitlines() if line and not line.startswith(";")]
    routes = [(prefix, int(value)) for prefix, value in routes]
    generator = random.Random(45)
    addresses = [str(ipaddress.IPv4Address(generator.randrange(0x01000000, 0x09000000))) for _ in range(300)]
    table = fibkit.Table.load(CUT, prefixes=True)
    check(table, Brute(routes), addresses + ["8.8.8.8", "10.0.0.1"], [f"{octet}.0.0.0/8" for octet in range(12)])
    answered = table.covering(["8.8.8.8", "10.0.0.1"])
    assert answered.to_pylist()[0][-1]["prefix"] == "8.8.8.0/24" and answered.to_pylist()[1] == []
    assert table.values[answered.flatten().field("next_hop").to_numpy()].tolist() == [3356, 3356, 15169]


def test_the_2014_table_answers_as_a_brute_force():
    path = shared("routeviews-2014-05-13.ipasn.gz")
    with gzip.open(path, "rt") as lines:
        routes = [line.split("\t") for line in lines if line.strip() and not line.startswith(";")]
    routes = [(prefix, int(value)) for prefix, value in routes]
    table = fibkit.Table.load(path, prefixes=True)
    brute = Brute(routes)
    generator = random.Random(2014)
    addresses = [str(ipaddress.IPv4Address(generator.getrandbits(32))) for _ in range(15)]
    prefixes = [prefix for prefix, _ in generator.sample(routes, 3)] + ["8.0.0.0/8", "193.0.0.0/12"]
    check(table, brute, addresses, prefixes)


def test_bad_input_and_tables_without_prefixes_are_errors_that_say_so(tmp_path):
    table = fibkit.Table.load(CUT, prefixes=True)
    with pytest.raises(ValueError, match="host bits set in 10.0.0.1/8"):
        table.within("10.0.0.1/8")
    with pytest.raises(ValueError, match='element 1: "8.0.0.0/33": prefix length 33 exceeds 32'):
        table.within(["8.0.0.0/8", "8.0.0.0/33"])
    with pytest.raises(TypeError, match="element 1 is int"):
        table.within(["8.0.0.0/8", 8])
    with pytest.raises(TypeError, match="a prefix string or a sequence of them"):
        table.within(8)
    with pytest.raises(ValueError, match=r"\[1\]"):
        table.covering(["8.8.8.8", "8.8.8"])
    plain = fibkit.Table.load(CUT)
    for call in (lambda: plain.covering(["8.8.8.8"]), lambda: plain.within("8.0.0.0/8")):
        with pytest.raises(ValueError, match="prefixes=True"):
            call()
    assert table.covering([]).type == pa.list_(ROUTE)
    assert table.within([]).to_pylist() == [] and table.within("11.0.0.0/8").to_pylist() == []
    assert rows(table, table.within("::ffff:8.8.8.0/120").to_pylist()) == [("8.8.8.0/24", 24, 15169)]
