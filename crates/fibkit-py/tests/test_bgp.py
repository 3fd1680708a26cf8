"""fibkit.BgpSpeaker with BIRD 2 as its neighbour: routes announced land in
the live FIBs, looked up from Python while the session runs, and go when
BIRD stops."""

import os
import shutil
import socket
import subprocess
import tempfile
import time

import pytest

import fibkit

BIRD = shutil.which("bird") or ("/usr/sbin/bird" if os.path.exists("/usr/sbin/bird") else None)


def free_port():
    with socket.socket() as probe:
        probe.bind(("127.0.0.1", 0))
        return probe.getsockname()[1]


def wait_for(what, done, limit=60.0):
    start = time.monotonic()
    while not done():
        assert time.monotonic() - start < limit, f"{what}: not within {limit} s"
        time.sleep(0.02)


def bird_config(port):
    return f"""router id 10.0.0.2;
protocol device {{}}
protocol static s4 {{ ipv4;
  route 10.1.0.0/16 blackhole {{ bgp_path.prepend(64501); }};
  route 10.1.2.0/24 blackhole {{ bgp_path.prepend(64502); }};
}}
protocol static s6 {{ ipv6;
  route 2001:db8::/32 blackhole {{ bgp_path.prepend(64503); }};
  route ::ffff:10.9.0.0/112 blackhole {{ bgp_path.prepend(64504); }};
}}
protocol bgp fib {{ local 127.0.0.2 port {port} as 65001; neighbor 127.0.0.1 port {port} as 65000; multihop; strict bind on;
  connect delay time 1; connect retry time 1;
  ipv4 {{ import none; export all; }}; ipv6 {{ import none; export all; next hop address 2001:db8::2; }}; }}
"""


@pytest.mark.skipif(BIRD is None, reason="bird is not installed (apt-get install bird2, or make setup)")
def test_routes_from_bird_are_looked_up_live_and_go_with_the_session():
    port = free_port()
    speaker = fibkit.BgpSpeaker(
        65000, "10.255.0.1", ["127.0.0.2,as=65001"], listen=[f"127.0.0.1:{port}"], value="origin-as"
    )
    with tempfile.TemporaryDirectory() as scratch, speaker:
        assert speaker.local_addresses == [f"127.0.0.1:{port}"]
        config = os.path.join(scratch, "bird.conf")
        with open(config, "w", encoding="utf-8") as out:
            out.write(bird_config(port))
        bird = subprocess.Popen([BIRD, "-f", "-c", config, "-s", os.path.join(scratch, "bird.ctl")])
        try:
            wait_for("BIRD's routes", lambda: speaker.stats()["routes4"] == 2 and speaker.stats()["routes6"] == 1)
            # An IPv6 route inside ::ffff:0:0/96 is refused by the FIB, said
            # in the journal; a mapped address is looked up as IPv4.
            wait_for("the mapped route's refusal", lambda: speaker.stats()["updates_rejected"] == 1)
            assert any("announce 10.9.0.0/16 as an IPv4 route" in line for line in speaker.journal())
            assert speaker.lookup(["::ffff:10.1.2.3", "::ffff:10.9.0.1", "::ffff:10.1.9.9"]) == [64502, None, 64501]
            assert speaker.lookup("10.1.2.3") == 64502
            assert speaker.lookup("10.1.3.4") == 64501
            assert speaker.lookup(0x0A010203) == 64502
            assert speaker.lookup(["10.1.9.9", "11.0.0.1", "2001:db8::1", "2001:db9::1"]) == [64501, None, 64503, None]
            (neighbor,) = speaker.neighbors()
            assert (neighbor["address"], neighbor["remote_as"], neighbor["state"]) == ("127.0.0.2", 65001, "established")
            assert neighbor["prefixes"] == 4
        finally:
            bird.kill()
            bird.wait()
        wait_for("the routes to go", lambda: speaker.lookup("10.1.2.3") is None and speaker.lookup("2001:db8::1") is None)
        assert speaker.neighbors()[0]["state"] == "idle"
        assert any("neighbour 127.0.0.2 (AS 65001): session down" in line for line in speaker.journal())
    with pytest.raises(RuntimeError, match="stopped"):
        speaker.lookup("10.1.2.3")
    speaker.stop()


def test_bad_configurations_are_named():
    with pytest.raises(ValueError, match="neighbor 0: .*no as=ASN"):
        fibkit.BgpSpeaker(65000, "10.255.0.1", ["127.0.0.2"])
    with pytest.raises(ValueError, match="router_id"):
        fibkit.BgpSpeaker(65000, "localhost", ["127.0.0.2,as=1"])
    with pytest.raises(ValueError, match="listen"):
        fibkit.BgpSpeaker(65000, "10.255.0.1", ["127.0.0.2,as=1"], listen=["127.0.0.1"])
    with pytest.raises(ValueError, match="next-hop or origin-as"):
        fibkit.BgpSpeaker(65000, "10.255.0.1", ["127.0.0.2,as=1"], value="asn")
    with pytest.raises(ValueError, match="configured twice"):
        fibkit.BgpSpeaker(65000, "10.255.0.1", ["127.0.0.2,as=1", "127.0.0.2,as=2"])
    with socket.socket() as taken:
        taken.bind(("127.0.0.1", 0))
        taken.listen()
        with pytest.raises(OSError, match="cannot listen"):
            fibkit.BgpSpeaker(65000, "10.255.0.1", ["127.0.0.2,as=1"], listen=["127.0.0.1:%d" % taken.getsockname()[1]])
    with fibkit.BgpSpeaker(65000, "10.255.0.1", ["127.0.0.2,as=1"]) as idle:
        with pytest.raises(TypeError, match="an address"):
            idle.lookup(1.5)
        with pytest.raises(ValueError, match="not an IPv4 address"):
            idle.lookup("10.0.0.256")
        assert idle.lookup("10.0.0.1") is None
        assert repr(idle) == "BgpSpeaker(1 neighbours, 0 IPv4 and 0 IPv6 routes)"
