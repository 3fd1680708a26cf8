"""fibkit.Client against the real `fibkit serve` (the binary in
target/release or target/debug, the newer of the two; `make test-python`
builds target/debug/fibkit first): every answer equals what fibkit.Table
answers from the same table file, for the repository's two cut tables
(IPv4 with ASNs, IPv6 with next-hop addresses) served together."""

import doctest
import ipaddress
import json
import pickle
import random
import re
import signal
import subprocess
import time
from pathlib import Path

import numpy as np
import pytest

import fibkit

ROOT = Path(__file__).resolve().parents[3]
IPV4_TABLE = ROOT / "data" / "routeviews-2014-05-13-cut.ipasn"
IPV6_TABLE = ROOT / "data" / "linx-p69-2014-12-25-cut.rib6"
RANDOM = 100_000


def find_binary():
    """The newer of target/release/fibkit and target/debug/fibkit, or None."""
    candidates = (ROOT / "target" / "release" / "fibkit", ROOT / "target" / "debug" / "fibkit")
    found = [path for path in candidates if path.exists()]
    return max(found, key=lambda path: path.stat().st_mtime) if found else None


def fibkit_binary():
    binary = find_binary()
    if binary is None:
        target = ROOT / "target"
        pytest.skip(f"no fibkit binary in {target}/release or /debug: build it: cargo build -p fibkit-cli")
    return binary


class Server:
    """`fibkit serve` on a free loopback port (port 0: the port it says it
    listens on), serving `table`; `http` adds keys to [http], `extra`
    lines to the configuration."""

    def __init__(self, folder, table, extra="", **http):
        folder.mkdir(parents=True, exist_ok=True)
        config = folder / "serve.toml"
        lines = ["[http]", 'listen = ["127.0.0.1:0"]'] + [f"{key} = {value}" for key, value in http.items()]
        lines += ["[table]", f"path = {json.dumps(str(table))}", extra]
        config.write_text("\n".join(lines) + "\n")
        self.log = folder / "serve.log"
        with open(self.log, "w") as log:
            # --seconds: the server stops by itself if a test run dies before stop().
            self.process = subprocess.Popen(
                [str(fibkit_binary()), "serve", str(config), "--seconds", "900"], stdout=log, stderr=log
            )
        start = time.monotonic()
        while True:
            listening = re.search(r"listening on 127\.0\.0\.1:(\d+)", self.log.read_text())
            if listening:
                break
            if self.process.poll() is not None or time.monotonic() - start > 60:
                self.stop()
                pytest.fail(f"fibkit serve did not start listening:\n{self.log.read_text()}")
            time.sleep(0.02)
        self.url = f"http://127.0.0.1:{listening.group(1)}"

    def stop(self):
        if self.process.poll() is None:
            self.process.send_signal(signal.SIGTERM)
            try:
                self.process.wait(timeout=20)
            except subprocess.TimeoutExpired:
                self.process.kill()
                self.process.wait()


def routes(path):
    """(network, broadcast, version) of each route of a table file."""
    found = []
    for line in path.read_text().splitlines():
        if line.strip() and not line.startswith(";"):
            net = ipaddress.ip_network(line.split()[0])
            found.append((int(net.network_address), int(net.broadcast_address), net.version))
    return found


def text(number, version):
    return str(ipaddress.IPv4Address(number) if version == 4 else ipaddress.IPv6Address(number))


def boundaries(path):
    """Both ends of each route's prefix and the addresses just outside it."""
    addrs = []
    for first, last, version in routes(path):
        top = (1 << (32 if version == 4 else 128)) - 1
        addrs += [text(number, version) for number in (first, last, max(first - 1, 0), min(last + 1, top))]
    return addrs


def random_addresses(path, count, seed):
    """`count` addresses: half inside a random route's prefix, a quarter
    within the /8 or /16 the table's routes are in, a quarter anywhere."""
    rng = random.Random(seed)
    table = routes(path)
    version = table[0][2]
    bits = 32 if version == 4 else 128
    addrs = []
    for index in range(count):
        if index % 4 < 2:
            first, last, _ = rng.choice(table)
            number = rng.randint(first, last)
        elif index % 4 == 2:
            first, _, _ = rng.choice(table)
            keep = 8 if version == 4 else 16
            number = (first >> (bits - keep) << (bits - keep)) | rng.getrandbits(bits - keep)
        else:
            number = rng.getrandbits(bits)
        addrs.append(text(number, version))
    return addrs


