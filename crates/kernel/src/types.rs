//! Identifiers and small enums shared across the kernel model.

use serde::Serialize;

/// Physical page frame number (4 KiB frames).
pub type Pfn = u32;
/// Index of a virtual page in the kernel's global page table (dense, see [`crate::mm`]).
pub type PageIdx = u32;
/// Process id.
pub type Pid = u32;
/// Opaque per-page handle returned by a swap backend.
pub type SwapHandle = u32;

/// "No page / no frame" sentinel for dense arrays.
pub const NIL: u32 = u32::MAX;

pub const PAGE_SIZE: u64 = 4096;
pub const PAGE_SHIFT: u32 = 12;

/// Largest buddy order (order 10 = 4 MiB blocks), as `MAX_ORDER - 1` in Linux.
pub const MAX_ORDER: u8 = 10;
pub const NR_ORDERS: usize = MAX_ORDER as usize + 1;

/// Buddy-allocator migrate types (Linux `enum migratetype`, without ISOLATE).
#[derive(Debug, Clone, Copy, PartialEq, Eq, Hash, PartialOrd, Ord, Serialize)]
#[repr(u8)]
pub enum MigrateType {
    Unmovable = 0,
    Movable = 1,
    Reclaimable = 2,
    HighAtomic = 3,
    Cma = 4,
}

impl MigrateType {
    pub const ALL: [MigrateType; 5] = [
        MigrateType::Unmovable,
        MigrateType::Movable,
        MigrateType::Reclaimable,
        MigrateType::HighAtomic,
        MigrateType::Cma,
    ];
    pub const COUNT: usize = 5;

    /// Fallback order when this type's free lists are empty (mm/page_alloc.c `fallbacks[]`).
    pub fn fallbacks(self) -> &'static [MigrateType] {
        match self {
            MigrateType::Unmovable => &[MigrateType::Reclaimable, MigrateType::Movable],
            MigrateType::Movable => &[MigrateType::Reclaimable, MigrateType::Unmovable],
            MigrateType::Reclaimable => &[MigrateType::Unmovable, MigrateType::Movable],
            MigrateType::HighAtomic | MigrateType::Cma => &[],
        }
    }

    pub fn name(self) -> &'static str {
        match self {
            MigrateType::Unmovable => "unmovable",
            MigrateType::Movable => "movable",
            MigrateType::Reclaimable => "reclaimable",
            MigrateType::HighAtomic => "highatomic",
            MigrateType::Cma => "cma",
        }
    }
}

/// What a virtual page holds.
#[derive(Debug, Clone, Copy, PartialEq, Eq, Hash, Serialize)]
#[repr(u8)]
pub enum PageKind {
    /// Managed (ART) heap: anonymous memory.
    JavaHeap = 0,
    /// Native anonymous memory (malloc, graphics buffers mapped to the process, stacks).
    NativeAnon = 1,
    /// File-backed mapping (code, resources). Clean pages can be dropped and re-read; a dirty file
    /// page must be written back first.
    File = 2,
}

impl PageKind {
    pub fn is_anon(self) -> bool {
        !matches!(self, PageKind::File)
    }
}

/// What kind of process owns memory (Android: app, persistent system process, service).
#[derive(Debug, Clone, Copy, PartialEq, Eq, Hash, Serialize)]
pub enum ProcClass {
    App,
    Persistent,
    Service,
}

/// Where a virtual page is. Every page is in exactly one state.
#[derive(Debug, Clone, Copy, PartialEq, Eq, Hash, Serialize)]
#[repr(u8)]
pub enum PageState {
    /// Anonymous page never touched (no frame, reads as zero).
    Untouched = 0,
    /// In a physical frame (`loc` = pfn).
    Resident = 1,
    /// In a swap backend (`loc` = handle; `swap_dev` says which backend).
    Swapped = 2,
    /// File page not in the page cache (on flash; `loc` unused).
    Dropped = 3,
    /// Unmapped; the slot may be reused for another mapping.
    Freed = 4,
}

pub const NR_PAGE_STATES: usize = 5;

/// LRU list a resident page is on (Linux `enum lru_list`), or none.
#[derive(Debug, Clone, Copy, PartialEq, Eq, Hash, Serialize)]
#[repr(u8)]
pub enum LruList {
    InactiveAnon = 0,
    ActiveAnon = 1,
    InactiveFile = 2,
    ActiveFile = 3,
    Unevictable = 4,
    None = 5,
}

pub const NR_LRU_LISTS: usize = 5;

