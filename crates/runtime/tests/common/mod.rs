//! Helpers shared by the GC test files.

#![allow(dead_code)]

use engine::{Actor, RngStreams};
use runtime::gen::{generate, GraphSpec};
use runtime::heap::{Heap, HeapConfig};
use runtime::hooks::RuntimeHooks;

pub fn small_heap_on(seed: u64, bytes: u64, backing: &mut dyn runtime::PageBacking) -> Heap {
    let mut heap = Heap::new(
        7,
        HeapConfig {
            growth_limit: 256 << 20,
            ..HeapConfig::default()
        },
    );
    let spec = GraphSpec {
        bytes,
        ..GraphSpec::default()
    };
    let mut rng = RngStreams::new(seed).stream("test", 0);
    generate(&mut heap, &spec, &mut rng, 0, backing).unwrap();
    heap
}

/// A backing that logs every call, in order (to compare two collectors' effects exactly).
#[derive(Default)]
pub struct Recorder {
    pub next: u32,
    pub log: Vec<(u8, u32, u32, bool)>,
}

impl runtime::PageBacking for Recorder {
    fn map_heap(&mut self, _pid: kernel::types::Pid, pages: u32) -> Result<u32, String> {
        let first = self.next;
        self.next += pages;
        Ok(first)
    }
    fn unmap(&mut self, _pid: kernel::types::Pid, first: u32, pages: u32) {
        self.log.push((1, first, pages, false));
    }
    fn touch(&mut self, _now: u64, _actor: Actor, first: u32, n: u32, write: bool) -> engine::Stall {
        self.log.push((0, first, n, write));
        engine::Stall::ZERO
    }
    fn advise(
        &mut self,
        _now: u64,
        _actor: Actor,
        _first: u32,
        _n: u32,
        _advice: kernel::types::Advice,
    ) -> engine::Stall {
        engine::Stall::ZERO
    }
    fn release(&mut self, _now: u64, _actor: Actor, first: u32, n: u32) {
        self.log.push((2, first, n, false));
    }
}

/// A policy that bookmarks objects with metadata bit [`BOOKMARK`] (their pages are not touched
/// when marked in place, as Marvin's stubs), claiming the specialised loop or not.
pub struct Bookmarking {
    pub claim: bool,
}
pub const BOOKMARK: runtime::heap::Meta = 1 << 3;
impl RuntimeHooks for Bookmarking {
    fn visit_mode(&mut self, obj: &runtime::heap::ObjView) -> runtime::hooks::VisitMode {
        if obj.meta & BOOKMARK != 0 {
            runtime::hooks::VisitMode::Bookmarked
        } else {
            runtime::hooks::VisitMode::Normal
        }
    }
    fn is_stock(&self) -> bool {
        self.claim
    }
    fn bookmark_mask(&self) -> runtime::heap::Meta {
        BOOKMARK
    }
}

/// Set [`BOOKMARK`] on every 4th live object.
pub fn bookmark_some(heap: &mut Heap) {
    for o in (0..heap.recs.len()).step_by(4) {
        heap.recs[o].meta |= BOOKMARK;
    }
}
