//! Memory snapshots (`sm_memory_snapshot`): the JSON text, and
//! [`SnapshotSummary`], the same document read into Rust types.

use crate::device::Device;
use crate::error::{Error, Result, Status};
use crate::json::{self, Value};
use crate::memory::{MemoryStats, read_text};
use crate::sys;

/// Everything the caching allocator of `device` holds, as the JSON document
/// `sm_memory_snapshot` writes (`docs/MEMORY_SNAPSHOT.md`; `tools/memviz`
/// draws it): every segment and block (size, state, the storage holding it,
/// its tag), the totals (equal to [`memory_stats`](crate::memory_stats),
/// read in the same instant), fragmentation, the holders by tag, and the
/// history while it is recorded. [`memory_snapshot_summary`] reads it for
/// you; [`json::parse`] reads any part of it.
///
/// ```
/// use stridemem::{DType, Device, Tensor};
///
/// let t = Tensor::zeros(&[256], DType::F32, Device::Cpu)?;
/// let text = stridemem::memory_snapshot(Device::Cpu)?;
/// let doc = stridemem::json::parse(&text).unwrap();
/// assert_eq!(doc.get("format").and_then(|f| f.as_str()), Some("stridemem.memory_snapshot"));
/// # drop(t);
/// # Ok::<(), stridemem::Error>(())
/// ```
pub fn memory_snapshot(device: Device) -> Result<String> {
    crate::ensure_compatible()?;
    // SAFETY: read_text passes a buffer of len writable bytes (or NULL with 0).
    read_text(|buf, len, needed| unsafe { sys::sm_memory_snapshot(device.to_raw(), buf, len, needed) })
}

/// [`memory_snapshot`] of `device`, read into a [`SnapshotSummary`].
///
/// ```
/// use stridemem::{DType, Device, Tensor};
///
/// let t = {
///     let _scope = stridemem::tag("weights")?; // popped at the end of this block
///     Tensor::zeros(&[1024], DType::F32, Device::Cpu)?
/// };
/// let snap = stridemem::memory_snapshot_summary(Device::Cpu)?;
/// let block = snap.block_of_storage(t.storage()?.id()?).unwrap();
/// assert_eq!(block.tag.as_deref(), Some("weights"));
/// assert_eq!(block.requested, 4096);
/// assert!(snap.tags.iter().any(|h| h.tag.as_deref() == Some("weights")));
/// println!("{} segments, {} B cached free, largest free block {} B",
///          snap.segment_count(), snap.fragmentation.cached_free_bytes,
///          snap.fragmentation.largest_free_block);
/// # Ok::<(), stridemem::Error>(())
/// ```
pub fn memory_snapshot_summary(device: Device) -> Result<SnapshotSummary> {
    SnapshotSummary::parse(&memory_snapshot(device)?)
}

/// A memory snapshot (`docs/MEMORY_SNAPSHOT.md`, version 1) read into Rust
/// types: the totals, the fragmentation figures, the holders by tag, every
/// segment with its blocks, and the history when it was being recorded.
/// Fields of the document these types do not name are ignored (the format
/// may add fields); [`json::parse`] reaches them.
#[derive(Clone, Debug, PartialEq)]
#[non_exhaustive]
pub struct SnapshotSummary {
    /// The device whose allocator this is.
    pub device: Device,
    /// When the snapshot was taken: microseconds since the library was loaded.
    pub time_us: i64,
    /// When the library was loaded, in microseconds since the Unix epoch.
    pub start_unix_us: i64,
    /// The statistics, equal to [`memory_stats`](crate::memory_stats) at
    /// the instant the segments were read.
    pub totals: MemoryStats,
    /// Free memory and how scattered it is.
    pub fragmentation: Fragmentation,
    /// The holders of allocated bytes by tag, largest first.
    pub tags: Vec<TagUsage>,
    /// The allocations from the system, by address, each with its blocks.
    pub segments: Vec<Segment>,
    /// The recorded events, `None` when history is off
    /// ([`record_memory_history`](crate::record_memory_history)).
    pub history: Option<History>,
}

/// Free memory and how scattered it is (the snapshot's `fragmentation`).
#[derive(Clone, Debug, PartialEq)]
#[non_exhaustive]
pub struct Fragmentation {
    /// Every free byte the allocator holds (blocks in any state but allocated).
    pub cached_free_bytes: i64,
    /// The largest free block.
    pub largest_free_block: i64,
    /// `1 - largest_free_block / cached_free_bytes` (0 when nothing is
    /// free; near 1 when the free bytes are scattered).
    pub ratio: f64,
    /// The same per pool (`"small"`, `"large"`), in document order.
    pub pools: Vec<PoolFragmentation>,
}

