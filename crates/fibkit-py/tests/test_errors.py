"""Errors and edge cases of the bindings: every failure is an ordinary
exception naming the problem (never a PanicException), in-place batches, and
what `values` holds."""

import ipaddress
import subprocess
import sys
import textwrap
import threading

import numpy as np
import pytest

import fibkit

ROUTES4 = [("10.0.0.0/8", 64500), ("10.1.0.0/16", 64501), ("11.0.0.0/8", 7)]
ROUTES6 = [("2001:db8::/32", 64500), ("2001:db8:1::/48", 64501), ("2a00::/12", 7)]


def fib4():
    return fibkit.Fib(ROUTES4)


def fib6():
    return fibkit.Fib6(ROUTES6)


def keys4(count=1000, seed=4):
    rng = np.random.default_rng(seed)
    return rng.integers(0x0900_0000, 0x0C00_0000, size=count, dtype=np.uint32)


def keys6(count=1000, seed=6):
    rng = np.random.default_rng(seed)
    keys = rng.integers(0, 256, size=(count, 16), dtype=np.uint8)
    keys[:, :4] = [0x20, 0x01, 0x0D, 0xB8]
    keys[::3, 5] = 1
    keys[::7, :2] = [0x2A, 0x0F]
    return keys


# Item 9: no panic crosses into Python; in-place batches.


def test_out_may_be_the_keys_array_itself():
    fib = fib4()
    keys = keys4()
    want = fib.lookup_batch(keys.copy())
    assert np.count_nonzero(want) > 0
    assert fib.lookup_batch(keys, out=keys) is keys
    assert np.array_equal(keys, want)


def test_in_place_batch_split_across_threads():
    fib = fib4()
    keys = keys4(count=200_000)
    want = fib.lookup_batch(keys.copy())
    assert fib.lookup_batch(keys, out=keys, threads=2) is keys
    assert np.array_equal(keys, want)


def test_out_overlapping_the_keys_shifted_gets_every_answer_of_the_original_keys():
    fib = fib4()
    buffer = keys4(count=1001)
    keys, out = buffer[1:], buffer[:-1]
    want = fib.lookup_batch(keys.copy())
    fib.lookup_batch(keys, out=out)
    assert np.array_equal(buffer[:-1], want)


def test_ipv6_out_sharing_the_keys_memory():
    fib = fib6()
    keys = keys6()
    want = fib.lookup_batch(keys.copy())
    assert np.count_nonzero(want) > 0
    out = keys.reshape(-1).view(np.uint32)[: len(keys)]
    assert fib.lookup_batch(keys, out=out) is out
    assert np.array_equal(out, want)


@pytest.mark.parametrize("family", [4, 6])
def test_read_only_out_is_a_value_error(family):
    fib, keys = (fib4(), keys4(8)) if family == 4 else (fib6(), keys6(8))
    out = np.zeros(8, dtype=np.uint32)
    out.flags.writeable = False
    with pytest.raises(ValueError, match="out is read-only"):
        fib.lookup_batch(keys, out=out)
    assert not out.any()


def test_read_only_keys_are_fine():
    fib = fib4()
    keys = keys4()
    want = fib.lookup_batch(keys)
    keys.flags.writeable = False
    assert np.array_equal(fib.lookup_batch(keys), want)


def test_arrays_in_use_by_a_batch_on_another_thread_are_value_errors():
    fib = fibkit.Fib(ROUTES4, engine="radix")
    keys = keys4(count=3_000_000)
    busy = np.zeros(len(keys), dtype=np.uint32)
    worker = threading.Thread(target=fib.lookup_batch, args=(keys,), kwargs={"out": busy})
    worker.start()
    outcomes = set()
    while worker.is_alive():  # each call while the worker writes `busy` must fail cleanly
        for call in (lambda: fib.lookup_batch(busy[:8]), lambda: fib.lookup_batch(keys[:8], out=busy)):
            try:
                call()
                outcomes.add("answered")
            except ValueError as error:
                assert "in use by another lookup_batch" in str(error)
                outcomes.add("refused")
    worker.join()
    assert outcomes
    assert np.array_equal(busy, fib.lookup_batch(keys))


