//! `cargo run --release -p hotlaunch-runtime --example gc_bench`: GC object visits per wall-clock
//! second (`hotlaunch bench` reports the same rate per CPU-second).
fn wall() -> std::time::Duration {
    std::time::SystemTime::now()
        .duration_since(std::time::UNIX_EPOCH)
        .unwrap_or_default()
}

fn main() {
    let secs = std::env::args()
        .nth(1)
        .and_then(|s| s.parse().ok())
        .unwrap_or(2.0);
    println!(
        "gc_object_visits_per_sec: {:.0}",
        runtime::bench::gc_object_visits_per_sec(secs, wall)
    );
}
