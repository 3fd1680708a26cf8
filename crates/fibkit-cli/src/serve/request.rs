//! What a `fibkit serve` request asks, read from its path, query and body
//! into addresses to look up: pure functions of bytes, with no socket, no
//! runtime and nothing of hyper, so that the fuzz target `serve_request`
//! includes this file as it is (`#[path]`) and runs it millions of times a
//! minute. Each refusal is the text of a 400 answer.

use fibkit::address_text::{ipv4_mapped, parse_address, AnyAddr};
use fibkit::{Address, Family};

/// `GET /lookup/ADDRESS`: the address as the client meant it (`%XX`
/// escapes decoded) and its value.
///
/// # Errors
/// When the decoded text is not an address.
pub fn single_address(text: &str) -> Result<(String, AnyAddr), String> {
    let decoded = percent_decoded(text);
    match parse_address(decoded.as_bytes()) {
        Ok(addr) => Ok((decoded, addr)),
        Err(error) => Err(format!("{decoded:?} is not an address: {error}")),
    }
}

/// `%XX` escapes decoded (an IPv6 zone or a client that escapes `:`);
/// anything else kept as it is.
pub fn percent_decoded(text: &str) -> String {
    let bytes = text.as_bytes();
    let mut out = Vec::with_capacity(bytes.len());
    let mut at = 0;
    while at < bytes.len() {
        let hex = |byte: u8| (byte as char).to_digit(16);
        match (bytes[at], bytes.get(at + 1).copied().and_then(hex), bytes.get(at + 2).copied().and_then(hex)) {
            (b'%', Some(high), Some(low)) => {
                out.push((high * 16 + low) as u8);
                at += 3;
            }
            (byte, ..) => {
                out.push(byte);
                at += 1;
            }
        }
    }
    String::from_utf8_lossy(&out).into_owned()
}

/// `POST /lookup`'s query: whether the answer is JSON lines.
///
/// # Errors
/// Any query but `format=text` or `format=json`.
pub fn text_format_is_json(query: &str) -> Result<bool, String> {
    match query {
        "" | "format=text" => Ok(false),
        "format=json" => Ok(true),
        _ => Err(format!("query {query:?}: format=text or format=json")),
    }
}

/// The addresses of a text body, a line each, split by family with each
/// line's place.
#[derive(Debug, Default)]
pub struct TextLines {
    /// The IPv4 addresses, in the body's order.
    pub v4: Vec<u32>,
    /// The IPv6 addresses, in the body's order.
    pub v6: Vec<u128>,
    /// Per line: the family (false: IPv4) and the index in its list.
    pub order: Vec<(bool, usize)>,
    /// Per line: where its trimmed text is in the body.
    pub lines: Vec<(usize, usize)>,
}

/// A `POST /lookup` body: an address a line (blank lines skipped, blanks
/// around an address ignored).
///
/// # Errors
/// Naming the first line that is not an address.
pub fn text_lines(body: &[u8]) -> Result<TextLines, String> {
    let mut parsed = TextLines::default();
    let mut start = 0;
    for (number, line) in body.split(|&byte| byte == b'\n').enumerate() {
        let line_start = start;
        start += line.len() + 1;
        let trimmed = line.trim_ascii();
        if trimmed.is_empty() {
            continue;
        }
        match parse_address(trimmed) {
            Ok(AnyAddr::V4(addr)) => {
                parsed.order.push((false, parsed.v4.len()));
                parsed.v4.push(addr);
            }
            Ok(AnyAddr::V6(addr)) => {
                parsed.order.push((true, parsed.v6.len()));
                parsed.v6.push(addr);
            }
            Err(error) => {
                let shown = String::from_utf8_lossy(&trimmed[..trimmed.len().min(64)]).into_owned();
                return Err(format!("line {}: {shown:?} is not an address: {error}", number + 1));
            }
        }
        let from = line_start + (line.len() - line.trim_ascii_start().len());
        parsed.lines.push((from, from + trimmed.len()));
    }
    Ok(parsed)
}

