//! MRT dumps and update streams from `../shared/data/` (skipped visibly when
//! absent): what each sample holds, truncation, peers, and mutated real
//! bytes.

use std::io::Read;
use std::path::Path;
use std::sync::OnceLock;
use std::time::Instant;

use fibkit::load::{self, LoadOptions, PeerSelector, Position, Update, ValueChoice};
use proptest::prelude::*;

mod common;
use common::shared_data;

fn strict() -> LoadOptions {
    LoadOptions { strict: true, ..LoadOptions::default() }
}

#[test]
fn bview_sample_is_three_complete_records_without_a_peer_table() {
    let Some(path) = shared_data("mrt/bview.20140112.1600_3samples.bz2") else { return };
    let list = load::list_peers(&path, &LoadOptions::default()).unwrap();
    let peers: Vec<(usize, usize)> = list.peers.iter().map(|peer| (peer.index, peer.routes_v4)).collect();
    assert_eq!(peers, [(0, 1), (6, 2)]);
    assert!(list.peers.iter().all(|peer| peer.address.is_none() && peer.asn.is_none()));
    let table = load::load_path(&path, &LoadOptions::default()).unwrap();
    // Peer 6 (the default: the most routes) has 1.0.0.0/24 and one more.
    assert_eq!((table.v4.len(), table.v6.len()), (2, 0));
    let hop = table.v4.lookup(0x0100_0001);
    assert_eq!(table.next_hops.describe(hop), "202.249.2.189");
    // No truncation: the only warning is about the missing peer table.
    assert_eq!(table.warnings.len(), 1, "{:?}", table.warnings);
    assert!(table.warnings[0].contains("without a PEER_INDEX_TABLE"));
    let origins = LoadOptions { value: ValueChoice::OriginAs, ..LoadOptions::default() };
    let table = load::load_path(&path, &origins).unwrap();
    assert_eq!(table.next_hops.describe(table.v4.lookup(0x0100_0001)), "15169");
    let peer0 = LoadOptions { peer: PeerSelector::Index(0), ..LoadOptions::default() };
    assert_eq!(load::load_path(&path, &peer0).unwrap().v4.len(), 1);
}

#[test]
fn truncated_2014_rib_loads_every_complete_record_and_warns() {
    let Some(path) = shared_data("mrt/rib.20140523.0600_firstMB.bz2") else { return };
    let start = Instant::now();
    let table = load::load_path(&path, &LoadOptions::default()).unwrap();
    let seconds = start.elapsed().as_secs_f64();
    let size = std::fs::metadata(&path).unwrap().len() as f64;
    eprintln!(
        "{}: {} IPv4 prefixes in {:.0} ms, {:.2} MB/s of bzip2 input",
        table.name,
        table.v4.len(),
        seconds * 1e3,
        size / seconds / 1e6
    );
    // The default peer: AS8492, the most routes in this part of the dump.
    assert_eq!(table.v4.len(), 8944);
    assert_eq!(table.next_hops.describe(1), "85.114.0.217");
    let truncation = table.warnings.last().unwrap();
    assert!(
        truncation.contains("at byte 15273283: the data ends here, in an incomplete MRT record")
            && truncation.contains("the bzip2 stream is truncated")
            && truncation.contains("loaded the 9073 complete records"),
        "{truncation}"
    );
    let error = load::load_bytes(&path, &decompressed(&path), &strict()).unwrap_err();
    assert_eq!(error.position, Position::Offset(15_273_283));
    assert!(error.to_string().contains("rib.20140523.0600_firstMB.bz2: at byte 15273283: "), "{error}");

    let list = load::list_peers(&path, &LoadOptions::default()).unwrap();
    assert_eq!(list.peers.len(), 47);
    let default = &list.peers[list.default.unwrap()];
    assert_eq!(default.to_string(), "peer 8 AS8492 85.114.0.217");
    // Peers with no route in the first MiB are listed too.
    assert_eq!(list.peers.iter().filter(|peer| peer.routes() == 0).count(), 12);

    // AS3356 by ASN, address and index: the same table. (Decompressed once
    // for the rest of the test: bzip2 takes most of a load's time.)
    let bytes = decompressed(&path);
    let by = |peer: &str| {
        let options = LoadOptions { peer: peer.parse().unwrap(), ..LoadOptions::default() };
        load::load_bytes(&path, &bytes, &options).unwrap()
    };
    let level3 = by("AS3356");
    assert_eq!(level3.v4.len(), 8348);
    assert_eq!(by("4.69.184.193").v4.len(), 8348);
    assert_eq!(by("1").v4.len(), 8348);
    let origins =
        load::load_bytes(&path, &bytes, &LoadOptions { value: ValueChoice::OriginAs, ..LoadOptions::default() })
            .unwrap();
    assert_eq!(origins.v4.len(), 8944);
    // 1.0.0.0/24 is originated by AS15169, as in the ipasn table of the time.
    assert_eq!(origins.next_hops.describe(origins.v4.lookup(0x0100_0001)), "15169");
    assert!(origins.next_hops.len() > 1000, "{} origins", origins.next_hops.len());
}