/// One pool's figures (`fragmentation.pools.<name>`).
#[derive(Clone, Debug, PartialEq)]
#[non_exhaustive]
pub struct PoolFragmentation {
    /// `"small"` (requests up to `SM_SMALL_BLOCK_MAX`) or `"large"`.
    pub name: String,
    /// Segments in the pool.
    pub segments: i64,
    /// Bytes of its segments.
    pub reserved_bytes: i64,
    /// Bytes of its allocated blocks.
    pub allocated_bytes: i64,
    /// Bytes of its free blocks.
    pub free_bytes: i64,
    /// Its largest free block.
    pub largest_free_block: i64,
    /// `1 - largest_free_block / free_bytes` (0 when nothing is free).
    pub ratio: f64,
}

/// The allocated bytes held under one tag (the snapshot's `tags`).
#[derive(Clone, Debug, PartialEq, Eq)]
#[non_exhaustive]
pub struct TagUsage {
    /// The tag path (`"encoder/attn"`); `None` for untagged allocations.
    pub tag: Option<String>,
    /// Bytes of the blocks (rounded sizes).
    pub allocated_bytes: i64,
    /// Bytes asked for.
    pub requested_bytes: i64,
    /// Number of blocks.
    pub blocks: i64,
}

/// One allocation from the system and the blocks that tile it.
#[derive(Clone, Debug, PartialEq, Eq)]
#[non_exhaustive]
pub struct Segment {
    /// Its address.
    pub address: u64,
    /// Its size in bytes.
    pub size: i64,
    /// `"small"` or `"large"`.
    pub pool: String,
    /// The CUDA stream whose pool owns it (0: the default stream); `None`
    /// for host memory.
    pub stream: Option<u64>,
    /// Bytes of its allocated blocks.
    pub allocated_bytes: i64,
    /// Its blocks in address order; they tile the segment exactly.
    pub blocks: Vec<Block>,
}

/// One block of a segment.
#[derive(Clone, Debug, PartialEq, Eq)]
#[non_exhaustive]
pub struct Block {
    /// Offset from the segment's address.
    pub offset: i64,
    /// Size in bytes (rounded).
    pub size: i64,
    /// Bytes asked for (0 for a free block).
    pub requested: i64,
    /// Held, or free in which way.
    pub state: BlockState,
    /// The id of the storage holding it ([`Storage::id`](crate::Storage::id)).
    pub storage: Option<u64>,
    /// The tag path of the allocation.
    pub tag: Option<String>,
    /// Allocation sequence number (from 1, per device).
    pub seq: Option<u64>,
    /// When it was allocated (microseconds since the library was loaded).
    pub time_us: Option<i64>,
}

/// A block's `state`.
#[derive(Clone, Debug, PartialEq, Eq, Hash)]
#[non_exhaustive]
pub enum BlockState {
    /// Held by a live storage.
    Allocated,
    /// Freed, waiting for work on other streams before reuse.
    PendingFree,
    /// Free, in a segment that still has an allocated block.
    InactiveSplit,
    /// Free, the whole segment: `empty_cache` returns it.
    CachedFree,
    /// A state these bindings do not know.
    Other(String),
}

impl BlockState {
    fn from_name(name: &str) -> BlockState {
        match name {
            "allocated" => BlockState::Allocated,
            "pending_free" => BlockState::PendingFree,
            "inactive_split" => BlockState::InactiveSplit,
            "cached_free" => BlockState::CachedFree,
            other => BlockState::Other(other.to_string()),
        }
    }
}

/// The recorded allocator events (the snapshot's `history`).
#[derive(Clone, Debug, PartialEq, Eq)]
#[non_exhaustive]
pub struct History {
    /// The ring's size (`max_events`).
    pub capacity: i64,
    /// Events since recording started.
    pub recorded: i64,
    /// Events overwritten (`recorded - capacity` once the ring is full).
    pub dropped: i64,
    /// The newest `capacity` events, oldest first.
    pub events: Vec<HistoryEvent>,
}

