//! The repetition guard over a streamed reply: a reply of 1 MB and of 8 MB of prose that
//! never repeats (the guard's worst case: every check finds nothing), arriving in 1 KB
//! deltas, with the guard asked after each delta as the model call does. The cost must
//! grow linearly with the reply (issue 15, item 7: it used to be quadratic).
//!
//! Run: `cargo bench --bench repetition`
#![allow(clippy::unwrap_used, clippy::expect_used)] // A test fails by panicking.

use std::hint::black_box;
use std::time::Duration;

use criterion::{BenchmarkId, Criterion, Throughput, criterion_group, criterion_main};
use miniagent_core::agent::repetition::RepetitionGuard;

const DELTA_BYTES: usize = 1024;

/// `bytes` of prose in which no sentence repeats.
fn prose(bytes: usize) -> String {
    let mut text = String::with_capacity(bytes + 100);
    let mut n = 0u64;
    while text.len() < bytes {
        n += 1;
        text.push_str(&format!(
            "Line {n} says something new about item {}. ",
            n * 7919 % 10007
        ));
    }
    text.truncate(bytes);
    text
}

fn stream(reply: &str) -> bool {
    let mut guard = RepetitionGuard::default();
    let mut streamed = String::with_capacity(reply.len());
    let mut stuck = false;
    for delta in reply.as_bytes().chunks(DELTA_BYTES) {
        // The prose is ASCII, so every chunk is a whole string.
        streamed.push_str(std::str::from_utf8(delta).unwrap_or_default());
        stuck |= guard.check(black_box(&streamed));
    }
    stuck
}

fn repetition(c: &mut Criterion) {
    let mut group = c.benchmark_group("repetition_guard");
    group.sample_size(10).measurement_time(Duration::from_secs(5));
    for megabytes in [1usize, 8] {
        let reply = prose(megabytes << 20);
        assert!(!stream(&reply), "prose must not look like a loop");
        group.throughput(Throughput::Bytes(reply.len() as u64));
        group.bench_with_input(
            BenchmarkId::new("reply_in_1k_deltas", format!("{megabytes}MB")),
            &reply,
            |b, reply| b.iter(|| stream(reply)),
        );
    }
    group.finish();
}

criterion_group!(benches, repetition);
criterion_main!(benches);