@pytest.mark.parametrize("family", [4, 6])
def test_a_misaligned_out_is_a_value_error(family):
    fib, keys = (fib4(), keys4(4)) if family == 4 else (fib6(), keys6(4))
    out = np.zeros(17, dtype=np.uint8)[1:].view(np.uint32)
    assert not out.flags.aligned
    with pytest.raises(ValueError, match="out must be aligned"):
        fib.lookup_batch(keys, out=out)


def test_strided_and_misaligned_keys_are_read_as_they_are():
    fib = fib4()
    want = [fib.next_hop(key) for key in (0x0A000001, 0x0B000001, 0x0A010002, 0x0C000000)]
    records = np.zeros(4, dtype=[("tag", "u1"), ("addr", "<u4")])  # packed: 5-byte stride
    records["addr"] = [0x0A000001, 0x0B000001, 0x0A010002, 0x0C000000]
    assert records["addr"].strides == (5,)
    assert fib.lookup_batch(records["addr"]).tolist() == want
    misaligned = np.zeros(17, dtype=np.uint8)[1:].view(np.uint32)
    misaligned[:] = [0x0A000001, 0x0B000001, 0x0A010002, 0x0C000000]
    assert fib.lookup_batch(misaligned).tolist() == want
    assert fib.lookup_batch(misaligned[::-1]).tolist() == want[::-1]
    big_endian = misaligned.astype(">u4")
    with pytest.raises(TypeError, match="got >u4"):
        fib.lookup_batch(big_endian)


def test_strided_ipv6_keys():
    fib = fib6()
    keys = keys6(100)
    want = fib.lookup_batch(keys)
    wide = np.zeros((100, 32), dtype=np.uint8)
    wide[:, 3:19] = keys
    assert np.array_equal(fib.lookup_batch(wide[:, 3:19]), want)
    assert np.array_equal(fib.lookup_batch(keys[::-1]), want[::-1])
    assert np.array_equal(fib.lookup_batch(np.asfortranarray(keys)), want)


# Item 10: `values` is sized by the next hops in use; `nexthops` is checked.


def test_values_are_sized_by_the_next_hops_in_use_not_the_limit():
    fib = fibkit.Fib([("10.0.0.0/8", 5), ("11.0.0.0/8", 12)], nexthops=1000)
    assert fib.values.tolist() == list(range(14))
    hops = fib.lookup_batch(fibkit.ipv4_array(["10.0.0.1", "11.0.0.1", "12.0.0.1"]))
    assert fib.values[hops].tolist() == [6, 13, 0]


def test_the_largest_nexthops_does_not_wrap():
    fib = fibkit.Fib([("10.0.0.0/8", 64500)], nexthops=2**32 - 1)
    hop = fib.next_hop("10.0.0.1")
    assert hop == 64501 == fib.lookup("10.0.0.1")
    assert len(fib.values) == hop + 1 and fib.values[hop] == hop


def test_a_large_nexthops_allocates_nothing_by_it():
    script = textwrap.dedent(
        """
        import resource
        import fibkit
        resource.setrlimit(resource.RLIMIT_AS, (3 << 30, 3 << 30))
        fib = fibkit.Fib([("10.0.0.0/8", 7)], nexthops=2**31)
        print(fib.values.tolist())
        """
    )
    done = subprocess.run([sys.executable, "-c", script], capture_output=True, text=True, timeout=120)
    assert done.returncode == 0, done.stderr[-2000:]
    assert done.stdout.strip() == str(list(range(9)))


@pytest.mark.parametrize("nexthops", [0, -1, 2**32, 2**64])
def test_nexthops_out_of_range_names_the_value_and_the_range(nexthops, tmp_path):
    message = rf"nexthops must be between 1 and 4294967295 \(2\*\*32-1\), got {nexthops}$"
    with pytest.raises(ValueError, match=message):
        fibkit.Fib([("10.0.0.0/8", 1)], nexthops=nexthops)
    with pytest.raises(ValueError, match=message):
        fibkit.Fib6([("2001:db8::/32", 1)], nexthops=nexthops)
    table = tmp_path / "table.txt"
    table.write_text("10.0.0.0/8 1\n")
    with pytest.raises(ValueError, match=message):
        fibkit.Fib.load(table, nexthops=nexthops)


