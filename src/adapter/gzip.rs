//! gzip (RFC 1952) for request bodies with one reusable deflate state per worker: a 10-byte
//! header, raw deflate from flate2's `Compress`, then the CRC-32 and length trailer. Reusing the
//! state (`reset`) keeps compression from allocating per batch.

use flate2::{Compress, Compression, Crc, FlushCompress, Status};

pub struct Gzip {
    deflate: Compress,
}

const HEADER: [u8; 10] = [0x1f, 0x8b, 8, 0, 0, 0, 0, 0, 0, 0xff];

impl Default for Gzip {
    fn default() -> Self {
        Self::new()
    }
}

impl Gzip {
    pub fn new() -> Self {
        Gzip {
            deflate: Compress::new(Compression::fast(), false),
        }
    }

    /// Compresses `input` into `out` (cleared first) as one gzip member.
    pub fn compress(&mut self, input: &[u8], out: &mut Vec<u8>) {
        out.clear();
        out.extend_from_slice(&HEADER);
        self.deflate.reset();
        let mut crc = Crc::new();
        crc.update(input);
        let mut consumed = 0usize;
        loop {
            if out.capacity() - out.len() < 1024 {
                out.reserve(out.capacity().max(4096));
            }
            let before_in = self.deflate.total_in();
            let status = self
                .deflate
                .compress_vec(
                    input.get(consumed..).unwrap_or_default(),
                    out,
                    FlushCompress::Finish,
                )
                .unwrap_or(Status::StreamEnd);
            consumed += (self.deflate.total_in() - before_in) as usize;
            if status == Status::StreamEnd {
                break;
            }
        }
        out.extend_from_slice(&crc.sum().to_le_bytes());
        out.extend_from_slice(&(input.len() as u32).to_le_bytes());
    }
}

#[cfg(test)]
mod tests {
    use super::*;
    use std::io::Read;

    #[test]
    fn round_trips_through_a_standard_decoder() {
        let mut g = Gzip::new();
        let mut out = Vec::new();
        for input in [
            b"".to_vec(),
            b"hello".to_vec(),
            (0..200_000u32).flat_map(|i| i.to_le_bytes()).collect(),
        ] {
            g.compress(&input, &mut out);
            let mut d = flate2::read::GzDecoder::new(&out[..]);
            let mut back = Vec::new();
            d.read_to_end(&mut back).unwrap();
            assert_eq!(back, input);
        }
    }
}
