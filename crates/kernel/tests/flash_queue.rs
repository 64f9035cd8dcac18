//! The flash device's FIFO is ordered by submission time (`swap.rs`, `FlashDevice`): in time
//! order it is a plain FIFO with a request queue of `NR_REQUESTS`; a request submitted earlier
//! in simulated time than requests already placed does not queue behind them.

use hotlaunch_kernel as kernel;
use kernel::swap::{FlashDevice, NR_REQUESTS};

const MS: u64 = 1_000_000;

/// 100 µs per I/O plus 1 ms per MB both ways.
fn device() -> FlashDevice {
    FlashDevice::new(100_000, 100_000, 1000.0, 1000.0)
}

#[test]
fn in_time_order_requests_queue_fifo() {
    let mut f = device();
    let a = f.read(0, 1 << 20);
    let b = f.read(0, 1 << 20);
    // The second starts when the first completes.
    assert_eq!(b, 2 * a);
    // Submitted after both completed: no wait.
    assert_eq!(f.read(10 * a, 4096), device().read(0, 4096));
    assert_eq!(f.busy_until(), 10 * a + device().read(0, 4096));
}

#[test]
fn a_request_submitted_earlier_in_simulated_time_does_not_wait_for_later_ones() {
    let mut f = device();
    // An atomic launch submits its reads up to t = 8 s first ...
    let mut t = 0;
    while t < 8_000 * MS {
        t += f.read(t, 64 << 10);
    }
    // ... then a background writer at 2 s: it waits for the read in flight at 2 s only.
    let w = f.write(2_000 * MS, 4096);
    assert!(w < 2 * device().read(0, 64 << 10), "waited {w} ns");
    assert!(f.busy_until() >= 8_000 * MS);
}

#[test]
fn a_full_request_queue_blocks_the_submitter_until_its_oldest_request_completes() {
    let mut f = device();
    let one = device().write(0, 4096);
    for _ in 0..NR_REQUESTS {
        f.write(0, 4096);
    }
    assert_eq!(f.submit_delay(0), one);
    // At a time before any of them was submitted the queue is empty.
    let mut g = device();
    for _ in 0..NR_REQUESTS {
        g.write(5 * MS, 4096);
    }
    assert_eq!(g.submit_delay(MS), 0);
    assert!(g.submit_delay(5 * MS) > 0);
}
