"""The README's Python example runs as written (after `make python`)."""

import contextlib
import io
import pathlib
import re

import numpy as np

import fibkit

README = pathlib.Path(__file__).resolve().parents[3] / "README.md"


def python_blocks():
    return re.findall(r"```python\n(.*?)```", README.read_text(encoding="utf-8"), re.S)


def test_the_readme_python_example_runs_as_written():
    blocks = python_blocks()
    assert blocks, "the README has a Python example"
    for block in blocks:
        namespace = {}
        printed = io.StringIO()
        with contextlib.redirect_stdout(printed):
            exec(compile(block, str(README), "exec"), namespace)
        # The IPv6 example answers its /32 and its /48.
        assert printed.getvalue().splitlines()[-1] == "[1 2]"
        fib, keys, hops = namespace["fib"], namespace["keys"], namespace["hops"]
        assert np.array_equal(hops[:1000], [fib.lookup(int(key)) for key in keys[:1000]])


def test_the_default_table_is_the_commands_default():
    fib = fibkit.Fib.default(engine="d16r", nexthops=239)
    assert fib.prefixes == 1_000_000
    assert len(fib.values) == 240  # index 0 (no route), then 239 next hops
    # Deterministic: built twice, it answers alike.
    again = fibkit.Fib.default(engine="radix", nexthops=239)
    keys = np.random.default_rng(3).integers(0, 2**32, 100_000, dtype=np.uint32)
    assert np.array_equal(fib.lookup_batch(keys), again.lookup_batch(keys))
    assert (fib.lookup_batch(keys) > 0).mean() > 0.5