/// One allocator event.
#[derive(Clone, Debug, PartialEq, Eq)]
#[non_exhaustive]
pub struct HistoryEvent {
    /// The allocation's sequence number (alloc, free); `None` otherwise.
    pub seq: Option<u64>,
    /// When (microseconds since the library was loaded).
    pub time_us: i64,
    /// `"alloc"`, `"free"`, `"segment_map"`, `"segment_unmap"`,
    /// `"empty_cache"` or `"oom"`.
    pub action: String,
    /// Bytes (for `"oom"`: the request).
    pub size: i64,
    /// Bytes asked for.
    pub requested: i64,
    /// The address, when the event has one.
    pub address: Option<u64>,
    /// The tag path of the allocation.
    pub tag: Option<String>,
    /// The device's allocated bytes right after the event.
    pub allocated_bytes: i64,
    /// The device's reserved bytes right after the event.
    pub reserved_bytes: i64,
}

impl SnapshotSummary {
    /// Reads the text of [`memory_snapshot`]. Malformed JSON, another
    /// `format`, a `version` other than 1, or a named field that is missing
    /// or of the wrong type is an [`Error`] with
    /// [`Status::InvalidArgument`] saying which.
    pub fn parse(text: &str) -> Result<SnapshotSummary> {
        let doc = json::parse(text).map_err(|e| bad(format!("{e}")))?;
        let format = string(&doc, "", "format")?;
        if format != "stridemem.memory_snapshot" {
            return Err(bad(format!("format is {format:?}, not \"stridemem.memory_snapshot\"")));
        }
        let version = int(&doc, "", "version")?;
        if version != 1 {
            return Err(bad(format!("version {version}: these bindings read version 1")));
        }
        let raw = sys::sm_device {
            type_: i32_of(&doc, "", "device_type")?,
            index: i32_of(&doc, "", "device_index")?,
        };
        let device = Device::from_raw(raw)
            .ok_or_else(|| bad(format!("device_type {} is not a device these bindings know", raw.type_)))?;
        let history = match doc.get("history") {
            None | Some(Value::Null) => None,
            Some(h) => Some(history(h)?),
        };
        Ok(SnapshotSummary {
            device,
            time_us: int(&doc, "", "time_us")?,
            start_unix_us: int(&doc, "", "start_unix_us")?,
            totals: totals(member(&doc, "", "totals")?)?,
            fragmentation: fragmentation(member(&doc, "", "fragmentation")?)?,
            tags: array(&doc, "", "tags")?.iter().map(tag_usage).collect::<Result<_>>()?,
            segments: array(&doc, "", "segments")?.iter().map(segment).collect::<Result<_>>()?,
            history,
        })
    }

    /// The number of segments (allocations from the system).
    pub fn segment_count(&self) -> usize {
        self.segments.len()
    }

    /// Every block of every segment, with its segment.
    pub fn blocks(&self) -> impl Iterator<Item = (&Segment, &Block)> {
        self.segments.iter().flat_map(|s| s.blocks.iter().map(move |b| (s, b)))
    }

    /// The block held by the storage with this [`Storage::id`](crate::Storage::id).
    pub fn block_of_storage(&self, id: u64) -> Option<&Block> {
        self.blocks().map(|(_, b)| b).find(|b| b.storage == Some(id))
    }

    /// Whether the history was being recorded.
    pub fn history_enabled(&self) -> bool {
        self.history.is_some()
    }
}

fn bad(message: String) -> Error {
    Error::new(Status::InvalidArgument, format!("memory snapshot: {message}"))
}

fn path(at: &str, key: &str) -> String {
    if at.is_empty() { key.to_string() } else { format!("{at}.{key}") }
}

fn member<'v>(v: &'v Value, at: &str, key: &str) -> Result<&'v Value> {
    v.get(key).ok_or_else(|| bad(format!("{} is missing", path(at, key))))
}

fn int(v: &Value, at: &str, key: &str) -> Result<i64> {
    member(v, at, key)?.as_i64().ok_or_else(|| bad(format!("{} is not an integer", path(at, key))))
}

fn i32_of(v: &Value, at: &str, key: &str) -> Result<i32> {
    i32::try_from(int(v, at, key)?).map_err(|_| bad(format!("{} is out of range", path(at, key))))
}

fn float(v: &Value, at: &str, key: &str) -> Result<f64> {
    member(v, at, key)?.as_f64().ok_or_else(|| bad(format!("{} is not a number", path(at, key))))
}

