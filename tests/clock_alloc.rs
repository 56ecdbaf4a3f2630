//! Issue 28: the round clock allocates nothing per step once warm, on the
//! `maxplus` recurrence and event by event (the
//! event queue, the done bits, the start-time rows and the caller's
//! buffer are all reused). A counting global allocator (this test binary
//! only) counts the allocations of 2000 steps of warmed-up clocks.

use std::alloc::{GlobalAlloc, Layout, System};
use std::sync::atomic::{AtomicU64, Ordering};

use fedtopo::net::placement::SiloPlacement;
use fedtopo::net::scenario::{load_underlay, NetworkSpec};
use fedtopo::net::underlay::LoadOptions;
use fedtopo::network::NetworkKind;
use fedtopo::overlay::build::{build_overlay, BuildOptions, OverlayKind};
use fedtopo::replay::clock::{EngineClock, RoundClock};
use fedtopo::replay::Straggler;

struct Counting;

static ALLOCS: AtomicU64 = AtomicU64::new(0);

unsafe impl GlobalAlloc for Counting {
    unsafe fn alloc(&self, layout: Layout) -> *mut u8 {
        ALLOCS.fetch_add(1, Ordering::Relaxed);
        unsafe { System.alloc(layout) }
    }
    unsafe fn dealloc(&self, ptr: *mut u8, layout: Layout) {
        unsafe { System.dealloc(ptr, layout) }
    }
    unsafe fn realloc(&self, ptr: *mut u8, layout: Layout, new_size: usize) -> *mut u8 {
        ALLOCS.fetch_add(1, Ordering::Relaxed);
        unsafe { System.realloc(ptr, layout, new_size) }
    }
}

#[global_allocator]
static GLOBAL: Counting = Counting;

#[test]
fn a_warm_maxplus_clock_allocates_nothing_per_step() {
    let u = load_underlay(Some("aws-north-america"), &LoadOptions::default()).unwrap();
    let p = SiloPlacement::spread(100, u.node_count(), 0).unwrap();
    let m = NetworkSpec::default().delay_model_placed(&u, p);
    for (kind, events) in [OverlayKind::Ring, OverlayKind::Mst, OverlayKind::Star]
        .into_iter()
        .flat_map(|k| [(k, false), (k, true)])
    {
        let o = build_overlay(kind, &u, &m, &BuildOptions::default()).unwrap();
        // The maxplus recurrence, and the event engine it stands for.
        let mut clock = if events {
            EngineClock::event_driven(&o, &m, NetworkKind::Maxplus, Straggler::None, 0).unwrap()
        } else {
            EngineClock::new(&o, &m, NetworkKind::Maxplus).unwrap()
        };
        assert_eq!(clock.is_event_driven(), events);
        let mut t = Vec::new();
        let mut k = 0;
        // Warm up past the done bits' first window trims.
        while k < 20_000 {
            clock.round_end_times_into(k, &o, &mut t).unwrap();
            k += 1;
        }
        let before = ALLOCS.load(Ordering::Relaxed);
        for _ in 0..2000 {
            clock.round_end_times_into(k, &o, &mut t).unwrap();
            k += 1;
        }
        let n = ALLOCS.load(Ordering::Relaxed) - before;
        assert_eq!(
            n, 0,
            "{kind} (events {events}): {n} allocations in 2000 steps"
        );
        assert_eq!(t.len(), 100);
    }
}
