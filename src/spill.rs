//! `Spill`: byte blocks kept on disk rather than in memory, in an unnamed temporary file
//! (`tempfile::tempfile`: in `$TMPDIR`, gone with the process however it ends), each read back
//! by the `Block` its `put` returned. What a run keeps for its report however long it runs —
//! packed seconds (`Spool`), the seconds held back near faults (`report::faults`) — goes
//! here, so the process's memory stays flat in a soak of any length: each block leaves 16
//! bytes behind in memory.
//!
//! The file is made with the `Spill`, so the open descriptors of a run do not step up later.
//! Nothing is lost to the disk: where the file cannot be made or a block cannot be written
//! (no temporary directory, disk full), that block is kept in memory instead.

use std::fs::File;
use std::os::unix::fs::FileExt;

/// Where one block sits.
#[derive(Debug)]
pub enum Block {
    /// In the file, at this offset, this long.
    Disk { offset: u64, len: usize },
    /// In memory: the file could not be made or written.
    Memory(Box<[u8]>),
}

impl Block {
    /// The block's length in bytes.
    pub fn len(&self) -> usize {
        match self {
            Block::Disk { len, .. } => *len,
            Block::Memory(b) => b.len(),
        }
    }

    pub fn is_empty(&self) -> bool {
        self.len() == 0
    }
}

pub struct Spill {
    file: Option<File>,
    /// The end of what is written: the next block's offset.
    end: u64,
}

impl Default for Spill {
    fn default() -> Spill {
        Spill::new()
    }
}

impl Spill {
    /// A spill over a new temporary file (in memory only where none can be made).
    pub fn new() -> Spill {
        Spill {
            file: tempfile::tempfile().ok(),
            end: 0,
        }
    }

    /// A spill that keeps every block in memory.
    pub fn in_memory() -> Spill {
        Spill { file: None, end: 0 }
    }

    /// Whether blocks go to a file.
    pub fn on_disk(&self) -> bool {
        self.file.is_some()
    }

    /// Stores `bytes`: appended to the file, or kept in memory when that fails.
    pub fn put(&mut self, bytes: &[u8]) -> Block {
        if let Some(f) = &self.file {
            let offset = self.end;
            match f.write_all_at(bytes, offset) {
                Ok(()) => {
                    self.end += bytes.len() as u64;
                    return Block::Disk {
                        offset,
                        len: bytes.len(),
                    };
                }
                // What may have been written of it is left behind; later blocks go after it.
                Err(_) => self.end += bytes.len() as u64,
            }
        }
        Block::Memory(Box::from(bytes))
    }

    /// A block's bytes, `None` when the file cannot be read back.
    pub fn get(&self, block: &Block) -> Option<Vec<u8>> {
        match block {
            Block::Memory(b) => Some(b.to_vec()),
            Block::Disk { offset, len } => {
                let f = self.file.as_ref()?;
                let mut out = vec![0; *len];
                f.read_exact_at(&mut out, *offset).ok()?;
                Some(out)
            }
        }
    }

    /// Bytes written to the file so far.
    pub fn disk_bytes(&self) -> u64 {
        self.end
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn blocks_come_back_as_they_went_in_from_disk() {
        let mut s = Spill::new();
        assert!(s.on_disk(), "no temporary file could be made");
        let a = s.put(b"first block");
        let b = s.put(&[]);
        let c = s.put(&vec![7u8; 100_000]);
        assert!(matches!(a, Block::Disk { offset: 0, len: 11 }), "{a:?}");
        assert!(matches!(c, Block::Disk { offset: 11, .. }), "{c:?}");
        assert_eq!(s.disk_bytes(), 100_011);
        assert_eq!(s.get(&c), Some(vec![7u8; 100_000]));
        assert_eq!(s.get(&a).as_deref(), Some(&b"first block"[..]));
        assert_eq!(s.get(&b), Some(Vec::new()));
    }

    #[test]
    fn without_a_file_blocks_stay_in_memory() {
        let mut s = Spill::in_memory();
        let a = s.put(b"kept");
        assert!(matches!(&a, Block::Memory(b) if &b[..] == b"kept"));
        assert_eq!(s.get(&a).as_deref(), Some(&b"kept"[..]));
        assert_eq!(s.disk_bytes(), 0);
    }
}