fn string(v: &Value, at: &str, key: &str) -> Result<String> {
    member(v, at, key)?
        .as_str()
        .map(str::to_string)
        .ok_or_else(|| bad(format!("{} is not a string", path(at, key))))
}

fn array<'v>(v: &'v Value, at: &str, key: &str) -> Result<&'v [Value]> {
    member(v, at, key)?.as_array().ok_or_else(|| bad(format!("{} is not an array", path(at, key))))
}

/// A member that may be null (or absent): `None`, else read by `read`.
fn nullable<'v, T>(
    v: &'v Value,
    at: &str,
    key: &str,
    what: &str,
    read: impl FnOnce(&'v Value) -> Option<T>,
) -> Result<Option<T>> {
    match v.get(key) {
        None | Some(Value::Null) => Ok(None),
        Some(x) => read(x).map(Some).ok_or_else(|| bad(format!("{} is not {what} or null", path(at, key)))),
    }
}

fn opt_string(v: &Value, at: &str, key: &str) -> Result<Option<String>> {
    nullable(v, at, key, "a string", |x| x.as_str().map(str::to_string))
}

fn opt_u64(v: &Value, at: &str, key: &str) -> Result<Option<u64>> {
    nullable(v, at, key, "a non-negative integer", Value::as_u64)
}

/// `"0x7f3a1c000000"` (addresses and streams are strings in the format).
fn opt_address(v: &Value, at: &str, key: &str) -> Result<Option<u64>> {
    nullable(v, at, key, "a hex address string", |x| {
        let s = x.as_str()?;
        let digits = s.strip_prefix("0x").or_else(|| s.strip_prefix("0X"))?;
        u64::from_str_radix(digits, 16).ok()
    })
}

fn totals(t: &Value) -> Result<MemoryStats> {
    let at = "totals";
    Ok(MemoryStats {
        allocated_bytes: int(t, at, "allocated_bytes")?,
        reserved_bytes: int(t, at, "reserved_bytes")?,
        peak_allocated_bytes: int(t, at, "peak_allocated_bytes")?,
        peak_reserved_bytes: int(t, at, "peak_reserved_bytes")?,
        num_allocs: int(t, at, "num_allocs")?,
        num_frees: int(t, at, "num_frees")?,
        cache_hits: int(t, at, "cache_hits")?,
        device_allocs: int(t, at, "device_allocs")?,
        device_frees: int(t, at, "device_frees")?,
        active_views: int(t, at, "active_views")?,
        active_storages: int(t, at, "active_storages")?,
        requested_bytes: int(t, at, "requested_bytes")?,
    })
}

fn fragmentation(f: &Value) -> Result<Fragmentation> {
    let at = "fragmentation";
    let pools = member(f, at, "pools")?
        .as_object()
        .ok_or_else(|| bad("fragmentation.pools is not an object".to_string()))?
        .iter()
        .map(|(name, p)| {
            let at = format!("fragmentation.pools.{name}");
            Ok(PoolFragmentation {
                name: name.clone(),
                segments: int(p, &at, "segments")?,
                reserved_bytes: int(p, &at, "reserved_bytes")?,
                allocated_bytes: int(p, &at, "allocated_bytes")?,
                free_bytes: int(p, &at, "free_bytes")?,
                largest_free_block: int(p, &at, "largest_free_block")?,
                ratio: float(p, &at, "ratio")?,
            })
        })
        .collect::<Result<_>>()?;
    Ok(Fragmentation {
        cached_free_bytes: int(f, at, "cached_free_bytes")?,
        largest_free_block: int(f, at, "largest_free_block")?,
        ratio: float(f, at, "ratio")?,
        pools,
    })
}

fn tag_usage(t: &Value) -> Result<TagUsage> {
    let at = "tags[]";
    Ok(TagUsage {
        tag: opt_string(t, at, "tag")?,
        allocated_bytes: int(t, at, "allocated_bytes")?,
        requested_bytes: int(t, at, "requested_bytes")?,
        blocks: int(t, at, "blocks")?,
    })
}

fn segment(s: &Value) -> Result<Segment> {
    let at = "segments[]";
    Ok(Segment {
        address: opt_address(s, at, "address")?.ok_or_else(|| bad("segments[].address is missing".to_string()))?,
        size: int(s, at, "size")?,
        pool: string(s, at, "pool")?,
        stream: opt_address(s, at, "stream")?,
        allocated_bytes: int(s, at, "allocated_bytes")?,
        blocks: array(s, at, "blocks")?.iter().map(block).collect::<Result<_>>()?,
    })
}

