//! Object-level accesses by the app (the app access model's launch set, foreground working set,
//! background working set...): each accessed object passes the policy's barrier (with its metadata
//! bits, its page range and the access kind; the barrier's stall is added to the accessing thread's
//! stall) and touches the pages its *current* address maps to. Moving an object (GC copying,
//! Fleet's grouping) therefore changes which pages a given access pattern makes hot.
//!
//! Native and file-backed memory stay page-level and are not handled here.
//!
//! Simplified: an access touches either the object's header page ([`Span::Header`]: reading a few
//! fields) or all of its pages ([`Span::Whole`]); consecutive touches of the same page are coalesced
//! into one backing call (the kernel sees one access per page run, not per object).

use crate::backing::{PageBacking, TouchBatch};
use crate::heap::{Heap, ObjId, NULL};
use crate::hooks::{Access, AccessKind, BarrierOutcome, RuntimeHooks};
use engine::{Actor, Nanos, Stall};

/// How much of each object an access touches.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub enum Span {
    /// The header page (reading or writing a few fields).
    Header,
    /// Every page of the object.
    Whole,
}

/// What an access batch did.
#[derive(Debug, Clone, Copy, Default)]
pub struct AccessStats {
    pub stall: Stall,
    pub objects: u64,
    /// Pages passed to the backing after coalescing.
    pub pages: u64,
    /// Ids skipped because they no longer hold a live object.
    pub dead: u64,
}

/// Access `objs` in order at `now` by `actor`.
#[allow(clippy::too_many_arguments)]
pub fn access<H: RuntimeHooks + ?Sized>(
    heap: &mut Heap,
    hooks: &mut H,
    now: Nanos,
    actor: Actor,
    objs: &[ObjId],
    write: bool,
    span: Span,
    backing: &mut dyn PageBacking,
) -> AccessStats {
    let mut st = AccessStats::default();
    let mut batch = TouchBatch::new(now, actor);
    for &o in objs {
        if o == NULL || !heap.is_alive(o) {
            st.dead += 1;
            continue;
        }
        st.objects += 1;
        let out = pass_barrier(heap, hooks, now, actor, o, kind_of(write));
        st.stall.add(out.stall);
        if out.touch {
            heap.touch_objects(&mut batch, backing, o, span == Span::Whole, write);
        }
    }
    batch.flush(backing);
    st.stall.add(batch.stall);
    st.pages = batch.pages;
    st
}

fn kind_of(write: bool) -> AccessKind {
    if write {
        AccessKind::Write
    } else {
        AccessKind::Read
    }
}

/// Run the policy's read/write barrier on `o` (an `actor` access of `kind` at `now`), storing
/// back the metadata bits it changes.
fn pass_barrier<H: RuntimeHooks + ?Sized>(
    heap: &mut Heap,
    hooks: &mut H,
    now: Nanos,
    actor: Actor,
    o: ObjId,
    kind: AccessKind,
) -> BarrierOutcome {
    let obj = heap.view(o);
    let (first_page, pages) = heap.pages_of(o);
    let access = Access {
        now,
        actor,
        obj,
        first_page,
        pages,
        kind,
    };
    let mut meta = obj.meta;
    let out = hooks.barrier(&access, &mut meta);
    if meta != heap.recs[o as usize].meta {
        heap.recs[o as usize].meta = meta;
        heap.graph_clock += 1;
    }
    out
}

/// Store reference `dst` into slot `slot` of `src` (a mutator write): runs the policy barrier and
/// the generational write barrier, and touches `src`'s header page for writing.
#[allow(clippy::too_many_arguments)]
pub fn write_ref<H: RuntimeHooks + ?Sized>(
    heap: &mut Heap,
    hooks: &mut H,
    now: Nanos,
    actor: Actor,
    src: ObjId,
    slot: u32,
    dst: ObjId,
    backing: &mut dyn PageBacking,
) -> Stall {
    let out = pass_barrier(
        heap,
        hooks,
        now,
        actor,
        src,
        AccessKind::RefStore { slot, target: dst },
    );
    heap.set_ref_raw(src, slot, dst);
    if dst != NULL {
        heap.remember(src);
    }
    let mut stall = out.stall;
    if out.touch {
        stall.add(backing.touch(now, actor, heap.header_page(src), 1, true));
    }
    stall
}

/// Access byte ranges of objects, `(object, offset, len)` in order, at `now` by `actor`: each
/// object passes the barrier once per piece and the pages holding those bytes *at the object's
/// current address* are touched (the app access model's logical pages, see
/// [`crate::blueprint::Blueprint::objects_in`]).
#[allow(clippy::too_many_arguments)]
pub fn access_bytes<H: RuntimeHooks + ?Sized>(
    heap: &mut Heap,
    hooks: &mut H,
    now: Nanos,
    actor: Actor,
    pieces: &[(ObjId, u32, u32)],
    write: bool,
    backing: &mut dyn PageBacking,
) -> AccessStats {
    let mut st = AccessStats::default();
    let mut batch = TouchBatch::new(now, actor);
    for &(o, off, len) in pieces {
        if o == NULL || !heap.is_alive(o) {
            st.dead += 1;
            continue;
        }
        st.objects += 1;
        let out = pass_barrier(heap, hooks, now, actor, o, kind_of(write));
        st.stall.add(out.stall);
        if out.touch {
            let (f, n) = heap.pages_of_bytes(o, off, len);
            batch.touch(backing, f, n, write);
        }
    }
    batch.flush(backing);
    st.stall.add(batch.stall);
    st.pages = batch.pages;
    st
}
