"""Type stubs of the fibkit package (the native part is fibkit._fibkit)."""

from os import PathLike
from typing import Any, Iterable, Optional, Sequence, Union

import numpy as np
import numpy.typing as npt

__version__: str
__all__: list[str]

Value = Union[int, str]
"""A route's value: an int (an ASN) or a string as table files write one."""

Address = Union[int, str]
"""One address: an int, or a string in the family's notation."""

Nexthops = Optional[int]
"""Map values onto N next hops as ``value % N + 1`` (1 to 2**32-1), or None."""

class _Compiled:
    """What ``Fib`` and ``Fib6`` share: the values and the engine's figures."""

    def value(self, index: int) -> Optional[Value]:
        """The route value next-hop index ``index`` stands for, or None for 0 (and with ``nexthops``)."""
    @property
    def values(self) -> npt.NDArray[Any]:
        """``values[hops]`` maps a batch's next-hop indexes to the routes' values as numbers (uint64, or object
        ints; 0: no route; with ``nexthops``, the index itself)."""
    @property
    def engine(self) -> str:
        """The engine's registry name."""
    @property
    def footprint(self) -> int:
        """Bytes a lookup can touch."""
    @property
    def prefixes(self) -> int:
        """Prefixes the table holds (of the FIB's family)."""
    @property
    def build_ms(self) -> float:
        """Build time in milliseconds."""
    def stats(self) -> dict[str, Union[int, float, str]]:
        """The engine's figures (as ``fibkit stat --json``)."""
    def report(self) -> str:
        """The engine's report (as ``fibkit stat``)."""
    def save(self, path: Union[str, PathLike[str]]) -> None:
        """Writes the FIB and its values to ``path`` as a compiled FIB file."""

class Fib(_Compiled):
    """An IPv4 forwarding table compiled by one of fibkit's engines.

    ``lookup(addr)`` answers one address with its route's value (None: no route); ``next_hop(addr)`` and
    ``lookup_batch(addrs)`` answer next-hop indexes (0: no route), which ``values[hops]`` maps to the values.
    With ``engine="auto"``, ``calibrate`` (a sample of the addresses to be looked up, as an array
    ``lookup_batch`` takes or a list of strings) gives the keys it measures on, else uniform random keys.
    """

    def __init__(
        self,
        routes: Iterable[tuple[str, Value]],
        engine: str = "d18r",
        nexthops: Nexthops = None,
        calibrate: Union[Sequence[str], npt.NDArray[Any], None] = None,
    ) -> None: ...
    @staticmethod
    def load(
        path: Union[str, PathLike[str]],
        engine: str = "d18r",
        nexthops: Nexthops = None,
        strict: bool = False,
        calibrate: Union[Sequence[str], npt.NDArray[Any], None] = None,
    ) -> "Fib":
        """Builds from a table file (ipasn, PREFIX VALUE text, range CSV, MRT; gz or bz2), its IPv4 routes."""
    @staticmethod
    def default(
        engine: str = "d18r",
        nexthops: Nexthops = None,
        calibrate: Union[Sequence[str], npt.NDArray[Any], None] = None,
    ) -> "Fib":
        """Builds from the embedded default table (synthetic, one million IPv4 prefixes)."""
    @staticmethod
    def open(path: Union[str, PathLike[str]], pickle_path: bool = False) -> "Fib":
        """Maps a compiled FIB file, its IPv4 FIB (with ``pickle_path``, pickles hold the path)."""
    def lookup(self, addr: Address) -> Optional[Value]:
        """The value of the route matching ``addr``; None: no route.

        With ``nexthops=N``, the route's next hop (1 to N), which its value was mapped onto.
        """
    def next_hop(self, addr: Address) -> int:
        """The next-hop index of ``addr`` (as ``lookup_batch`` answers it); 0: no route."""
    def lookup_batch(
        self,
        addrs: npt.NDArray[np.uint32],
        out: Optional[npt.NDArray[np.uint32]] = None,
        threads: Optional[int] = None,
    ) -> npt.NDArray[np.uint32]:
        """Next-hop indexes, not values (0: no route), of a uint32 array of addresses, the GIL released.

        ``values[hops]`` maps them to the routes' values.
        """