fn block(b: &Value) -> Result<Block> {
    let at = "segments[].blocks[]";
    Ok(Block {
        offset: int(b, at, "offset")?,
        size: int(b, at, "size")?,
        requested: int(b, at, "requested")?,
        state: BlockState::from_name(&string(b, at, "state")?),
        storage: opt_u64(b, at, "storage")?,
        tag: opt_string(b, at, "tag")?,
        seq: opt_u64(b, at, "seq")?,
        time_us: nullable(b, at, "time_us", "an integer", Value::as_i64)?,
    })
}

fn history(h: &Value) -> Result<History> {
    let at = "history";
    let events = array(h, at, "events")?
        .iter()
        .map(|e| {
            let at = "history.events[]";
            Ok(HistoryEvent {
                seq: opt_u64(e, at, "seq")?,
                time_us: int(e, at, "time_us")?,
                action: string(e, at, "action")?,
                size: int(e, at, "size")?,
                requested: int(e, at, "requested")?,
                address: opt_address(e, at, "address")?,
                tag: opt_string(e, at, "tag")?,
                allocated_bytes: int(e, at, "allocated_bytes")?,
                reserved_bytes: int(e, at, "reserved_bytes")?,
            })
        })
        .collect::<Result<_>>()?;
    Ok(History {
        capacity: int(h, at, "capacity")?,
        recorded: int(h, at, "recorded")?,
        dropped: int(h, at, "dropped")?,
        events,
    })
}

#[cfg(test)]
mod tests {
    use super::*;

