//! Step 4 of a collection (see the [`super`] docs): free evacuated regions and dead objects,
//! take unevacuated regions' live bytes from marking, unmap dead large objects. A region lists
//! every object placed in it, so one whose listed objects were all copied out (or all marked in
//! place) has nothing to free and is not walked.

use super::{GcStats, RegMark, ROLE_EVAC, ROLE_UNEVAC};
use crate::backing::PageBacking;
use crate::heap::{oflags, Heap, ObjId, NULL, REGION_SHIFT};
use crate::hooks::{CollectedSet, RuntimeHooks};
use engine::Nanos;

/// How many listed objects ahead the region walks prefetch records (no effect on results).
const RECLAIM_PREFETCH_AHEAD: usize = 8;

/// Reclaim after the trace (`regs`: the regions' roles and marks; `set`: the collected set);
/// counts freed objects and bytes into `st`; returns the regions touched.
#[allow(clippy::too_many_arguments)]
pub(super) fn reclaim<H: RuntimeHooks + ?Sized>(
    heap: &mut Heap,
    hooks: &mut H,
    object_events: bool,
    regs: &[RegMark],
    set: &CollectedSet,
    now: Nanos,
    backing: &mut dyn PageBacking,
    st: &mut GcStats,
) -> u32 {
    let pid = heap.pid;
    let bytes_before = heap.bytes_allocated;
    let mut regions_touched = 0u32;
    let mut free = |heap: &mut Heap, o: ObjId| {
        if object_events {
            hooks.on_free(&heap.view(o));
        }
        heap.free_object(o);
    };
    for r in 0..regs.len() as u32 {
        let m = regs[r as usize];
        match m.role {
            ROLE_EVAC => {
                regions_touched += 1;
                st.regions_evacuated += 1;
                let objs = std::mem::take(&mut heap.regions[r as usize].objs);
                // Every object of a region is listed in it: when as many were copied out as are
                // listed, all of them were (marked), and there is nothing to free.
                let all_copied = m.copied as usize == objs.len();
                for (x, &o) in objs.iter().enumerate().filter(|_| !all_copied) {
                    if let Some(&a) = objs.get(x + RECLAIM_PREFETCH_AHEAD) {
                        super::prefetch(&heap.recs, a as usize);
                    }
                    // The mark bit first (a marked object was copied out): the bitmap is denser in
                    // cache than the records.
                    if heap.is_marked(o) {
                        continue;
                    }
                    let rec = &heap.recs[o as usize];
                    if rec.flags & oflags::ALIVE != 0 && rec.addr >> REGION_SHIFT == r {
                        st.freed_objects += 1;
                        free(heap, o);
                    }
                }
                heap.regions[r as usize].objs = objs;
                heap.free_region(r, now, backing);
                st.regions_freed += 1;
            }
            ROLE_UNEVAC => {
                regions_touched += 1;
                st.regions_unevacuated += 1;
                let mut objs = std::mem::take(&mut heap.regions[r as usize].objs);
                // Every object listed in an unevacuated region is alive and still there, unless the
                // region was switched to unevacuated when copying failed (then some moved out):
                // when all of them were marked there is nothing to free, and otherwise only the
                // dead ones need their records; either way the live bytes are known from marking.
                let live = if m.objs as usize == objs.len() {
                    m.bytes
                } else {
                    // Without a failed copy the list is exact (every listed object alive and
                    // here, module docs of `stock`) and marking counted each marked one into `m`:
                    // keep the marked ones from the bitmap alone and read only the records of the
                    // dead ones (the ids of a region's objects are scattered: each record is a
                    // cache miss). After a failed copy some listed objects have moved out (their
                    // records say where they are now) and the one whose copy failed was not
                    // counted: check every record and sum the live bytes.
                    let exact = !m.failed;
                    let mut live = 0u32;
                    let mut kept = 0;
                    for x in 0..objs.len() {
                        if let Some(&a) = objs.get(x + RECLAIM_PREFETCH_AHEAD) {
                            if !(exact && heap.is_marked(a)) {
                                super::prefetch(&heap.recs, a as usize);
                            }
                        }
                        let o = objs[x];
                        let here = |rec: &crate::heap::ObjRec| {
                            rec.flags & oflags::ALIVE != 0 && rec.addr >> REGION_SHIFT == r
                        };
                        debug_assert!(!exact || here(&heap.recs[o as usize]));
                        if !exact && !here(&heap.recs[o as usize]) {
                            continue;
                        }
                        if heap.is_marked(o) {
                            if !exact {
                                live += heap.recs[o as usize].size;
                            }
                            objs[kept] = o;
                            kept += 1;
                        } else {
                            st.freed_objects += 1;
                            free(heap, o);
                        }
                    }
                    objs.truncate(kept);
                    if exact {
                        debug_assert_eq!(
                            objs.iter().map(|&o| heap.recs[o as usize].size).sum::<u32>(),
                            m.bytes
                        );
                        m.bytes
                    } else {
                        live
                    }
                };
                let reg = &mut heap.regions[r as usize];
                reg.objs = objs;
                reg.live_bytes = live;
                reg.young = false;
            }
            _ => {}
        }
    }
    for s in 0..heap.los.len() {
        let slot = heap.los[s];
        if !set.large(s as u32) || slot.obj == NULL || heap.is_marked(slot.obj) {
            continue;
        }
        st.freed_objects += 1;
        heap.los_bytes -= heap.size(slot.obj) as u64;
        free(heap, slot.obj);
        backing.unmap(pid, slot.first_page, slot.pages);
        heap.los[s].obj = NULL;
        heap.free_los_slots.push(s as u32);
    }
    for reg in heap.regions.iter_mut() {
        if reg.state == crate::heap::RegionState::Used {
            reg.young = false;
        }
    }
    heap.maybe_compact_refs();
    st.freed_bytes = bytes_before - heap.bytes_allocated;
    regions_touched
}
