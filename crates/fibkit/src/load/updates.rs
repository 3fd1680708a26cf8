//! Update streams: BGP announcements and withdrawals in order, as
//! `fibkit replay` applies them to a table.
//!
//! Two sources give an [`UpdateStream`]:
//!
//! - **text**, one update a line: `UNIXTIME a|w PREFIX NEXTHOP`, for example
//!   `1418774413 a 202.70.88.0/21 195.66.226.74` (announce, or replace, the
//!   route) and `1418774413 w 131.100.248.0/22 0.0.0.0` (withdraw it; the
//!   next-hop column of a withdrawal may be left out and is ignored).
//!   `UNIXTIME` is whole seconds, optionally with up to six decimals
//!   (`1418774413.250000`). The value is a next-hop address or a number,
//!   taken as written. Blank lines and `#`/`;` comments are skipped;
//!   prefixes are parsed strictly (host bits set is an error);
//! - **MRT** `BGP4MP` / `BGP4MP_ET` files (RFC 6396): the UPDATE messages of
//!   one peer; see [`super::mrt`] for which records are read, how the peer
//!   is chosen and what an announcement's value is.
//!
//! Both are compressed or not (gzip and bzip2 detected by magic bytes); a
//! truncated compressed stream keeps every complete line or record and
//! warns where the data ends (an error with [`LoadOptions::strict`]).
//!
//! Loaded as a *table* ([`super::load_path`]), an update stream is replayed
//! from an empty table: what is announced and not withdrawn at the end is
//! the table.

use std::path::Path;

pub use super::stream::{TimedUpdate, Timestamp, UpdateStream};
use super::text::{is_comment_or_blank, numbered_lines, parse_value, ExtraColumns};
use super::{
    complete_lines, decompress, mrt, read_file, reject_mrt_options, table_name, LoadError, LoadOptions, Position,
};
pub use crate::addr::IpPrefix;
use crate::error::shorten;
pub use crate::update::Update;

/// Loads an update stream: text or MRT (detected by content), compressed or
/// not (see the [module docs](self)).
pub fn load_updates(path: &Path, options: &LoadOptions) -> Result<UpdateStream, LoadError> {
    let raw = read_file(path)?;
    updates_from_bytes(path, &raw, options)
}

/// [`load_updates`] on bytes in memory; `file` names them in errors.
pub fn updates_from_bytes(file: &Path, bytes: &[u8], options: &LoadOptions) -> Result<UpdateStream, LoadError> {
    let data = decompress(file, bytes)?;
    let stream = if mrt::is_mrt(&data.bytes) {
        mrt::load_updates(file, &data, options)?
    } else {
        let mut warnings = Vec::new();
        let text = complete_lines(file, &data, options, &mut warnings)?;
        let text = super::text::as_text(file, text)?;
        reject_mrt_options(file, options, "a text update file")?;
        let mut stream = parse_text(file, text, options)?;
        warnings.append(&mut stream.warnings);
        stream.warnings = warnings;
        stream
    };
    if stream.updates.is_empty() {
        return Err(LoadError::new(file, Position::File, "no updates in the file"));
    }
    Ok(stream)
}

/// Whether the first data line of `text` reads as `UNIXTIME a|w PREFIX ...`.
pub(crate) fn is_text_updates(text: &str) -> bool {
    let Some((_, line)) = numbered_lines(text).find(|(_, line)| !is_comment_or_blank(line)) else {
        return false;
    };
    let mut fields = line.split_ascii_whitespace();
    let (Some(time), Some(kind), Some(prefix)) = (fields.next(), fields.next(), fields.next()) else {
        return false;
    };
    parse_time(time).is_ok() && matches!(kind, "a" | "w") && prefix.contains('/')
}