    /// The example of docs/MEMORY_SNAPSHOT.md, with its "..." placeholders
    /// filled in.
    const DOC: &str = r#"{
      "format": "stridemem.memory_snapshot", "version": 1, "device": "cuda:0",
      "device_type": 2, "device_index": 0, "time_us": 5123456, "start_unix_us": 1795612800000000,
      "totals": {"allocated_bytes": 1024, "reserved_bytes": 2097152, "peak_allocated_bytes": 4096,
                 "peak_reserved_bytes": 2097152, "num_allocs": 3, "num_frees": 2, "cache_hits": 1,
                 "device_allocs": 1, "device_frees": 0, "active_views": 2, "active_storages": 1,
                 "requested_bytes": 1000, "a_later_field": 7},
      "fragmentation": {"cached_free_bytes": 2096128, "largest_free_block": 2096128, "ratio": 0.0,
        "pools": {"small": {"segments": 1, "reserved_bytes": 2097152, "allocated_bytes": 1024,
                            "free_bytes": 2096128, "largest_free_block": 2096128, "ratio": 0.0},
                  "large": {"segments": 0, "reserved_bytes": 0, "allocated_bytes": 0,
                            "free_bytes": 0, "largest_free_block": 0, "ratio": 0.0}},
        "unusable": [{"request": 512, "unusable_bytes": 0}]},
      "tags": [{"tag": "encoder", "allocated_bytes": 1024, "requested_bytes": 1000, "blocks": 1},
               {"tag": null, "allocated_bytes": 0, "requested_bytes": 0, "blocks": 0}],
      "segments": [{"address": "0x7f3a1c000000", "size": 2097152, "pool": "small", "stream": "0x0",
                    "allocated_bytes": 1024, "blocks": [
        {"offset": 0, "size": 1024, "requested": 1000, "state": "allocated", "storage": 17,
         "tag": "encoder", "seq": 42, "time_us": 5120000},
        {"offset": 1024, "size": 2096128, "requested": 0, "state": "inactive_split",
         "storage": null, "tag": null, "seq": null, "time_us": null}]}],
      "history": {"enabled": true, "capacity": 10000, "recorded": 12345, "dropped": 2345,
        "events": [{"seq": 42, "time_us": 5120000, "action": "alloc", "size": 1024, "requested": 1000,
                    "address": "0x7f3a1c000000", "tag": "encoder", "stream": "0x0",
                    "allocated_bytes": 1024, "reserved_bytes": 2097152}]}
    }"#;

    #[test]
    fn reads_the_documented_example() {
        let s = SnapshotSummary::parse(DOC).unwrap();
        assert_eq!(s.device, Device::Cuda(0));
        assert_eq!((s.time_us, s.start_unix_us), (5123456, 1795612800000000));
        assert_eq!(s.totals.allocated_bytes, 1024);
        assert_eq!(s.totals.requested_bytes, 1000);
        assert_eq!(s.totals.active_views, 2);
        assert_eq!(s.fragmentation.cached_free_bytes, 2096128);
        let pools: Vec<&str> = s.fragmentation.pools.iter().map(|p| p.name.as_str()).collect();
        assert_eq!(pools, ["small", "large"]);
        assert_eq!(s.fragmentation.pools[0].allocated_bytes, 1024);
        assert_eq!(s.tags[0].tag.as_deref(), Some("encoder"));
        assert_eq!(s.tags[1].tag, None);
        assert_eq!(s.segment_count(), 1);
        let seg = &s.segments[0];
        assert_eq!((seg.address, seg.stream), (0x7f3a1c000000, Some(0)));
        assert_eq!(seg.blocks[0].state, BlockState::Allocated);
        assert_eq!(seg.blocks[1].state, BlockState::InactiveSplit);
        assert_eq!(seg.blocks[1].storage, None);
        assert_eq!(s.block_of_storage(17).map(|b| (b.seq, b.time_us)), Some((Some(42), Some(5120000))));
        assert_eq!(s.block_of_storage(18), None);
        assert_eq!(s.blocks().count(), 2);
        let h = s.history.as_ref().unwrap();
        assert!(s.history_enabled());
        assert_eq!((h.capacity, h.recorded, h.dropped, h.events.len()), (10000, 12345, 2345, 1));
        assert_eq!(h.events[0].action, "alloc");
        assert_eq!(h.events[0].address, Some(0x7f3a1c000000));
        assert_eq!(h.events[0].tag.as_deref(), Some("encoder"));
    }

    #[test]
    fn no_history_and_unknown_states() {
        let text = DOC.replacen("\"history\"", "\"old_history\"", 1).replacen("inactive_split", "teleported", 1);
        let s = SnapshotSummary::parse(&text).unwrap();
        assert!(!s.history_enabled());
        assert_eq!(s.segments[0].blocks[1].state, BlockState::Other("teleported".into()));
    }

    fn refused(text: &str, mentions: &str) {
        match SnapshotSummary::parse(text) {
            Ok(_) => panic!("parsed: {text}"),
            Err(e) => {
                assert_eq!(e.status(), Status::InvalidArgument);
                assert!(e.message().contains(mentions), "{:?} does not mention {mentions:?}", e.message());
            }
        }
    }

    #[test]
    fn refuses_what_it_cannot_read() {
        refused("", "invalid JSON at byte 0");
        refused(&DOC[..DOC.len() - 3], "invalid JSON");
        refused("[]", "format is missing");
        refused(&DOC.replacen("stridemem.memory_snapshot", "other", 1), "format is \"other\"");
        refused(&DOC.replacen("\"version\": 1", "\"version\": 2", 1), "version 2");
        refused(&DOC.replacen("\"device_type\": 2", "\"device_type\": 9", 1), "device_type 9");
        refused(&DOC.replacen("\"device_index\": 0", "\"device_index\": 4294967296", 1), "device_index is out of range");
        refused(&DOC.replacen("\"num_frees\": 2,", "", 1), "totals.num_frees is missing");
        refused(&DOC.replacen("\"cache_hits\": 1", "\"cache_hits\": 1.5", 1), "totals.cache_hits is not an integer");
        refused(&DOC.replacen("\"ratio\": 0.0,", "\"ratio\": \"0\",", 1), "fragmentation.ratio is not a number");
        refused(&DOC.replacen("\"storage\": 17", "\"storage\": -17", 1), "storage is not a non-negative integer");
        refused(&DOC.replacen("\"storage\": 17", "\"storage\": \"17\"", 1), "storage is not");
        refused(&DOC.replacen("\"0x7f3a1c000000\", \"size\"", "\"7f3a1c000000\", \"size\"", 1), "address");
        refused(&DOC.replacen("\"tag\": \"encoder\", \"allocated_bytes\"", "\"tag\": 5, \"allocated_bytes\"", 1), "tags[].tag");
        refused(&DOC.replacen("\"blocks\": [", "\"blocks\": 3, \"was\": [", 1), "segments[].blocks is not an array");
        refused(&DOC.replacen("\"events\": [", "\"events\": 3, \"x\": [", 1), "history.events is not an array");
    }
}
