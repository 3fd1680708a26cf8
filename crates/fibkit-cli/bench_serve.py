"""`fibkit serve`'s figures, in one sitting: binary batch lookups, single
address requests beside a minimal HTTP server answering a constant (the
ceiling), and the time to write and open a snapshot.

    python bench_serve.py FIBKIT CONSTANT_HTTP [TABLE] [--seconds 5] [--runs 3]

FIBKIT is the built binary (target/release/fibkit), CONSTANT_HTTP the
example `constant_http` (target/release/examples/constant_http), TABLE a
table file (default routeviews-2014-05-13.ipasn.gz of the data folder,
$FIBKIT_DATA, else ../shared/data beside the repository). Needs wrk
(apt-get install wrk). The server and its clients share the machine's
cores: the figures are what one machine does as server and client both.

- binary: `--clients` threads each POST batches of `--batch` random IPv4
  keys (4 bytes each) to /lookup/ipv4 on a kept-alive connection for
  `--seconds`; addresses answered a second.
- single: wrk (`--connections` connections, two threads) GETs
  /lookup/ADDRESS with a random address each, for `--seconds`, against
  fibkit serve and against constant_http; requests a second.
- snapshot: fibkit serve writes the table as a compiled file (its metric
  `fibkit_snapshot_last_duration_microseconds`: build and write), then
  `fibkit.open`-like mapping through `fibkit lookup FILE 8.8.8.8` is timed
  (the whole command) beside `fibkit lookup TABLE 8.8.8.8` (load and build).

Each figure is the median of --runs with the range, the runs interleaved.
"""

import argparse
import http.client
import os
import re
import signal
import socket
import statistics
import subprocess
import tempfile
import threading
import time
from pathlib import Path

import numpy as np

DATA = Path(__file__).resolve().parents[2] / (os.environ.get("FIBKIT_DATA") or "../shared/data")
DEFAULT_TABLE = DATA / "routeviews-2014-05-13.ipasn.gz"

WRK_SCRIPT = """
math.randomseed(7)
request = function()
  local path = "/lookup/" .. math.random(1, 223) .. "." .. math.random(0, 255) .. "." ..
    math.random(0, 255) .. "." .. math.random(0, 255)
  return wrk.format("GET", path)
end
"""


def free_port():
    with socket.socket() as probe:
        probe.bind(("127.0.0.1", 0))
        return probe.getsockname()[1]


def start_serve(fibkit, folder, table, port, snapshot=False):
    config = folder / f"serve-{port}.toml"
    text = f'[http]\nlisten = ["127.0.0.1:{port}"]\nmax_connections = 4096\n[table]\npath = "{table}"\n'
    if snapshot:
        text += '[snapshot]\npath = "snapshot.fib"\nevery_seconds = 3600\n'
    config.write_text(text)
    log = open(folder / f"serve-{port}.log", "w")
    server = subprocess.Popen([fibkit, "serve", str(config)], stderr=log)
    wait_for_port(port)
    return server


def wait_for_port(port, limit=300):
    start = time.time()
    while time.time() - start < limit:
        try:
            socket.create_connection(("127.0.0.1", port), timeout=1).close()
            return
        except OSError:
            time.sleep(0.05)
    raise RuntimeError(f"nothing listens on port {port}")


def binary_rate(port, seconds, clients, batch):
    """Addresses a second through POST /lookup/ipv4, `clients` threads."""
    rng = np.random.default_rng(1)
    body = rng.integers(0, 2**32, batch, dtype=np.uint32).astype(">u4").tobytes()
    counts = [0] * clients
    deadline = time.perf_counter() + seconds

    def client(index):
        connection = http.client.HTTPConnection("127.0.0.1", port)
        headers = {"Content-Type": "application/octet-stream"}
        while time.perf_counter() < deadline:
            connection.request("POST", "/lookup/ipv4", body, headers)
            answer = connection.getresponse().read()
            assert len(answer) == 4 * batch, len(answer)
            counts[index] += batch
        connection.close()

    started = time.perf_counter()
    threads = [threading.Thread(target=client, args=(index,)) for index in range(clients)]
    for thread in threads:
        thread.start()
    for thread in threads:
        thread.join()
    return sum(counts) / (time.perf_counter() - started)