def test_nexthops_of_another_type_is_a_type_error():
    with pytest.raises(TypeError, match="nexthops must be an int or None, got str"):
        fibkit.Fib([("10.0.0.0/8", 1)], nexthops="239")


# Item 17: messages.


@pytest.mark.parametrize("family", [4, 6])
@pytest.mark.parametrize("given", [np.float64, np.int64, np.uint16])
def test_a_wrong_out_dtype_names_both_dtypes(family, given):
    fib, keys = (fib4(), keys4(4)) if family == 4 else (fib6(), keys6(4))
    name = np.dtype(given).name
    with pytest.raises(TypeError, match=f"^out must be a uint32 array, got {name}$"):
        fib.lookup_batch(keys, out=np.zeros(4, dtype=given))


def test_out_that_is_no_array_or_of_the_wrong_shape():
    fib = fib4()
    with pytest.raises(TypeError, match="^out must be a uint32 array, got list$"):
        fib.lookup_batch(keys4(4), out=[0, 0, 0, 0])
    with pytest.raises(ValueError, match=r"out must be 1-dimensional, got shape \(2, 2\)"):
        fib.lookup_batch(keys4(4), out=np.zeros((2, 2), dtype=np.uint32))


@pytest.mark.parametrize("given", [np.float64, np.int64, np.int32, np.uint8])
def test_wrong_ipv4_key_dtypes_name_both_dtypes(given):
    name = np.dtype(given).name
    with pytest.raises(TypeError, match=f"^addrs must be a uint32 array, got {name}$"):
        fib4().lookup_batch(np.zeros(4, dtype=given))


@pytest.mark.parametrize("given", [np.float64, np.uint32, np.int8])
def test_wrong_ipv6_key_dtypes_name_both_dtypes(given):
    name = np.dtype(given).name
    with pytest.raises(TypeError, match=rf"^addrs must be an \(N, 16\) uint8 array or an \(N, 2\) uint64 array, got {name}$"):
        fib6().lookup_batch(np.zeros((4, 16), dtype=given))


def test_keys_of_the_wrong_shape_or_type():
    with pytest.raises(ValueError, match=r"addrs must be 1-dimensional, got shape \(2, 2\)"):
        fib4().lookup_batch(np.zeros((2, 2), dtype=np.uint32))
    with pytest.raises(TypeError, match="^addrs must be a uint32 array, got list$"):
        fib4().lookup_batch([1, 2, 3])
    with pytest.raises(ValueError, match=r"addrs must have shape \(N, 16\), got \(16,\)"):
        fib6().lookup_batch(np.zeros(16, dtype=np.uint8))
    with pytest.raises(ValueError, match=r"addrs of uint64 must have shape \(N, 2\), got \(4, 3\)"):
        fib6().lookup_batch(np.zeros((4, 3), dtype=np.uint64))


@pytest.mark.parametrize("make", [fib4, fib6])
@pytest.mark.parametrize("addr", [-1, -(2**200), np.int64(-1)])
def test_a_negative_address_is_out_of_range(make, addr):
    with pytest.raises(OverflowError, match=r"is not an IPv[46] address \(negative\)"):
        make().lookup(addr)
    with pytest.raises(OverflowError, match=r"is not an IPv[46] address \(negative\)"):
        make().next_hop(addr)


@pytest.mark.parametrize(("make", "addr"), [(fib4, 2**32), (fib6, 2**128), (fib4, 2**200), (fib6, 2**200)])
def test_a_too_large_address_is_an_overflow_error_in_both_families(make, addr):
    with pytest.raises(OverflowError, match=f"^{addr} is not an IPv[46] address"):
        make().lookup(addr)
    with pytest.raises(OverflowError, match=f"^{addr} is not an IPv[46] address"):
        make().next_hop(addr)


def test_addresses_of_other_types():
    fib = fib4()
    assert fib.next_hop(np.uint32(0x0A010203)) == fib.next_hop("10.1.2.3") != 0
    assert fib.lookup(np.uint32(0x0A010203)) == fib.lookup("10.1.2.3") is not None
    with pytest.raises(TypeError, match="an address is an int or a string, got float"):
        fib.lookup(1.5)