class Fib6(_Compiled):
    """An IPv6 forwarding table compiled by one of fibkit's engines (lookups answer as ``Fib``'s)."""

    def __init__(
        self,
        routes: Iterable[tuple[str, Value]],
        engine: str = "poptrie18",
        nexthops: Nexthops = None,
        calibrate: Union[Sequence[str], npt.NDArray[Any], None] = None,
    ) -> None: ...
    @staticmethod
    def load(
        path: Union[str, PathLike[str]],
        engine: str = "poptrie18",
        nexthops: Nexthops = None,
        strict: bool = False,
        calibrate: Union[Sequence[str], npt.NDArray[Any], None] = None,
    ) -> "Fib6":
        """Builds from a table file, its IPv6 routes."""
    @staticmethod
    def open(path: Union[str, PathLike[str]], pickle_path: bool = False) -> "Fib6":
        """Maps a compiled FIB file, its IPv6 FIB (with ``pickle_path``, pickles hold the path)."""
    def lookup(self, addr: Address) -> Optional[Value]:
        """The value of the route matching ``addr``; None: no route.

        With ``nexthops=N``, the route's next hop (1 to N), which its value was mapped onto.
        """
    def next_hop(self, addr: Address) -> int:
        """The next-hop index of ``addr`` (as ``lookup_batch`` answers it); 0: no route."""
    def lookup_batch(
        self,
        addrs: Union[npt.NDArray[np.uint8], npt.NDArray[np.uint64]],
        out: Optional[npt.NDArray[np.uint32]] = None,
        threads: Optional[int] = None,
    ) -> npt.NDArray[np.uint32]:
        """Next-hop indexes, not values (0: no route), of an (N, 16) uint8 array of addresses (network byte
        order) or an (N, 2) uint64 array (high and low 64 bits), the GIL released.

        ``values[hops]`` maps them to the routes' values.
        """

class BgpSpeaker:
    """A receive-only BGP speaker and the live FIBs (IPv4 and IPv6) it feeds: the best route per prefix of the
    neighbours' routes, looked up while the sessions run on threads of their own (docs/sources.md)."""

    def __init__(
        self,
        local_as: int,
        router_id: str,
        neighbors: Sequence[str],
        listen: Sequence[str] = ...,
        value: str = "next-hop",
        hold_time: int = 90,
        engine: Optional[str] = None,
        engine6: Optional[str] = None,
    ) -> None:
        """``neighbors``: ``"ADDRESS,as=ASN"`` (with ``,connect=PORT`` and ``,max-prefixes=N``); ``listen``:
        ``"ADDRESS:PORT"``s to accept them on; ``value``: ``"next-hop"`` or ``"origin-as"``."""
    def lookup(self, addr: Union[Address, Sequence[Address]]) -> Any:
        """The route value of an address (a string of either family, or an int: IPv4; an IPv4-mapped one,
        ``::ffff:a.b.c.d``, as IPv4), or a list of them for a list; None: no route."""
    @property
    def local_addresses(self) -> list[str]:
        """The ``"ADDRESS:PORT"``s connections are accepted on."""
    def neighbors(self) -> list[dict[str, Any]]:
        """Each neighbour's address, remote_as, state, prefixes, updates, sessions and last_error."""
    def stats(self) -> dict[str, int]:
        """routes4, routes6, updates_applied, updates_rejected, batches."""
    def journal(self) -> list[str]:
        """The sessions' log, oldest line first (each names its neighbour)."""
    def stop(self) -> None:
        """Ends every session (a Cease, Administrative Shutdown) and the speaker; stopping twice is allowed."""
    def __enter__(self) -> "BgpSpeaker": ...
    def __exit__(self, *exc: object) -> bool: ...

class Table:
    """A routing table of both families, for columns that mix IPv4 and IPv6 addresses."""

    @staticmethod
    def load(
        path: Union[str, PathLike[str]],
        engines: Optional[list[str]] = None,
        nexthops: Nexthops = None,
        strict: bool = False,
        prefixes: bool = False,
        fields: Optional[str] = None,
        calibrate: Union[Sequence[str], npt.NDArray[Any], None] = None,
    ) -> "Table":
        """Builds from a table file with routes of either family or both.

        With ``fields`` (``"asn,org:text"``), the routes' values are records of those fields: a text table's
        columns, a MaxMind DB file's paths or an MRT dump's attributes (docs/records.md). With ``calibrate``
        (addresses, as ``lookup_batch`` takes them), the engine ``"auto"`` measures its candidates on them.
        """
    @staticmethod
    def default(
        engines: Optional[list[str]] = None,
        nexthops: Nexthops = None,
        prefixes: bool = False,
        calibrate: Union[Sequence[str], npt.NDArray[Any], None] = None,
    ) -> "Table":
        """Builds from the embedded default table (synthetic, IPv4); ``calibrate`` as for ``load``."""
    def lookup(self, addr: str) -> Optional[Value]:
        """The value of the route matching ``addr`` (of either family); None: no route.

        With ``nexthops=N``, the route's next hop (1 to N), which its value was mapped onto.
        """
    def next_hop(self, addr: str) -> int:
        """The next-hop index of ``addr`` (of either family, as ``lookup_batch`` answers it); 0: no route."""
    def lookup_batch(
        self,
        addrs: Union[Sequence[str], npt.NDArray[Any]],
        prefixes: Union[bool, str, None] = None,
        fields: Union[bool, str, Sequence[str], None] = None,
    ) -> Union[
        npt.NDArray[np.uint32],
        tuple[npt.NDArray[np.uint32], npt.NDArray[np.object_]],
        tuple[npt.NDArray[np.uint32], npt.NDArray[np.uint8], npt.NDArray[np.int16]],
        Any,
    ]:
        """Next-hop indexes, not values (0: no route), of address strings of either family.

        With ``fields`` (a table of records: True, or field names), a ``pyarrow.RecordBatch`` of those fields,
        one row an address, nulls where no route.

        ``values[hops]`` maps them to the routes' values.

        With ``prefixes`` (True or ``"strings"``), also the matched prefixes (an object array, None where no
        route); with ``"arrays"``, the networks as an (N, 16) uint8 array (IPv4 ones mapped) and the lengths as
        int16 (-1 where no route).
        """
    @property
    def fields(self) -> Optional[list[tuple[str, str]]]:
        """The fields of a table of records, as ``(name, type)`` pairs; None for a table of values."""
    def covering(self, addrs: Union[Sequence[str], npt.NDArray[Any], Any]) -> Any:
        """Every route covering each address, least specific first (a table with prefixes).

        A ``pyarrow.ListArray``, a list per address (empty: no route), of structs ``prefix`` (string),
        ``prefix_len`` (uint8) and ``next_hop`` (uint32: ``values[next_hop]`` gives the value).
        """
    def within(self, prefixes: Union[str, Sequence[str]]) -> Any:
        """The routes inside a prefix, in address order (a table with prefixes).

        For one prefix string, a ``pyarrow.StructArray`` of ``prefix``, ``prefix_len`` and ``next_hop``; for a
        sequence of them, a ``pyarrow.ListArray`` of such structs, a list per prefix.
        """
    @property
    def values(self) -> npt.NDArray[Any]:
        """``values[hops]`` maps next-hop indexes to the routes' values."""
    def value(self, index: int) -> Optional[Value]:
        """The route value next-hop index ``index`` stands for, or None for 0 (and with ``nexthops``)."""
    @property
    def engines(self) -> tuple[Optional[str], Optional[str]]:
        """The engines answering IPv4 and IPv6 (None for a family without routes)."""
    def save(self, path: Union[str, PathLike[str]]) -> None:
        """Writes both families' FIBs and the values to ``path`` as a compiled FIB file."""