def wrk_rate(port, seconds, connections, script):
    """Requests a second wrk measures; also checks none failed."""
    out = subprocess.run(
        ["wrk", "-t2", f"-c{connections}", f"-d{max(1, round(seconds))}s", "-s", str(script), f"http://127.0.0.1:{port}/lookup/8.8.8.8"],
        capture_output=True,
        text=True,
        check=True,
    ).stdout
    errors = re.search(r"Non-2xx or 3xx responses: (\d+)", out)
    if errors:
        raise RuntimeError(f"wrk got {errors.group(1)} errors:\n{out}")
    return float(re.search(r"Requests/sec:\s+([\d.]+)", out).group(1))


def timed(command):
    started = time.perf_counter()
    subprocess.run(command, check=True, capture_output=True)
    return time.perf_counter() - started


def spread(values, unit, scale=1.0):
    values = [value / scale for value in values]
    return f"{statistics.median(values):,.3f} {unit} ({min(values):,.3f} to {max(values):,.3f})"


def main():
    parser = argparse.ArgumentParser(description=__doc__.split("\n")[0])
    parser.add_argument("fibkit")
    parser.add_argument("constant_http")
    parser.add_argument("table", nargs="?", default=str(DEFAULT_TABLE))
    parser.add_argument("--seconds", type=float, default=5)
    parser.add_argument("--runs", type=int, default=3)
    parser.add_argument("--clients", type=int, default=2)
    parser.add_argument("--batch", type=int, default=1 << 20)
    parser.add_argument("--connections", type=int, default=32)
    args = parser.parse_args()
    table = Path(args.table).resolve()
    with tempfile.TemporaryDirectory() as scratch:
        folder = Path(scratch)
        script = folder / "random.lua"
        script.write_text(WRK_SCRIPT)
        serve_port, constant_port = free_port(), free_port()
        server = start_serve(args.fibkit, folder, table, serve_port, snapshot=True)
        constant = subprocess.Popen([args.constant_http, f"127.0.0.1:{constant_port}"], stderr=subprocess.DEVNULL)
        wait_for_port(constant_port)
        binary, single, ceiling = [], [], []
        try:
            for _ in range(args.runs):
                binary.append(binary_rate(serve_port, args.seconds, args.clients, args.batch))
                single.append(wrk_rate(serve_port, args.seconds, args.connections, script))
                ceiling.append(wrk_rate(constant_port, args.seconds, args.connections, script))
            metrics = http.client.HTTPConnection("127.0.0.1", serve_port)
            metrics.request("GET", "/metrics")
            text = metrics.getresponse().read().decode()
            written = int(re.search(r"fibkit_snapshot_last_duration_microseconds (\d+)", text).group(1))
        finally:
            server.send_signal(signal.SIGTERM)
            constant.kill()
            server.wait()
            constant.wait()
        snapshot = folder / "snapshot.fib"
        opens = [timed([args.fibkit, "lookup", str(snapshot), "8.8.8.8"]) for _ in range(args.runs)]
        builds = [timed([args.fibkit, "lookup", str(table), "8.8.8.8"]) for _ in range(args.runs)]
    print(f"table: {table.name}; {args.runs} runs of {args.seconds} s each, interleaved")
    print(f"binary batches ({args.clients} clients, {args.batch:,} keys a request): {spread(binary, 'M addresses/s', 1e6)}")
    print(f"single addresses (wrk, {args.connections} connections): {spread(single, 'K requests/s', 1e3)}")
    print(f"  constant answers, same stack (the ceiling): {spread(ceiling, 'K requests/s', 1e3)}")
    ratios = [served / top for served, top in zip(single, ceiling)]
    print(f"  ratio to the ceiling: {statistics.median(ratios):.2f} ({min(ratios):.2f} to {max(ratios):.2f})")
    print(f"snapshot: built and written in {written / 1e6:.2f} s ({snapshot.name} of {table.name})")
    print(f"  fibkit lookup SNAPSHOT 8.8.8.8 (open, whole command): {spread(opens, 's')}")
    print(f"  fibkit lookup TABLE 8.8.8.8 (load and build, whole command): {spread(builds, 's')}")


if __name__ == "__main__":
    main()
