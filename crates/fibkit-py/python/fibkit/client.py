"""``fibkit.Client``: lookups answered by a ``fibkit serve`` over HTTP, with
the answers ``fibkit.Table`` gives for the same table. With a server of the
repository's two cut tables (``data/``: IPv4 routes with their origin ASNs,
IPv6 routes with their next hops) in one ``PREFIX VALUE`` file:

    >>> import fibkit
    >>> client = fibkit.Client("http://127.0.0.1:8080")   # connects at its first lookup
    >>> client
    <fibkit.Client http://127.0.0.1:8080>
    >>> client.lookup("8.8.8.8"), client.lookup("2a00:1148::1"), client.lookup("192.0.2.1")  # doctest: +SKIP
    (15169, '2001:7f8:4::232a:1', None)
    >>> client.lookup(["8.8.8.8", "2a00:1148::1", "192.0.2.1"])  # doctest: +SKIP
    array([15169, 42540649787432207563077505772247711745, 0], dtype=object)

One address (a ``str``) is answered by ``GET /lookup/ADDRESS`` with its
route's value, as ``Table.lookup``. A batch (a list, a numpy or pyarrow
string array, a pandas column: what ``Table.lookup_batch`` takes) is parsed
in Rust as ``Table.lookup_batch`` parses it, split by family, and each
family sent as packed keys to ``POST /lookup/ipv4`` or ``/lookup/ipv6``
(in requests of at most ``max_body_bytes``); the next hops answered are
mapped through the server's ``/values/...`` lists, kept for as long as the
connection lasts and fetched again when an answer has a next hop beyond
them. The values come back as ``table.values[table.lookup_batch(addrs)]``
gives them: a uint64 array (a number is itself, an IPv4 address value its
integer, 0 where no route), or an object array of Python ints when some
value the server has is an IPv6 address.

Only the standard library speaks HTTP (``http.client``, one kept-alive
connection, opened again when the server closes it). An error answer
raises ``ServerError`` with the server's message; a server that cannot be
reached raises ``ConnectionError``; an element that is not an address
raises ``ValueError`` naming its index, before anything is sent.
"""

import http.client
import ipaddress
import json
import threading
import urllib.parse

import numpy as np

from ._fibkit import _split_addresses

__all__ = ["Client", "ServerError"]

# What a connection the server closed while it was idle gives on its next
# request: the request is sent again on a new connection.
_STALE = (ConnectionResetError, BrokenPipeError, ConnectionAbortedError, http.client.BadStatusLine)

# Key bytes of each family, and its binary endpoint and values list.
_WIDTH = {4: 4, 6: 16}
_FAMILY = {4: "ipv4", 6: "ipv6"}


class ServerError(Exception):
    """An error answer of ``fibkit serve``: ``status`` (the HTTP status),
    ``message`` (the server's ``{"error": ...}``) and ``request`` (the
    method and path asked)."""

    def __init__(self, url, request, status, message):
        super().__init__(f"fibkit serve at {url}: {request}: {status} {message}")
        self.url = url
        self.status = status
        self.message = message
        self.request = request

    def __reduce__(self):
        return (ServerError, (self.url, self.request, self.status, self.message))


class _Reconnected(Exception):
    """The connection was opened again between two requests of one lookup
    (the server may have restarted: its next hops may mean other values)."""


