//! Seeing memory (issue 14): snapshots agree with the statistics and with
//! themselves, tags show in the blocks and are popped by their guards (on
//! panics too), the history turns on and off, and the out-of-memory
//! observer is told the right numbers; a panicking observer does not cross
//! into C. These read process-wide state, so every test holds `serial()`.

mod common;

use std::sync::{Arc, Mutex};

use common::serial;
use stridemem::{
    BlockState, DType, Device, MemoryFormat, OomInfo, SnapshotSummary, Stack, Status, Tensor, debug, json,
    memory_snapshot, memory_snapshot_summary, memory_stats, record_memory_history, set_oom_observer, tag,
    with_tag,
};

fn snap() -> SnapshotSummary {
    memory_snapshot_summary(Device::Cpu).unwrap()
}

fn id(t: &Tensor) -> u64 {
    t.storage().unwrap().id().unwrap()
}

fn tag_of(s: &SnapshotSummary, t: &Tensor) -> Option<String> {
    s.block_of_storage(id(t)).unwrap_or_else(|| panic!("no block for {t:?}")).tag.clone()
}

#[test]
fn snapshot_totals_equal_memory_stats_and_blocks_add_up() {
    let _g = serial();
    let keep = [
        Tensor::zeros(&[1000], DType::F32, Device::Cpu).unwrap(),
        Tensor::zeros(&[3, 5], DType::F64, Device::Cpu).unwrap(),
        Tensor::zeros(&[1 << 19], DType::U8, Device::Cpu).unwrap(),
    ];
    drop(Tensor::zeros(&[2000], DType::F32, Device::Cpu).unwrap()); // a cached free block
    let s = snap();
    let stats = memory_stats(Device::Cpu).unwrap();
    assert_eq!(s.totals, stats, "totals == memory_stats");
    assert_eq!(s.device, Device::Cpu);
    assert!(s.time_us >= 0 && s.start_unix_us > 1_600_000_000_000_000);

    assert_eq!(s.segments.iter().map(|g| g.size).sum::<i64>(), stats.reserved_bytes);
    let allocated: Vec<_> = s.blocks().filter(|(_, b)| b.state == BlockState::Allocated).collect();
    assert_eq!(allocated.iter().map(|(_, b)| b.size).sum::<i64>(), stats.allocated_bytes);
    assert_eq!(allocated.iter().map(|(_, b)| b.requested).sum::<i64>(), stats.requested_bytes);
    for g in &s.segments {
        let mut at = 0;
        for b in &g.blocks {
            assert_eq!(b.offset, at, "blocks tile segment {:#x}", g.address);
            at += b.size;
        }
        assert_eq!(at, g.size, "blocks fill segment {:#x}", g.address);
        assert!(g.pool == "small" || g.pool == "large");
        assert_eq!(g.stream, None, "host segments have no stream");
    }
    let free: Vec<i64> = s.blocks().filter(|(_, b)| b.state != BlockState::Allocated).map(|(_, b)| b.size).collect();
    let f = &s.fragmentation;
    assert_eq!(f.cached_free_bytes, free.iter().sum::<i64>());
    assert!(f.cached_free_bytes > 0, "the dropped tensor's block is cached");
    assert_eq!(f.largest_free_block, free.iter().copied().max().unwrap_or(0));
    assert!((f.ratio - (1.0 - f.largest_free_block as f64 / f.cached_free_bytes as f64)).abs() < 1e-3);
    let mut pools: Vec<&str> = f.pools.iter().map(|p| p.name.as_str()).collect();
    pools.sort();
    assert_eq!(pools, ["large", "small"]);
    assert_eq!(f.pools.iter().map(|p| p.free_bytes).sum::<i64>(), f.cached_free_bytes);
    assert_eq!(s.segment_count(), s.segments.len());
    assert_eq!(s.tags.iter().map(|t| t.allocated_bytes).sum::<i64>(), stats.allocated_bytes);

    for t in &keep {
        let b = s.block_of_storage(id(t)).expect("a live tensor's storage holds a block");
        assert_eq!(b.state, BlockState::Allocated);
        assert_eq!(b.requested, t.nbytes());
        assert!(b.size >= t.nbytes() && b.size % stridemem::sys::SM_ALLOC_ROUND == 0);
        assert!(b.seq.is_some_and(|q| q > 0) && b.time_us.is_some());
    }
    let gone = id(&keep[0]);
    drop(keep);
    assert!(snap().block_of_storage(gone).is_none(), "a freed storage holds no block");

    // The text and the summary are the same document.
    let text = memory_snapshot(Device::Cpu).unwrap();
    let doc = json::parse(&text).unwrap();
    assert_eq!(doc.get("version").and_then(json::Value::as_i64), Some(1));
    assert_eq!(SnapshotSummary::parse(&text).unwrap().device, Device::Cpu);
    if stridemem::cuda_device_count().unwrap() == 0 {
        assert_eq!(memory_snapshot(Device::Cuda(0)).unwrap_err().status(), Status::Device);
    }
}

