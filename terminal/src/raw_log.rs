//! A pane's raw output: the last `limit` bytes it produced, addressed by
//! offsets that count every byte ever produced (so a reader can ask for
//! "everything since offset N").
//!
//! The bytes sit in a ring: the byte at offset `o` is at `o % limit`. The ring
//! lives on the heap, or, when the daemon keeps records, in a file of the state
//! directory mapped into memory ([`OutputLog::keep_in`]): a write is a copy
//! into the page cache, no system call, and what was written outlives the
//! process, so a `kill -9` of fugued loses no byte it read (the next daemon
//! rebuilds the screen and text view from it, see
//! `PaneOutput::recover`). A power cut can lose what the kernel had not
//! written back; fugue does not sync on the output path.
//!
//! Writing into a mapped file whose blocks the filesystem cannot find (a full
//! disk) would kill the daemon with SIGBUS, so the file's blocks are reserved
//! (`fallocate`) before the ring reaches them, [`ALLOCATION_STEP`] at a time: one
//! system call per 256 KiB of output, and none once the ring is full. A log that
//! cannot get its blocks goes on in memory.

use serde::{Deserialize, Serialize};
use std::fs::{File, OpenOptions};
use std::io;
use std::path::Path;

/// An [`OutputLog`] as it is handed to an upgraded daemon.
#[derive(Serialize, Deserialize)]
pub struct LogSnapshot {
    #[serde(with = "serde_bytes")]
    bytes: Vec<u8>,
    start: u64,
}

/// Bytes read from an [`OutputLog`].
#[derive(Debug, PartialEq, Eq)]
pub struct LogRead {
    pub data: Vec<u8>,
    pub start_offset: u64,
    pub next_offset: u64,
    /// Bytes the reader asked for were already dropped.
    pub truncated: bool,
}

/// Where the ring's bytes are.
enum Ring {
    /// Grows (by doubling) up to the limit as output comes, so a quiet pane
    /// holds little.
    Heap(Vec<u8>),
    /// A file's pages: the header, then `limit` bytes of ring, of which the
    /// first `allocated` have their blocks reserved.
    Mapped {
        map: memmap2::MmapMut,
        file: File,
        allocated: usize,
    },
}

/// Ring bytes whose blocks are reserved at a time.
pub const ALLOCATION_STEP: usize = 256 * 1024;

/// The file's first bytes: magic, limit, start, end (little-endian u64s).
const MAGIC: &[u8; 8] = b"FUGUELG1";
/// The ring starts on the second page.
const HEADER: usize = 4096;

pub struct OutputLog {
    ring: Ring,
    limit: usize,
    /// Offset of the oldest byte kept.
    start: u64,
    /// Offset one past the last byte produced.
    end: u64,
}

impl OutputLog {
    pub fn new(limit: usize) -> Self {
        Self {
            ring: Ring::Heap(Vec::new()),
            limit: limit.max(1),
            start: 0,
            end: 0,
        }
    }

    pub fn snapshot(&self) -> LogSnapshot {
        LogSnapshot {
            bytes: self.read_since(self.start, usize::MAX).data,
            start: self.start,
        }
    }

    /// The log of a snapshot, under this daemon's `limit` (older bytes go first).
    pub fn from_snapshot(snapshot: LogSnapshot, limit: usize) -> Self {
        let mut log = Self::new(limit);
        log.start = snapshot.start;
        log.end = snapshot.start;
        log.push(&snapshot.bytes);
        log
    }

    /// From now on keeps the ring in the file `path` (created, or emptied if it
    /// exists), with what the log holds now.
    pub fn keep_in(&mut self, path: &Path) -> io::Result<()> {
        let file = LogFile::create(path, self.limit)?;
        self.adopt(file)
    }

    /// From now on keeps the ring in `file` (made by [`LogFile::create`] for
    /// this log's limit), with what the log holds now. Cheap: the slow part,
    /// making the file, is done before, without the log's lock.
    pub fn adopt(&mut self, file: LogFile) -> io::Result<()> {
        let LogFile { map, file, limit } = file;
        if limit != self.limit {
            return Err(io::Error::other("the log file was made for another limit"));
        }
        let kept = self.read_since(self.start, usize::MAX);
        let mut mapped = Self {
            ring: Ring::Mapped {
                map,
                file,
                allocated: 0,
            },
            limit: self.limit,
            start: kept.start_offset,
            end: kept.start_offset,
        };
        mapped.write_header();
        mapped.push(&kept.data);
        if matches!(mapped.ring, Ring::Heap(_)) {
            return Err(io::Error::other("no room for the log's blocks"));
        }
        *self = mapped;
        Ok(())
    }

