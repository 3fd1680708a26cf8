//! `fibkit.BgpSpeaker`: a live FIB of each family fed by BGP neighbours
//! (the `fibkit-sources` speaker), looked up from Python while the
//! sessions run on threads of their own.

use std::net::{Ipv4Addr, SocketAddr};
use std::sync::RwLock;

use pyo3::exceptions::{PyOSError, PyRuntimeError, PyTypeError, PyValueError};
use pyo3::prelude::*;
use pyo3::types::{PyDict, PyList, PyString};

use fibkit::address_text::ipv4_mapped;
use fibkit::load::ValueChoice;
use fibkit::nexthop::{Mapping, NextHopTable};
use fibkit::router::{Router, Window};
use fibkit::{registry, Address, NextHop, Rib, NO_ROUTE};
use fibkit_sources::bgp::{BgpConfig, NeighbourConfig, Speaker};

use crate::convert;

/// A receive-only BGP speaker and the live FIBs it feeds.
#[pyclass(frozen, name = "BgpSpeaker", module = "fibkit")]
pub struct PyBgpSpeaker {
    /// `None` once stopped.
    speaker: RwLock<Option<Speaker>>,
}

impl PyBgpSpeaker {
    /// Runs `with` on the running speaker.
    fn running<T>(&self, with: impl FnOnce(&Speaker) -> PyResult<T>) -> PyResult<T> {
        let speaker = self.speaker.read().map_err(|_| PyRuntimeError::new_err("the speaker's lock is poisoned"))?;
        match speaker.as_ref() {
            Some(speaker) => with(speaker),
            None => Err(PyRuntimeError::new_err("the speaker is stopped")),
        }
    }
}

/// The route value that next hop `hop` of `speaker`'s family-`A` FIB
/// stands for.
fn answer<'py, A: Address>(py: Python<'py>, speaker: &Speaker, hop: NextHop) -> PyResult<Option<Bound<'py, PyAny>>> {
    match (hop != NO_ROUTE).then(|| speaker.label::<A>(hop)).flatten() {
        Some(label) => convert::label_object(py, label).map(Some),
        None => Ok(None),
    }
}

#[pymethods]
impl PyBgpSpeaker {
    /// Starts peering: `neighbors` are `"ADDRESS,as=ASN"` strings (with
    /// `,connect=PORT` and `,max-prefixes=N`), `listen` the
    /// `"ADDRESS:PORT"`s to accept them on; `value` is `"next-hop"` or
    /// `"origin-as"`.
    #[new]
    #[pyo3(signature = (local_as, router_id, neighbors, listen=Vec::new(), value="next-hop", hold_time=90, engine=None, engine6=None))]
    #[allow(clippy::too_many_arguments)]
    fn new(
        py: Python<'_>,
        local_as: u32,
        router_id: &str,
        neighbors: Vec<String>,
        listen: Vec<String>,
        value: &str,
        hold_time: u16,
        engine: Option<String>,
        engine6: Option<String>,
    ) -> PyResult<Self> {
        let router_id: Ipv4Addr = router_id
            .parse()
            .map_err(|_| PyValueError::new_err(format!("router_id {router_id:?}: an IPv4 address")))?;
        let mut config = BgpConfig::new(local_as, router_id);
        config.hold_time = hold_time;
        config.value = value.parse::<ValueChoice>().map_err(PyValueError::new_err)?;
        for (position, spec) in neighbors.iter().enumerate() {
            let neighbour = spec
                .parse::<NeighbourConfig>()
                .map_err(|problem| PyValueError::new_err(format!("neighbor {position}: {problem}")))?;
            config.neighbours.push(neighbour);
        }
        for address in &listen {
            let parsed: SocketAddr = address
                .parse()
                .map_err(|_| PyValueError::new_err(format!("listen {address:?}: expected ADDRESS:PORT")))?;
            config.listen.push(parsed);
        }
        let engine4 = registry::resolve::<u32>(engine.as_deref().unwrap_or(registry::DEFAULT_IPV4))
            .map_err(|error| PyValueError::new_err(error.to_string()))?;
        let engine6 = registry::resolve::<u128>(engine6.as_deref().unwrap_or(registry::DEFAULT_IPV6))
            .map_err(|error| PyValueError::new_err(error.to_string()))?;
        let table = || NextHopTable::new(Mapping::Distinct);
        let build_error = crate::table::build_error;
        let router4 = Router::new(engine4.name, Rib::new(), table(), Window::Count(1)).map_err(build_error)?;
        let router6 = Router::new(engine6.name, Rib::new(), table(), Window::Count(1)).map_err(build_error)?;
        let speaker = py.detach(|| Speaker::start(config, router4, router6)).map_err(|error| match error {
            fibkit_sources::bgp::StartError::Listen { .. } => PyOSError::new_err(error.to_string()),
            fibkit_sources::bgp::StartError::Config(_) => PyValueError::new_err(error.to_string()),
        })?;
        Ok(PyBgpSpeaker { speaker: RwLock::new(Some(speaker)) })
    }