#[test]
fn storage_ids_name_storages() {
    let _g = serial();
    let a = Tensor::zeros(&[4, 4], DType::F32, Device::Cpu).unwrap();
    let v = a.transpose(0, 1).unwrap();
    let c = a.clone_data(MemoryFormat::Contiguous).unwrap();
    assert!(id(&a) >= 1);
    assert_eq!(id(&v), id(&a), "a view shares its base's storage id");
    assert_ne!(id(&c), id(&a));
    assert!(id(&c) > id(&a), "ids are never reused: a later storage has a larger one");
    let s = a.storage().unwrap();
    assert_eq!(s.try_clone().unwrap().id().unwrap(), s.id().unwrap());
    let stack = Stack::new(Device::Cpu, 1024).unwrap();
    let pushed = stack.push(&[4], DType::F32).unwrap();
    assert_eq!(pushed.storage().unwrap_err().status(), Status::Unsupported);
}

#[test]
fn tag_guards_show_in_blocks_and_pop_on_drop() {
    let _g = serial();
    let (a, b, c) = {
        let _enc = tag("encoder").unwrap();
        let a = Tensor::zeros(&[300], DType::F32, Device::Cpu).unwrap();
        let b = {
            let _attn = tag("attn").unwrap();
            Tensor::zeros(&[301], DType::F32, Device::Cpu).unwrap()
        };
        (a, b, Tensor::zeros(&[302], DType::F32, Device::Cpu).unwrap())
    };
    let d = Tensor::zeros(&[303], DType::F32, Device::Cpu).unwrap();
    let s = snap();
    let got: Vec<Option<String>> = [&a, &b, &c, &d].iter().map(|t| tag_of(&s, t)).collect();
    assert_eq!(got, [Some("encoder".into()), Some("encoder/attn".into()), Some("encoder".into()), None]);
    let attn = s.tags.iter().find(|t| t.tag.as_deref() == Some("encoder/attn")).expect("holders by tag");
    assert!(attn.blocks >= 1 && attn.allocated_bytes >= b.nbytes() && attn.requested_bytes >= b.nbytes());

    // with_tag, and UTF-8 names.
    let e = with_tag("kodierer-é", || Tensor::zeros(&[304], DType::F32, Device::Cpu)).unwrap().unwrap();
    assert_eq!(tag_of(&snap(), &e).as_deref(), Some("kodierer-é"));

    // Bad names push nothing.
    for name in ["", "a\u{1}b", "a\nb", &"x".repeat(257)] {
        assert_eq!(tag(name).unwrap_err().status(), Status::InvalidArgument, "{name:?}");
    }
    let err = tag("a\0b").unwrap_err();
    assert_eq!(err.status(), Status::InvalidArgument);
    assert!(err.message().contains("NUL"), "{}", err.message());
    let f = Tensor::zeros(&[305], DType::F32, Device::Cpu).unwrap();
    assert_eq!(tag_of(&snap(), &f), None, "refused tags pushed nothing");

    // Tags are per thread: the other thread's allocation is untagged.
    let _main = tag("main-thread").unwrap();
    let other = std::thread::spawn(|| {
        let t = Tensor::zeros(&[306], DType::F32, Device::Cpu).unwrap();
        let s = memory_snapshot_summary(Device::Cpu).unwrap();
        s.block_of_storage(t.storage().unwrap().id().unwrap()).unwrap().tag.clone()
    })
    .join()
    .unwrap();
    assert_eq!(other, None);
}

