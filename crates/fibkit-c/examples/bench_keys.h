/*
 * The key streams of bench_dpdk.c: the same keys, bit for bit, as
 * `fibkit bench` draws for IPv4 (fibkit::random), so that the two harnesses
 * measure the same lookups (tests/bench_keys.rs checks it).
 *
 *   bench_seed(t)      worker t's seed, fibkit::random::worker_seed(t);
 *   bench_scalar(seed) the scalar tests' xorshift32 state, XorShift32::new;
 *   lanes_seed         sixteen xorshift32 lanes, XorShift32x16::new: each
 *                      lane's state from SplitMix64 of the seed and the
 *                      lane's number, so no lane is another's shifted copy;
 *   lanes_fill         one key a lane a step, XorShift32x16::fill.
 */
#ifndef FIBKIT_BENCH_KEYS_H
#define FIBKIT_BENCH_KEYS_H

#include <stdint.h>

#define LANES 16
#define GOLDEN UINT64_C(0x9e3779b97f4a7c15)

static inline uint32_t xorshift32(uint32_t *state) {
    uint32_t x = *state;
    x ^= x << 13;
    x ^= x >> 17;
    x ^= x << 5;
    return *state = x;
}

static inline uint64_t bench_seed(unsigned thread) { return (uint64_t)(thread + 1) * GOLDEN; }

/* A 64-bit seed folded into a nonzero xorshift32 state. */
static inline uint32_t bench_scalar(uint64_t seed) {
    uint32_t folded = (uint32_t)(seed ^ (seed >> 32));
    return folded ? folded : 0x9e3779b9u;
}

static inline uint64_t split_mix(uint64_t z) {
    z = (z ^ (z >> 30)) * UINT64_C(0xbf58476d1ce4e5b9);
    z = (z ^ (z >> 27)) * UINT64_C(0x94d049bb133111eb);
    return z ^ (z >> 31);
}

static inline void lanes_seed(uint32_t lanes[LANES], uint64_t seed) {
    for (int lane = 0; lane < LANES; lane++) lanes[lane] = bench_scalar(split_mix(seed + (uint64_t)(lane + 1) * GOLDEN));
}

/* Sixteen lanes stepped together (the compiler vectorises the step), so a
 * key costs a fraction of a cycle, where one scalar stream's dependent
 * shifts would cap a batch path at a few hundred million keys a second.
 * `n` is a multiple of LANES. */
static inline void lanes_fill(uint32_t lanes[LANES], uint32_t *keys, unsigned n) {
    for (unsigned done = 0; done < n; done += LANES)
        for (int lane = 0; lane < LANES; lane++) keys[done + lane] = xorshift32(&lanes[lane]);
}

#endif