class Client:
    """Lookups answered by a ``fibkit serve`` over HTTP (``http.client``, one kept-alive connection), as ``Table``
    answers them for the same table.

    ``max_body_bytes``: the largest request body sent (within the server's ``[http] max_body_bytes``); larger
    batches go in several requests.
    """

    def __init__(self, url: str, timeout: Optional[float] = 30.0, max_body_bytes: int = 33554432) -> None: ...
    @property
    def url(self) -> str:
        """The server's URL, as given."""
    def lookup(self, addrs: Union[str, Sequence[str], npt.NDArray[Any], Any]) -> Any:
        """One address (a ``str``): its route's value (int or address string), None where no route, as
        ``Table.lookup``. Addresses in bulk: ``table.values[table.lookup_batch(addrs)]`` as the server's table
        gives it (uint64, 0 where no route; object ints if some value is an IPv6 address).

        ``ValueError`` names an element that is not an address; ``ServerError`` carries an error answer's message;
        ``ConnectionError``: the server cannot be reached.
        """
    def close(self) -> None:
        """Closes the connection (the next lookup opens another)."""
    def __enter__(self) -> "Client": ...
    def __exit__(self, *exc: object) -> bool: ...

class ServerError(Exception):
    """An error answer of ``fibkit serve``: its HTTP ``status``, the server's ``message``, the ``request``."""

    url: str
    status: int
    message: str
    request: str
    def __init__(self, url: str, request: str, status: int, message: str) -> None: ...

def enrich(
    frame: Any,
    column: str,
    table: Table,
    value: str = "value",
    prefix: Optional[str] = None,
    fields: Union[bool, str, Sequence[str], None] = None,
) -> Any:
    """A copy of the DataFrame with each address's route value (and matched prefix) added."""

def open(path: Union[str, PathLike[str]], pickle_path: bool = False) -> Table:
    """Maps a compiled FIB file as a ``Table`` of both families (with ``pickle_path``, pickles hold the path)."""

def open_once(path: Union[str, PathLike[str]]) -> Table:
    """``open(path)`` once per process (again if the file changed), for tasks that run many times in one worker."""

def engines() -> list[str]:
    """Names of the IPv4 engines."""

def engines6() -> list[str]:
    """Names of the IPv6 engines."""

def ipv4_array(addrs: Union[Sequence[Address], Iterable[Address], npt.NDArray[Any]]) -> npt.NDArray[np.uint32]:
    """A uint32 array of IPv4 addresses given as strings (parsed in Rust) or ints."""

def ipv6_array(addrs: Union[Sequence[Address], Iterable[Address], npt.NDArray[Any]]) -> npt.NDArray[np.uint8]:
    """An (N, 16) uint8 array (network byte order) of IPv6 addresses given as strings or ints."""

def parse_addresses(
    addrs: Union[list[str], npt.NDArray[np.uint32], npt.NDArray[np.uint8]], family: int
) -> npt.NDArray[Any]:
    """Address strings (a list of str, or NUL-padded rows of characters) as IPv4 (4) or IPv6 (6) keys."""
