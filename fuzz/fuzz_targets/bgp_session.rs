//! What a BGP neighbour sends: any bytes split into messages, each OPEN
//! and UPDATE body decoded as a session would (both ASN widths, with and
//! without ADD-PATH).
#![no_main]

use fibkit::load::bgp::{decode_update, Action};
use fibkit_sources::bgp::wire::{Message, MessageReader, Open, Received};
use libfuzzer_sys::fuzz_target;

fuzz_target!(|data: &[u8]| {
    let mut stream = data;
    let mut reader = MessageReader::default();
    // Every message read consumes at least a header: the loop ends.
    while let Ok(Received::Message(message)) = reader.next(&mut stream) {
        match message {
            Message::Open(body) => {
                if let Ok(open) = Open::decode(&body) {
                    // What decodes encodes back to an OPEN that decodes alike.
                    let again = Open::decode(&open.encode()[19..]).expect("an encoded OPEN decodes");
                    assert_eq!(again.asn, open.asn);
                }
            }
            Message::Update(body) => {
                for (as4, add_path) in [(true, false), (false, false), (true, true)] {
                    match decode_update(&body, as4, add_path) {
                        Ok(update) => {
                            for entry in update.withdrawn.iter().chain(&update.announced) {
                                assert!(entry.offset < body.len() as u64);
                            }
                            if let Some(fault) = update.decisive_fault() {
                                assert_ne!(fault.action, Action::Discard);
                            }
                        }
                        Err(fault) => assert!(matches!(fault.action, Action::Reset(_))),
                    }
                }
            }
            Message::Notification(_) | Message::Keepalive | Message::RouteRefresh => {}
        }
    }
});