    /// The log a previous daemon kept in `path` (see [`OutputLog::keep_in`]),
    /// and it goes on being kept there. Refuses a file that is not one.
    pub fn open_kept(path: &Path) -> io::Result<Self> {
        let bad = |what: &str| io::Error::new(io::ErrorKind::InvalidData, format!("{}: {what}", path.display()));
        let file = open_file(path, false)?;
        let size = file.metadata()?.len();
        if size < HEADER as u64 + 1 {
            return Err(bad("too short for a fugue output log"));
        }
        let map = map(&file)?;
        let word = |at: usize| u64::from_le_bytes(map[at..at + 8].try_into().unwrap_or_default());
        if &map[..8] != MAGIC {
            return Err(bad("not a fugue output log"));
        }
        let (limit, start, end) = (word(8), word(16), word(24));
        if limit == 0 || HEADER as u64 + limit != size || start > end || end - start > limit {
            return Err(bad("its header does not fit the file"));
        }
        // The blocks of every place the ring has used (a crash may have left
        // some unreserved): from here on writes only go where blocks are.
        let used = match end > limit {
            true => limit as usize,
            false => end as usize,
        };
        let allocated = used.next_multiple_of(ALLOCATION_STEP).min(limit as usize);
        reserve(&file, HEADER, allocated)?;
        Ok(Self {
            ring: Ring::Mapped { map, file, allocated },
            limit: limit as usize,
            start,
            end,
        })
    }

    /// Offset one past the last byte produced.
    /// Whether the log is kept in a file (it survives a crash of the daemon).
    pub fn kept_in_file(&self) -> bool {
        matches!(self.ring, Ring::Mapped { .. })
    }

    pub fn end(&self) -> u64 {
        self.end
    }

    /// Offset of the oldest byte kept.
    pub fn start(&self) -> u64 {
        self.start
    }

    /// Whether any output has been dropped from the front.
    pub fn truncated(&self) -> bool {
        self.start > 0
    }

    pub fn push(&mut self, bytes: &[u8]) {
        if bytes.is_empty() {
            return;
        }
        let end = self.end + bytes.len() as u64;
        let kept = &bytes[bytes.len().saturating_sub(self.limit)..];
        // The oldest bytes go before their place is written over, so the
        // header never claims bytes that are not there (a crash may come
        // between any two of these steps).
        self.start = self.start.max(end.saturating_sub(self.limit as u64));
        self.write_header();
        self.write_at(end - kept.len() as u64, kept);
        self.end = end;
        self.trim_to_char_boundary();
        self.write_header();
    }

    /// Truncation happens from the front; never leave half a UTF-8 character there.
    fn trim_to_char_boundary(&mut self) {
        if self.start == 0 {
            return;
        }
        for _ in 0..3 {
            if self.start == self.end || (self.byte(self.start) & 0xC0) != 0x80 {
                return;
            }
            self.start += 1;
        }
    }

    fn byte(&self, offset: u64) -> u8 {
        let at = (offset % self.limit as u64) as usize;
        self.data().get(at).copied().unwrap_or(0)
    }

    fn data(&self) -> &[u8] {
        match &self.ring {
            Ring::Heap(data) => data,
            Ring::Mapped { map, .. } => &map[HEADER..],
        }
    }

    /// Copies `bytes` (at most `limit` of them) to their places from `offset` on.
    fn write_at(&mut self, offset: u64, bytes: &[u8]) {
        let limit = self.limit;
        let at = (offset % limit as u64) as usize;
        let first = bytes.len().min(limit - at);
        let needed = (at + first).max(bytes.len() - first);
        self.make_room(needed);
        let data = match &mut self.ring {
            Ring::Heap(data) => data.as_mut_slice(),
            Ring::Mapped { map, .. } => &mut map[HEADER..],
        };
        data[at..at + first].copy_from_slice(&bytes[..first]);
        data[..bytes.len() - first].copy_from_slice(&bytes[first..]);
    }

