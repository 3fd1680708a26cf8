"""A small table of records and Parquet files of flows to enrich with it,
shared by the Parquet pipelines' tests (test_parquet.py, test_spark.py),
and the expected answer of every row from ``Table.lookup``, one address
at a time."""

import ipaddress
import random

import numpy as np

import fibkit
from test_fibkit import random_routes

FIELDS = "asn:int,org:text,share:float,path:ints"


def records_table(directory):
    """A table of records with prefixes, both families, no route shorter
    than /4 (some addresses have none), some fields missing; saved compiled as
    ``directory/routes.fib``. Answers (its path, the loaded table)."""
    rng = random.Random(11)
    routes = [route for route in random_routes(rng, 32, 600) + random_routes(rng, 128, 300)
              if int(route[0].split("/")[1]) >= 4]  # no default route, nor one covering half the addresses
    lines = ["prefix,asn,org,share,path"]
    for index, (prefix, value) in enumerate(routes):
        org = "" if index % 7 == 0 else f'"AS{value}, Org {index}"'
        share = "" if index % 5 == 0 else f"{value / 8}"
        path = "" if index % 3 == 0 else " ".join(str(64500 + (index + hop) % 50) for hop in range(index % 4 + 1))
        lines.append(f"{prefix},{64500 + value},{org},{share},{path}")
    (directory / "routes.csv").write_text("\n".join(lines) + "\n")
    table = fibkit.Table.load(directory / "routes.csv", fields=FIELDS, prefixes=True)
    table.save(directory / "routes.fib")
    return directory / "routes.fib", table


def addresses(table_rng, rows):
    """``rows`` address strings, IPv4 and IPv6, many inside the table's
    routes (near its anchors), some outside, and None (no address)."""
    rng = np.random.default_rng(table_rng)
    v4 = [str(ipaddress.IPv4Address(int(key))) for key in rng.integers(0, 2**32, rows - rows // 4)]
    v6 = [str(ipaddress.IPv6Address(int(high) << 64 | int(low))) for high, low in
          zip(rng.integers(0, 2**63, rows // 4), rng.integers(0, 2**63, rows // 4))]
    mixed = np.array(v4 + v6, dtype=object)
    rng.shuffle(mixed)
    mixed[rng.random(rows) < 0.02] = None
    return mixed


def write_flows(directory, files, rows, seed=5):
    """``files`` Parquet files of ``rows`` rows each (columns ``src``,
    ``bytes``; four row groups a file) in ``directory``."""
    import pyarrow as pa
    import pyarrow.parquet as pq

    directory.mkdir(parents=True, exist_ok=True)
    for number in range(files):
        src = addresses(seed + number, rows)
        data = pa.table({"src": pa.array(src.tolist(), pa.string()), "bytes": pa.array(np.arange(rows) % 1500)})
        pq.write_table(data, directory / f"part-{number}.parquet", row_group_size=max(rows // 4, 1))
    return directory


def expected_rows(table, src, fields):
    """Each address's record (the named ``fields``) and matched prefix as
    ``Table.lookup`` and a one-address ``lookup_batch`` answer them; None
    everywhere for no address or no route."""
    rows = []
    for address in src:
        record = table.lookup(address) if address is not None else None
        answer = {field: (record or {}).get(field) for field in fields}
        answer["route"] = table.lookup_batch([address], prefixes=True)[1][0] if address is not None else None
        rows.append(answer)
    return rows


def assert_rows_match(result, table, fields):
    """Every row of the pyarrow Table ``result`` has the fields and prefix
    the table answers for its ``src``; some rows routed, some not."""
    src = result.column("src").to_pylist()
    got = result.select(list(fields) + ["route"]).to_pylist()
    expected = expected_rows(table, src, fields)
    for index, (row, want) in enumerate(zip(got, expected)):
        assert row == want, (index, src[index], row, want)
    routed = sum(row["route"] is not None for row in expected)
    assert 0 < routed < len(expected) - src.count(None), routed
    assert src.count(None) > 0
