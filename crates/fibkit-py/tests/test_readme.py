"""The Python examples of the README and of every page in docs/ run as
written (after `make python`): the README's first, then the pages' in name
order, all in one folder that holds a link to the repository's data/ (the
small tables that ship with it)."""

import contextlib
import importlib.util
import io
import shutil
import pathlib
import re

import numpy as np

import fibkit
from test_client import Server, find_binary

REPOSITORY = pathlib.Path(__file__).resolve().parents[3]
README = REPOSITORY / "README.md"


def pages():
    """The README, then every docs/*.md in name order."""
    return [README] + sorted((REPOSITORY / "docs").glob("*.md"))


def python_blocks():
    """Every ```python block of every page, as (page, block)."""
    return [
        (page, block)
        for page in pages()
        for block in re.findall(r"```python\n(.*?)```", page.read_text(encoding="utf-8"), re.S)
    ]


def missing_modules(block):
    """The top-level modules ``block`` imports that are not installed (and
    Java, for Spark)."""
    imported = re.findall(r"^(?:import|from) ([\w.]+(?:, [\w.]+)*)", block, re.M)
    names = {name.split(".")[0] for line in imported for name in line.split(", ")}
    missing = sorted(name for name in names if importlib.util.find_spec(name) is None)
    if "pyspark" in names and "pyspark" not in missing and shutil.which("java") is None:
        missing.append("pyspark")
    return missing


def run_block(page, block, directory, monkeypatch):
    """Runs ``block`` of ``page`` as a script (``__name__ == "__main__"``)
    in ``directory``; returns its namespace and what it printed."""
    monkeypatch.chdir(directory)
    namespace = {"__name__": "__main__"}
    printed = io.StringIO()
    with contextlib.redirect_stdout(printed):
        exec(compile(block, str(page), "exec"), namespace)
    return namespace, printed.getvalue()


def test_the_readme_python_examples_run_as_written(tmp_path, monkeypatch):
    blocks = python_blocks()
    assert len(blocks) >= 6, "the README's and docs/' Python examples"
    assert any(page == README for page, _ in blocks), "the README's own Python example"
    (tmp_path / "data").symlink_to(REPOSITORY / "data")
    skipped = []
    for index, (page, block) in enumerate(blocks):
        missing = missing_modules(block)
        if missing:  # Ray and Spark are not in the test virtualenv
            skipped.append((index, missing))
            continue
        if "fibkit.Client(" in block:
            # Asks the `fibkit serve` of the page's configuration (the
            # shipped IPv4 table), on a free port.
            if find_binary() is None:
                skipped.append((index, ["fibkit serve"]))
                continue
            server = Server(tmp_path / "serve", REPOSITORY / "data" / "routeviews-2014-05-13-cut.ipasn")
            try:
                block = block.replace("http://127.0.0.1:8080", server.url)
                namespace, printed = run_block(page, block, tmp_path, monkeypatch)
            finally:
                server.stop()
            assert namespace["asns"].dtype == np.uint64
            assert printed == "15169 [15169, 15169, 0, 0]\n"
            continue
        namespace, printed = run_block(page, block, tmp_path, monkeypatch)
        if "data/routeviews-2014-05-13-cut.ipasn" in block:
            # The shipped table: 8.8.8.8 and 1.1.1.1 in Google's /24s, 10.0.0.1 no route.
            assert namespace["table"].values[namespace["hops"]].tolist() == [15169, 15169, 0]
            assert printed.splitlines()[0] == "15169 None"
        if "fib6 = " in block:
            # The IPv6 example answers its /32 and its /48.
            assert printed.splitlines()[-1] == "[1 2]"
            fib, keys, hops = namespace["fib"], namespace["keys"], namespace["hops"]
            assert np.array_equal(hops[:1000], [fib.next_hop(int(key)) for key in keys[:1000]])
        if "pickle_path=True" in block:
            assert printed.splitlines()[-1].endswith("True")
            assert namespace["shipped"].lookup_batch(["8.8.8.8"]).tolist() == namespace["table"].lookup_batch(["8.8.8.8"]).tolist()
        if "fibkit.dask" in block:
            assert "asn" in printed and len(namespace["enriched"]) == 3000
        if "ray.put" in block:  # the default table has no IPv6 route
            assert printed.split()[-1] == "None]"
        if "table.covering(" in block:
            # The routes covering three addresses and inside 10.0.0.0/8, as its comments show.
            assert printed.splitlines() == [
                "[{'prefix': '10.0.0.0/8', 'prefix_len': 8, 'next_hop': 1}]",
                "[3, 1, 0]",
                "[64500 64501 64502 64500]",
                "['10.0.0.0/8', '10.1.0.0/16', '10.1.2.0/24']",
            ]
        if "mapInArrow" in block:
            assert "|2001:db8::1|NULL|" in printed
        if "fibkit.dask.enrich_parquet" in block:  # 3 files of 1,000 rows: half of them routed
            assert printed.startswith("3000 ") and namespace["enriched"]["org"].count() == 1500
        if "fibkit.spark.enrich" in block:
            assert printed == "500 rows with a route\n"
    skipped = [(index, missing) for index, missing in skipped if missing != ["fibkit serve"]]
    assert all(missing in (["ray"], ["pyspark"]) for _, missing in skipped), skipped


def test_the_default_table_is_the_commands_default():
    fib = fibkit.Fib.default(engine="d16r", nexthops=239)
    assert fib.prefixes == 1_000_000
    assert len(fib.values) == 240  # index 0 (no route), then 239 next hops
    # Deterministic: built twice, it answers alike.
    again = fibkit.Fib.default(engine="radix", nexthops=239)
    keys = np.random.default_rng(3).integers(0, 2**32, 100_000, dtype=np.uint32)
    assert np.array_equal(fib.lookup_batch(keys), again.lookup_batch(keys))
    assert (fib.lookup_batch(keys) > 0).mean() > 0.5