/// Parses text updates (the values are taken as written; `options` says
/// whether columns after NEXTHOP are an error or a warning).
pub(crate) fn parse_text(file: &Path, text: &str, options: &LoadOptions) -> Result<UpdateStream, LoadError> {
    let mut updates = Vec::new();
    let mut extra_columns = ExtraColumns::default();
    for (number, line) in numbered_lines(text) {
        if is_comment_or_blank(line) {
            continue;
        }
        let error = |message: String| LoadError::new(file, Position::Line(number), message);
        let mut fields = line.split_ascii_whitespace();
        let (Some(time_text), Some(kind), Some(prefix_text)) = (fields.next(), fields.next(), fields.next()) else {
            return Err(error(format!(
                "not an update line: {:?} (expected UNIXTIME a|w PREFIX NEXTHOP)",
                shorten(line)
            )));
        };
        let time = parse_time(time_text).map_err(&error)?;
        let prefix = prefix_text.parse::<IpPrefix>().map_err(|problem| error(problem.to_string()))?;
        let update = match kind {
            "a" => {
                let value_text = fields.next().ok_or_else(|| {
                    error(format!(
                        "announcement of {prefix} has no NEXTHOP column (expected UNIXTIME a PREFIX NEXTHOP)"
                    ))
                })?;
                Update::Announce { prefix, value: parse_value(value_text).map_err(&error)? }
            }
            "w" => Update::Withdraw { prefix },
            other => {
                return Err(error(format!("update kind {:?} is neither a (announce) nor w (withdraw)", shorten(other))))
            }
        };
        // A withdrawal's NEXTHOP column is optional (traces write 0.0.0.0).
        let rest: Vec<&str> = fields.skip(usize::from(kind == "w")).collect();
        extra_columns.note(number, &rest);
        updates.push(TimedUpdate { time, update });
    }
    let mut warnings = Vec::new();
    extra_columns.report(file, "UNIXTIME a|w PREFIX NEXTHOP", options, &mut warnings)?;
    Ok(UpdateStream { name: table_name(file), updates, peer: None, warnings })
}

/// Parses `SECONDS` or `SECONDS.FRACTION` (up to six decimals).
fn parse_time(text: &str) -> Result<Timestamp, String> {
    let (whole, fraction) = text.split_once('.').unwrap_or((text, ""));
    let digits = |part: &str| !part.is_empty() && part.bytes().all(|b| b.is_ascii_digit());
    if !digits(whole) || (text.contains('.') && !digits(fraction)) || fraction.len() > 6 {
        return Err(format!("malformed time {:?} (expected Unix seconds, such as 1418774413)", shorten(text)));
    }
    let seconds = whole.parse::<u64>().map_err(|_| format!("time {} is too large", shorten(text)))?;
    let micros = if fraction.is_empty() {
        0
    } else {
        // At most six digits: fits, and scales to microseconds exactly.
        fraction.parse::<u32>().map_err(|_| format!("malformed time {:?}", shorten(text)))?
            * 10u32.pow(6 - fraction.len() as u32)
    };
    Ok(Timestamp { seconds, micros })
}

#[cfg(test)]
mod tests {
    use super::*;
    use crate::addr::Prefix4;
    use crate::load::RouteTable;
    use crate::nexthop::Label;

    fn parse(text: &str) -> Result<UpdateStream, LoadError> {
        updates_from_bytes(Path::new("u.txt"), text.as_bytes(), &LoadOptions::default())
    }

    #[test]
    fn text_updates_parse_in_order() {
        let stream = parse(
            "# trace\n1418774413 w 202.70.88.0/21 0.0.0.0\n1418774413 a 202.70.88.0/21 195.66.226.74\n\
             1418774414.5 a 2001:db8::/32 2001:7f8:4::1\n1418774415 w 2001:db8::/32\n",
        )
        .unwrap();
        assert_eq!((stream.updates.len(), stream.announces(), stream.withdraws()), (4, 2, 2));
        assert_eq!(stream.updates[0].update, Update::Withdraw { prefix: "202.70.88.0/21".parse().unwrap() });
        assert_eq!(
            stream.updates[1].update,
            Update::Announce {
                prefix: "202.70.88.0/21".parse().unwrap(),
                value: Label::Addr("195.66.226.74".parse().unwrap())
            }
        );
        assert_eq!(stream.updates[2].time, Timestamp { seconds: 1_418_774_414, micros: 500_000 });
        assert_eq!(stream.updates[2].time.to_string(), "1418774414.500000");
        assert!(matches!(stream.updates[3].update.prefix(), IpPrefix::V6(_)));
    }

