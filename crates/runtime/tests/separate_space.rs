//! Contract of `RuntimeHooks::separate_space`: regions of a group the policy calls a space of its
//! own are outside the region space's allocation guard (ART's `RegionSpace::AllocateRegion`
//! half-free rule), so a policy that moves live objects there leaves the mutator its full half.
//! A toy hook copies every live object into group 1; only the answer of `separate_space` differs.

use engine::CpuLedger;
use runtime::backing::NullBacking;
use runtime::gc::GcKind;
use runtime::heap::{ClassKind, HeapConfig, Meta, ObjView, REGION_SIZE};
use runtime::hooks::RuntimeHooks;
use runtime::{GcCause, Runtime};

const OBJ: u32 = 8 << 10;

struct Aside {
    separate: bool,
}

impl RuntimeHooks for Aside {
    fn on_mark(&mut self, _o: &ObjView, _depth: u32, _young: bool, _meta: &mut Meta) -> u8 {
        1
    }
    fn separate_space(&self, group: u8) -> bool {
        self.separate && group == 1
    }
}

/// Fill 14 of 32 regions with rooted objects, compact them into group 1, then count how many
/// more region-fulls of rooted objects the mutator can allocate.
fn run(separate: bool) -> (u32, u32, u32) {
    let cfg = HeapConfig {
        capacity: 8 << 20,
        growth_limit: 8 << 20,
        generational: false,
        ..HeapConfig::default()
    };
    let mut rt = Runtime::new(3, cfg, Aside { separate });
    let (mut b, mut l) = (NullBacking::default(), CpuLedger::default());
    let prim = rt.heap.add_class("byte[]", ClassKind::PrimitiveArray(1));
    let per_region = REGION_SIZE / OBJ;
    assert_eq!(rt.heap.num_regions(), 32);
    for _ in 0..14 * per_region {
        let (o, _) = rt.alloc(0, prim, OBJ - 16, 0, &mut b, &mut l).unwrap();
        rt.heap.add_root(o);
    }
    let compact = Some(GcKind::Full { compact: true });
    rt.collect(0, GcCause::Explicit, compact, &mut b, &mut l);
    let in_group = |rt: &Runtime<Aside>| {
        let live = rt.heap.regions.iter().filter(|r| r.top > 0 && r.group == 1);
        live.count() as u32
    };
    let flagged = |rt: &Runtime<Aside>| rt.heap.regions.iter().filter(|r| r.separate).count() as u32;
    let moved = in_group(&rt);
    assert_eq!(flagged(&rt), if separate { moved } else { 0 });
    let mut more = 0;
    while more < 30 * per_region {
        match rt.alloc(1_000_000, prim, OBJ - 16, 0, &mut b, &mut l) {
            Ok((o, _)) => rt.heap.add_root(o),
            Err(_) => break,
        }
        more += 1;
    }
    // Once its objects die, a separate region is an ordinary free region again.
    for o in rt.heap.roots.clone() {
        rt.heap.remove_root(o);
    }
    rt.collect(2_000_000_000, GcCause::Explicit, compact, &mut b, &mut l);
    let left = flagged(&rt);
    assert_eq!(left, if separate { in_group(&rt) } else { 0 });
    (moved, more / per_region, left)
}

#[test]
fn a_separate_space_is_outside_the_region_allocation_guard() {
    let (moved, more_sep, _) = run(true);
    let (moved_stock, more_stock, _) = run(false);
    assert!(moved >= 14 && moved == moved_stock, "{moved} {moved_stock}");
    // Separate: the mutator gets its half (16 regions) on top of the moved objects' 14.
    assert!(more_sep >= 15, "separate space: {more_sep} more regions");
    // Not separate: the moved objects count against the half-free rule.
    assert!(more_stock <= 2, "region space: {more_stock} more regions");
}