    /// Makes the first `needed` ring bytes writable: the heap ring grows, the
    /// mapped one reserves its file's blocks (or, if the disk has no room,
    /// moves to the heap: better a log that does not outlive a crash than a
    /// daemon killed by SIGBUS).
    fn make_room(&mut self, needed: usize) {
        let limit = self.limit;
        match &mut self.ring {
            Ring::Heap(data) => {
                if data.len() < needed {
                    let grown = needed.max(data.len() * 2).min(limit);
                    data.reserve_exact(grown - data.len());
                    data.resize(grown, 0);
                }
            }
            Ring::Mapped { map, file, allocated } => {
                if *allocated >= needed {
                    return;
                }
                let wanted = needed.next_multiple_of(ALLOCATION_STEP).min(limit);
                match reserve(file, HEADER + *allocated, wanted - *allocated) {
                    Ok(()) => *allocated = wanted,
                    Err(err) => {
                        tracing::warn!(%err, "no room for a pane's output log on disk; it is kept in memory from now on");
                        let mut data = map[HEADER..HEADER + *allocated].to_vec();
                        data.resize(needed.max(data.len()), 0);
                        self.ring = Ring::Heap(data);
                    }
                }
            }
        }
    }

    fn write_header(&mut self) {
        if let Ring::Mapped { map, .. } = &mut self.ring {
            map[16..24].copy_from_slice(&self.start.to_le_bytes());
            map[24..32].copy_from_slice(&self.end.to_le_bytes());
        }
    }

    /// Up to `max` bytes from `since` on (from the oldest kept byte if `since` is older).
    pub fn read_since(&self, since: u64, max: usize) -> LogRead {
        let truncated = since < self.start;
        let from = since.clamp(self.start, self.end);
        let take = ((self.end - from) as usize).min(max);
        let mut data = Vec::with_capacity(take);
        let at = (from % self.limit as u64) as usize;
        let first = take.min(self.limit - at);
        let ring = self.data();
        data.extend_from_slice(&ring[at..at + first]);
        data.extend_from_slice(&ring[..take - first]);
        LogRead {
            data,
            start_offset: from,
            next_offset: from + take as u64,
            truncated,
        }
    }

    /// The last `max` bytes, starting at a character boundary.
    pub fn tail(&self, max: usize) -> LogRead {
        let take = ((self.end - self.start) as usize).min(max);
        let mut from = self.end - take as u64;
        while from < self.end && from > self.start && (self.byte(from) & 0xC0) == 0x80 {
            from += 1;
        }
        let mut read = self.read_since(from, max);
        read.truncated = self.truncated() || from > self.end - take as u64;
        read
    }

    /// Bytes the ring has room for in memory now (the heap ring grows with use).
    pub fn capacity(&self) -> usize {
        match &self.ring {
            Ring::Heap(data) => data.capacity(),
            Ring::Mapped { .. } => self.limit,
        }
    }
}

fn open_file(path: &Path, create: bool) -> io::Result<File> {
    use std::os::unix::fs::OpenOptionsExt;
    OpenOptions::new()
        .read(true)
        .write(true)
        .create(create)
        .truncate(false)
        .mode(0o600)
        .open(path)
}

/// A log file made and mapped, ready for [`OutputLog::adopt`].
pub struct LogFile {
    map: memmap2::MmapMut,
    file: File,
    limit: usize,
}

impl LogFile {
    /// Creates (or empties) `path` for a log of `limit` bytes: its size set,
    /// its header's blocks reserved and written, mapped.
    pub fn create(path: &Path, limit: usize) -> io::Result<Self> {
        let file = open_file(path, true)?;
        file.set_len((HEADER + limit) as u64)?;
        reserve(&file, 0, HEADER)?;
        let mut map = map(&file)?;
        map[..HEADER].fill(0);
        map[..8].copy_from_slice(MAGIC);
        map[8..16].copy_from_slice(&(limit as u64).to_le_bytes());
        Ok(Self { map, file, limit })
    }
}