def test_numeric_string_values_are_taken_as_the_file_loaders_take_them(tmp_path):
    fib = fibkit.Fib([("10.0.0.0/8", "7"), ("11.0.0.0/8", "0012"), ("12.0.0.0/8", "192.0.2.1")])
    table = tmp_path / "table.txt"
    table.write_text("10.0.0.0/8 7\n11.0.0.0/8 0012\n12.0.0.0/8 192.0.2.1\n")
    loaded = fibkit.Fib.load(table)
    for addr, want in [("10.0.0.1", 7), ("11.0.0.1", 12), ("12.0.0.1", "192.0.2.1")]:
        assert fib.value(fib.next_hop(addr)) == loaded.value(loaded.next_hop(addr)) == want
        assert fib.lookup(addr) == loaded.lookup(addr) == want
    assert fibkit.Fib([("10.0.0.0/8", "7"), ("11.0.0.0/8", 7)]).next_hop("11.0.0.1") == 1
    fib6 = fibkit.Fib6([("2001:db8::/32", "64500")])
    assert fib6.value(fib6.next_hop("2001:db8::1")) == fib6.lookup("2001:db8::1") == 64500


@pytest.mark.parametrize(
    ("value", "message"),
    [
        ("99999999999999999999", "value 99999999999999999999 is too large"),
        ("AS7", r'non-numeric value "AS7" \(expected a number or an IP address\)'),
        ("", "the value is an empty string"),
    ],
)
def test_bad_string_values_name_the_route(value, message):
    with pytest.raises(ValueError, match=f"^route 1: {message}$"):
        fibkit.Fib([("10.0.0.0/8", 1), ("11.0.0.0/8", value)])


def test_distinct_ipv6_next_hops_have_distinct_values():
    # The two fold to the same 64 bits (high ^ low): 2001:db8::1 and ::2001:db8:0:1.
    hops = ["2001:db8::1", "::2001:db8:0:1", "fe80::1"]
    routes = [("2001:db8::/32", hops[0]), ("2a00::/12", hops[1]), ("::/0", hops[2])]
    fib = fibkit.Fib6(routes)
    indexes = [fib.next_hop(addr) for addr in ("2001:db8::5", "2a00::5", "3000::")]
    assert [fib.lookup(addr) for addr in ("2001:db8::5", "2a00::5", "3000::")] == hops
    values = fib.values
    assert values.dtype == object
    assert [values[index] for index in indexes] == [int(ipaddress.ip_address(hop)) for hop in hops]
    assert len(set(values[indexes].tolist())) == 3
    assert values[0] == 0


def test_an_ipv6_next_hop_of_an_ipv4_route_keeps_its_128_bits():
    fib = fibkit.Fib([("10.0.0.0/8", "2001:db8::1"), ("11.0.0.0/8", "::2001:db8:0:1")])
    hops = fib.lookup_batch(fibkit.ipv4_array(["10.0.0.1", "11.0.0.1"]))
    assert fib.values[hops].tolist() == [0x20010DB8 << 96 | 1, 0x20010DB8 << 32 | 1]


def test_numbers_and_ipv4_next_hops_stay_a_uint64_array():
    fib = fibkit.Fib([("10.0.0.0/8", 64500), ("11.0.0.0/8", "192.0.2.1")])
    assert fib.values.dtype == np.uint64
    assert fib.values.tolist() == [0, 64500, int(ipaddress.ip_address("192.0.2.1"))]
    fib6 = fibkit.Fib6([("2001:db8::/32", 64500)])
    assert fib6.values.dtype == np.uint64
    assert fib6.values.tolist() == [0, 64500]


# Issue 48, item 12: small ones.


def _nul_inputs(addrs):
    """``addrs`` through every way address strings come in."""
    yield "list", addrs
    yield "str array", np.array(addrs)
    yield "bytes array", np.array([addr.encode() for addr in addrs])
    yield "object array", np.array(addrs, dtype=object)
    try:
        import pyarrow as pa
    except ImportError:
        return
    yield "arrow array", pa.array(addrs)


