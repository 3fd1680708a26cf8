//! Field lists as users write them: `asn,org:text`, `*`.

use std::fmt;

use super::FieldType;
use crate::error::shorten;

/// The fields a user asked for: names, each with a type or to be inferred;
/// `*` asks for every field the source has.
#[derive(Clone, Debug, Default, PartialEq, Eq)]
pub struct FieldSpec {
    /// The fields in the order asked.
    pub fields: Vec<(String, Option<FieldType>)>,
    /// Whether `*` asked for every field the source has (after the named
    /// ones, which may give types).
    pub all: bool,
}

/// A field list that does not parse.
#[derive(Clone, Debug, PartialEq, Eq, thiserror::Error)]
#[error("field list {list:?}: {problem}")]
pub struct FieldSpecError {
    /// The list as given (shortened).
    pub list: String,
    /// What is wrong.
    pub problem: String,
}

impl FieldSpec {
    /// Parses `name[:type],...`; `*` stands for every field of the source,
    /// and a name may hold dots and digits (`country.iso_code`,
    /// `subdivisions.0.names.en`).
    ///
    /// ```
    /// use fibkit::records::{FieldSpec, FieldType};
    ///
    /// let spec = FieldSpec::parse("asn:int, org").unwrap();
    /// assert_eq!(spec.fields, [("asn".to_string(), Some(FieldType::Int)), ("org".to_string(), None)]);
    /// assert!(FieldSpec::parse("asn:integer").is_err());
    /// ```
    ///
    /// # Errors
    /// [`FieldSpecError`] for an empty list or name, an unknown type, a
    /// name given twice, or a character a name may not have.
    pub fn parse(list: &str) -> Result<Self, FieldSpecError> {
        let error = |problem: String| FieldSpecError { list: shorten(list), problem };
        let mut spec = FieldSpec::default();
        for item in list.split(',').map(str::trim) {
            if item == "*" {
                spec.all = true;
                continue;
            }
            let (name, kind) = match item.rsplit_once(':') {
                Some((name, kind)) => {
                    let parsed = FieldType::from_name(kind.trim()).ok_or_else(|| {
                        let known: Vec<&str> = FieldType::ALL.iter().map(|kind| kind.name()).collect();
                        error(format!("unknown type {:?} of {name:?} (known: {})", shorten(kind), known.join(", ")))
                    })?;
                    (name.trim(), Some(parsed))
                }
                None => (item, None),
            };
            check_name(name).map_err(error)?;
            if spec.fields.iter().any(|(seen, _)| seen == name) {
                return Err(error(format!("{name:?} is named twice")));
            }
            spec.fields.push((name.to_string(), kind));
        }
        if spec.fields.is_empty() && !spec.all {
            return Err(error("no field named".to_string()));
        }
        Ok(spec)
    }

    /// The type asked for `name`, if any.
    pub fn kind_of(&self, name: &str) -> Option<FieldType> {
        self.fields.iter().find(|(field, _)| field == name).and_then(|&(_, kind)| kind)
    }
}

impl fmt::Display for FieldSpec {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        let mut items: Vec<String> = self
            .fields
            .iter()
            .map(|(name, kind)| kind.map_or_else(|| name.clone(), |kind| format!("{name}:{kind}")))
            .collect();
        if self.all {
            items.push("*".to_string());
        }
        f.write_str(&items.join(","))
    }
}

/// Checks a field name: not empty, printable, without the list's own
/// separators.
pub(crate) fn check_name(name: &str) -> Result<(), String> {
    if name.is_empty() {
        return Err("an empty field name".to_string());
    }
    if name.len() > 255 {
        return Err(format!("field name {} is longer than 255 bytes", shorten(name)));
    }
    if let Some(bad) = name.chars().find(|&c| c.is_control() || c == ',' || c == ':' || c == '"') {
        return Err(format!("field name {:?} holds {bad:?}", shorten(name)));
    }
    Ok(())
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn lists_parse_with_types_stars_and_paths() {
        let spec = FieldSpec::parse("country.iso_code, location.latitude:float,*").unwrap();
        assert!(spec.all);
        assert_eq!(spec.kind_of("location.latitude"), Some(FieldType::Float));
        assert_eq!(spec.kind_of("country.iso_code"), None);
        assert_eq!(spec.to_string(), "country.iso_code,location.latitude:float,*");
        assert_eq!(FieldSpec::parse("path:ints,name:string").unwrap().kind_of("name"), Some(FieldType::Text));
    }

    #[test]
    fn bad_lists_are_refused_naming_the_problem() {
        for (list, problem) in [
            ("", "an empty field name"),
            ("asn,,org", "an empty field name"),
            ("asn:integer", "unknown type \"integer\""),
            ("asn,asn", "named twice"),
            ("a\u{7}b", "holds"),
        ] {
            let error = FieldSpec::parse(list).unwrap_err().to_string();
            assert!(error.contains(problem), "{list:?}: {error}");
        }
    }
}