#[test]
fn a_panic_inside_a_tag_scope_pops_it() {
    let _g = serial();
    let caught = std::panic::catch_unwind(|| {
        let _outer = tag("outer").unwrap();
        let _inner = tag("failing").unwrap();
        panic!("boom");
    });
    assert!(caught.is_err());
    let t = Tensor::zeros(&[307], DType::F32, Device::Cpu).unwrap();
    let u = with_tag("after", || Tensor::zeros(&[308], DType::F32, Device::Cpu)).unwrap().unwrap();
    let s = snap();
    assert_eq!(tag_of(&s, &t), None, "no tag left pushed after the panic");
    assert_eq!(tag_of(&s, &u).as_deref(), Some("after"), "not nested in a popped scope");
    let caught = std::panic::catch_unwind(|| with_tag("closure", || panic!("boom")));
    assert!(caught.is_err());
    let w = Tensor::zeros(&[309], DType::F32, Device::Cpu).unwrap();
    assert_eq!(tag_of(&snap(), &w), None, "with_tag pops when its closure panics");
}

#[test]
fn history_turns_on_and_off() {
    let _g = serial();
    assert!(!snap().history_enabled(), "off by default");
    record_memory_history(Device::Cpu, 8).unwrap();
    let t = with_tag("hist", || Tensor::zeros(&[1 << 12], DType::F64, Device::Cpu)).unwrap().unwrap();
    let bytes = t.nbytes();
    drop(t);
    let h = snap().history.expect("history on");
    assert_eq!(h.capacity, 8);
    assert!(!h.events.is_empty() && h.events.len() <= 8);
    let alloc: Vec<_> = h.events.iter().filter(|e| e.action == "alloc" && e.requested == bytes).collect();
    let free: Vec<_> = h.events.iter().filter(|e| e.action == "free" && e.requested == bytes).collect();
    assert_eq!(alloc.len(), 1, "{:?}", h.events);
    assert_eq!(free.len(), 1);
    assert_eq!(alloc[0].tag.as_deref(), Some("hist"));
    assert_eq!(free[0].tag.as_deref(), Some("hist"));
    assert!(alloc[0].address.is_some() && alloc[0].address == free[0].address);
    assert!(h.events.windows(2).all(|w| w[0].time_us <= w[1].time_us), "oldest first");
    for i in 0..20 {
        drop(Tensor::zeros(&[10 + i], DType::F32, Device::Cpu).unwrap());
    }
    let h = snap().history.unwrap();
    assert_eq!(h.events.len(), 8, "a full ring keeps capacity events");
    assert_eq!(h.dropped, h.recorded - 8);
    record_memory_history(Device::Cpu, 0).unwrap();
    assert!(!snap().history_enabled(), "max_events 0 stops it");
    for bad in [-1, (1 << 24) + 1] {
        assert_eq!(record_memory_history(Device::Cpu, bad).unwrap_err().status(), Status::InvalidArgument);
    }
    assert!(!snap().history_enabled(), "a refused call starts nothing");
}