class Client:
    """Lookups answered by the ``fibkit serve`` at ``url``
    (``http://HOST:PORT``, ``https://`` too, with a path prefix if a proxy
    adds one), as ``fibkit.Table`` answers them; ``timeout`` in seconds for
    each request; ``max_body_bytes``, the largest request body sent (keep it
    within the server's ``[http] max_body_bytes``, 64 MiB by default).
    A client may be shared by threads (one request at a time); ``close()``
    or ``with`` closes its connection."""

    def __init__(self, url, timeout=30.0, max_body_bytes=32 << 20):
        parts = urllib.parse.urlsplit(url)
        if parts.scheme not in ("http", "https") or not parts.hostname:
            raise ValueError(f"url must be http://HOST:PORT or https://HOST:PORT, got {url!r}")
        if parts.query or parts.fragment:
            raise ValueError(f"url {url!r}: no query or fragment")
        if max_body_bytes < 16:
            raise ValueError(f"max_body_bytes must be at least 16 (one IPv6 key), got {max_body_bytes}")
        try:
            parts.port
        except ValueError as error:
            raise ValueError(f"url {url!r}: {error}") from None
        self._parts = parts
        self._base = parts.path.rstrip("/")
        self._timeout = timeout
        self._max_body = int(max_body_bytes)
        self._lock = threading.Lock()
        self._connection = None
        # Whether the connection has not answered yet (a new one).
        self._fresh = True
        # The connection's number (a new one for each connection opened),
        # and the values lists fetched on it, by family.
        self._generation = 0
        self._values = {}

    @property
    def url(self):
        """The server's URL, as given."""
        return urllib.parse.urlunsplit(self._parts)

    def lookup(self, addrs):
        """The route value of one address (a ``str`` of either family): an
        int, or an address string as the table has it; None where no route
        matches (as ``Table.lookup``). For addresses in bulk (a list of
        ``str``, a numpy ``str`` or ``bytes`` array, a pyarrow string array,
        a pandas column), their values as ``table.values[table.lookup_batch(addrs)]``:
        a uint64 array, 0 where no route; an object array of Python ints if
        some value of the server's is an IPv6 address."""
        if isinstance(addrs, str):
            return self._single(addrs)
        count, keys4, where4, keys6, where6 = _split_addresses(addrs)
        with self._lock:
            for _ in range(3):
                try:
                    return self._batch(count, ((4, keys4, where4), (6, keys6, where6)))
                except _Reconnected:
                    continue
        raise ConnectionError(f"fibkit serve at {self.url}: the connection kept closing during a lookup")

    def close(self):
        """Closes the connection (the next lookup opens another)."""
        with self._lock:
            self._close()

    def __enter__(self):
        return self

    def __exit__(self, *exc):
        self.close()
        return False

    def __repr__(self):
        return f"<fibkit.Client {self.url}>"

    def __reduce__(self):
        # Pickled as its settings (for workers of Dask, Ray...): each copy
        # opens a connection of its own.
        return (Client, (self.url, self._timeout, self._max_body))

    # One address.

    def _single(self, addr):
        try:
            _, keys4, _, keys6, _ = _split_addresses([addr])
        except ValueError as error:
            # As Table.lookup words it: the text and why, no index.
            raise ValueError(str(error).removeprefix("addrs[0]: ")) from None
        if len(keys4):
            text = str(ipaddress.IPv4Address(int(keys4[0])))
        else:
            text = str(ipaddress.IPv6Address(bytes(keys6[0])))
        with self._lock:
            answer, _ = self._request("GET", "/lookup/" + text)
        return json.loads(answer)["value"]

    # Addresses in bulk.

    def _batch(self, count, families):
        """The values of ``count`` addresses, of ``families``: (family, keys,
        their positions). Every request of one lookup goes over one
        connection, so that the next hops and the values lists come from
        one server; ``_Reconnected`` otherwise."""
        generation = None
        answers = []
        for family, keys, where in families:
            if not len(keys):
                continue
            hops, generation = self._next_hops(family, keys, generation)
            answers.append((family, hops, where))
        # Both families' values: the dtype depends on whether any value is
        # an IPv6 address, as the values array of a Table does.
        for family, hops, _ in answers:
            needed = int(hops.max()) if len(hops) else 0
            generation = self._values_list(family, needed, generation)
        for family in _FAMILY:
            generation = self._values_list(family, 0, generation)
        wide = any(values["wide"] for values in self._values.values())
        out = np.zeros(count, dtype=object if wide else np.uint64)
        for family, hops, where in answers:
            out[where] = self._values_array(family, wide)[hops]
        return out

    def _next_hops(self, family, keys, generation):
        """The next hops of ``keys`` (uint32, or (N, 16) uint8), in requests
        of at most ``max_body_bytes``."""
        width = _WIDTH[family]
        step = max(self._max_body // width, 1)
        path = f"/lookup/{_FAMILY[family]}"
        hops = np.empty(len(keys), dtype=np.uint32)
        for start in range(0, len(keys), step):
            chunk = keys[start : start + step]
            body = chunk.astype(">u4").tobytes() if family == 4 else np.ascontiguousarray(chunk).tobytes()
            answer, generation = self._request("POST", path, body, generation)
            if len(answer) != 4 * len(chunk):
                raise ServerError(self.url, f"POST {path}", 200, f"{len(answer)} bytes for {len(chunk)} keys")
            hops[start : start + len(chunk)] = np.frombuffer(answer, dtype="<u4")
        return hops, generation

    def _values_list(self, family, needed, generation):
        """Makes sure the values list of ``family`` is here and reaches next
        hop ``needed``, fetching it (again) if not."""
        values = self._values.get(family)
        if values is not None and needed <= len(values["list"]):
            return generation if generation is not None else self._generation
        path = f"/values/{_FAMILY[family]}"
        answer, generation = self._request("GET", path, None, generation)
        listed = json.loads(answer)
        numbers, wide = [], False
        for value in listed:
            if isinstance(value, str):  # an address
                value = ipaddress.ip_address(value)
                wide |= value.version == 6
            numbers.append(int(value))
        if needed > len(numbers):
            message = f"an answer has next hop {needed}, beyond the {len(numbers)} values listed"
            raise ServerError(self.url, f"GET {path}", 200, message)
        self._values[family] = {"list": listed, "numbers": numbers, "wide": wide, "arrays": {}}
        return generation

    def _values_array(self, family, wide):
        """``values[hop]`` for the family's next hops: 0 for no route, then
        each value's number (uint64, or Python ints when ``wide``)."""
        values = self._values[family]
        array = values["arrays"].get(wide)
        if array is None:
            array = values["arrays"][wide] = np.array([0] + values["numbers"], dtype=object if wide else np.uint64)
        return array

    # HTTP.

    def _open(self):
        host, port = self._parts.hostname, self._parts.port
        if self._parts.scheme == "https":
            self._connection = http.client.HTTPSConnection(host, port, timeout=self._timeout)
        else:
            self._connection = http.client.HTTPConnection(host, port, timeout=self._timeout)
        # A new connection may reach another server (restarted): the values
        # lists are fetched again.
        self._fresh = True
        self._generation += 1
        self._values = {}

    def _close(self):
        if self._connection is not None:
            self._connection.close()
            self._connection = None

    def _request(self, method, path, body=None, generation=None):
        """The body of a 2xx answer to ``method path``, and the number of
        the connection it came on. A connection the server closed while it
        was idle is opened again for the request, unless ``generation`` (a
        lookup's connection) is given: then ``_Reconnected``."""
        request = f"{method} {path}"
        for attempt in (1, 2):
            if self._connection is None:
                self._open()
            reused = not self._fresh
            if generation is not None and self._generation != generation:
                raise _Reconnected()
            connection = self._connection
            try:
                response = self._exchange(connection, method, self._base + path, body)
                answer = response.read()
            except (http.client.HTTPException, OSError) as error:
                self._close()
                if reused and attempt == 1 and isinstance(error, _STALE):
                    if generation is not None:
                        raise _Reconnected() from error
                    continue
                raise self._transport_error(request, body, reused, error) from error
            self._fresh = False
            if response.will_close:
                self._close()
            if response.status >= 300:
                # The server may not have read the whole body of a refused
                # request: the connection is not used again.
                self._close()
                raise ServerError(self.url, request, response.status, _message(answer))
            return answer, self._generation
        raise AssertionError("unreachable")

    @staticmethod
    def _exchange(connection, method, path, body):
        """Sends the request and reads the answer's head. A server that
        refuses a body answers before reading it, and may close the
        connection while it is being sent: its answer is read if it came."""
        headers = {"Content-Type": "application/octet-stream"} if body is not None else {}
        try:
            connection.request(method, path, body=body, headers=headers)
        except (BrokenPipeError, ConnectionResetError) as error:
            try:
                return connection.getresponse()
            except (http.client.HTTPException, OSError):
                raise error from None
        return connection.getresponse()

    def _transport_error(self, request, body, reused, error):
        if isinstance(error, TimeoutError) or "timed out" in str(error):
            what = f"no answer within {self._timeout} s"
        elif not reused and isinstance(error, ConnectionRefusedError):
            what = "cannot connect (no server listening?)"
        elif body is not None and isinstance(error, (BrokenPipeError, ConnectionResetError)):
            what = (
                f"the connection broke while sending a body of {len(body)} bytes"
                f" (is the server's max_body_bytes below the client's {self._max_body}?)"
            )
        else:
            what = "the connection failed"
        return ConnectionError(f"fibkit serve at {self.url}: {request}: {what}: {error}")


def _message(answer):
    """The server's message of an error answer: its JSON ``error``, or its text."""
    try:
        return json.loads(answer)["error"]
    except (ValueError, KeyError, TypeError):
        return answer.decode("utf-8", "replace").strip()
