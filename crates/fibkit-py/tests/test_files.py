"""Compiled FIB files from Python: save and open, pickling by bytes (in and
out of band) and by path, and damaged files refused with their offset."""

import ipaddress
import pickle
import random

import numpy as np
import pytest

import fibkit
from test_fibkit import boundary_keys, random_routes, shared

SAVABLE4 = ["d16r", "d18r", "d22r", "poptrie0", "poptrie16", "poptrie18", "dir24-8", "sail", "sail-wide", "sail-runs"]


def assert_same_answers(before, after, keys, family=4):
    array = np.array(keys, dtype=np.uint32) if family == 4 else fibkit.ipv6_array(keys)
    hops = before.lookup_batch(array)
    assert after.lookup_batch(array).tolist() == hops.tolist()
    assert after.values[hops].tolist() == before.values[hops].tolist()


@pytest.mark.parametrize("engine", SAVABLE4)
def test_an_ipv4_fib_saved_and_opened_answers_the_same(engine, tmp_path):
    rng = random.Random(engine)
    routes = random_routes(rng, 32, 400) + [("192.0.2.0/24", "198.51.100.1")]
    fib = fibkit.Fib(routes, engine=engine)
    fib.save(tmp_path / "fib.fib")
    opened = fibkit.Fib.open(tmp_path / "fib.fib")
    assert (opened.engine, opened.prefixes) == (engine, len(routes))
    keys = boundary_keys(routes, 32) + [rng.getrandbits(32) for _ in range(5000)]
    assert_same_answers(fib, opened, keys)
    assert opened.value(opened.next_hop("192.0.2.1")) == opened.lookup("192.0.2.1") == "198.51.100.1"
    table = fibkit.open(tmp_path / "fib.fib")
    assert table.engines == (engine, None)


def test_an_ipv6_fib_and_a_mixed_table_round_trip(tmp_path):
    rng = random.Random(6)
    routes6 = random_routes(rng, 128, 300)
    fib6 = fibkit.Fib6(routes6, engine="poptrie16")
    fib6.save(tmp_path / "six.fib")
    keys6 = boundary_keys(routes6, 128) + [rng.getrandbits(128) for _ in range(2000)]
    assert_same_answers(fib6, fibkit.Fib6.open(tmp_path / "six.fib"), keys6, family=6)
    with pytest.raises(ValueError, match=r"six\.fib: no IPv4 FIB in the file"):
        fibkit.Fib.open(tmp_path / "six.fib")
    routes4 = random_routes(rng, 32, 300)
    source = tmp_path / "mixed.txt"
    source.write_text("".join(f"{prefix} {value}\n" for prefix, value in routes4 + routes6))
    table = fibkit.Table.load(source, prefixes=True)
    table.save(tmp_path / "mixed.fib")
    opened = fibkit.open(tmp_path / "mixed.fib")
    texts = [str(ipaddress.ip_address(key)) for key in boundary_keys(routes4, 32)]
    texts += [str(ipaddress.IPv6Address(key)) for key in keys6]
    hops, matched = table.lookup_batch(texts, prefixes=True)
    hops_opened, matched_opened = opened.lookup_batch(texts, prefixes=True)
    assert hops_opened.tolist() == hops.tolist() and matched_opened.tolist() == matched.tolist()
    assert opened.values[hops].tolist() == table.values[hops].tolist()


def test_one_family_opened_from_a_file_with_prefixes_answers_next_hops(tmp_path):
    # The file's FIBs answer route numbers; Fib.open and Fib6.open map them
    # to next hops, as the Table does.
    source = tmp_path / "prefixes.txt"
    source.write_text("11.0.0.0/8 7\n10.0.0.0/8 7\n10.1.0.0/16 64501\n12.0.0.0/8 64501\n2001:db8::/32 7\n2001:db8:1::/48 9\n")
    table = fibkit.Table.load(source, prefixes=True)
    table.save(tmp_path / "prefixes.fib")
    fib, fib6 = fibkit.Fib.open(tmp_path / "prefixes.fib"), fibkit.Fib6.open(tmp_path / "prefixes.fib")
    addrs4 = ["10.1.2.3", "11.0.0.1", "12.0.0.1", "10.2.0.0", "13.0.0.1"]
    addrs6 = ["2001:db8:1::1", "2001:db8::1", "3000::"]
    assert fib.lookup_batch(fibkit.ipv4_array(addrs4)).tolist() == table.lookup_batch(addrs4).tolist()
    assert fib6.lookup_batch(fibkit.ipv6_array(addrs6)).tolist() == table.lookup_batch(addrs6).tolist()
    assert [fib.next_hop(addr) for addr in addrs4] == table.lookup_batch(addrs4).tolist()
    assert [fib.lookup(addr) for addr in addrs4] == [64501, 7, 64501, 7, None]
    assert [fib6.lookup(addr) for addr in addrs6] == [9, 7, None]


