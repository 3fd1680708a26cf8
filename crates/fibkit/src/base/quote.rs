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
