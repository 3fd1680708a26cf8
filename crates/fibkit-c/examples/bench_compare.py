"""fibkit's C-API figures beside its Rust-API figures, from one sitting.

    bench_compare.py FIBKIT TABLE C_JSON [BENCH_DPDK_ARGS...]

C_JSON is what `bench_dpdk --json` wrote. This runs `fibkit bench` (the
binary FIBKIT) on TABLE with the same engines, next hops, runs and seconds
and the tests both harnesses have (SEQ, RND and REP scalar, RND batched by
64, on one thread and two), then prints each figure of both side by side,
the ceiling's too (how far the machine moved between the two runs). Both
draw the same keys (bench_keys.h). A bulk figure more than 10% apart is
marked as a disagreement: both harnesses make the same batch call. A scalar
one is marked as the C call's cost: through C every lookup is a call into
the library and the engine's indirect call, where Rust inlines the lookup
into its loop (docs/measurements.md, "The two harnesses"). The ceiling's
REP differs for another reason: Rust's loop keeps its window in registers,
and C's does not.
`make bench-c` runs it after bench_dpdk.
"""

import json
import os
import subprocess
import sys
import tempfile

# bench_dpdk's test names and the (test, batch, threads) of fibkit bench.
TESTS = {
    "SEQ": ("seq", 0, 1),
    "RND": ("rnd", 0, 1),
    "REP": ("rep", 0, 1),
    "RND bulk": ("rnd", 64, 1),
    "RND 2thr": ("rnd", 0, 2),
    "bulk 2thr": ("rnd", 64, 2),
}
# Options both harnesses take, with bench_dpdk's defaults.
SHARED = {"--engines": "d16r,d18r,poptrie18", "--nexthops": None, "--runs": "5", "--seconds": "0.25"}
TOLERANCE = 0.10


def shared_options(arguments):
    """The options of bench_dpdk's ARGS that fibkit bench takes too."""
    options = dict(SHARED)
    words = iter(arguments)
    for word in words:
        if word in SHARED:
            options[word] = next(words, None)
    return options


def rust_figures(fibkit, table, options):
    """`fibkit bench --json` for the shared tests: {(engine, test, batch, threads): result}."""
    with tempfile.TemporaryDirectory() as scratch:
        path = os.path.join(scratch, "bench.json")
        command = [fibkit, "bench", table, "--tests", "seq,rnd,rep", "--batch", "0,64", "--threads", "1,2"]
        command += [word for option, value in options.items() if value is not None for word in (option, value)]
        run = subprocess.run(command + ["--json", path], stdout=subprocess.DEVNULL, stderr=subprocess.PIPE, text=True)
        if run.returncode != 0:
            sys.exit(f"bench_compare: {' '.join(command)} failed:\n{run.stderr}")
        with open(path) as file:
            report = json.load(file)
    figures = {(r["engine"], r["test"], r["batch"], r["threads"]): r for r in report["results"]}
    return report["machine"]["cpu_model"], figures


def main():
    if len(sys.argv) < 4:
        sys.exit(__doc__)
    fibkit, table, c_json = sys.argv[1:4]
    with open(c_json) as file:
        c_report = json.load(file)
    cpu, rust = rust_figures(fibkit, table, shared_options(sys.argv[4:]))
    print(f"\nfibkit through C (bench_dpdk) and through Rust (fibkit bench), one sitting on {cpu}")
    print("Mlps, medians; the ceiling rows show how far the machine moved between the two runs")
    print(f"{'engine':<12} {'test':<10} {'C':>8} {'Rust':>8} {'C/Rust':>7}")
    disagreements = 0
    for impl in c_report["implementations"]:
        engine = "ceiling" if impl["ceiling"] else impl["fibkit_engine"]
        if not engine:
            continue
        for name, (test, batch, threads) in TESTS.items():
            c_figure = impl["tests"][name]["median"]
            mine = rust.get((engine, test, batch, threads))
            if c_figure < 0 or mine is None:
                continue
            ratio = c_figure / mine["mlps_median"]
            flag = ""
            if abs(ratio - 1) > TOLERANCE:
                calls = not batch and engine != "ceiling"
                flag = "  (a call per lookup in C)" if calls else "  <- more than 10% apart"
            disagreements += bool(batch and flag and engine != "ceiling")
            print(f"{engine:<12} {name:<10} {c_figure:8.1f} {mine['mlps_median']:8.1f} {ratio:7.2f}{flag}")
    print(f"{disagreements} engine bulk figure(s) more than 10% apart")


if __name__ == "__main__":
    main()
