"""Writes the `mmdb` fuzz target's seeds: small MaxMind DB files made by
mmdb-writer (the package fibkit's records tests compare with), each under
4 KiB so that `-max_len=4096` keeps them whole. Run from the repository root
with a Python that has mmdb-writer and netaddr:

    python fuzz/seeds/mmdb_seeds.py
"""

from pathlib import Path

from mmdb_writer import MMDBWriter, MmdbF32, MmdbU32
from netaddr import IPSet

OUT = Path("fuzz/seeds/mmdb")

CITY = {
    "country": {"iso_code": "DE", "names": {"en": "Germany"}},
    "location": {"latitude": 52.52, "longitude": 13.4},
    "subdivisions": [{"names": {"en": "Berlin"}, "iso_code": "BE"}],
}


def write(name, ip_version, networks, **options):
    writer = MMDBWriter(ip_version=ip_version, database_type="fibkit-fuzz", **options)
    for network, record in networks:
        writer.insert_network(IPSet([network]), record)
    path = OUT / name
    writer.to_db_file(str(path))
    size = path.stat().st_size
    assert size <= 4096, f"{path}: {size} bytes"


def main():
    OUT.mkdir(parents=True, exist_ok=True)
    # IPv4 only: nested networks, every field of the specs, a missing one.
    write("ipv4_city", 4, [
        ("10.0.0.0/8", CITY),
        ("10.1.0.0/16", {"country": {"iso_code": "FR"}, "autonomous_system_number": 64500}),
        ("192.0.2.0/24", {"autonomous_system_number": 64501, "asns": [1, 2, 3], "flag": True}),
    ])
    # IPv6 with the IPv4 subtree in ::/96 and its aliases.
    write("ipv6_mapped", 6, [
        ("1.0.0.0/24", {"autonomous_system_number": 13335, "location": {"latitude": -33.5}}),
        ("2001:db8::/32", CITY),
        ("2001:db8:1::/48", {"country": {"iso_code": "JP"}, "names": ["a", "b"]}),
    ], ipv4_compatible=True)
    # Typed values: u32, f32, a list of integers, a map where a value is
    # asked for.
    write("typed", 6, [
        ("2001:db8::/33", {"autonomous_system_number": MmdbU32(7), "location": {"latitude": MmdbF32(1.5)}}),
        ("2001:db8:8000::/33", {"country": "not a map", "asns": [MmdbU32(1), MmdbU32(4294967295)]}),
    ])
    # Both halves of IPv4 (mmdb-writer refuses a /0), integers as u32.
    write("ipv4_halves", 4, [
        ("0.0.0.0/1", {"autonomous_system_number": 1}),
        ("128.0.0.0/1", {"autonomous_system_number": 2}),
    ], int_type="u32")


if __name__ == "__main__":
    main()