def assert_same(got, want, addrs):
    """`got` (the client's) is `want` (the library's): dtype and every value."""
    assert isinstance(got, np.ndarray) and got.dtype == want.dtype and got.shape == want.shape
    got, want = got.tolist(), want.tolist()
    if got != want:
        index = next(index for index, (a, b) in enumerate(zip(got, want)) if a != b)
        pytest.fail(f"{len(got)} addresses: at {index} ({addrs[index]!r}): {got[index]!r}, the library {want[index]!r}")


@pytest.fixture
def serve(tmp_path):
    """Starts servers for one test (`serve(table, **http)`), each stopped
    at its end, failed or not."""
    started = []

    def start(table, **http):
        started.append(Server(tmp_path / f"serve-{len(started)}", table, **http))
        return started[-1]

    yield start
    for server in started:
        server.stop()


@pytest.fixture(scope="module")
def both(tmp_path_factory):
    """A server of both cut tables (one `PREFIX VALUE` file), and the Table of that file."""
    folder = tmp_path_factory.mktemp("serve-both")
    table = folder / "both.txt"
    lines = IPV4_TABLE.read_text().splitlines() + IPV6_TABLE.read_text().splitlines()
    table.write_text("".join(line.replace("\t", " ") + "\n" for line in lines))
    server = Server(folder, table)
    yield server, fibkit.Table.load(table)
    server.stop()


@pytest.fixture(scope="module")
def ipv4_only(tmp_path_factory):
    """A server of the IPv4 cut alone (all values ASNs), and its Table."""
    server = Server(tmp_path_factory.mktemp("serve-ipv4"), IPV4_TABLE)
    yield server, fibkit.Table.load(IPV4_TABLE)
    server.stop()


@pytest.mark.parametrize("path", [IPV4_TABLE, IPV6_TABLE], ids=["ipv4", "ipv6"])
def test_every_boundary_and_random_addresses_answer_as_the_library(both, path):
    server, table = both
    with fibkit.Client(server.url) as client:
        for addrs in (boundaries(path), random_addresses(path, RANDOM, path.name)):
            got = client.lookup(addrs)
            want = table.values[table.lookup_batch(addrs)]
            assert want.dtype == object  # IPv6 next-hop addresses among the values: Python ints
            assert_same(got, want, addrs)
            routed = int(np.count_nonzero(want))
            assert 0 < routed < len(addrs), "the addresses should both hit and miss routes"


def test_an_ipv4_table_answers_uint64_as_the_library(ipv4_only):
    server, table = ipv4_only
    client = fibkit.Client(server.url)
    addrs = boundaries(IPV4_TABLE) + random_addresses(IPV4_TABLE, RANDOM, "uint64")
    want = table.values[table.lookup_batch(addrs)]
    assert want.dtype == np.uint64
    assert_same(client.lookup(addrs), want, addrs)
    assert_same(client.lookup([]), table.values[table.lookup_batch([])], [])
    assert client.lookup("8.8.8.8") == table.lookup("8.8.8.8") == 15169


def test_a_mixed_list_keeps_its_order_in_every_form(both):
    server, table = both
    rng = random.Random("mixed")
    addrs = random_addresses(IPV4_TABLE, 3000, "m4") + random_addresses(IPV6_TABLE, 3000, "m6")
    addrs += ["::ffff:8.8.8.8", "::FFFF:1.0.4.1", " 8.8.4.4\r", "\t2a00:1148::1 ", "::", "0.0.0.0", "255.255.255.255"]
    rng.shuffle(addrs)
    want = table.values[table.lookup_batch(addrs)]
    client = fibkit.Client(server.url)
    assert_same(client.lookup(addrs), want, addrs)
    assert_same(client.lookup(tuple(addrs)), want, addrs)
    assert_same(client.lookup(np.array(addrs)), want, addrs)
    assert_same(client.lookup(np.array(addrs, dtype="S")), want, addrs)
    assert_same(client.lookup(addrs[:1]), want[:1], addrs)
    assert_same(client.lookup([]), table.values[table.lookup_batch([])], [])
    try:
        import pyarrow as pa
    except ImportError:
        return
    assert_same(client.lookup(pa.array(addrs)), want, addrs)