    #[test]
    fn bad_update_lines_name_their_line() {
        let cases = [
            ("1 a 10.0.0.0/8 1\n2 x 10.0.0.0/8 1\n", 2, "neither a (announce) nor w"),
            ("1 a 10.0.0.1/8 1\n", 1, "host bits set"),
            ("1 a 10.0.0.0/8\n", 1, "has no NEXTHOP column"),
            ("1 a 10.0.0.0/8 1\nsoon a 10.0.0.0/8 1\n", 2, "malformed time"),
            ("1 a 10.0.0.0/8 1\n1.1234567 a 10.0.0.0/8 1\n", 2, "malformed time"),
            ("1 a 10.0.0.0/8 1\n99999999999999999999999 a 10.0.0.0/8 1\n", 2, "too large"),
            ("1 a 10.0.0.0/8 1\n1 w\n", 2, "not an update line"),
            ("1 a 10.0.0.0/8 next\n", 1, "non-numeric value"),
        ];
        for (text, line, needle) in cases {
            let error = parse(text).unwrap_err();
            assert_eq!(error.position, Position::Line(line), "{error}");
            assert!(error.message.contains(needle), "{error} lacks {needle:?}");
        }
        assert!(parse("# nothing\n").unwrap_err().message.contains("no updates"));
    }

    #[test]
    fn replay_keeps_what_survives() {
        let stream = parse(
            "1 a 10.0.0.0/8 1\n2 a 10.1.0.0/16 2\n3 a 10.0.0.0/8 3\n4 w 10.1.0.0/16 0.0.0.0\n5 a 2001:db8::/32 4\n",
        )
        .unwrap();
        let mut table = RouteTable::new("t", Default::default());
        stream.apply_to(&mut table);
        let routes: Vec<String> =
            table.v4.iter().map(|(prefix, hop)| format!("{prefix} {}", table.next_hops.describe(hop))).collect();
        assert_eq!(routes, ["10.0.0.0/8 3"]);
        assert_eq!(table.v6.len(), 1);
        // 1 and 2 were replaced or withdrawn: only 3 and 4 are next hops.
        assert_eq!(table.next_hops.len(), 2);
    }

    proptest::proptest! {
        #![proptest_config(proptest::prelude::ProptestConfig { cases: 500, ..Default::default() })]

        /// Random update streams written as text read back exactly.
        #[test]
        fn random_text_streams_round_trip(
            updates in proptest::collection::vec(
                (0..2_000_000_000u64, 0..1_000_000u32, proptest::prelude::any::<u32>(), 0..=32u8,
                 proptest::prelude::any::<bool>(), 1..100_000u64),
                1..50,
            ),
        ) {
            let mut text = String::from("# random\n");
            let mut expected = Vec::new();
            for &(seconds, micros, addr, prefix_len, announce, value) in &updates {
                let prefix = IpPrefix::V4(Prefix4::truncating(addr, prefix_len));
                let time = Timestamp { seconds, micros };
                let update = if announce {
                    text.push_str(&format!("{time} a {prefix} {value}\n"));
                    Update::Announce { prefix, value: Label::Number(value) }
                } else {
                    text.push_str(&format!("{time} w {prefix} 0.0.0.0\n"));
                    Update::Withdraw { prefix }
                };
                expected.push(TimedUpdate { time, update });
            }
            let stream = parse(&text).unwrap();
            proptest::prop_assert_eq!(stream.updates, expected);
        }

        /// Mutated and cut update text: a stream or an error naming a line.
        #[test]
        fn mutated_update_text_never_panics(
            mutations in proptest::collection::vec(
                (proptest::prelude::any::<proptest::sample::Index>(), proptest::prelude::any::<u8>()), 1..6),
            cut in proptest::prelude::any::<proptest::sample::Index>(),
        ) {
            let mut bytes = b"1418774413 w 202.70.88.0/21 0.0.0.0\n1418774413.5 a 2001:db8::/32 2001:7f8:4::1\n\
                              1418774414 a 10.0.0.0/8 7\n".to_vec();
            for (index, byte) in mutations {
                let at = index.index(bytes.len());
                bytes[at] = byte;
            }
            bytes.truncate(cut.index(bytes.len() + 1));
            let file = Path::new("u");
            match updates_from_bytes(file, &bytes, &LoadOptions::default()) {
                Ok(stream) => proptest::prop_assert!(!stream.updates.is_empty()),
                Err(error) => proptest::prop_assert!(!error.message.is_empty()),
            }
            let _ = super::super::load_bytes(file, &bytes, &LoadOptions { strict: true, ..Default::default() });
        }
    }

    #[test]
    fn detection_of_text_updates() {
        assert!(is_text_updates("; c\n1418774413 w 202.70.88.0/21 0.0.0.0\n"));
        assert!(!is_text_updates("10.0.0.0/8 1\n"));
        assert!(!is_text_updates("167772160\t167837695\t64500\n"));
        assert!(!is_text_updates("1 b 10.0.0.0/8 1\n"));
    }
}