/// Reserves the blocks of `len` bytes at `offset` in `file`.
fn reserve(file: &File, offset: usize, len: usize) -> io::Result<()> {
    if len == 0 {
        return Ok(());
    }
    rustix::fs::fallocate(file, rustix::fs::FallocateFlags::empty(), offset as u64, len as u64).map_err(io::Error::from)
}

#[allow(unsafe_code)]
fn map(file: &File) -> io::Result<memmap2::MmapMut> {
    // SAFETY: the file is this daemon's own, in its private (0700) state
    // directory, and only this process maps or writes it while the daemon
    // runs (the state lock says so); nothing truncates it under the mapping.
    unsafe { memmap2::MmapMut::map_mut(file) }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn log_keeps_last_bytes_with_offsets() {
        let mut log = OutputLog::new(8);
        log.push(b"hello ");
        log.push(b"world!");
        assert_eq!(log.end(), 12);
        let read = log.read_since(0, 100);
        assert_eq!(read.data, b"o world!");
        assert_eq!(read.start_offset, 4);
        assert!(read.truncated);
        let read = log.read_since(10, 100);
        assert_eq!(read.data, b"d!");
        assert!(!read.truncated);
        assert_eq!(read.next_offset, 12);
        let read = log.read_since(6, 2);
        assert_eq!((read.data.as_slice(), read.next_offset), (&b"wo"[..], 8));
        // A write longer than the ring keeps its end.
        log.push(b"0123456789abc");
        assert_eq!(log.read_since(0, 100).data, b"56789abc");
        assert_eq!(log.end(), 25);
    }

    #[test]
    fn log_truncates_at_char_boundary() {
        let mut log = OutputLog::new(5);
        log.push("ééé".as_bytes()); // 6 bytes: the first é loses its lead byte
        let read = log.read_since(0, 100);
        assert_eq!(std::str::from_utf8(&read.data).unwrap(), "éé");
        assert_eq!(read.start_offset, 2);
        let mut log = OutputLog::new(4);
        log.push("a€".as_bytes()); // 4 bytes, fits
        log.push(b"b"); // dropping 'a' keeps the boundary
        assert_eq!(std::str::from_utf8(&log.read_since(0, 9).data).unwrap(), "€b");
        log.push(b"c"); // dropping the € lead byte drops the whole €
        assert_eq!(std::str::from_utf8(&log.read_since(0, 9).data).unwrap(), "bc");
        let tail = log.tail(1);
        assert_eq!(tail.data, b"c");
        assert!(tail.truncated);
    }

    #[test]
    fn log_capacity_stays_near_limit() {
        let mut log = OutputLog::new(1000);
        log.push(&[b'x'; 10]);
        assert!(log.capacity() < 100, "{}", log.capacity());
        for _ in 0..100 {
            log.push(&[b'x'; 97]);
        }
        assert_eq!(log.end(), 9710);
        assert!(log.capacity() < 2000, "{}", log.capacity());
    }

    /// What a log kept in a file holds is there for the next daemon, the
    /// ring's wrap and its offsets included, and it goes on from there.
    #[test]
    fn a_kept_log_is_read_back_as_it_was() {
        let dir = tempfile::tempdir().unwrap();
        let path = dir.path().join("pane.log");
        let mut log = OutputLog::new(16);
        log.push(b"before the file;");
        log.keep_in(&path).unwrap();
        log.push(b" after: wrapped");
        let expected = log.read_since(0, 100);
        drop(log);
        let mut again = OutputLog::open_kept(&path).unwrap();
        assert_eq!(again.read_since(0, 100), expected);
        assert_eq!(again.end(), 31);
        again.push(b"!");
        drop(again);
        let read = OutputLog::open_kept(&path).unwrap().read_since(0, 100);
        assert_eq!(read.data, b" after: wrapped!");
        assert_eq!(read.next_offset, 32);
        // Anything else is refused, not trusted.
        std::fs::write(&path, b"hello").unwrap();
        assert!(OutputLog::open_kept(&path).is_err());
        let mut bad = vec![0u8; HEADER + 16];
        bad[..8].copy_from_slice(MAGIC);
        bad[8..16].copy_from_slice(&16u64.to_le_bytes());
        bad[16..24].copy_from_slice(&10u64.to_le_bytes());
        std::fs::write(&path, &bad).unwrap();
        assert!(OutputLog::open_kept(&path).is_err(), "start after end");
    }
}
