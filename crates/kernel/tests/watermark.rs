//! The high-order watermark check (`__zone_watermark_ok` with Android's
//! `min_free_order_shift`) and where its shift comes from.

use hotlaunch_kernel as kernel;
use kernel::types::NR_ORDERS;
use kernel::zone_watermark_ok;

fn free(counts: &[(usize, u64)]) -> [u64; NR_ORDERS] {
    let mut f = [0; NR_ORDERS];
    for &(o, n) in counts {
        f[o] = n;
    }
    f
}

/// 1,000 free order-0 pages and 16 order-1 blocks: an order-1 request leaves 31 pages above
/// order 0, which fails the reserve 100 >> 1 = 50 but passes 100 >> 2 = 25.
#[test]
fn shift_decides_an_order_1_request_on_fragmented_memory() {
    let f = free(&[(0, 1000), (1, 16)]);
    assert!(!zone_watermark_ok(&f, 1, 100, Some(1)));
    assert!(zone_watermark_ok(&f, 1, 100, Some(2)));
    // Order 0 ignores the per-order loop: only the total counts.
    assert!(zone_watermark_ok(&f, 0, 100, Some(1)));
}

/// Free memory made of high-order blocks passes at every order; the same amount in order-0
/// pages passes only order 0.
#[test]
fn only_blocks_at_or_above_the_order_count_past_the_first_step() {
    let high = free(&[(8, 10)]); // 2,560 pages in order-8 blocks
    let low = free(&[(0, 2560)]);
    for order in 0..=8 {
        assert!(zone_watermark_ok(&high, order, 1000, Some(1)), "order {order}");
        assert_eq!(
            zone_watermark_ok(&low, order, 1000, Some(1)),
            order == 0,
            "order {order}"
        );
    }
    // The first step: free minus the request (less one page, as Linux) must exceed the mark.
    assert!(!zone_watermark_ok(&free(&[(0, 1000)]), 0, 1000, Some(1)));
    assert!(zone_watermark_ok(&free(&[(0, 1001)]), 0, 1000, Some(1)));
    // One order-8 block alone (mark 0) serves an order-8 request: Linux counts 2^order - 1.
    assert!(zone_watermark_ok(&free(&[(8, 1)]), 8, 0, Some(1)));
}

/// 4.4+ kernels: past the order-0 check, any free block of the order (or above) will do.
#[test]
fn kernels_from_4_4_only_need_a_free_block() {
    let f = free(&[(0, 1000), (1, 16)]);
    assert!(zone_watermark_ok(&f, 1, 100, None));
    assert!(!zone_watermark_ok(&f, 2, 100, None));
    assert!(!zone_watermark_ok(&free(&[(8, 1)]), 1, 300, None));
}

/// The shift is a kernel parameter from the device profile: Android's default 1, the ISMM'15
/// Nexus 10 profile 2 (the paper's VAN baseline); out-of-range values are refused.
#[test]
fn shift_comes_from_the_device_profile() {
    let n10 = device::DeviceProfile::builtin("nexus10").unwrap();
    assert_eq!(n10.kernel.min_free_order_shift, 2);
    let p3 = device::DeviceProfile::builtin("pixel3").unwrap();
    assert_eq!(p3.kernel.min_free_order_shift, 1);
    let mut bad = p3.clone();
    bad.kernel.min_free_order_shift = 11;
    let err = bad.validate().unwrap_err().to_string();
    assert!(err.contains("min_free_order_shift"), "{err}");
    // Only kernels before 4.4 have the per-order loop the shift tunes.
    let k = |d: &device::DeviceProfile| {
        let mut c = content::ContentStore::new();
        c.append_synthetic(&content::SynthMix::default(), 64, 3);
        kernel::Kernel::new(d, c, Vec::new(), kernel::hooks::KernelHooks::default()).unwrap()
    };
    assert_eq!(k(&n10).params.min_free_order_shift, Some(2));
    assert_eq!(k(&p3).params.min_free_order_shift, None);
}
