//! The storage seam: the bytes a ledger file lives in, for callers that bring their own (fault
//! injection in tests). The store adapts it to redb's backend trait, so the library's public
//! API names nothing of redb.

use std::io;

/// Storage for a ledger's bytes: a file-like array that can be read, written, resized and
/// made durable. The ledger is consistent at every successful `sync_data`; a write after the
/// last sync may be lost.
pub trait Storage: Send + Sync + std::fmt::Debug + 'static {
    /// The length in bytes.
    fn len(&self) -> io::Result<u64>;
    /// Whether it holds no bytes.
    fn is_empty(&self) -> io::Result<bool> {
        Ok(self.len()? == 0)
    }
    /// Reads `out.len()` bytes at `offset`.
    fn read(&self, offset: u64, out: &mut [u8]) -> io::Result<()>;
    /// Sets the length, growing with zeros or truncating.
    fn set_len(&self, len: u64) -> io::Result<()>;
    /// Makes every write so far durable.
    fn sync_data(&self) -> io::Result<()>;
    /// Writes `data` at `offset`.
    fn write(&self, offset: u64, data: &[u8]) -> io::Result<()>;
}

/// A [`Storage`] as redb's backend.
#[derive(Debug)]
pub(super) struct Backend<S: Storage>(pub S);

impl<S: Storage> redb::StorageBackend for Backend<S> {
    fn len(&self) -> io::Result<u64> {
        self.0.len()
    }
    fn read(&self, offset: u64, out: &mut [u8]) -> io::Result<()> {
        self.0.read(offset, out)
    }
    fn set_len(&self, len: u64) -> io::Result<()> {
        self.0.set_len(len)
    }
    fn sync_data(&self) -> io::Result<()> {
        self.0.sync_data()
    }
    fn write(&self, offset: u64, data: &[u8]) -> io::Result<()> {
        self.0.write(offset, data)
    }
}
