//! fibkit's Polars expression plugin: longest-prefix-match lookups of an
//! address column in a compiled FIB file, inside Polars' own engine.
//!
//! ```python
//! import polars as pl, fibkit.polars
//! flows.with_columns(pl.col("src").fibkit.lookup("geo.fib", fields=["country", "asn"]))
//! ```
//!
//! Polars calls [`lookup`] and [`prefix`] through its plugin interface
//! (`pyo3-polars`' `polars_expr`): once a chunk of the column, from its own
//! threads, without the GIL, so that lazy and streaming queries run them
//! as they run their own element-wise expressions. The table is named by
//! its path in the expression's keyword arguments and opened once per
//! process ([`tables`]); the column is read in place ([`keys`]); the answers
//! become a struct of the record's fields or a column of values
//! ([`columns`]).
//!
//! This is an extension of its own, apart from the bindings (`fibkit`):
//! `pyo3-polars` pins its own pyo3, and one extension holds one.

mod columns;
mod keys;
mod tables;

use std::path::Path;
use std::sync::Arc;

use polars::prelude::*;
use pyo3::prelude::*;
use pyo3_polars::derive::polars_expr;
use serde::Deserialize;

use fibkit::NO_ROUTE;

use crate::columns::Choice;
use crate::tables::Table;

/// The keyword arguments of `fibkit.lookup` (`fibkit_polars.lookup`).
#[derive(Deserialize)]
struct LookupKwargs {
    /// The compiled FIB file's path (absolute: made so in Python).
    table: String,
    /// The fields of a table of records (`None`: all), or `None` for a
    /// table's values.
    fields: Option<Vec<String>>,
    /// Whether a row that is no address is an error (else null).
    strict: bool,
}

/// The keyword arguments of `fibkit.prefix`.
#[derive(Deserialize)]
struct PrefixKwargs {
    table: String,
    strict: bool,
}

/// The table at `path`, opened once ([`tables::open`]).
///
/// # Errors
/// `ComputeError` with the path and why it cannot be opened.
fn open(path: &str) -> PolarsResult<Arc<Table>> {
    tables::open(Path::new(path)).map_err(|message| polars_err!(ComputeError: "fibkit: {message}"))
}

/// The one input column's field or series.
fn only<T>(inputs: &[T]) -> PolarsResult<&T> {
    match inputs {
        [input] => Ok(input),
        _ => polars_bail!(ComputeError: "fibkit: one address column, not {}", inputs.len()),
    }
}

/// The type of `lookup`'s answer: the chosen fields' struct, or the
/// values' type (see [`columns::dtype`]), named after the input.
fn lookup_field(inputs: &[Field], kwargs: LookupKwargs) -> PolarsResult<Field> {
    let input = only(inputs)?;
    keys::check_type(input.name(), input.dtype())?;
    let table = open(&kwargs.table)?;
    let choice = columns::choose(&table, kwargs.fields.as_deref())?;
    Ok(Field::new(input.name().clone(), columns::dtype(&table, &choice)))
}

/// The route of each address: a struct of its record's fields, or its
/// value. A row without an address (null, or malformed and not
/// `strict`) is null; a row without a route has null fields.
#[polars_expr(output_type_func_with_kwargs = lookup_field)]
fn lookup(inputs: &[Series], kwargs: LookupKwargs) -> PolarsResult<Series> {
    let column = only(inputs)?;
    let table = open(&kwargs.table)?;
    let choice: Choice = columns::choose(&table, kwargs.fields.as_deref())?;
    let mut hops = vec![NO_ROUTE; column.len()];
    let present = keys::look_up(&table.compiled, column, kwargs.strict, |row, answer| {
        if let Some(hop) = hops.get_mut(row) {
            *hop = answer.next_hop();
        }
    })?;
    columns::answers(column.name().clone(), &table, &choice, &hops, &present)
}

/// The type of `prefix`'s answer: text.
fn prefix_field(inputs: &[Field]) -> PolarsResult<Field> {
    let input = only(inputs)?;
    keys::check_type(input.name(), input.dtype())?;
    Ok(Field::new(input.name().clone(), DataType::String))
}

/// The matched prefix of each address (`"10.0.0.0/8"`), for a table
/// compiled with prefixes; null where no route.
#[polars_expr(output_type_func = prefix_field)]
fn prefix(inputs: &[Series], kwargs: PrefixKwargs) -> PolarsResult<Series> {
    let column = only(inputs)?;
    let table = open(&kwargs.table)?;
    let compiled = &table.compiled;
    let without = [
        compiled.v4.as_ref().map(|family| family.has_prefixes()),
        compiled.v6.as_ref().map(|family| family.has_prefixes()),
    ];
    if without.contains(&Some(false)) {
        polars_bail!(
            ComputeError: "fibkit: {} was compiled without its prefixes (fibkit compile --prefix, or Table.load(prefixes=True))",
            compiled.name
        );
    }
    let mut prefixes: Vec<Option<String>> = vec![None; column.len()];
    keys::look_up(compiled, column, kwargs.strict, |row, answer| {
        if let Some(slot) = prefixes.get_mut(row) {
            *slot = answer.prefix();
        }
    })?;
    Ok(StringChunked::from_iter_options(column.name().clone(), prefixes.into_iter()).into_series())
}

/// The extension module Python imports (`fibkit_polars._fibkit_polars`):
/// empty, as Polars finds the plugin's functions by their symbols.
#[pymodule]
fn _fibkit_polars(_module: &Bound<'_, PyModule>) -> PyResult<()> {
    Ok(())
}
