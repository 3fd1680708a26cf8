"""fibkit: longest-prefix-match IP routing lookups over numpy arrays.

    >>> import numpy as np, fibkit
    >>> fib = fibkit.Fib([("10.0.0.0/8", 64500), ("10.1.0.0/16", 64501)], engine="d18r")
    >>> hops = fib.lookup_batch(fibkit.ipv4_array(["10.1.2.3", "10.2.0.0", "11.0.0.0"]))
    >>> fib.values[hops].tolist()        # the routes' values; 0 where no route
    [64501, 64500, 0]

``Fib`` (IPv4) and ``Fib6`` (IPv6) compile a routing table with one of
fibkit's engines (``engines()``, ``engines6()``); ``lookup_batch`` answers a
whole array with the GIL released, through the engine's batch path.
"""

import ipaddress

import numpy as np

from ._fibkit import Fib, Fib6, __version__, engines, engines6

__all__ = ["Fib", "Fib6", "engines", "engines6", "ipv4_array", "ipv6_array", "__version__"]


def ipv4_array(addrs):
    """A uint32 array of IPv4 addresses given as strings or ints."""
    return np.fromiter((int(ipaddress.IPv4Address(addr)) for addr in addrs), dtype=np.uint32)


def ipv6_array(addrs):
    """An (N, 16) uint8 array (network byte order) of IPv6 addresses given as strings or ints."""
    packed = b"".join(ipaddress.IPv6Address(addr).packed for addr in addrs)
    return np.frombuffer(packed, dtype=np.uint8).reshape(-1, 16).copy()