def test_one_address_answers_as_table_lookup(both):
    server, table = both
    client = fibkit.Client(server.url)
    rng = random.Random("single")
    addrs = rng.sample(boundaries(IPV4_TABLE), 100) + rng.sample(boundaries(IPV6_TABLE), 100)
    addrs += ["8.8.8.8", "::ffff:8.8.8.8", " 2a00:1148::1\n", "192.0.2.1", "2001:db8::1", np.str_("8.8.4.4")]
    answers = [client.lookup(addr) for addr in addrs]
    for addr, got in zip(addrs, answers):
        want = table.lookup(addr)
        assert (type(got), got) == (type(want), want), addr
    assert {type(answer) for answer in answers} == {int, str, type(None)}
    assert client.lookup("2a00:1148::1") == "2001:7f8:4::232a:1"


def test_the_modules_example_answers_as_written(both):
    """fibkit.client's docstring example (skipped by the doctests: no
    server there) against the server of both tables."""
    server, _ = both
    source = fibkit.client.__doc__.replace("http://127.0.0.1:8080", server.url).replace("# doctest: +SKIP", "")
    example = doctest.DocTestParser().get_doctest(source, {}, "fibkit.client", None, 0)
    assert len(example.examples) == 5
    report = []
    runner = doctest.DocTestRunner(optionflags=doctest.NORMALIZE_WHITESPACE)
    runner.run(example, out=report.append)
    assert runner.failures == 0, "".join(report)


def test_a_lookup_whose_connection_changes_midway_starts_again(both, monkeypatch):
    """The next hops and the values lists of one lookup come over one
    connection (a new one may reach a restarted server): a connection
    opened again between two of its requests starts the lookup again,
    values lists fetched anew."""
    server, table = both
    client = fibkit.Client(server.url)
    addrs = ["8.8.8.8", "2a00:1148::1", "1.0.0.1", "192.0.2.1"]
    want = table.values[table.lookup_batch(addrs)]
    assert_same(client.lookup(addrs), want, addrs)
    asked, request = [], client._request

    def closing(method, path, body=None, generation=None):
        asked.append(path)
        if len(asked) == 2:  # the lookup's second request
            client._close()
        return request(method, path, body, generation)

    monkeypatch.setattr(client, "_request", closing)
    assert_same(client.lookup(addrs), want, addrs)
    assert asked == ["/lookup/ipv4", "/lookup/ipv6"] * 2 + ["/values/ipv4", "/values/ipv6"], asked


def test_a_client_and_its_errors_pickle(both):
    server, table = both
    client = pickle.loads(pickle.dumps(fibkit.Client(server.url, timeout=5.0, max_body_bytes=1 << 20)))
    assert (client.url, client._timeout, client._max_body) == (server.url, 5.0, 1 << 20)
    assert client.lookup("8.8.8.8") == 15169
    error = pickle.loads(pickle.dumps(fibkit.ServerError(server.url, "GET /x", 404, "GET /x: no such resource")))
    assert (error.status, error.message, error.request, str(error)) == (
        404, "GET /x: no such resource", "GET /x", f"fibkit serve at {server.url}: GET /x: 404 GET /x: no such resource"
    )


def test_a_malformed_address_raises_as_the_library_does(both):
    server, table = both
    client = fibkit.Client(server.url)
    for addrs in (["8.8.8.8", "2a00::1", "8.8.8.256"], ["2a00::1", "010.0.0.1"], ["1.2.3.4", "2a00:::1"], [""]):
        with pytest.raises(ValueError) as library:
            table.lookup_batch(addrs)
        with pytest.raises(ValueError) as ours:
            client.lookup(addrs)
        assert str(ours.value) == str(library.value)
        assert str(ours.value).startswith(f"addrs[{len(addrs) - 1}]: ")
    for addr in ("x", "8.8.8", "10.0.0.0/8", ""):
        with pytest.raises(ValueError) as library:
            table.lookup(addr)
        with pytest.raises(ValueError) as ours:
            client.lookup(addr)
        assert str(ours.value) == str(library.value)
    with pytest.raises(TypeError, match=r"addrs\[1\] is not a str"):
        client.lookup(["8.8.8.8", 1])