#[test]
fn rib6_sample_loads_ipv6_routes_with_their_next_hops() {
    let Some(path) = shared_data("mrt/rib6.20151101.0600_firstMB.bz2") else { return };
    let start = Instant::now();
    let table = load::load_path(&path, &LoadOptions::default()).unwrap();
    eprintln!(
        "{}: {} IPv4 + {} IPv6 prefixes in {:.0} ms",
        table.name,
        table.v4.len(),
        table.v6.len(),
        start.elapsed().as_secs_f64() * 1e3
    );
    assert_eq!((table.v4.len(), table.v6.len()), (0, 6321));
    assert_eq!(table.next_hops.describe(1), "2607:fad8::1:9");
    assert!(table.warnings.last().unwrap().contains("at byte 12131168: the data ends here"));
    let list = load::list_peers(&path, &LoadOptions::default()).unwrap();
    assert_eq!(list.peers.len(), 29);
    assert!(list.peers.iter().all(|peer| peer.address.is_some_and(|addr| addr.is_ipv6())));
    // Two sessions of AS2914: by ASN it is ambiguous.
    let options = LoadOptions { peer: "AS2914".parse().unwrap(), ..LoadOptions::default() };
    let error = load::load_path(&path, &options).unwrap_err();
    assert!(error.to_string().contains("matches 2 peers"), "{error}");
}

#[test]
fn linx_update_trace_has_23446_updates() {
    let Some(path) = shared_data("linx-p52-2014-12-17.updates.gz") else { return };
    let stream = load::load_updates(&path, &LoadOptions::default()).unwrap();
    assert_eq!(stream.updates.len(), 23_446);
    assert_eq!(stream.announces(), 18_141);
    assert_eq!(stream.withdraws(), 5_305);
    assert!(stream.warnings.is_empty());
    let first = stream.updates[0];
    assert_eq!(first.time.seconds, 1_418_774_413);
    assert_eq!(first.update, Update::Withdraw { prefix: "202.70.88.0/21".parse().unwrap() });
    assert!(stream.updates.windows(2).all(|pair| pair[0].time <= pair[1].time));
    // As a table: the stream replayed from empty.
    let table = load::load_path(&path, &LoadOptions::default()).unwrap();
    let mut expected = std::collections::HashMap::new();
    for timed in &stream.updates {
        match timed.update {
            Update::Announce { prefix, value } => expected.insert(prefix, value),
            Update::Withdraw { prefix } => expected.remove(&prefix),
        };
    }
    assert_eq!(table.len(), expected.len());
}

/// A bzip2 file's decompressed bytes, as far as the stream goes.
fn decompressed(path: &Path) -> Vec<u8> {
    let raw = std::fs::read(path).unwrap();
    let mut bytes = Vec::new();
    if let Err(error) = bzip2::read::MultiBzDecoder::new(&raw[..]).read_to_end(&mut bytes) {
        assert_eq!(error.kind(), std::io::ErrorKind::UnexpectedEof, "{error}");
    }
    bytes
}

/// The first `len` decompressed bytes of a shared MRT sample.
fn mrt_head(name: &str, len: usize) -> Option<Vec<u8>> {
    let path = shared_data(name)?;
    let raw = std::fs::read(path).unwrap();
    let mut head = Vec::new();
    bzip2::read::BzDecoder::new(&raw[..]).take(len as u64).read_to_end(&mut head).unwrap();
    Some(head)
}

#[test]
fn every_cut_of_a_real_dump_head_loads_or_fails_cleanly() {
    let Some(head) = mrt_head("mrt/rib.20140523.0600_firstMB.bz2", 6000) else { return };
    // Where the records of the head end.
    let mut boundaries = vec![0];
    while let Some(header) = head.get(boundaries[boundaries.len() - 1]..).and_then(|rest| rest.get(..12)) {
        let length = u32::from_be_bytes([header[8], header[9], header[10], header[11]]) as usize;
        boundaries.push(boundaries[boundaries.len() - 1] + 12 + length);
    }
    for cut in (0..head.len()).step_by(7) {
        let bytes = &head[..cut];
        match load::load_bytes(Path::new("head"), bytes, &LoadOptions::default()) {
            Ok(table) => {
                let warned = table.warnings.iter().any(|w| w.contains("the data ends here"));
                assert_eq!(warned, !boundaries.contains(&cut), "cut {cut}: {:?}", table.warnings);
            }
            Err(error) => assert!(
                error.to_string().contains("no routes") || error.to_string().contains("no peer") || cut < 12,
                "cut {cut}: {error}"
            ),
        }
    }
}

proptest! {
    #![proptest_config(ProptestConfig { cases: 300, ..ProptestConfig::default() })]

    /// Real records with random bytes changed: an error or a table, never a
    /// panic, never a hang.
    #[test]
    fn mutated_real_records_never_panic(
        mutations in proptest::collection::vec((any::<prop::sample::Index>(), any::<u8>()), 1..10),
        six in any::<bool>(),
    ) {
        static HEADS: OnceLock<[Option<Vec<u8>>; 2]> = OnceLock::new();
        let heads = HEADS.get_or_init(|| {
            [mrt_head("mrt/rib.20140523.0600_firstMB.bz2", 8000), mrt_head("mrt/rib6.20151101.0600_firstMB.bz2", 8000)]
        });
        let Some(mut bytes) = heads[usize::from(six)].clone() else { return Ok(()) };
        for (index, byte) in mutations {
            let at = index.index(bytes.len());
            bytes[at] = byte;
        }
        let file = Path::new("mutant");
        for options in [LoadOptions::default(), LoadOptions { value: ValueChoice::OriginAs, strict: true, ..Default::default() }] {
            if let Err(error) = load::load_bytes(file, &bytes, &options) {
                prop_assert!(!error.to_string().is_empty());
            }
            let _ = load::updates_from_bytes(file, &bytes, &options);
        }
        let _ = load::list_peers_bytes(file, &bytes, &LoadOptions::default());
    }
}