    /// The route value of an address (a string of either family, or an
    /// int: IPv4; an IPv4-mapped one, `::ffff:a.b.c.d`, as IPv4), or of
    /// each address of a list; None: no route.
    fn lookup<'py>(&self, py: Python<'py>, addr: &Bound<'py, PyAny>) -> PyResult<Bound<'py, PyAny>> {
        self.running(|speaker| {
            let (reader4, reader6) = (speaker.reader4(), speaker.reader6());
            let one = |addr: &Bound<'py, PyAny>| -> PyResult<Option<Bound<'py, PyAny>>> {
                let ipv6 = addr.cast::<PyString>().is_ok_and(|text| text.to_cow().is_ok_and(|text| text.contains(':')));
                if !ipv6 {
                    return answer::<u32>(py, speaker, reader4.lookup(convert::address::<u32>(addr)?));
                }
                // A mapped address is looked up as IPv4.
                let key = convert::address::<u128>(addr)?;
                match ipv4_mapped(key) {
                    Some(key) => answer::<u32>(py, speaker, reader4.lookup(key)),
                    None => answer::<u128>(py, speaker, reader6.lookup(key)),
                }
            };
            if let Ok(list) = addr.cast::<PyList>() {
                let answers = list.iter().map(|addr| one(&addr)).collect::<PyResult<Vec<_>>>()?;
                return Ok(PyList::new(py, answers)?.into_any());
            }
            if addr.is_instance_of::<PyString>() || addr.extract::<u128>().is_ok() {
                return Ok(one(addr)?.unwrap_or_else(|| py.None().into_bound(py)));
            }
            Err(PyTypeError::new_err("lookup takes an address (a string or an int) or a list of them"))
        })
    }

    /// The addresses connections are accepted on, as `"ADDRESS:PORT"`.
    #[getter]
    fn local_addresses(&self) -> PyResult<Vec<String>> {
        self.running(|speaker| Ok(speaker.local_addrs().iter().map(ToString::to_string).collect()))
    }

    /// Each neighbour's state and counts, as dicts.
    fn neighbors<'py>(&self, py: Python<'py>) -> PyResult<Vec<Bound<'py, PyDict>>> {
        self.running(|speaker| {
            speaker
                .neighbours()
                .into_iter()
                .map(|neighbour| {
                    let dict = PyDict::new(py);
                    dict.set_item("address", neighbour.address.to_string())?;
                    dict.set_item("remote_as", neighbour.remote_as)?;
                    dict.set_item("state", neighbour.state.to_string())?;
                    dict.set_item("prefixes", neighbour.prefixes)?;
                    dict.set_item("updates", neighbour.updates)?;
                    dict.set_item("sessions", neighbour.sessions)?;
                    dict.set_item("last_error", neighbour.last_error)?;
                    Ok(dict)
                })
                .collect()
        })
    }

    /// The FIBs' counts: routes of each family, updates applied and
    /// rejected, batches.
    fn stats<'py>(&self, py: Python<'py>) -> PyResult<Bound<'py, PyDict>> {
        self.running(|speaker| {
            let stats = speaker.stats();
            let dict = PyDict::new(py);
            dict.set_item("routes4", stats.routes4)?;
            dict.set_item("routes6", stats.routes6)?;
            dict.set_item("updates_applied", stats.updates_applied)?;
            dict.set_item("updates_rejected", stats.updates_rejected)?;
            dict.set_item("batches", stats.batches)?;
            Ok(dict)
        })
    }

    /// The sessions' log: its last lines, oldest first.
    fn journal(&self) -> PyResult<Vec<String>> {
        self.running(|speaker| Ok(speaker.journal()))
    }

    /// Ends every session (a Cease, Administrative Shutdown) and the
    /// speaker's threads; the FIBs go with it. Stopping twice is allowed.
    fn stop(&self, py: Python<'_>) -> PyResult<()> {
        let speaker =
            self.speaker.write().map_err(|_| PyRuntimeError::new_err("the speaker's lock is poisoned"))?.take();
        if let Some(speaker) = speaker {
            py.detach(move || drop(speaker.stop()));
        }
        Ok(())
    }

    fn __enter__(slf: Py<Self>) -> Py<Self> {
        slf
    }

    fn __exit__(
        &self,
        py: Python<'_>,
        _kind: &Bound<'_, PyAny>,
        _value: &Bound<'_, PyAny>,
        _traceback: &Bound<'_, PyAny>,
    ) -> PyResult<bool> {
        self.stop(py)?;
        Ok(false)
    }

    fn __repr__(&self) -> String {
        match self.speaker.read().ok().as_deref() {
            Some(Some(speaker)) => {
                let stats = speaker.stats();
                format!(
                    "BgpSpeaker({} neighbours, {} IPv4 and {} IPv6 routes)",
                    speaker.neighbours().len(),
                    stats.routes4,
                    stats.routes6
                )
            }
            _ => "BgpSpeaker(stopped)".to_string(),
        }
    }
}
