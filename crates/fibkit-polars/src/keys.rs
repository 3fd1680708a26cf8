//! An address column to lookups: its rows parsed into one batch of keys a
//! family, looked up with the family's batch lookup, and each answer
//! handed back at its row.
//!
//! A string column is read where it lies: Polars keeps strings as views
//! (Arrow's string-view layout: a string of up to 12 bytes inside its
//! view, a longer one in a data buffer), and each row's bytes are parsed
//! from there, never copied. A UInt32 column holds IPv4 addresses as
//! numbers (`polars-iptools`' `ip_to_numeric`, `inet_aton`).

use polars::prelude::*;

use fibkit::compiled::{CompiledFamily, CompiledTable};
use fibkit::load::{parse_address, AnyAddr};
use fibkit::{Address, NextHop};

/// The rows of a column split by family: `keys4[i]` is row `rows4[i]`'s.
#[derive(Default)]
struct Split {
    keys4: Vec<u32>,
    rows4: Vec<usize>,
    keys6: Vec<u128>,
    rows6: Vec<usize>,
    /// Per row: whether it holds an address.
    present: Vec<bool>,
}

impl Split {
    fn push(&mut self, row: usize, addr: AnyAddr) {
        if let Some(present) = self.present.get_mut(row) {
            *present = true;
        }
        match addr {
            AnyAddr::V4(key) => {
                self.keys4.push(key);
                self.rows4.push(row);
            }
            AnyAddr::V6(key) => {
                self.keys6.push(key);
                self.rows6.push(row);
            }
        }
    }
}

/// Refuses a column of a type that holds no addresses.
///
/// # Errors
/// `SchemaMismatch` naming the column and its type.
pub fn check_type(name: &str, dtype: &DataType) -> PolarsResult<()> {
    match dtype {
        DataType::String | DataType::UInt32 => Ok(()),
        other => polars_bail!(
            SchemaMismatch: "fibkit: column {name:?} is {other}; addresses are String (either family) or UInt32 (IPv4)"
        ),
    }
}

/// Parses `column`'s rows: null rows are left out, and so, unless
/// `strict`, are rows that are no address.
///
/// # Errors
/// `ComputeError` naming the row, its text and why, for the first row
/// that is no address (with `strict`); `SchemaMismatch` for a column that
/// is neither String nor UInt32.
fn split(column: &Series, strict: bool) -> PolarsResult<Split> {
    let mut split = Split { present: vec![false; column.len()], ..Split::default() };
    match column.dtype() {
        DataType::String => {
            for (row, text) in column.str()?.iter().enumerate() {
                let Some(text) = text else { continue };
                match parse_address(text.as_bytes()) {
                    Ok(addr) => split.push(row, addr),
                    Err(error) if strict => polars_bail!(
                        ComputeError: "fibkit: row {row} of column {:?}: {text:?} is not an IP address ({error}); \
                         strict=False makes such rows null",
                        column.name()
                    ),
                    Err(_) => {}
                }
            }
        }
        DataType::UInt32 => {
            for (row, key) in column.u32()?.iter().enumerate() {
                if let Some(key) = key {
                    split.push(row, AnyAddr::V4(key));
                }
            }
        }
        other => check_type(column.name(), other)?,
    }
    Ok(split)
}

/// One address's answer: its family's FIB and that FIB's answer.
#[derive(Clone, Copy)]
pub enum Answer<'a> {
    /// An IPv4 address's.
    V4(&'a CompiledFamily<u32>, u32),
    /// An IPv6 address's.
    V6(&'a CompiledFamily<u128>, u32),
}

impl Answer<'_> {
    /// The route's next hop ([`fibkit::NO_ROUTE`] for none).
    pub fn next_hop(self) -> NextHop {
        match self {
            Answer::V4(family, answer) => family.next_hop(answer),
            Answer::V6(family, answer) => family.next_hop(answer),
        }
    }

    /// The matched prefix as text (`10.0.0.0/8`); `None` for no route, or
    /// a family compiled without prefixes.
    pub fn prefix(self) -> Option<String> {
        match self {
            Answer::V4(family, answer) => family.route(answer).map(|(prefix, _)| prefix.to_string()),
            Answer::V6(family, answer) => family.route(answer).map(|(prefix, _)| prefix.to_string()),
        }
    }
}

/// Looks `keys` up in `family` (none: no answer), handing each answer to
/// `put` with its row.
fn resolve<'a, A: Address>(
    family: Option<&'a CompiledFamily<A>>,
    keys: &[A],
    rows: &[usize],
    answer: fn(&'a CompiledFamily<A>, u32) -> Answer<'a>,
    put: &mut impl FnMut(usize, Answer<'a>),
) {
    let Some(family) = family else { return };
    let mut answers = vec![0; keys.len()];
    family.lookup_batch(keys, &mut answers);
    for (&row, &found) in rows.iter().zip(&answers) {
        put(row, answer(family, found));
    }
}

/// Looks every address of `column` up in `table`, handing each address's
/// answer to `put` with its row. Returns which rows held an address (not
/// null, and parsed).
///
/// # Errors
/// As [`split`].
pub fn look_up<'a>(
    table: &'a CompiledTable,
    column: &Series,
    strict: bool,
    mut put: impl FnMut(usize, Answer<'a>),
) -> PolarsResult<Vec<bool>> {
    let split = split(column, strict)?;
    resolve(table.v4.as_ref(), &split.keys4, &split.rows4, Answer::V4, &mut put);
    resolve(table.v6.as_ref(), &split.keys6, &split.rows6, Answer::V6, &mut put);
    Ok(split.present)
}