impl LruList {
    pub const ALL: [LruList; NR_LRU_LISTS] = [
        LruList::InactiveAnon,
        LruList::ActiveAnon,
        LruList::InactiveFile,
        LruList::ActiveFile,
        LruList::Unevictable,
    ];

    pub fn inactive(anon: bool) -> LruList {
        if anon {
            LruList::InactiveAnon
        } else {
            LruList::InactiveFile
        }
    }

    pub fn active(anon: bool) -> LruList {
        if anon {
            LruList::ActiveAnon
        } else {
            LruList::ActiveFile
        }
    }

    pub fn is_active(self) -> bool {
        matches!(self, LruList::ActiveAnon | LruList::ActiveFile)
    }

    pub fn name(self) -> &'static str {
        match self {
            LruList::InactiveAnon => "inactive_anon",
            LruList::ActiveAnon => "active_anon",
            LruList::InactiveFile => "inactive_file",
            LruList::ActiveFile => "active_file",
            LruList::Unevictable => "unevictable",
            LruList::None => "none",
        }
    }
}

/// Per-page flag bits (`Page::flags`).
pub mod flags {
    /// Hardware accessed bit (PTE young), set on every access, cleared by reclaim scans.
    pub const ACCESSED: u16 = 1 << 0;
    /// Hardware dirty bit: the page differs from its backing copy.
    pub const DIRTY: u16 = 1 << 1;
    /// PG_referenced: a file page seen referenced once on the inactive list.
    pub const REFERENCED: u16 = 1 << 2;
    /// PG_workingset: the page was active before it was last reclaimed.
    pub const WORKINGSET: u16 = 1 << 3;
    /// Executable file mapping (VM_EXEC): kept active when referenced.
    pub const EXEC: u16 = 1 << 4;
    /// VM_LOCKED (`mlock`): the page lives on the unevictable list and is never reclaimed.
    pub const MLOCKED: u16 = 1 << 5;
    /// A policy's "protect this page" mark. The kernel itself ignores it; a policy's reclaim hook
    /// may honour it (it is in every [`crate::hooks::PageView`]).
    pub const PROTECTED: u16 = 1 << 6;
    /// `/sys/kernel/mm/page_idle`: set by marking the page idle, cleared by the next access
    /// (fault or hit). Reclaim neither reads nor clears it (Linux keeps PG_young for that).
    pub const IDLE: u16 = 1 << 7;
    /// Swap cache: a resident anon page that also has a clean copy on a swap backend (handle in
    /// `Page::shadow`, backend in `swap_dev`). Reclaiming it is an unmap without I/O; a write
    /// frees the copy.
    pub const SWAPCACHE: u16 = 1 << 8;
    /// PG_writeback: a swap-out to an asynchronous device (flash) is in flight. The page is
    /// resident (it keeps its frame), swap-cached (the handle in `Page::shadow`), off every LRU
    /// list and unmapped; its frame is freed when the write completes
    /// ([`crate::Kernel::complete_writeback`]). A touch before then is a swap-cache hit that ends
    /// the reclaim (the page goes back on the LRU, keeping its copy).
    pub const WRITEBACK: u16 = 1 << 9;
    /// A dirty file page queued for the flusher (`crate::Kernel` `dirty_q`; see `dirty.rs`).
    pub const DIRTY_QUEUED: u16 = 1 << 10;
    /// A file page read in by a fault's read-around and not touched since: in the page cache
    /// but not yet mapped by the process (its first touch is Linux's minor fault, whose
    /// fault-around counts as read-around hits; see `fault.rs`, `mmap_miss`).
    pub const UNMAPPED: u16 = 1 << 11;
}

/// madvise-like hints from higher layers (runtime, framework, policies).
#[derive(Debug, Clone, Copy, PartialEq, Eq, Serialize)]
pub enum Advice {
    /// MADV_PAGEOUT: reclaim the range now (swap out anon, drop clean file).
    PageOut,
    /// MADV_COLD: deactivate the range (move to the inactive tail: reclaimed first).
    Cold,
    /// MADV_WILLNEED: bring the range back in ahead of use (asynchronously).
    WillNeed,
    /// `mlock`: keep the range resident (unevictable list; never reclaimed, counted as Mlocked).
    /// Pages not resident yet go to the unevictable list when they become resident.
    Mlock,
    /// `munlock`: the range returns to the inactive lists.
    Munlock,
    /// Ahead-of-time swap: store a clean copy of the range's resident anon pages on a swap
    /// backend without unmapping them (they enter the swap cache; see [`flags::SWAPCACHE`]).
    WriteAhead,
}