@pytest.mark.parametrize("protocol", [2, 4, 5])
def test_pickles_answer_exactly_the_same(protocol, tmp_path):
    rng = random.Random(protocol)
    routes = random_routes(rng, 32, 300)
    fib = fibkit.Fib(routes, engine="d16r")
    keys = boundary_keys(routes, 32) + [rng.getrandbits(32) for _ in range(3000)]
    assert_same_answers(fib, pickle.loads(pickle.dumps(fib, protocol=protocol)), keys)
    routes6 = random_routes(rng, 128, 100)
    fib6 = fibkit.Fib6(routes6)
    assert_same_answers(fib6, pickle.loads(pickle.dumps(fib6, protocol=protocol)), boundary_keys(routes6, 128), 6)
    table = fibkit.Table.default(nexthops=100)
    restored = pickle.loads(pickle.dumps(table, protocol=protocol))
    texts = [str(ipaddress.IPv4Address(rng.getrandbits(32))) for _ in range(5000)]
    assert restored.lookup_batch(texts).tolist() == table.lookup_batch(texts).tolist()
    assert restored.engines == table.engines


def test_protocol_5_ships_the_file_out_of_band_and_a_path_pickle_only_the_path(tmp_path):
    fib = fibkit.Fib.default(engine="d16r")
    buffers = []
    stream = pickle.dumps(fib, protocol=5, buffer_callback=buffers.append)
    fib.save(tmp_path / "default.fib")
    size = (tmp_path / "default.fib").stat().st_size
    assert len(stream) < 1000 and [buffer.raw().nbytes for buffer in buffers] == [size]
    restored = pickle.loads(stream, buffers=buffers)
    keys = np.random.default_rng(5).integers(0, 2**32, 100_000, dtype=np.uint64).astype(np.uint32)
    assert restored.lookup_batch(keys).tolist() == fib.lookup_batch(keys).tolist()
    mapped = fibkit.Fib.open(tmp_path / "default.fib", pickle_path=True)
    stream = pickle.dumps(mapped)
    assert len(stream) < 1000 and b"default.fib" in stream
    assert pickle.loads(stream).lookup_batch(keys).tolist() == fib.lookup_batch(keys).tolist()
    (tmp_path / "default.fib").unlink()
    with pytest.raises(OSError, match="default.fib"):
        pickle.loads(stream)


def test_damaged_and_foreign_files_are_refused_with_their_offset(tmp_path):
    fib = fibkit.Fib([("10.0.0.0/8", 64500), ("10.1.0.0/16", 64501)], engine="poptrie0")
    path = tmp_path / "small.fib"
    fib.save(path)
    good = path.read_bytes()
    for position in range(0, len(good), 7):
        damaged = bytearray(good)
        damaged[position] ^= 0x5A
        path.write_bytes(bytes(damaged))
        with pytest.raises(ValueError, match=r"small\.fib: "):
            fibkit.Fib.open(path)
    path.write_bytes(good[:-1])
    with pytest.raises(ValueError, match=r"small\.fib: offset 16: the header says"):
        fibkit.open(path)
    path.write_text("10.0.0.0/8 64500\n")
    with pytest.raises(ValueError, match="not a compiled FIB file"):
        fibkit.open(path)
    with pytest.raises(ValueError, match="a pickled FIB"):
        fibkit._fibkit._restore("Fib", good[:100], False)
    # A device is refused by its kind, never read: /dev/zero has no end.
    with pytest.raises(OSError, match="/dev/zero: a character device, not a regular file"):
        fibkit.Fib.open("/dev/zero")
    with pytest.raises(OSError, match="a folder, not a regular file"):
        fibkit.open(str(tmp_path))
    with pytest.raises(OSError, match="nonesuch.fib"):
        fibkit.open(tmp_path / "nonesuch.fib")
    with pytest.raises(ValueError, match="engine lulea cannot be saved to a FIB file"):
        fibkit.Fib([("10.0.0.0/8", 1)], engine="lulea").save(path)
    with pytest.raises(ValueError, match="engine lulea cannot be saved"):
        pickle.dumps(fibkit.Fib([("10.0.0.0/8", 1)], engine="lulea"))


def test_the_2014_table_opens_from_its_compiled_file_and_answers_as_built(tmp_path):
    path = shared("routeviews-2014-05-13.ipasn.gz")
    table = fibkit.Table.load(path, engines=["d18r"])
    table.save(tmp_path / "2014.fib")
    opened = fibkit.open(tmp_path / "2014.fib")
    rng = np.random.default_rng(2014)
    texts = [str(ipaddress.IPv4Address(int(key))) for key in rng.integers(0, 2**32, 200_000)]
    hops = table.lookup_batch(texts)
    assert opened.lookup_batch(texts).tolist() == hops.tolist()
    assert opened.values[hops].tolist() == table.values[hops].tolist()
