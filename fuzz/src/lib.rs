//! Helpers shared by the fuzz targets: reading structured choices from the fuzzer's bytes.
//!
//! Targets take the raw bytes as the hostile input wherever they can (the parser sees exactly
//! what the sandbox could write); where a target also needs a few choices (chunk sizes, a
//! terminal size, a file layout) it reads them from the front with [`Bytes`].

/// A cursor over the fuzzer's input. Reading past the end yields zeros and empty slices, so
/// every input decodes to something.
pub struct Bytes<'a> {
    data: &'a [u8],
}

impl<'a> Bytes<'a> {
    pub fn new(data: &'a [u8]) -> Bytes<'a> {
        Bytes { data }
    }

    pub fn is_empty(&self) -> bool {
        self.data.is_empty()
    }

    pub fn u8(&mut self) -> u8 {
        match self.data.split_first() {
            Some((&b, rest)) => {
                self.data = rest;
                b
            }
            None => 0,
        }
    }

    pub fn u16(&mut self) -> u16 {
        u16::from_be_bytes([self.u8(), self.u8()])
    }

    pub fn bool(&mut self) -> bool {
        self.u8() & 1 == 1
    }

    /// At most `n` bytes.
    pub fn take(&mut self, n: usize) -> &'a [u8] {
        let (head, rest) = self.data.split_at(n.min(self.data.len()));
        self.data = rest;
        head
    }

    /// A length byte, then that many bytes.
    pub fn piece(&mut self) -> &'a [u8] {
        let n = usize::from(self.u8());
        self.take(n)
    }

    /// Everything left.
    pub fn rest(&mut self) -> &'a [u8] {
        self.take(self.data.len())
    }
}

/// `data` cut into chunks whose sizes come from `sizes` (cycled; 0 counts as 1), as a read
/// loop would see a stream arrive.
pub fn chunks<'a>(data: &'a [u8], sizes: &[u8]) -> Vec<&'a [u8]> {
    let mut out = Vec::new();
    let mut rest = data;
    let mut i = 0;
    while !rest.is_empty() {
        let size = sizes.get(i % sizes.len().max(1)).copied().unwrap_or(0);
        let n = usize::from(size).max(1).min(rest.len());
        out.push(&rest[..n]);
        rest = &rest[n..];
        i += 1;
    }
    out
}