#[test]
fn oom_observer_is_told_the_numbers() {
    let _g = serial();
    let seen: Arc<Mutex<Vec<OomInfo>>> = Arc::default();
    let inside: Arc<Mutex<Vec<i64>>> = Arc::default();
    let (sink, snaps) = (Arc::clone(&seen), Arc::clone(&inside));
    set_oom_observer(Some(Box::new(move |info: &OomInfo| {
        sink.lock().unwrap().push(info.clone());
        // The observer may call the library.
        let s = memory_snapshot_summary(Device::Cpu).unwrap();
        snaps.lock().unwrap().push(s.totals.allocated_bytes);
    })))
    .unwrap();
    let keep = Tensor::zeros(&[1000], DType::F32, Device::Cpu).unwrap();
    stridemem::empty_cache(Device::Cpu).unwrap();
    let before = memory_stats(Device::Cpu).unwrap();
    record_memory_history(Device::Cpu, 100).unwrap();
    debug::fail_alloc(1).unwrap();
    let err = Tensor::empty(&[3000], DType::F32, Device::Cpu).unwrap_err();
    debug::fail_alloc(0).unwrap();
    assert_eq!(err.status(), Status::OutOfMemory);
    let seen_now = seen.lock().unwrap().clone();
    assert_eq!(seen_now.len(), 1, "called once");
    let info = &seen_now[0];
    assert_eq!(info.device, Some(Device::Cpu));
    assert_eq!(info.requested_bytes, 12000);
    assert_eq!((info.allocated_bytes, info.reserved_bytes), (before.allocated_bytes, before.reserved_bytes));
    assert_eq!(info.cached_free_bytes, before.reserved_bytes - before.allocated_bytes, "every free byte: reserved - allocated");
    assert!(0 <= info.largest_free_block && info.largest_free_block <= info.cached_free_bytes);
    assert!(info.report.contains("out of memory") && info.report.contains("12000"), "{}", info.report);
    assert!(err.message().ends_with(&info.report), "{:?} vs {:?}", err.message(), info.report);
    assert_eq!(*inside.lock().unwrap(), [info.allocated_bytes], "a snapshot inside the observer");
    let ooms: Vec<_> = snap().history.unwrap().events.into_iter().filter(|e| e.action == "oom").collect();
    assert_eq!(ooms.len(), 1);
    assert_eq!(ooms[0].size, 12000);
    record_memory_history(Device::Cpu, 0).unwrap();

    // A panicking observer: caught before C, the call still fails as out of
    // memory, and the library goes on.
    set_oom_observer(Some(Box::new(|_: &OomInfo| panic!("observer bug")))).unwrap();
    debug::fail_alloc(1).unwrap();
    let err = Tensor::empty(&[3001], DType::F32, Device::Cpu).unwrap_err();
    debug::fail_alloc(0).unwrap();
    assert_eq!(err.status(), Status::OutOfMemory);
    assert_eq!(Tensor::zeros(&[3002], DType::F32, Device::Cpu).unwrap().numel(), 3002);

    // An observer that replaces the observer while it runs (no deadlock).
    let calls = Arc::new(Mutex::new(0));
    let c2 = Arc::clone(&calls);
    set_oom_observer(Some(Box::new(move |_: &OomInfo| {
        *c2.lock().unwrap() += 1;
        set_oom_observer(None).unwrap();
    })))
    .unwrap();
    for _ in 0..2 {
        debug::fail_alloc(1).unwrap();
        assert!(Tensor::empty(&[3003], DType::F32, Device::Cpu).is_err());
    }
    debug::fail_alloc(0).unwrap();
    assert_eq!(*calls.lock().unwrap(), 1, "removed by itself after the first call");

    // None removes it.
    let sink = Arc::clone(&seen);
    set_oom_observer(Some(Box::new(move |i: &OomInfo| sink.lock().unwrap().push(i.clone())))).unwrap();
    set_oom_observer(None).unwrap();
    debug::fail_alloc(1).unwrap();
    assert!(Tensor::empty(&[3004], DType::F32, Device::Cpu).is_err());
    debug::fail_alloc(0).unwrap();
    assert_eq!(seen.lock().unwrap().len(), 1, "a removed observer is not called");
    drop(keep);
}

#[test]
fn oom_observer_replaced_from_two_threads_at_once() {
    // One thread's observer replaces the observer while another thread is
    // inside set_oom_observer, which waits for that observer: neither may
    // wait for a lock the other holds.
    use std::sync::mpsc;
    use std::time::Duration;
    let _g = serial();
    let (entered_tx, entered_rx) = mpsc::channel::<()>();
    let entered_tx = Mutex::new(entered_tx);
    set_oom_observer(Some(Box::new(move |_: &OomInfo| {
        let _ = entered_tx.lock().unwrap().send(());
        std::thread::sleep(Duration::from_millis(300)); // the other thread is now waiting
        set_oom_observer(Some(Box::new(|_: &OomInfo| {}))).unwrap();
    })))
    .unwrap();
    let failer = std::thread::spawn(|| {
        // Over any machine's memory: fails on this thread, whatever else runs.
        Tensor::empty(&[1i64 << 43], DType::F32, Device::Cpu).unwrap_err().status()
    });
    entered_rx.recv_timeout(Duration::from_secs(30)).expect("the observer was called");
    let (done_tx, done_rx) = mpsc::channel();
    std::thread::spawn(move || {
        set_oom_observer(None).unwrap();
        let _ = done_tx.send(());
    });
    if done_rx.recv_timeout(Duration::from_secs(30)).is_err() {
        eprintln!("deadlock: set_oom_observer(None) did not return in 30 s");
        std::process::abort();
    }
    assert_eq!(failer.join().unwrap(), Status::OutOfMemory);
    set_oom_observer(None).unwrap();
}
