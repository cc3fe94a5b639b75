//! Escape sequences in tool output, on about 1 MB of coloured compiler output with
//! progress bars, titles and hyperlinks: `terminal_text::clean` (what `exec` prints),
//! the same through a `Cleaner` in 64-byte deltas (as a stream arrives), and `ansi_lines`
//! (the workbench's tool-output view). `cargo bench --bench escapes`.

use std::hint::black_box;
use std::time::Duration;

use criterion::{Criterion, Throughput, criterion_group, criterion_main};
use miniagent_text::{self as terminal_text, Cleaner};
use miniagent_tui::text::ansi::ansi_lines;
use miniagent_tui::theme::Theme;

fn output() -> String {
    let mut text = String::new();
    let mut n = 0;
    while text.len() < 1 << 20 {
        n += 1;
        text.push_str(&format!(
            "\x1b[1m\x1b[32m   Compiling\x1b[0m crate-{n} v0.1.{n}\n\
             \x1b[1m\x1b[33mwarning\x1b[0m\x1b[1m: unused variable: `x{n}`\x1b[0m\n\
             \x20 \x1b[1m\x1b[34m-->\x1b[0m src/lib.rs:{n}:9 \x1b]8;;file:///src/lib.rs\x1b\\link\x1b]8;;\x1b\\\n\
             [>   ] 10%\r[==> ] 60%\r[====] 100%\x1b[K 你好 e\u{301} 👍🏽\n\
             plain text line with nothing to remove in it, as most output is\n"
        ));
    }
    text
}

fn bench_escapes(c: &mut Criterion) {
    let text = output();
    let theme = Theme::dark();
    let mut group = c.benchmark_group("escapes_1mb");
    group.throughput(Throughput::Bytes(text.len() as u64));
    group.bench_function("clean", |b| {
        b.iter(|| terminal_text::clean(black_box(&text)).len());
    });
    group.bench_function("cleaner_64_byte_deltas", |b| {
        b.iter(|| {
            let mut cleaner = Cleaner::default();
            let mut out = String::with_capacity(text.len());
            let mut rest = text.as_str();
            while !rest.is_empty() {
                let mut end = rest.len().min(64);
                while !rest.is_char_boundary(end) {
                    end += 1;
                }
                cleaner.push(&rest[..end], &mut out);
                rest = &rest[end..];
            }
            out.len()
        });
    });
    group.bench_function("ansi_lines", |b| {
        b.iter(|| ansi_lines(black_box(&text), &theme).len());
    });
    group.finish();
}

criterion_group! {
    name = benches;
    config = Criterion::default().sample_size(20).measurement_time(Duration::from_secs(4));
    targets = bench_escapes
}
criterion_main!(benches);
