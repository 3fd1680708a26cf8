//! Replays the LINX update trace on the 2014 table several times through
//! the router, for profiling the update path (`cargo run --release
//! --example update_profile -- TABLE TRACE ENGINE BATCH ROUNDS`).

use std::time::Instant;

use fibkit::addr::Prefix4;
use fibkit::live::{ApplyContext, Updater};
use fibkit::load::{self, LoadOptions};
use fibkit::nexthop::Mapping;
use fibkit::router::{Router, Update, Window};

fn main() {
    let args: Vec<String> = std::env::args().skip(1).collect();
    let [table, trace, engine, batch, rounds] = &args[..] else {
        panic!("usage: update_profile TABLE TRACE ENGINE BATCH ROUNDS");
    };
    let (batch, rounds): (usize, usize) = (batch.parse().unwrap(), rounds.parse().unwrap());
    let options = LoadOptions { mapping: Mapping::Modulo(239), ..Default::default() };
    let table = load::load_path(table.as_ref(), &options).unwrap();
    let stream = load::load_updates(trace.as_ref(), &options).unwrap();
    let updates: Vec<Update<Prefix4>> = stream.updates.iter().filter_map(|timed| timed.update.of()).collect();
    // Routers built up front, so that a profile of the replay loop shows
    // only the update path.
    let mut routers: Vec<Router> = (0..rounds)
        .map(|_| Router::new(engine, table.v4.clone(), table.next_hops.clone(), Window::Count(batch)).unwrap())
        .collect();
    if std::env::var_os("ROUTER_ONLY").is_some() {
        // REPEAT=N replays the trace N times on each router (after the
        // first pass the trace's updates still change routes), so that a
        // profile is dominated by the update path rather than the builds.
        let repeat: usize = std::env::var("REPEAT").map_or(1, |text| text.parse().unwrap());
        // Per router: the replay's wall time; the best and the median
        // round say more than the mean on a machine shared with others.
        let mut rates: Vec<f64> = routers
            .iter_mut()
            .map(|router| {
                let start = Instant::now();
                for _ in 0..repeat {
                    for chunk in updates.chunks(batch) {
                        router.apply(chunk).unwrap();
                    }
                }
                (updates.len() * repeat) as f64 / start.elapsed().as_secs_f64()
            })
            .collect();
        rates.sort_by(f64::total_cmp);
        println!(
            "{engine} batch {batch}: {:.0} updates/s best, {:.0} median of {rounds} (router only)",
            rates[rates.len() - 1],
            rates[rates.len() / 2]
        );
        return;
    }
    for _ in 0..rounds {
        // The RIB alone: insert/remove, then the walk over each prefix.
        let mut rib = table.v4.clone();
        let mut hops = table.next_hops.clone();
        let start = Instant::now();
        for update in &updates {
            match *update {
                Update::Announce { prefix, value: label } => {
                    rib.insert(prefix, hops.intern(label));
                }
                Update::Withdraw { prefix } => {
                    rib.remove(prefix);
                }
            }
        }
        let rib_seconds = start.elapsed().as_secs_f64();
        let start = Instant::now();
        let mut runs = 0usize;
        for update in &updates {
            let prefix = update.prefix();
            rib.for_each_run(prefix.first(), prefix.last(), |_, _| runs += 1);
        }
        let walk_seconds = start.elapsed().as_secs_f64();
        println!(
            "RIB only: {:.3} us per insert/remove, {:.3} us per walk of the prefix ({runs} runs)",
            rib_seconds * 1e6 / updates.len() as f64,
            walk_seconds * 1e6 / updates.len() as f64
        );
        // RIB changes and the DXR updater's work timed apart (batch 1).
        let mut rib = table.v4.clone();
        let mut hops = table.next_hops.clone();
        let mut updater = fibkit::engines::dxr::DxrUpdater::<16>::new(&rib).unwrap();
        let (mut rib_time, mut dxr_time) = (0.0, 0.0);
        for (generation, update) in updates.iter().enumerate() {
            let start = Instant::now();
            let changed = match *update {
                Update::Announce { prefix, value: label } => {
                    let hop = hops.intern(label);
                    rib.insert(prefix, hop) != Some(hop)
                }
                Update::Withdraw { prefix } => rib.remove(prefix).is_some(),
            };
            let middle = Instant::now();
            if changed {
                let context =
                    ApplyContext { published: generation as u64, oldest_held: generation as u64, max_next_hop: 239 };
                updater.apply(&rib, &[update.prefix()], context).unwrap();
            }
            rib_time += (middle - start).as_secs_f64();
            dxr_time += middle.elapsed().as_secs_f64();
        }
        println!(
            "d16r apart: {:.3} us RIB + {:.3} us DXR per update",
            rib_time * 1e6 / updates.len() as f64,
            dxr_time * 1e6 / updates.len() as f64
        );
        let mut router = Router::new(engine, table.v4.clone(), table.next_hops.clone(), Window::Count(batch)).unwrap();
        let start = Instant::now();
        for chunk in updates.chunks(batch) {
            router.apply(chunk).unwrap();
        }
        let seconds = start.elapsed().as_secs_f64();
        println!(
            "{engine} batch {batch}: {:.0} updates/s, {} full rebuilds",
            updates.len() as f64 / seconds,
            router.stats().full_rebuilds
        );
    }
}