@pytest.mark.parametrize(
    "text", ["10.1.2.3\x00x", "10.1.2.3\x005", "10.1.2.3\x00 ", "\x0010.1.2.3", "2001:db8::1\x00:1", "10.1.2.3\x00"]
)
def test_an_embedded_nul_is_refused_in_every_address_input_naming_the_row(text):
    # numpy's str and bytes arrays store a trailing NUL as padding (the
    # element reads back without it), so only an object array or a list
    # can carry "10.1.2.3\x00" itself; every form that carries it refuses it.
    addrs = ["2001:db8::2" if ":" in text else "10.0.0.1", text]
    parse = fibkit.ipv6_array if ":" in text else fibkit.ipv4_array
    table = fibkit.Table.default()
    for kind, given in _nul_inputs(addrs):
        if text.endswith("\x00") and kind in ("str array", "bytes array"):
            continue
        with pytest.raises(ValueError, match=r"^addrs\[1\]: "):
            parse(given)
        with pytest.raises(ValueError, match=r"^addrs\[1\]: "):
            table.lookup_batch(given)
        message = ""
        try:
            parse(given)
        except ValueError as error:
            message = str(error)
        with pytest.raises(ValueError) as listed:
            parse(list(addrs))
        # The same reason (a list shows the text with the blanks around it).
        assert str(listed.value).rsplit(": ", 1)[1] == message.rsplit(": ", 1)[1], kind


@pytest.mark.parametrize("threads", [0, -1, 1025, 2**40, 2**100])
def test_threads_out_of_range_names_the_argument_and_the_range(threads):
    halves = np.zeros((10, 2), dtype=np.uint64)
    for fib, keys in [(fib4(), keys4()), (fib6(), keys6()), (fib6(), halves)]:
        with pytest.raises(ValueError, match=f"^threads must be from 1 to 1024, got {threads}$"):
            fib.lookup_batch(keys, threads=threads)


@pytest.mark.parametrize("threads", ["2", 1.5, True])
def test_threads_of_another_type_is_a_type_error(threads):
    with pytest.raises(TypeError, match="^threads must be an int or None, got "):
        fib4().lookup_batch(keys4(), threads=threads)


def test_threads_in_range_answer_as_one_thread():
    keys = keys4(count=100_000)
    want = fib4().lookup_batch(keys)
    for threads in [1, 2, 1024, np.int64(3)]:
        assert np.array_equal(fib4().lookup_batch(keys, threads=threads), want)


@pytest.mark.parametrize("addr", [True, False, np.bool_(True)])
def test_a_bool_is_not_an_address(addr):
    for make in (fib4, fib6):
        with pytest.raises(TypeError, match="an address is an int or a string, got bool"):
            make().lookup(addr)
        with pytest.raises(TypeError, match="an address is an int or a string, got bool"):
            make().next_hop(addr)


@pytest.mark.parametrize("addrs", [[True], [1, True], [1, np.bool_(False)], np.array([True, False])])
def test_bools_among_addresses_are_refused_naming_the_element(addrs):
    for parse in (fibkit.ipv4_array, fibkit.ipv6_array):
        with pytest.raises(TypeError, match=r"^addrs\[\d\]: an address is an int or a string, got bool"):
            parse(addrs)


def test_memory_refused_to_an_engine_is_a_memory_error_naming_it(tmp_path):
    """Under an address-space limit below its largest array, a build fails
    with MemoryError naming the engine, the array and its bytes (it once
    aborted the process)."""
    path = tmp_path / "slash32s.txt"
    with path.open("w") as out:
        for index in range(2_000_000):
            # Each /32 in a /24 of its own: sail-wide's level-32 array is 2 GB.
            addr = ((index * 0x9E3779B1) & 0xFFFFFFFF) >> 8 << 8 | (index & 0xFF)
            out.write(f"{addr >> 24}.{addr >> 16 & 255}.{addr >> 8 & 255}.{addr & 255}/32 {1 + index % 7}\n")
    script = textwrap.dedent(
        f"""
        import resource
        import fibkit
        resource.setrlimit(resource.RLIMIT_AS, (3 << 29, 3 << 29))
        try:
            fibkit.Table.load({str(path)!r}, engines=["sail-wide"])
        except MemoryError as error:
            print("MemoryError:", error)
        """
    )
    done = subprocess.run([sys.executable, "-c", script], capture_output=True, text=True, timeout=300)
    assert done.returncode == 0, done.stderr
    assert done.stdout.strip() == (
        "MemoryError: sail-wide: out of memory: its level-32 array needs 2048000000 bytes, which the system refused"
    ), done.stdout + done.stderr
