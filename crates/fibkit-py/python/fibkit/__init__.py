"""fibkit: longest-prefix-match IP routing lookups over numpy arrays.

    >>> import numpy as np, fibkit
    >>> fib = fibkit.Fib([("10.0.0.0/8", 64500), ("10.1.0.0/16", 64501)], engine="d18r")
    >>> fib.lookup("10.1.2.3"), fib.lookup("11.0.0.0")    # one address: its route's value
    (64501, None)
    >>> hops = fib.lookup_batch(fibkit.ipv4_array(["10.1.2.3", "10.2.0.0", "11.0.0.0"]))
    >>> hops.tolist()                    # a batch: next-hop indexes; 0 where no route
    [2, 1, 0]
    >>> fib.values[hops].tolist()        # the routes' values; 0 where no route
    [64501, 64500, 0]

``Fib`` (IPv4) and ``Fib6`` (IPv6) compile a routing table with one of
fibkit's engines (``engines()``, ``engines6()``). ``lookup(addr)`` answers
one address with its route's value (None: no route) and ``next_hop(addr)``
with its next-hop index; ``lookup_batch`` answers a whole array with
next-hop indexes (``values[hops]`` maps them to the values), with the GIL
released, through the engine's batch path. With ``nexthops=N`` the values
are mapped onto next hops 1 to N, and ``lookup`` answers the next hop.
``Table`` holds both families and answers a column of address strings that
mixes them:

    >>> table = fibkit.Table.load("routes.txt")            # doctest: +SKIP
    >>> table.values[table.lookup_batch(["10.1.2.3", "2001:db8::1"])]  # doctest: +SKIP

``Client(url)`` asks a ``fibkit serve`` over HTTP and answers as ``Table``
does for the same table:

    >>> fibkit.Client("http://127.0.0.1:8080").lookup(["10.1.2.3", "2001:db8::1"])  # doctest: +SKIP
"""

import ipaddress
import os
import threading

import numpy as np

from ._fibkit import BgpSpeaker, Fib, Fib6, Table, __version__, engines, engines6, open, parse_addresses
from .client import Client, ServerError

__all__ = [
    "BgpSpeaker", "Client", "Fib", "Fib6", "ServerError", "Table", "enrich", "engines", "engines6", "ipv4_array",
    "ipv6_array", "open", "open_once", "parse_addresses", "__version__",
]

_opened = {}
_opened_lock = threading.Lock()
_opens = 0


def open_once(path):
    """The ``Table`` of the compiled FIB file ``path``, opened (mapped) the
    first time this process asks for it and kept for every later call; a
    file replaced since (another modification time or size) is opened
    again. For tasks that run many times in one worker process (Dask,
    Spark, Ray), so that each process maps the file once."""
    global _opens
    status = os.stat(path)
    key = (os.path.abspath(path), status.st_mtime_ns, status.st_size)
    with _opened_lock:
        table = _opened.get(key)
        if table is None:
            table = _opened[key] = open(path)
            _opens += 1
    return table


def _open_count():
    """How many files ``open_once`` has opened in this process (tests)."""
    return _opens


def ipv4_array(addrs):
    """A uint32 array of IPv4 addresses given as strings or ints.

    Strings (a list of ``str``; a numpy ``str`` or ``bytes`` array, with the
    GIL released; another sequence of ``str`` through ``numpy.asarray``) are
    parsed in Rust: dotted quads, and IPv4-mapped IPv6 (``::ffff:192.0.2.1``);
    spaces around an address are ignored, an octet with a leading zero is
    refused. A string that is not an IPv4 address is a ``ValueError`` naming
    its index.

    >>> ipv4_array(["192.0.2.1", " 10.0.0.1", "::ffff:1.2.3.4"]).tolist()
    [3221225985, 167772161, 16909060]
    """
    addrs = _sized(addrs)
    keys = _parsed(addrs, 4)
    if keys is not None:
        return keys
    _refuse_bools(addrs)
    return np.fromiter((int(ipaddress.IPv4Address(addr)) for addr in addrs), dtype=np.uint32)


def ipv6_array(addrs):
    """An (N, 16) uint8 array (network byte order) of IPv6 addresses given as strings or ints.

    Strings are parsed in Rust as for ``ipv4_array``.

    >>> ipv6_array(["2001:db8::1"])[0, :4].tolist()
    [32, 1, 13, 184]
    """
    addrs = _sized(addrs)
    keys = _parsed(addrs, 6)
    if keys is not None:
        return keys
    _refuse_bools(addrs)
    packed = b"".join(ipaddress.IPv6Address(addr).packed for addr in addrs)
    return np.frombuffer(packed, dtype=np.uint8).reshape(-1, 16).copy()