def test_an_error_answer_carries_the_servers_message(both):
    server, _ = both
    client = fibkit.Client(server.url + "/no/such/prefix")
    with pytest.raises(fibkit.ServerError) as error:
        client.lookup(["8.8.8.8"])
    assert error.value.status == 404
    assert "no such resource" in error.value.message and "/no/such/prefix/lookup/ipv4" in error.value.message
    assert server.url in str(error.value)


def test_large_batches_go_in_requests_within_max_body_bytes(serve):
    """A server taking bodies of 4 KiB at most: a client told so splits its
    batches; one that is not gets the server's refusal. The server closes
    an idle connection after 1 s: the client opens another."""
    server = serve(IPV4_TABLE, max_body_bytes=4096, header_timeout_seconds=1)
    table = fibkit.Table.load(IPV4_TABLE)
    addrs = random_addresses(IPV4_TABLE, 5000, "chunks")
    want = table.values[table.lookup_batch(addrs)]
    client = fibkit.Client(server.url, max_body_bytes=4096)
    assert_same(client.lookup(addrs), want, addrs)  # 5 requests
    connection = client._connection
    assert_same(client.lookup(addrs[:10]), want[:10], addrs)
    assert client._connection is connection, "the connection should be kept alive"
    time.sleep(1.5)  # the server closes it
    assert_same(client.lookup(addrs), want, addrs)
    assert client.lookup("8.8.8.8") == 15169
    with pytest.raises(fibkit.ServerError) as refused:
        fibkit.Client(server.url).lookup(addrs)
    assert refused.value.status == 413 and "max_body_bytes" in refused.value.message
    # A body far past the limit: the server answers 413 and closes the
    # connection while it is being sent.
    with pytest.raises((fibkit.ServerError, ConnectionError), match="max_body_bytes"):
        fibkit.Client(server.url).lookup(["8.8.8.8"] * 2_000_000)


def test_a_server_gone_raises_a_clear_error(serve):
    server = serve(IPV4_TABLE, header_timeout_seconds=2)
    client = fibkit.Client(server.url)
    assert client.lookup(["8.8.8.8"]).tolist() == [15169]
    server.stop()
    for addrs in (["8.8.8.8"], "8.8.8.8"):
        with pytest.raises(ConnectionError) as error:
            client.lookup(addrs)
        assert f"fibkit serve at {server.url}" in str(error.value) and "cannot connect" in str(error.value)
    with pytest.raises(ValueError, match="url must be"):
        fibkit.Client("127.0.0.1:8080")


def test_a_snapshot_opens_in_python_and_answers_as_the_table(tmp_path):
    """The compiled file `fibkit serve` writes opens with fibkit.open and
    answers every address, with its prefix, as the table file does."""
    server = Server(tmp_path, IPV4_TABLE, extra='[snapshot]\npath = "routes.fib"\nevery_seconds = 1')
    try:
        path = tmp_path / "routes.fib"
        start = time.monotonic()
        while not path.exists():
            assert time.monotonic() - start < 30, server.log.read_text()
            time.sleep(0.05)
        snapshot = fibkit.open(path)
        table = fibkit.Table.load(IPV4_TABLE, prefixes=True)
        addrs = boundaries(IPV4_TABLE) + random_addresses(IPV4_TABLE, 20_000, 3)
        got_hops, got_prefixes = snapshot.lookup_batch(addrs, prefixes=True)
        want_hops, want_prefixes = table.lookup_batch(addrs, prefixes=True)
        assert_same(snapshot.values[got_hops], table.values[want_hops], addrs)
        assert got_prefixes.tolist() == want_prefixes.tolist()
    finally:
        server.stop()
