//! Input quoted in messages ([`shorten`], re-exported as
//! `fibkit::error::shorten`): the one helper of `base/` that messages of
//! every layer use.

/// `text` cut to a length fit for an error message: every message that
/// quotes input (a file's field, an option, a name) quotes it through this,
/// so that a 100 MB field gives a one-line message.
pub fn shorten(text: &str) -> String {
    const MAX: usize = 60;
    if text.len() <= MAX {
        return text.to_string();
    }
    let mut end = MAX;
    while !text.is_char_boundary(end) {
        end -= 1;
    }
    format!("{}... ({} bytes)", &text[..end], text.len())
}

/// Appends `text` to `out` as a JSON string: quoted, with `"`, `\` and
/// control characters escaped (RFC 8259, section 7).
pub fn json_string(out: &mut Vec<u8>, text: &str) {
    out.push(b'"');
    let mut start = 0;
    for (index, byte) in text.bytes().enumerate() {
        let escape: &[u8] = match byte {
            b'"' => b"\\\"",
            b'\\' => b"\\\\",
            b'\n' => b"\\n",
            b'\r' => b"\\r",
            b'\t' => b"\\t",
            0..=0x1f => b"",
            _ => continue,
        };
        out.extend_from_slice(&text.as_bytes()[start..index]);
        if escape.is_empty() {
            out.extend_from_slice(format!("\\u{byte:04x}").as_bytes());
        } else {
            out.extend_from_slice(escape);
        }
        start = index + 1;
    }
    out.extend_from_slice(&text.as_bytes()[start..]);
    out.push(b'"');
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn json_strings_read_back_as_the_text() {
        for text in ["", "plain", "a \"quoted\" \\ word", "line\nbreak\ttab\r\u{1}\u{1f}", "Zürich 東京"] {
            let mut out = Vec::new();
            json_string(&mut out, text);
            let back: String = serde_json::from_slice(&out).unwrap();
            assert_eq!(back, text);
        }
    }
}