/// A `POST /lookup/ipv4` or `/lookup/ipv6` body: keys of 4 or 16 bytes in
/// network order.
///
/// # Errors
/// When the body's length is not a whole number of keys, or an IPv6 key is
/// IPv4-mapped (`::ffff:a.b.c.d`): such an address is looked up as IPv4,
/// and an IPv6 batch's answers are the IPv6 FIB's next hops.
pub fn binary_keys<A: Address>(body: &[u8]) -> Result<Vec<A>, String> {
    let width = usize::from(A::BITS / 8);
    if !body.len().is_multiple_of(width) {
        return Err(format!("a body of {} bytes is not a whole number of {width}-byte {} keys", body.len(), A::FAMILY));
    }
    let keys: Vec<A> = body
        .chunks_exact(width)
        .map(|key| {
            A::from_words({
                let mut words =
                    key.chunks_exact(4).map(|word| u32::from_be_bytes([word[0], word[1], word[2], word[3]]));
                move || words.next().unwrap_or(0)
            })
        })
        .collect();
    if A::FAMILY == Family::Ipv6 {
        if let Some(index) = keys.iter().position(|key| ipv4_mapped(key.to_u128()).is_some()) {
            return Err(format!(
                "key {index} ({}) is IPv4-mapped: a mapped address is looked up as IPv4, so send it to /lookup/ipv4",
                std::net::Ipv6Addr::from(keys[index].to_u128())
            ));
        }
    }
    Ok(keys)
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn single_addresses_are_decoded_then_parsed() {
        let (decoded, addr) = single_address("2001%3Adb8%3A%3A1").unwrap();
        assert_eq!(decoded, "2001:db8::1");
        assert!(matches!(addr, AnyAddr::V6(0x2001_0db8_0000_0000_0000_0000_0000_0001)));
        assert!(single_address("10.0.0.256").unwrap_err().contains("\"10.0.0.256\" is not an address"));
        // A lone or short escape stays as it is; an escape of bytes not
        // UTF-8 becomes U+FFFD, and is refused as an address.
        assert_eq!(percent_decoded("%4"), "%4");
        assert_eq!(percent_decoded("%zz%41"), "%zzA");
        assert!(single_address("%ff").is_err());
    }

    #[test]
    fn text_bodies_keep_each_lines_place() {
        let body = b"  10.0.0.1\n\n::1 \r\n192.0.2.9";
        let parsed = text_lines(body).unwrap();
        assert_eq!((parsed.v4, parsed.v6), (vec![0x0a00_0001, 0xc000_0209], vec![1]));
        assert_eq!(parsed.order, [(false, 0), (true, 0), (false, 1)]);
        let texts: Vec<&[u8]> = parsed.lines.iter().map(|&(from, to)| &body[from..to]).collect();
        assert_eq!(texts, [b"10.0.0.1".as_slice(), b"::1", b"192.0.2.9"]);
        assert!(text_lines(b"10.0.0.1\n nope\n").unwrap_err().starts_with("line 2: \"nope\" is not an address"));
        assert!(text_lines(b"1.2.3.4\n\xff\xfe").unwrap_err().starts_with("line 2: "));
    }

    #[test]
    fn queries_and_binary_bodies() {
        assert_eq!(text_format_is_json(""), Ok(false));
        assert_eq!(text_format_is_json("format=json"), Ok(true));
        assert!(text_format_is_json("format=xml").is_err());
        assert_eq!(binary_keys::<u32>(&[10, 0, 0, 1, 192, 0, 2, 1]), Ok(vec![0x0a00_0001, 0xc000_0201]));
        let mut key = [0u8; 16];
        key[15] = 1;
        key[0] = 0x20;
        assert_eq!(binary_keys::<u128>(&key), Ok(vec![0x2000_0000_0000_0000_0000_0000_0000_0001]));
        assert!(binary_keys::<u32>(&[1, 2, 3]).unwrap_err().contains("3 bytes is not a whole number of 4-byte"));
        assert!(binary_keys::<u128>(&[0; 20]).is_err());
        let mut keys = [key, key];
        keys[1] = std::net::Ipv6Addr::from(0xffff_0a01_0203_u128).octets();
        let error = binary_keys::<u128>(keys.as_flattened()).unwrap_err();
        assert!(error.starts_with("key 1 (::ffff:10.1.2.3) is IPv4-mapped"), "{error}");
        // An IPv4 key is never an IPv6 one.
        assert_eq!(binary_keys::<u32>(&keys[1][12..]), Ok(vec![0x0a01_0203]));
    }
}