def enrich(frame, column, table, value="value", prefix=None, fields=None):
    """A copy of the pandas DataFrame ``frame`` with the route of each
    address of ``column`` (strings of either family) added: its value as
    column ``value`` (a nullable integer column; or, where some values are
    addresses, objects: ints and address strings; missing where no route),
    and with ``prefix`` (a ``Table`` loaded with ``prefixes=True``) the
    matched prefix as column ``prefix``. With ``fields`` (a table of
    records: their names, or True for all), a column per field in place of
    ``value``, Arrow-backed (``pd.ArrowDtype``: the batch's arrays, not
    copied)."""
    import pandas as pd

    if fields is not None:
        batch = table.lookup_batch(frame[column], fields=fields)
        enriched = frame.copy()
        for name, array in zip(batch.schema.names, batch.columns):
            enriched[name] = pd.Series(array, index=frame.index, dtype=pd.ArrowDtype(array.type))
        if prefix is not None:
            enriched[prefix] = table.lookup_batch(frame[column], prefixes=True)[1]
        return enriched

    answers = table.lookup_batch(frame[column], prefixes=prefix is not None)
    hops, matched = answers if prefix is not None else (answers, None)
    values = table.values[hops]
    missing = hops == 0
    enriched = frame.copy()
    if values.dtype == np.uint64:
        enriched[value] = pd.arrays.IntegerArray(values, mask=missing)
    else:  # some values are addresses: each as the table wrote it
        distinct, where = np.unique(hops, return_inverse=True)
        labels = np.empty(len(distinct), dtype=object)
        labels[:] = [table.value(hop) for hop in distinct.tolist()]
        enriched[value] = labels[where.reshape(-1)]
    if prefix is not None:
        enriched[prefix] = matched
    return enriched


def _refuse_bools(addrs):
    """A TypeError naming the first bool among ``addrs`` (an int to
    ``ipaddress``: True would be 0.0.0.1)."""
    for index, addr in enumerate(addrs):
        if isinstance(addr, (bool, np.bool_)):
            raise TypeError(f"addrs[{index}]: an address is an int or a string, got bool")


def _sized(addrs):
    """``addrs`` itself if it has a length, else its elements in a list."""
    return addrs if hasattr(addrs, "__len__") else list(addrs)


def _parsed(addrs, family):
    """The keys of ``addrs`` parsed in Rust when they are all strings, or
    None (ints among them: the per-element path). numpy turns ints mixed
    with strings into strings, so a failure on a container other than a
    list or an array takes the per-element path if not all are strings."""
    text = _text(addrs)
    if text is None:
        return None
    try:
        return parse_addresses(text, family)
    except TypeError:
        return None  # a list with items other than str
    except ValueError:
        if not isinstance(text, np.ndarray) or isinstance(addrs, np.ndarray) or _all_strings(addrs):
            raise
        return None  # numpy made strings of the ints among them


def _all_strings(addrs):
    return all(isinstance(addr, str) for addr in addrs)


def _arrow_buffers(addrs):
    """A pyarrow string array's (int64 offsets, uint8 data), or None for
    another Arrow type; a null is a ValueError naming its index."""
    import pyarrow as pa

    if isinstance(addrs, pa.ChunkedArray):
        addrs = addrs.combine_chunks()
    if not isinstance(addrs, pa.Array) or not (pa.types.is_string(addrs.type) or pa.types.is_large_string(addrs.type)):
        return None
    if addrs.null_count:
        first = addrs.is_null().to_numpy(zero_copy_only=False).argmax()
        raise ValueError(f"addrs[{first}]: null (no address)")
    _, offsets, data = addrs.buffers()
    width = np.int32 if pa.types.is_string(addrs.type) else np.int64
    offsets = np.frombuffer(offsets, dtype=width)[addrs.offset : addrs.offset + len(addrs) + 1].astype(np.int64)
    data = np.frombuffer(data, dtype=np.uint8) if data is not None else np.zeros(0, dtype=np.uint8)
    return offsets, data


def _text(addrs):
    """Address strings as ``parse_addresses`` and ``Table.lookup_batch``
    take them: a list as it is, a pyarrow string array (or a pandas string
    Series or array) as its (offsets, data) buffers (no copy of the data for
    an Arrow-backed one), a numpy ``str`` or ``bytes`` array
    (or another sequence of ``str``) as an (N, W) array of its characters
    (uint32 code points or uint8 bytes), or None for anything else."""
    if isinstance(addrs, list):
        return addrs
    if type(addrs).__module__.startswith("pyarrow"):
        buffers = _arrow_buffers(addrs)
        if buffers is not None:
            return buffers
    # A pandas Series or array of strings backed by Arrow (pandas' default
    # string dtype, and what Dask reads from Parquet): its Arrow array, in
    # place; a Python-backed one is converted by pandas in C.
    to_arrow = getattr(getattr(addrs, "array", addrs), "__arrow_array__", None)
    if to_arrow is not None:
        buffers = _arrow_buffers(to_arrow())
        if buffers is not None:
            return buffers
    array = np.asarray(addrs)
    if array.dtype.kind == "O" and _all_strings(array.ravel()):
        # As a list: numpy's str would drop a trailing NUL (its padding),
        # and the text with it would pass for the text without.
        return array.ravel().tolist()
    if array.dtype.kind not in "US":
        return None
    array = np.ascontiguousarray(array.reshape(-1))
    if array.dtype.byteorder == ">":
        array = array.astype(array.dtype.newbyteorder("<"))
    unit = np.uint32 if array.dtype.kind == "U" else np.uint8
    width = max(array.dtype.itemsize // np.dtype(unit).itemsize, 1)
    if not array.dtype.itemsize:
        return np.zeros((len(array), 1), unit)
    return array.view(unit).reshape(len(array), width)
