//! Independent runs on worker threads, results in index order whatever the thread count, and
//! the thread-CPU clock every timing uses.
//!
//! Written by hand (no rayon): the only patterns needed are an ordered parallel map and a
//! longest-first dispatch, each a few dozen lines over `std::thread::scope`.

/// CPU time of the calling thread (`CLOCK_THREAD_CPUTIME_ID`): the clock of every rate and
/// timing hotlaunch prints, since wall time on a shared host lies.
pub fn thread_cpu() -> std::time::Duration {
    cpu_time::ThreadTime::now().as_duration()
}

/// Worker threads for independent runs: `HOTLAUNCH_JOBS` if set (at least 1), else the
/// machine's available parallelism.
pub fn jobs() -> usize {
    std::env::var("HOTLAUNCH_JOBS")
        .ok()
        .and_then(|v| v.trim().parse::<usize>().ok())
        .unwrap_or_else(|| std::thread::available_parallelism().map_or(1, |n| n.get()))
        .max(1)
}

/// Apply `f` to `0..n` on up to `threads` worker threads and return the results in index
/// order. Each call must be independent of the others (a run builds its own policy state, kernel
/// and heaps from its spec and seed), so the results are identical whatever the thread count.
pub fn par_map<T: Send>(n: usize, threads: usize, f: impl Fn(usize) -> T + Sync) -> Vec<T> {
    let next = std::sync::atomic::AtomicUsize::new(0);
    par_dispatch(
        n,
        threads,
        || Some(next.fetch_add(1, std::sync::atomic::Ordering::Relaxed)).filter(|&i| i < n),
        f,
    )
}

/// The worker pool of [`par_map`] and [`par_map_lpt`]: each worker asks `next` for a run
/// until it says none is left (`next` hands out every index in `0..n` once); results in index
/// order. One thread: `next`'s order on the calling thread.
fn par_dispatch<T: Send>(
    n: usize,
    threads: usize,
    next: impl Fn() -> Option<usize> + Sync,
    f: impl Fn(usize) -> T + Sync,
) -> Vec<T> {
    use std::sync::Mutex;
    let threads = threads.clamp(1, n.max(1));
    let slots: Mutex<Vec<Option<T>>> = Mutex::new((0..n).map(|_| None).collect());
    let worker = || {
        while let Some(i) = next() {
            let v = f(i);
            slots.lock().unwrap_or_else(|e| e.into_inner())[i] = Some(v);
        }
    };
    if threads == 1 {
        worker();
    } else {
        // A panicking worker propagates out of the scope (no silently missing result).
        std::thread::scope(|s| {
            for _ in 0..threads {
                s.spawn(worker);
            }
        });
    }
    slots
        .into_inner()
        .unwrap_or_else(|e| e.into_inner())
        .into_iter()
        .map(|v| v.expect("every index is mapped once"))
        .collect()
}

/// [`par_map`] with longest-first dispatch (LPT scheduling): run `i` belongs to class
/// `class(i)` (e.g. a policy row of `compare`), and a free worker takes the first unstarted
/// run of the class whose finished runs took the most thread-CPU on average; classes not
/// measured yet go first, in index order. The long runs start early instead of ending the
/// batch on one thread while the others idle. The dispatch order changes only timing: results
/// are in index order and identical to [`par_map`]'s.
pub fn par_map_lpt<T: Send>(
    n: usize,
    threads: usize,
    class: impl Fn(usize) -> usize + Sync,
    f: impl Fn(usize) -> T + Sync,
) -> Vec<T> {
    use std::sync::Mutex;
    let classes = (0..n).map(&class).max().map_or(0, |c| c + 1);
    // Per class: CPU seconds and count of finished runs; per run: started.
    let state = Mutex::new((vec![(0.0f64, 0u32); classes], vec![false; n]));
    let next = || {
        let mut s = state.lock().unwrap_or_else(|e| e.into_inner());
        let (cost, started) = &mut *s;
        let key = |c: usize| match cost[c] {
            (_, 0) => f64::INFINITY,
            (sum, k) => sum / k as f64,
        };
        let mut best: Option<usize> = None;
        for i in (0..n).filter(|&i| !started[i]) {
            if best.is_none_or(|b| key(class(i)) > key(class(b))) {
                best = Some(i);
            }
        }
        if let Some(i) = best {
            started[i] = true;
        }
        best
    };
    par_dispatch(n, threads, next, |i| {
        let t0 = thread_cpu();
        let v = f(i);
        let dt = (thread_cpu() - t0).as_secs_f64();
        let mut s = state.lock().unwrap_or_else(|e| e.into_inner());
        let c = &mut s.0[class(i)];
        c.0 += dt;
        c.1 += 1;
        v
    })
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn lpt_results_are_par_maps_whatever_the_threads() {
        let f = |i: usize| i * 7 % 13;
        let want = par_map(50, 1, f);
        for threads in [1, 2, 3] {
            assert_eq!(par_map_lpt(50, threads, |i| i % 5, f), want);
            assert_eq!(par_map(50, threads, f), want);
        }
        assert!(par_map_lpt(0, 2, |i| i, |i| i).is_empty());
    }

    #[test]
    fn lpt_dispatches_the_costliest_class_first_once_measured() {
        // One thread: the dispatch order is observable. Class 1 burns CPU, class 0 does not.
        let order = std::sync::Mutex::new(Vec::new());
        par_map_lpt(
            6,
            1,
            |i| i % 2,
            |i| {
                order.lock().unwrap().push(i);
                if i % 2 == 1 {
                    let t = thread_cpu();
                    while (thread_cpu() - t).as_millis() < 20 {
                        std::hint::black_box(0);
                    }
                }
            },
        );
        // Both classes are measured first (index order), then class 1's runs go before class 0's.
        assert_eq!(order.into_inner().unwrap(), vec![0, 1, 3, 5, 2, 4]);
    }
}
