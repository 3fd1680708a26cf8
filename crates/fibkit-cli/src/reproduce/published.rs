//! The papers' published figures: `data/published.json` in this crate,
//! compiled into the binary, one entry per number with where it stands in
//! its paper. The report compares against these and nothing else: no
//! published figure is written in the code.

use std::collections::BTreeMap;
use std::sync::OnceLock;

use serde::Deserialize;

/// The data file, as the crate ships it.
const DATA: &str = include_str!("../../data/published.json");

/// A paper: where it was published and what it ran on.
#[derive(Clone, Debug, Deserialize)]
pub(crate) struct Source {
    pub(crate) title: String,
    pub(crate) authors: String,
    pub(crate) venue: String,
    pub(crate) file: String,
    pub(crate) hardware: String,
    #[serde(default)]
    pub(crate) notes: String,
}

/// One published number.
#[derive(Clone, Debug, Deserialize)]
pub(crate) struct Figure {
    pub(crate) id: String,
    pub(crate) paper: String,
    /// Table, figure or section, as the paper names it.
    #[serde(rename = "where")]
    pub(crate) place: String,
    /// The paper's name for the routing table.
    pub(crate) dataset: Option<String>,
    /// fibkit's registry name of the engine, if fibkit has it.
    pub(crate) engine: Option<String>,
    /// The algorithm as the paper prints it.
    #[serde(default)]
    pub(crate) engine_as_published: Option<String>,
    pub(crate) test: String,
    pub(crate) threads: Option<u32>,
    pub(crate) metric: String,
    pub(crate) value: f64,
    pub(crate) unit: String,
    #[serde(default)]
    pub(crate) note: Option<String>,
}

/// The whole data file.
#[derive(Debug, Deserialize)]
pub(crate) struct Published {
    pub(crate) schema: u32,
    pub(crate) sources: BTreeMap<String, Source>,
    pub(crate) figures: Vec<Figure>,
}

/// What a figure is looked up by; `None` fields match anything.
#[derive(Clone, Copy, Debug, Default)]
pub(crate) struct Query<'a> {
    pub(crate) paper: &'a str,
    pub(crate) place: Option<&'a str>,
    pub(crate) dataset: Option<&'a str>,
    pub(crate) engine: Option<&'a str>,
    pub(crate) test: Option<&'a str>,
    pub(crate) threads: Option<u32>,
    pub(crate) metric: &'a str,
}

impl Published {
    /// The data file, parsed once.
    pub(crate) fn get() -> &'static Published {
        static PARSED: OnceLock<Published> = OnceLock::new();
        PARSED.get_or_init(|| Published::parse(DATA).expect("data/published.json is checked by a test"))
    }

    fn parse(text: &str) -> Result<Published, String> {
        let published: Published = serde_json::from_str(text).map_err(|error| error.to_string())?;
        if published.schema != 1 {
            return Err(format!("schema {} (this fibkit reads 1)", published.schema));
        }
        let mut ids = std::collections::BTreeSet::new();
        for figure in &published.figures {
            if !ids.insert(figure.id.as_str()) {
                return Err(format!("id {} twice", figure.id));
            }
            if !published.sources.contains_key(&figure.paper) {
                return Err(format!("{}: paper {} has no source", figure.id, figure.paper));
            }
            if let Some(engine) = &figure.engine {
                if crate::registered::find(engine).is_none() {
                    return Err(format!("{}: engine {engine} is not in the registry", figure.id));
                }
            }
        }
        Ok(published)
    }

    /// The paper's source entry.
    pub(crate) fn source(&self, paper: &str) -> Option<&Source> {
        self.sources.get(paper)
    }

    /// Every figure matching `query`, in file order.
    pub(crate) fn all(&self, query: Query<'_>) -> Vec<&Figure> {
        self.figures.iter().filter(|figure| query.matches(figure)).collect()
    }

    /// The figure with data file id `id`.
    pub(crate) fn by_id(&self, id: &str) -> Option<&Figure> {
        self.figures.iter().find(|figure| figure.id == id)
    }

    /// The first figure matching `query`.
    pub(crate) fn find(&self, query: Query<'_>) -> Option<&Figure> {
        self.figures.iter().find(|figure| query.matches(figure))
    }
}

impl Query<'_> {
    fn matches(&self, figure: &Figure) -> bool {
        figure.paper == self.paper
            && figure.metric == self.metric
            && self.place.is_none_or(|place| figure.place.starts_with(place))
            && self.dataset.is_none_or(|dataset| figure.dataset.as_deref() == Some(dataset))
            && self.engine.is_none_or(|engine| figure.engine.as_deref() == Some(engine))
            && self.test.is_none_or(|test| figure.test == test)
            && self.threads.is_none_or(|threads| figure.threads == Some(threads))
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn the_shipped_data_file_reads_and_names_known_engines() {
        let published = Published::parse(DATA).unwrap();
        assert!(published.figures.len() > 100, "{} figures", published.figures.len());
        for paper in ["poptrie", "dxr", "softcom", "lulea", "linux"] {
            assert!(published.source(paper).is_some(), "{paper}");
            assert!(published.figures.iter().any(|figure| figure.paper == paper), "{paper}");
        }
    }

    #[test]
    fn bad_data_files_say_what_is_wrong() {
        let figure = |id: &str, engine: &str| {
            format!(
                r#"{{"id":"{id}","paper":"p","where":"Table 1","dataset":null,"engine":{engine},"test":"rnd","threads":null,"metric":"mlps","value":1,"unit":"Mlps"}}"#
            )
        };
        let file = |figures: &[String]| {
            format!(
                r#"{{"schema":1,"sources":{{"p":{{"title":"t","authors":"a","venue":"v","file":"f","hardware":"h"}}}},"figures":[{}]}}"#,
                figures.join(",")
            )
        };
        assert_eq!(Published::parse(&file(&[figure("a", "null")])).unwrap().figures.len(), 1);
        assert_eq!(Published::parse(&file(&[figure("a", "null"), figure("a", "null")])).unwrap_err(), "id a twice");
        let unknown = Published::parse(&file(&[figure("b", "\"nonesuch\"")])).unwrap_err();
        assert_eq!(unknown, "b: engine nonesuch is not in the registry");
        assert!(Published::parse(&file(&[]).replace("\"schema\":1", "\"schema\":2"))
            .unwrap_err()
            .starts_with("schema 2"));
    }
}
